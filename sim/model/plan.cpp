#include "model/plan.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "core/error.hpp"
#include "model/weight_placement.hpp"

namespace framesim::model {

bool ExecutionPlan::fits() const {
  return std::all_of(footprint.begin(), footprint.end(), [](const LevelFootprint& f) { return f.fits(); });
}

namespace {

struct Group {
  std::vector<int> layers;
  std::vector<int> folded;
  bool explicit_group = false;
  std::vector<std::string> patterns;  // activation patterns fused into the epilogue (Kernel::fused_patterns)
};

/// How many layers after the first one an activation subgraph may span (keeps the search linear).
constexpr int kRegionWindow = 32;

/// What a runtime calls a fused elementwise subgraph, from the ops in it.
std::string pattern_name(const NetworkSpec& net, const std::vector<int>& members) {
  std::set<std::string> ops;
  for (int m : members) ops.insert(net.layers[static_cast<std::size_t>(m)].op);
  if (ops.count("erf") || ops.count("gelu")) return "GELU";
  if (ops.count("sigmoid") && ops.count("mul")) return "SiLU x*sigmoid(x)";
  if ((ops.count("relu6") || ops.count("clip") || ops.count("hardsigmoid")) && ops.count("mul"))
    return "hardswish x*clip(x+3,0,6)/6";
  if (ops.count("tanh") && ops.count("mul")) return "GELU (tanh form)";
  return "elementwise subgraph";
}

/// An activation written as a subgraph that reads the group's output `t` more than once (SiLU x*sigmoid(x),
/// hardswish x*relu6(x+3)/6, GELU x*(1+erf(x/sqrt2))/2): the elementwise layers from `first` on that read only
/// `t` and each other's outputs, up to the first point where every tensor but the last one written is read only
/// inside. Returns those layers, or nothing when no such closed subgraph starts at `first`.
std::vector<int> activation_region(const NetworkSpec& net, const ConsumerIndex& consumers,
                                   const std::set<int>& graph_outputs, const std::vector<int>& group_of, int first,
                                   int t) {
  if (graph_outputs.count(t)) return {};
  std::set<int> internal{t};
  std::vector<int> members;
  const int n = static_cast<int>(net.layers.size());
  for (int j = first; j < n && j <= first + kRegionWindow; ++j) {
    if (group_of[static_cast<std::size_t>(j)] >= 0) continue;
    const LayerSpec& l = net.layers[static_cast<std::size_t>(j)];
    const bool reads = std::any_of(l.inputs.begin(), l.inputs.end(), [&](int u) { return internal.count(u) > 0; });
    if (!reads) continue;
    const bool inside = std::all_of(l.inputs.begin(), l.inputs.end(), [&](int u) { return internal.count(u) > 0; });
    if (!l.epilogue_fusable() || !inside || l.inputs.empty()) return {};
    members.push_back(j);
    internal.insert(l.output);
    const std::set<int> member_set(members.begin(), members.end());
    bool closed = true;
    for (int u : internal) {
      if (u == l.output) continue;
      if (graph_outputs.count(u)) return {};
      for (int c : consumers.of(u)) closed = closed && member_set.count(c) > 0;
    }
    if (closed) return members.size() > 1 ? members : std::vector<int>{};
  }
  return {};
}

bool is_producer_kind_for_folding(OpKind k) { return k == OpKind::conv2d || k == OpKind::linear; }

/// The group's last layer in layer order: the member whose output continues the chain.
int last_layer(const Group& g) { return std::max(g.layers.back(), g.folded.empty() ? -1 : g.folded.back()); }

/// Fusion groups in execution order (ordered by their last layer, so every input is ready).
std::vector<Group> make_groups(const NetworkSpec& net, bool fuse) {
  const int n = static_cast<int>(net.layers.size());
  std::vector<int> group_of(static_cast<std::size_t>(n), -1);
  std::vector<Group> groups;
  const FusionMode mode = fuse ? net.fusion : FusionMode::none;

  if (mode != FusionMode::none) {
    for (const auto& g : net.groups) {
      Group group;
      group.explicit_group = true;
      for (int l : g) {
        group_of[static_cast<std::size_t>(l)] = static_cast<int>(groups.size());
        group.layers.push_back(l);
      }
      groups.push_back(group);
    }
  }
  std::set<int> graph_outputs(net.outputs.begin(), net.outputs.end());
  const ConsumerIndex consumers(net);
  for (int i = 0; i < n; ++i) {
    if (group_of[static_cast<std::size_t>(i)] >= 0) continue;
    const LayerSpec& layer = net.layers[static_cast<std::size_t>(i)];
    if (mode == FusionMode::automatic && !layer.inputs.empty()) {
      const int t = layer.inputs[0];
      const int producer = net.tensors[static_cast<std::size_t>(t)].producer;
      const bool single_use = consumers.of(t).size() == 1 && graph_outputs.count(t) == 0;
      if (producer >= 0 && !single_use && layer.epilogue_fusable()) {
        // An activation written as a subgraph over the producer's output joins the producer's epilogue whole.
        const int g = group_of[static_cast<std::size_t>(producer)];
        Group& group = groups[static_cast<std::size_t>(g)];
        if (!group.explicit_group && last_layer(group) == producer) {
          const auto members = activation_region(net, consumers, graph_outputs, group_of, i, t);
          if (!members.empty()) {
            for (int m : members) {
              group.layers.push_back(m);
              group_of[static_cast<std::size_t>(m)] = g;
            }
            group.patterns.push_back(pattern_name(net, members));
            continue;
          }
        }
      }
      if (producer >= 0 && single_use) {
        const int g = group_of[static_cast<std::size_t>(producer)];
        Group& group = groups[static_cast<std::size_t>(g)];
        // Only join a group whose last member produced the input (a chain, not a branch).
        if (!group.explicit_group && last_layer(group) == producer) {
          const LayerSpec& p = net.layers[static_cast<std::size_t>(producer)];
          if (layer.kind == OpKind::batchnorm && is_producer_kind_for_folding(p.kind) && group.layers.size() == 1) {
            group.folded.push_back(i);
            group_of[static_cast<std::size_t>(i)] = g;
            continue;
          }
          if (layer.epilogue_fusable()) {
            group.layers.push_back(i);
            group_of[static_cast<std::size_t>(i)] = g;
            if (layer.kind == OpKind::custom) group.patterns.emplace_back("scale/offset with constant operands");
            continue;
          }
        }
      }
    }
    group_of[static_cast<std::size_t>(i)] = static_cast<int>(groups.size());
    groups.push_back(Group{{i}, {}, false, {}});
  }
  // Folded batchnorms sit logically after the anchor: keep them in layer order for naming.
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group& a, const Group& b) { return last_layer(a) < last_layer(b); });
  return groups;
}

/// The shape of a conv, depthwise or matmul layer's arithmetic (ShapeOps), from its ops and output tensor:
/// K = ops / (2 x output elements); N = the output's channel dimension (NCHW: dimension 1; a linear or matmul
/// output: its last). Nothing for other classes, or without ops.
std::optional<ShapeOps> shape_ops(const NetworkSpec& net, const LayerSpec& layer) {
  const bool shaped =
      layer.op_class == OpClass::conv || layer.op_class == OpClass::depthwise || layer.op_class == OpClass::matmul;
  if (!shaped || layer.ops <= 0 || layer.output < 0) return std::nullopt;
  const auto& out = net.tensors[static_cast<std::size_t>(layer.output)];
  const double elements = out.elements();
  if (elements <= 0 || out.shape.empty()) return std::nullopt;
  ShapeOps s;
  s.op_class = layer.op_class;
  s.precision = layer.precision.compute;
  s.ops = layer.ops;
  s.reduction = layer.ops / (2.0 * elements);
  s.outputs = elements;
  const bool nchw = layer.op_class != OpClass::matmul && out.shape.size() == 4;
  s.channels = static_cast<double>(nchw ? out.shape[1] : out.shape.back());
  return s;
}

/// Which stored tensor each tensor is: its own storage, except that a folded batchnorm's output is the anchor's
/// output under another name (an alias of its input's storage).
std::vector<int> storage_of_tensors(const NetworkSpec& net, const std::vector<Group>& groups) {
  const std::size_t n_tensors = net.tensors.size();
  std::vector<int> storage(n_tensors);
  for (std::size_t t = 0; t < n_tensors; ++t) storage[t] = net.storage_of(static_cast<int>(t));
  std::vector<int> redirect(n_tensors, -1);  // a folded batchnorm's output -> its input's storage
  for (const auto& g : groups)
    for (int f : g.folded) {
      const auto& bn = net.layers[static_cast<std::size_t>(f)];
      redirect[static_cast<std::size_t>(bn.output)] = storage[static_cast<std::size_t>(bn.inputs[0])];
    }
  for (std::size_t t = 0; t < n_tensors; ++t)
    while (redirect[static_cast<std::size_t>(storage[t])] >= 0)
      storage[t] = redirect[static_cast<std::size_t>(storage[t])];
  return storage;
}

/// The lifetimes of the stored tensors: which kernel writes each, which reads it last, whether it must be written to
/// memory at all, and the bytes live at each kernel.
struct Lifetimes {
  std::vector<int> storage;          // storage_of_tensors
  std::vector<int> producer_kernel;  // -1: graph input
  std::vector<int> last_reader;
  std::vector<bool> stored;
  std::set<int> graph_outputs;
  std::vector<double> live;  // per kernel: stored tensors between their producing kernel and their last reader

  /// A tensor that is its own storage and is written to memory.
  bool is_stored(std::size_t s) const { return stored[s] && storage[s] == static_cast<int>(s); }
  /// The kernels [from, to] over which stored tensor `s` is live.
  std::pair<int, int> span(std::size_t s) const {
    const int from = std::max(producer_kernel[s], 0);
    return {from, std::max(last_reader[s], from)};
  }
};

Lifetimes tensor_lifetimes(const NetworkSpec& net, const std::vector<Group>& groups, const ExecutionPlan& plan) {
  const std::size_t n_layers = net.layers.size();
  const std::size_t n_tensors = net.tensors.size();
  const int n_kernels = static_cast<int>(groups.size());
  Lifetimes life;
  life.storage = storage_of_tensors(net, groups);
  const auto& storage = life.storage;
  life.producer_kernel.assign(n_tensors, -1);
  life.last_reader.assign(n_tensors, -1);
  life.stored.assign(n_tensors, false);
  for (int t : net.outputs) life.graph_outputs.insert(storage[static_cast<std::size_t>(t)]);
  for (std::size_t l = 0; l < n_layers; ++l) {
    const auto& layer = net.layers[l];
    const int k = plan.kernel_of_layer[l];
    if (layer.writes_output())
      life.producer_kernel[static_cast<std::size_t>(storage[static_cast<std::size_t>(layer.output)])] = k;
  }
  for (std::size_t l = 0; l < n_layers; ++l) {
    const auto& layer = net.layers[l];
    if (layer.kind == OpKind::reshape) continue;
    const int k = plan.kernel_of_layer[l];
    for (int t : layer.inputs) {
      const auto s = static_cast<std::size_t>(storage[static_cast<std::size_t>(t)]);
      if (life.producer_kernel[s] != k) {
        life.stored[s] = true;
        life.last_reader[s] = std::max(life.last_reader[s], k);
      }
    }
  }
  for (int t : net.inputs) life.stored[static_cast<std::size_t>(storage[static_cast<std::size_t>(t)])] = true;
  for (int s : life.graph_outputs) {
    life.stored[static_cast<std::size_t>(s)] = true;
    life.last_reader[static_cast<std::size_t>(s)] = n_kernels - 1;
  }
  life.live.assign(static_cast<std::size_t>(std::max(n_kernels, 1)), 0.0);
  for (std::size_t s = 0; s < n_tensors; ++s) {
    if (!life.is_stored(s)) continue;
    const auto [from, to] = life.span(s);
    for (int k = from; k <= to; ++k) life.live[static_cast<std::size_t>(k)] += net.tensors[s].bytes();
  }
  return life;
}

/// Where every stored tensor lives: activations in writable levels (innermost first) where the largest live set
/// over their lifetime fits beside the weights `resident` there (bytes per level); graph inputs and outputs in the
/// outermost writable level, the home.
std::vector<int> activation_levels(const NetworkSpec& net, const HardwareSpec& hw, const ComputeUnitSpec& unit,
                                   const Lifetimes& life, const std::vector<double>& resident) {
  const std::size_t n_tensors = net.tensors.size();
  const auto& storage = life.storage;
  std::vector<std::size_t> writable;
  for (std::size_t lv : unit.memory_path)
    if (is_writable(hw.memory[lv].kind)) writable.push_back(lv);
  FRAMESIM_ASSERT(!writable.empty(), "validated: every unit reaches a writable level");
  const int home = static_cast<int>(writable.back());
  std::vector<int> level(n_tensors, -1);
  std::set<int> graph_inputs;
  for (int t : net.inputs) graph_inputs.insert(storage[static_cast<std::size_t>(t)]);
  for (std::size_t s = 0; s < n_tensors; ++s) {
    if (!life.is_stored(s)) continue;
    int chosen = home;
    if (!graph_inputs.count(static_cast<int>(s)) && !life.graph_outputs.count(static_cast<int>(s))) {
      const auto [from, to] = life.span(s);
      double worst = 0;
      for (int k = from; k <= to; ++k) worst = std::max(worst, life.live[static_cast<std::size_t>(k)]);
      for (std::size_t lv : writable) {
        if (worst + resident[lv] <= hw.memory[lv].capacity_bytes) {
          chosen = static_cast<int>(lv);
          break;
        }
      }
    }
    level[s] = chosen;
  }
  for (std::size_t t = 0; t < n_tensors; ++t) level[t] = level[static_cast<std::size_t>(storage[t])];
  return level;
}

/// Places weights (the runtime's placement, weight_placement.hpp), state and every stored tensor.
void place_tensors(ExecutionPlan& plan, const NetworkSpec& net, const HardwareSpec& hw, const ComputeUnitSpec& unit,
                   const Lifetimes& life, const WeightPlacement& weights) {
  std::size_t home = unit.memory_path.back();
  for (std::size_t lv : unit.memory_path)
    if (is_writable(hw.memory[lv].kind)) home = lv;
  plan.activation_home = static_cast<int>(home);
  plan.state_level = plan.activation_home;
  plan.weight_level = weights.home;
  plan.weight_bytes_at = weights.stored_at;
  plan.tensor_level = activation_levels(net, hw, unit, life, weights.stored_at);
}

/// What each level holds: the weights, the state, and the activations live at the peak kernel.
void fill_footprint(ExecutionPlan& plan, const NetworkSpec& net, const HardwareSpec& hw, const Lifetimes& life) {
  auto footprint = [&](int lv) -> LevelFootprint& {
    for (auto& f : plan.footprint)
      if (static_cast<int>(f.level) == lv) return f;
    plan.footprint.push_back(
        {static_cast<std::size_t>(lv), 0, 0, 0, hw.memory[static_cast<std::size_t>(lv)].capacity_bytes});
    return plan.footprint.back();
  };
  for (std::size_t lv = 0; lv < plan.weight_bytes_at.size(); ++lv)
    if (plan.weight_bytes_at[lv] > 0) footprint(static_cast<int>(lv)).weight_bytes += plan.weight_bytes_at[lv];
  footprint(plan.state_level).state_bytes += net.total_state_bytes();
  // Peak live activations per level (at the kernel with the largest total).
  std::vector<double> per_level(hw.memory.size(), 0.0);
  for (std::size_t s = 0; s < net.tensors.size(); ++s) {
    if (!life.is_stored(s)) continue;
    const auto [from, to] = life.span(s);
    const int k = static_cast<int>(plan.peak_kernel);
    if (from <= k && k <= to) per_level[static_cast<std::size_t>(plan.tensor_level[s])] += net.tensors[s].bytes();
  }
  for (std::size_t lv = 0; lv < per_level.size(); ++lv)
    if (per_level[lv] > 0) footprint(static_cast<int>(lv)).activation_bytes += per_level[lv];
}

/// Kernel `k` (group `g`): its name, ops by precision and class, bytes per level (tensors at `tensor_level`,
/// weights as `weights` places them), traversals.
Kernel make_kernel(int k, const Group& g, const ExecutionPlan& plan, const NetworkSpec& net, const HardwareSpec& hw,
                   const Lifetimes& life, const std::vector<int>& tensor_level, const WeightPlacement& weights) {
  const auto& storage = life.storage;
  const auto& producer_kernel = life.producer_kernel;
  const auto& last_reader = life.last_reader;
  const auto& stored = life.stored;
  const auto& graph_outputs = life.graph_outputs;
  Kernel kernel;
  kernel.layers = g.layers;
  kernel.folded = g.folded;
  kernel.fused_patterns = g.patterns;
  kernel.bytes.assign(hw.memory.size(), 0.0);
  std::vector<int> members = g.layers;
  members.insert(members.end(), g.folded.begin(), g.folded.end());
  std::sort(members.begin(), members.end());
  for (int m : members) {
    if (!kernel.name.empty()) kernel.name += "+";
    kernel.name += net.layers[static_cast<std::size_t>(m)].name;
  }
  auto add_bytes = [&](int level, double bytes) {
    kernel.bytes[static_cast<std::size_t>(level)] += bytes;
    kernel.total_bytes += bytes;
  };
  const std::set<int> folded(g.folded.begin(), g.folded.end());
  for (int m : members) {
    const LayerSpec& layer = net.layers[static_cast<std::size_t>(m)];
    const bool anchor = m == g.layers.front();
    // Unfused view: every member reads each input and writes its output.
    if (layer.kind != OpKind::reshape) {
      for (std::size_t i = 0; i < layer.inputs.size(); ++i) {
        const double b = layer.input_access[i].bytes;
        if (b <= 0) continue;
        ++kernel.traversals_unfused;
        kernel.activation_bytes_unfused += b;
        if (!anchor) ++kernel.tail_traversals_unfused;
      }
      ++kernel.traversals_unfused;
      ++kernel.tail_traversals_unfused;
      kernel.activation_bytes_unfused += net.tensors[static_cast<std::size_t>(layer.output)].bytes();
    }
    if (folded.count(m)) continue;  // costs nothing at run time
    auto& ops = kernel.ops[layer.precision.compute];
    ops = ops.value_or(0.0) + layer.ops;
    auto& class_ops = kernel.ops_by_class[static_cast<std::size_t>(layer.op_class)][layer.precision.compute];
    class_ops = class_ops.value_or(0.0) + layer.ops;
    kernel.total_ops += layer.ops;
    if (auto shape = shape_ops(net, layer)) kernel.shapes.push_back(*shape);
    if (layer.kind == OpKind::reshape) continue;
    for (std::size_t i = 0; i < layer.inputs.size(); ++i) {
      const int s = storage[static_cast<std::size_t>(layer.inputs[i])];
      if (producer_kernel[static_cast<std::size_t>(s)] == k) continue;  // on chip inside the group
      const int lv = tensor_level[static_cast<std::size_t>(s)];
      const double b = effective_bytes(layer.input_access[i], hw.memory[static_cast<std::size_t>(lv)].line_bytes);
      if (b <= 0) continue;
      add_bytes(lv, b);
      ++kernel.traversals;
      kernel.activation_bytes += b;
      if (!anchor) ++kernel.tail_traversals;
    }
    const int out = storage[static_cast<std::size_t>(layer.output)];
    if (stored[static_cast<std::size_t>(out)] &&
        (last_reader[static_cast<std::size_t>(out)] > k || graph_outputs.count(out))) {
      const double b = net.tensors[static_cast<std::size_t>(out)].bytes();
      add_bytes(tensor_level[static_cast<std::size_t>(out)], b);
      ++kernel.traversals;
      ++kernel.tail_traversals;
      kernel.activation_bytes += b;
    }
    if (layer.weight_access.bytes > 0) {
      const auto& split = weights.of_layer[static_cast<std::size_t>(m)];
      // A layer whose stored size is zero but which reads weights (none in practice) reads them at the home.
      const std::vector<std::pair<int, double>> whole{{weights.home, 1.0}};
      for (const auto& [lv, share] : split.empty() ? whole : split) {
        const double b =
            share * effective_bytes(layer.weight_access, hw.memory[static_cast<std::size_t>(lv)].line_bytes);
        add_bytes(lv, b);
        kernel.weight_bytes += b;
      }
    }
    if (layer.state_read.bytes > 0 || layer.state_write_bytes > 0) {
      add_bytes(plan.state_level,
                effective_bytes(layer.state_read, hw.memory[static_cast<std::size_t>(plan.state_level)].line_bytes) +
                    layer.state_write_bytes);
    }
    if (layer.scratch_bytes > 0) add_bytes(plan.activation_home, layer.scratch_bytes);
  }
  return kernel;
}

}  // namespace

ExecutionPlan plan_network(const NetworkSpec& net, const HardwareSpec& hw, std::size_t unit_index,
                           const PlanOptions& options) {
  const ComputeUnitSpec& unit = hw.units.at(unit_index);
  FRAMESIM_ASSERT(!unit.memory_path.empty(), "every unit has at least one memory level");
  ExecutionPlan plan;
  plan.unit = unit_index;

  const auto groups = make_groups(net, options.fuse && unit.runtime_fuses);
  const int n_kernels = static_cast<int>(groups.size());
  plan.kernel_of_layer.assign(net.layers.size(), -1);
  for (int k = 0; k < n_kernels; ++k) {
    for (int l : groups[static_cast<std::size_t>(k)].layers) plan.kernel_of_layer[static_cast<std::size_t>(l)] = k;
    for (int l : groups[static_cast<std::size_t>(k)].folded) plan.kernel_of_layer[static_cast<std::size_t>(l)] = k;
  }
  const Lifetimes life = tensor_lifetimes(net, groups, plan);
  for (int k = 0; k < n_kernels; ++k) {
    if (life.live[static_cast<std::size_t>(k)] > plan.peak_activation_bytes) {
      plan.peak_activation_bytes = life.live[static_cast<std::size_t>(k)];
      plan.peak_kernel = static_cast<std::size_t>(k);
    }
  }
  const WeightPlacement weights = runtime_weight_placement(net, hw, unit, plan.peak_activation_bytes);
  place_tensors(plan, net, hw, unit, life, weights);
  fill_footprint(plan, net, hw, life);
  // The bound's traffic: the best case's weights, activations placed as if no weight took their room.
  const WeightPlacement best = best_weight_placement(net, hw, unit);
  plan.bound_weight_bytes_at = best.stored_at;
  const std::vector<int> bound_levels =
      activation_levels(net, hw, unit, life, std::vector<double>(hw.memory.size(), 0.0));
  for (int k = 0; k < n_kernels; ++k) {
    const Group& g = groups[static_cast<std::size_t>(k)];
    plan.kernels.push_back(make_kernel(k, g, plan, net, hw, life, plan.tensor_level, weights));
    plan.kernels.back().bound_bytes = make_kernel(k, g, plan, net, hw, life, bound_levels, best).bytes;
  }
  return plan;
}

}  // namespace framesim::model
