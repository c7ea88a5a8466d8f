// ONNX If nodes, resolved before anything else: the branch that runs is inlined into the main graph, so the rest of
// the importer sees a static graph.
//   - a condition that is a constant (an initializer, or a Constant node's value): that branch;
//   - a condition the importer's shape folding computes (onnx_fold.cpp: e.g. Equal(Gather(Shape(x), 1), 64) with
//     x's shape static or given by --input): that branch only. The folding is run on a copy of the model with
//     the If nodes still in it; only the condition's value is taken from it;
//   - a condition computed at run time: each branch is inlined into a copy of the model and imported on its own;
//     the one with more operations (then more bytes moved) is kept. Both are costed and the larger is the network:
//     a bound for whichever runs. While two branches are compared, further Ifs with run-time conditions inside
//     them are taken at their then branch; each is compared in turn once its enclosing If is resolved.
// Each If is said in the warnings. Loop and Scan (repeated subgraphs) are refused (onnx_import.cpp).
#include <unordered_map>

#include "trace/onnx_importer.hpp"

namespace framesim::trace::onnx_detail {

namespace {

bool standard_domain(const onnx::NodeProto& n) { return n.domain().empty() || n.domain() == "ai.onnx"; }

/// Renames every reference to a name in `names` (node inputs and outputs, here and in nested subgraphs).
void rename_in(onnx::NodeProto& node, const std::unordered_map<std::string, std::string>& names) {
  auto rename = [&](std::string* s) {
    if (auto it = names.find(*s); it != names.end()) *s = it->second;
  };
  for (auto& i : *node.mutable_input()) rename(&i);
  for (auto& o : *node.mutable_output()) rename(&o);
  for (auto& a : *node.mutable_attribute()) {
    auto in_graph = [&](onnx::GraphProto& g) {
      for (auto& n : *g.mutable_node()) rename_in(n, names);
      for (auto& o : *g.mutable_output()) rename(o.mutable_name());
    };
    if (a.has_g()) in_graph(*a.mutable_g());
    for (auto& g : *a.mutable_graphs()) in_graph(g);
  }
}

/// The branch's graph attribute of If node `node` ("then_branch" or "else_branch"), or nullptr.
const onnx::GraphProto* branch_of(const onnx::NodeProto& node, const std::string& which) {
  for (const auto& a : node.attribute())
    if (a.name() == which && a.has_g()) return &a.g();
  return nullptr;
}

/// `g` with node `index` (an If) replaced by the nodes of `branch`: the branch's own values and initializers are
/// prefixed with `prefix` (so they cannot collide with the outer graph's), its outputs become the If's outputs
/// through Identity nodes (free reshapes), and the outer values it reads are read directly.
void inline_branch(onnx::GraphProto& g, int index, const onnx::GraphProto& branch, const std::string& prefix) {
  const onnx::NodeProto if_node = g.node(index);
  std::unordered_map<std::string, std::string> names;
  for (const auto& n : branch.node())
    for (const auto& o : n.output())
      if (!o.empty()) names[o] = prefix + o;
  for (const auto& t : branch.initializer()) names[t.name()] = prefix + t.name();
  for (const auto& t : branch.sparse_initializer()) names[t.values().name()] = prefix + t.values().name();

  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (int i = 0; i < index; ++i) *nodes.Add() = g.node(i);
  int k = 0;
  for (const auto& n : branch.node()) {
    auto* copy = nodes.Add();
    *copy = n;
    rename_in(*copy, names);
    copy->set_name(prefix + (n.name().empty() ? fmt::format("{}_{}", n.op_type(), k) : n.name()));
    ++k;
  }
  for (int o = 0; o < if_node.output_size() && o < branch.output_size(); ++o) {
    if (if_node.output(o).empty()) continue;
    auto* id = nodes.Add();
    id->set_op_type("Identity");
    id->set_name(fmt::format("{}out{}", prefix, o));
    const std::string& from = branch.output(o).name();
    auto it = names.find(from);
    id->add_input(it == names.end() ? from : it->second);
    id->add_output(if_node.output(o));
  }
  for (int i = index + 1; i < g.node_size(); ++i) *nodes.Add() = g.node(i);
  g.mutable_node()->Swap(&nodes);
  for (const auto& t : branch.initializer()) {
    auto* copy = g.add_initializer();
    *copy = t;
    copy->set_name(prefix + t.name());
  }
  for (const auto& t : branch.sparse_initializer()) {
    auto* copy = g.add_sparse_initializer();
    *copy = t;
    copy->mutable_values()->set_name(prefix + t.values().name());
  }
  for (const auto& v : branch.value_info()) {
    auto* copy = g.add_value_info();
    *copy = v;
    if (auto it = names.find(v.name()); it != names.end()) copy->set_name(it->second);
  }
}

/// The value of a condition known before run time: an initializer or a Constant node's `value` of one element.
std::optional<bool> constant_condition(const onnx::GraphProto& g, const std::string& name) {
  std::vector<double> values;
  for (const auto& t : g.initializer())
    if (t.name() == name && read_values(t, values) && values.size() == 1) return values[0] != 0;
  for (const auto& n : g.node()) {
    if (n.op_type() != "Constant" || !standard_domain(n) || n.output_size() != 1 || n.output(0) != name) continue;
    for (const auto& a : n.attribute())
      if (a.name() == "value" && a.has_t() && read_values(a.t(), values) && values.size() == 1) return values[0] != 0;
  }
  return std::nullopt;
}

/// Bytes a network moves with every layer its own kernel: inputs read, outputs written, weights read.
double unfused_bytes(const model::NetworkSpec& net) {
  double bytes = 0;
  for (const auto& l : net.layers) {
    for (const auto& a : l.input_access) bytes += a.bytes;
    if (l.writes_output()) bytes += net.tensors[static_cast<std::size_t>(l.output)].bytes();
    bytes += l.weight_access.bytes;
  }
  return bytes;
}

}  // namespace

/// The value of an If's condition when the shape folding computes it from static shapes and constants: the
/// importer's first steps and folding rounds (as run() does them) on a copy of the model, If nodes included;
/// nullopt when the condition stays unknown, or when those steps refuse the copy (the import proper then
/// reports the problem).
std::optional<bool> OnnxImporter::folded_condition(const std::string& name) const {
  OnnxImporter probe(path_, options_);
  probe.model_ = model_;
  probe.preloaded_ = true;
  try {
    probe.collect_initializers();
    probe.prepare_inputs();
    const auto order = probe.topological_order();
    for (int round = 0; round < 16; ++round) {
      probe.infer_shapes();
      probe.collect_types();
      const bool changed = probe.fold_small_values(order);
      if (const Value* v = probe.value(name); v && v->v.size() == 1) return v->v[0] != 0;
      if (!changed) break;
    }
  } catch (const core::UserError&) {
    return std::nullopt;
  }
  return std::nullopt;
}

void OnnxImporter::resolve_if_nodes() {
  constexpr int kMaxIfs = 256;  // each run-time condition costs two imports of the model
  for (int resolved = 0;; ++resolved) {
    auto& g = *model_.mutable_graph();
    int index = -1;
    for (int i = 0; i < g.node_size() && index < 0; ++i)
      if (g.node(i).op_type() == "If" && standard_domain(g.node(i))) index = i;
    if (index < 0) return;
    const onnx::NodeProto node = g.node(index);
    const std::string where = fmt::format("If \"{}\"", node.name().empty() ? node.output(0) : node.name());
    if (resolved >= kMaxIfs) fail(fmt::format("more than {} If nodes: framesim resolves at most that many", kMaxIfs));
    const onnx::GraphProto* then_g = branch_of(node, "then_branch");
    const onnx::GraphProto* else_g = branch_of(node, "else_branch");
    if (!then_g || !else_g || node.input_size() != 1)
      fail(fmt::format("{}: an If needs one condition input and the graphs then_branch and else_branch", where));
    const std::string prefix = (node.name().empty() ? fmt::format("If_{}", resolved) : node.name()) + "/";
    if (const auto cond = constant_condition(g, node.input(0))) {
      inline_branch(g, index, *cond ? *then_g : *else_g, prefix + (*cond ? "then/" : "else/"));
      control_notes_.push_back(fmt::format("{}: the condition is the constant {}: its {} is costed", where,
                                           *cond ? "true" : "false", *cond ? "then_branch" : "else_branch"));
      continue;
    }
    if (const auto cond = folded_condition(node.input(0))) {
      inline_branch(g, index, *cond ? *then_g : *else_g, prefix + (*cond ? "then/" : "else/"));
      control_notes_.push_back(
          fmt::format("{}: the condition \"{}\" folds to {} from static shapes and constants: only its {} is costed",
                      where, node.input(0), *cond ? "true" : "false", *cond ? "then_branch" : "else_branch"));
      continue;
    }
    if (first_branch_only_) {  // comparing an enclosing If: this one at its then branch
      inline_branch(g, index, *then_g, prefix + "then/");
      continue;
    }
    onnx::ModelProto with_then = model_, with_else = model_;
    inline_branch(*with_then.mutable_graph(), index, *then_g, prefix + "then/");
    inline_branch(*with_else.mutable_graph(), index, *else_g, prefix + "else/");
    auto cost = [&](onnx::ModelProto m) {
      OnnxImporter variant(path_, options_);
      variant.model_ = std::move(m);
      variant.preloaded_ = true;
      variant.first_branch_only_ = true;
      const auto r = variant.run();
      return std::pair{r.network.total_ops(), unfused_bytes(r.network)};
    };
    const auto then_cost = cost(with_then);
    const auto else_cost = cost(with_else);
    const bool take_then = then_cost >= else_cost;
    control_notes_.push_back(fmt::format(
        "{}: the condition is computed at run time; both branches costed (then_branch {:.6g} ops and {:.6g} bytes "
        "over the network, else_branch {:.6g} ops and {:.6g} bytes): the larger, {}, is the network (a bound for "
        "either)",
        where, then_cost.first, then_cost.second, else_cost.first, else_cost.second,
        take_then ? "then_branch" : "else_branch"));
    model_ = take_then ? std::move(with_then) : std::move(with_else);
  }
}

}  // namespace framesim::trace::onnx_detail
