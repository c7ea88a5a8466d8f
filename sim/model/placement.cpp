#include "model/placement.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"
#include "model/handoff.hpp"

namespace framesim::model {

std::optional<std::string> refusal(const ComputeUnitSpec& unit, const NetworkSpec& net, const LayerSpec& layer) {
  if (!unit.capabilities || layer.kind == OpKind::reshape) return std::nullopt;
  const UnitCapabilities& caps = *unit.capabilities;
  if (!caps.op_classes.empty() || !caps.ops.empty()) {
    const bool by_class =
        std::find(caps.op_classes.begin(), caps.op_classes.end(), layer.op_class) != caps.op_classes.end();
    const bool by_name = std::find(caps.ops.begin(), caps.ops.end(), layer.op) != caps.ops.end();
    if (!by_class && !by_name) {
      if (caps.ops.empty())
        return fmt::format("{} does not run op class {} (op {})", unit.name, op_class_name(layer.op_class), layer.op);
      if (caps.op_classes.empty()) return fmt::format("{} does not run op {}", unit.name, layer.op);
      return fmt::format("{} runs neither op {} nor op class {}", unit.name, layer.op, op_class_name(layer.op_class));
    }
  }
  if (!caps.precisions.empty() &&
      std::find(caps.precisions.begin(), caps.precisions.end(), layer.precision.compute) == caps.precisions.end())
    return fmt::format("{} does not compute in {}", unit.name, precision_name(layer.precision.compute));
  if (caps.max_tensor_bytes) {
    std::vector<int> tensors = layer.inputs;
    if (layer.output >= 0) tensors.push_back(layer.output);
    for (int t : tensors) {
      const auto& tensor = net.tensors[static_cast<std::size_t>(t)];
      if (tensor.bytes() > *caps.max_tensor_bytes)
        return fmt::format("tensor {} ({}) is larger than {}'s max_tensor ({})", tensor.name,
                           core::format_bytes(tensor.bytes()), unit.name, core::format_bytes(*caps.max_tensor_bytes));
    }
  }
  return std::nullopt;
}

LayerPlacement place_layers(const HardwareSpec& hw, const NetworkSpec& net, std::size_t unit,
                            const std::vector<SplitSpec>& split) {
  LayerPlacement out;
  const std::size_t n = net.layers.size();
  out.unit_of_layer.assign(n, unit);
  out.fell_back.assign(n, false);
  for (const SplitSpec& cut : split)
    for (std::size_t i = cut.first_layer; i < n; ++i) out.unit_of_layer[i] = cut.unit;
  for (std::size_t i = 0; i < n; ++i) {
    const LayerSpec& layer = net.layers[i];
    const ComputeUnitSpec& u = hw.units[out.unit_of_layer[i]];
    const auto why = refusal(u, net, layer);
    if (!why) continue;
    const auto fallback = u.capabilities->fallback;
    if (!fallback) {
      out.problems.push_back(
          fmt::format("layer {} ({}) cannot run on {}: {}, and {} names no fallback (capabilities.fallback)",
                      layer.name, layer.op, u.name, *why, u.name));
      continue;
    }
    if (const auto why_not = refusal(hw.units[*fallback], net, layer)) {
      out.problems.push_back(fmt::format("layer {} ({}) cannot run on {} ({}) nor on its fallback {} ({})", layer.name,
                                         layer.op, u.name, *why, hw.units[*fallback].name, *why_not));
      continue;
    }
    out.unit_of_layer[i] = *fallback;
    out.fell_back[i] = true;
  }
  // A free reshape follows its neighbour: it is no kernel, so it should not cut a part.
  for (std::size_t i = 0; i < n; ++i) {
    if (net.layers[i].kind != OpKind::reshape) continue;
    if (i > 0) {
      out.unit_of_layer[i] = out.unit_of_layer[i - 1];
    } else {
      std::size_t j = i;
      while (j < n && net.layers[j].kind == OpKind::reshape) ++j;
      if (j < n) out.unit_of_layer[i] = out.unit_of_layer[j];
    }
  }
  return out;
}

NetworkSpec network_slice(const NetworkSpec& net, std::size_t first, std::size_t end) {
  NetworkSpec out;
  out.name = fmt::format("{}[{}:{}]", net.name, first, end);
  out.description = net.description;
  out.source_file = net.source_file;
  out.fusion = net.fusion;
  out.tensors = net.tensors;
  std::vector<int> producer(net.tensors.size(), -1);
  for (std::size_t l = 0; l < net.layers.size(); ++l)
    if (net.layers[l].output >= 0) producer[static_cast<std::size_t>(net.layers[l].output)] = static_cast<int>(l);
  auto inside = [&](int layer) { return layer >= static_cast<int>(first) && layer < static_cast<int>(end); };
  for (std::size_t t = 0; t < out.tensors.size(); ++t) {
    const int p = producer[t];
    out.tensors[t].producer = inside(p) ? p - static_cast<int>(first) : -1;
  }
  for (std::size_t l = first; l < end; ++l) out.layers.push_back(net.layers[l]);
  // Inputs: what the slice reads that it does not produce (by storage: a reshape outside aliases a tensor).
  std::set<int> inputs, outputs;
  for (std::size_t l = first; l < end; ++l)
    for (int t : net.layers[l].inputs) {
      const int s = net.storage_of(t);
      if (!inside(producer[static_cast<std::size_t>(s)])) inputs.insert(t);
    }
  for (std::size_t l = end; l < net.layers.size(); ++l)
    for (int t : net.layers[l].inputs) {
      const int s = net.storage_of(t);
      if (inside(producer[static_cast<std::size_t>(s)])) outputs.insert(s);
    }
  for (int t : net.outputs) {
    const int s = net.storage_of(t);
    if (inside(producer[static_cast<std::size_t>(s)])) outputs.insert(s);
  }
  out.inputs.assign(inputs.begin(), inputs.end());
  out.outputs.assign(outputs.begin(), outputs.end());
  for (const auto& group : net.groups) {
    std::vector<int> kept;
    for (int l : group)
      if (inside(l)) kept.push_back(l - static_cast<int>(first));
    if (kept.size() > 1) out.groups.push_back(kept);
  }
  return out;
}

std::vector<NetworkPart> cut_network(const NetworkSpec& net, const std::vector<std::size_t>& unit_of_layer) {
  std::vector<NetworkPart> parts;
  const std::size_t n = net.layers.size();
  std::vector<int> part_of_layer(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (parts.empty() || parts.back().unit != unit_of_layer[i]) {
      NetworkPart p;
      p.unit = unit_of_layer[i];
      p.first_layer = i;
      parts.push_back(std::move(p));
    }
    parts.back().end_layer = i + 1;
    part_of_layer[i] = static_cast<int>(parts.size()) - 1;
  }
  std::vector<int> producer(net.tensors.size(), -1);
  for (std::size_t l = 0; l < n; ++l)
    if (net.layers[l].output >= 0) producer[static_cast<std::size_t>(net.layers[l].output)] = static_cast<int>(l);
  for (std::size_t k = 0; k < parts.size(); ++k) {
    NetworkPart& p = parts[k];
    p.network = network_slice(net, p.first_layer, p.end_layer);
    std::set<int> from_elsewhere;
    for (std::size_t l = p.first_layer; l < p.end_layer; ++l)
      for (int t : net.layers[l].inputs) {
        const int s = net.storage_of(t);
        const int prod = producer[static_cast<std::size_t>(s)];
        if (prod < 0 || part_of_layer[static_cast<std::size_t>(prod)] == static_cast<int>(k)) continue;
        if (parts[static_cast<std::size_t>(part_of_layer[static_cast<std::size_t>(prod)])].unit != p.unit)
          from_elsewhere.insert(s);
      }
    for (int s : from_elsewhere) p.handover_in_bytes += net.tensors[static_cast<std::size_t>(s)].bytes();
  }
  return parts;
}

std::optional<std::size_t> shared_level(const HardwareSpec& hw, std::size_t a, std::size_t b) {
  const auto& pb = hw.units[b].memory_path;
  for (std::size_t lv : hw.units[a].memory_path)
    if (std::find(pb.begin(), pb.end(), lv) != pb.end()) return lv;
  return std::nullopt;
}

namespace {

/// The stages one stage of the file compiles into, in chain order; the last keeps the stage's name.
std::vector<StageSpec> expand_stage(ScenarioSpec& spec, const StageSpec& stage, const std::vector<NetworkPart>& parts,
                                    std::vector<std::string>& problems) {
  std::vector<StageSpec> out;
  const auto& hw = spec.hardware;
  const std::string net_name =
      spec.networks[static_cast<std::size_t>(stage.work.network)].name;  // a copy: networks grow
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const NetworkPart& p = parts[k];
    const bool last = k + 1 == parts.size();
    StageSpec base;
    base.priority = stage.priority;
    base.queue_depth = stage.queue_depth;
    base.overflow = stage.overflow;
    base.part_of = stage.name;
    base.declared = stage.declared;  // renumbered by compile_placements, the parts in chain order
    base.work.scale = stage.work.scale;
    auto chained = [&](StageSpec s) {
      if (!out.empty()) {
        s.inputs = {{false, 0}};  // rewired to the previous element by compile_placements
        s.input_names = {out.back().name};
      }
      out.push_back(std::move(s));
    };
    if (k > 0) {
      const std::size_t from = parts[k - 1].unit;
      if (!shared_level(hw, from, p.unit)) {
        problems.push_back(fmt::format("units {} and {} share no memory level: a tensor cannot be handed over",
                                       hw.units[from].name, hw.units[p.unit].name));
        return {};
      }
    }
    StageSpec part = base;
    part.name = last ? stage.name : fmt::format("{}.part{}", stage.name, k);
    part.unit = p.unit;
    if (p.unit == stage.unit) {
      part.cores = stage.cores;
      part.pinned = stage.pinned;
    }
    part.work = stage.work;
    if (last) part.deadline_s = stage.deadline_s;  // a sink's deadline: the path ends at its last part
    spec.networks.push_back({fmt::format("{}[{}:{}]", net_name, p.first_layer, p.end_layer), p.network});
    part.work.network = static_cast<int>(spec.networks.size()) - 1;
    part.side_work.clear();
    for (const auto& side : stage.side_work)
      if (!side.derived && ((side.after && last) || (!side.after && k == 0))) {
        if (side.unit != p.unit) part.side_work.push_back(side);
        else
          problems.push_back(fmt::format("its side work on {} would run on the unit of its part {}",
                                         hw.units[side.unit].name, part.name));
      }
    // The hand-off of a part on an accelerator: its own inputs and outputs, i.e. the handed-over tensors.
    for (auto& side : handoff_side_work(hw, p.unit, p.network)) part.side_work.push_back(std::move(side));
    chained(part);
  }
  out.front().inputs = stage.inputs;
  out.front().input_names = stage.input_names;
  out.front().policy = stage.policy;
  return out;
}

}  // namespace

std::vector<PlacementProblem> compile_placements(ScenarioSpec& spec) {
  std::vector<PlacementProblem> problems;
  ScenarioSpec out = spec;
  out.stages.clear();
  std::vector<std::size_t> new_last(spec.stages.size());
  std::vector<std::vector<std::size_t>> expansion(spec.stages.size());
  for (std::size_t i = 0; i < spec.stages.size(); ++i) {
    const StageSpec& stage = spec.stages[i];
    std::vector<StageSpec> compiled{stage};
    if (stage.work.kind == WorkSpec::Kind::network) {
      const auto& net = spec.networks[static_cast<std::size_t>(stage.work.network)].network;
      const LayerPlacement placed = place_layers(spec.hardware, net, stage.unit, stage.split);
      for (const auto& p : placed.problems) problems.push_back({i, p});
      const auto parts = placed.problems.empty() ? cut_network(net, placed.unit_of_layer) : std::vector<NetworkPart>{};
      if (parts.size() > 1) {
        if (!stage.measured.empty()) {
          problems.push_back({i, "measured layer times cannot be replayed on a network split across units"});
          continue;
        }
        std::vector<std::string> texts;
        compiled = expand_stage(out, stage, parts, texts);
        for (const auto& t : texts) problems.push_back({i, t});
        if (!texts.empty()) continue;
        std::size_t fell = 0;
        for (bool f : placed.fell_back) fell += f ? 1 : 0;
        std::vector<std::string> where;
        for (const auto& p : parts)
          where.push_back(fmt::format("[{}, {}) on {}", p.first_layer, p.end_layer, spec.hardware.units[p.unit].name));
        out.notes.push_back(fmt::format("stage {}: layers {}{}", stage.name, fmt::join(where, ", "),
                                        fell ? fmt::format(" ({} fell back from capabilities)", fell) : ""));
        if (stage.slice_s)
          out.notes.push_back(
              fmt::format("stage {}: its slice is not judged (the stage runs as {} parts)", stage.name, parts.size()));
      }
    }
    for (auto& s : compiled) {
      const std::size_t index = out.stages.size();
      if (!expansion[i].empty()) {
        s.inputs = {{false, index - 1}};
      } else {
        for (auto& in : s.inputs)
          if (!in.sensor) in.index = new_last[in.index];
      }
      expansion[i].push_back(index);
      out.stages.push_back(std::move(s));
    }
    new_last[i] = out.stages.size() - 1;
  }
  if (!problems.empty()) return problems;
  // Scheduling ties follow the file's order; the parts of a stage follow one another there.
  std::vector<std::size_t> order(out.stages.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return out.stages[a].declared < out.stages[b].declared; });
  for (std::size_t rank = 0; rank < order.size(); ++rank) out.stages[order[rank]].declared = rank;
  for (auto& t : out.tasks)
    if (t.reads_stage) t.reads_stage = new_last[*t.reads_stage];
  for (auto& c : out.chains) {
    std::vector<std::size_t> stages, edges;
    for (std::size_t k = 0; k < c.stages.size(); ++k) {
      const auto& e = expansion[c.stages[k]];
      for (std::size_t j = 0; j < e.size(); ++j) {
        stages.push_back(e[j]);
        edges.push_back(j == 0 ? c.input_edges[k] : 0);
      }
    }
    c.stages = std::move(stages);
    c.input_edges = std::move(edges);
  }
  spec = std::move(out);
  return {};
}

}  // namespace framesim::model
