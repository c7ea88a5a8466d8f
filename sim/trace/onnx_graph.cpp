// ONNX import, the graph as a whole: topological order, which nodes a graph output needs, tensors and their
// shapes and precisions, graph inputs and outputs, and the warnings that close an import.
#include <algorithm>

#include "trace/onnx_importer.hpp"

namespace framesim::trace::onnx_detail {

std::vector<int> OnnxImporter::topological_order() {
  const auto& g = model_.graph();
  const int n = g.node_size();
  std::unordered_map<std::string, int> producer;
  std::unordered_set<std::string> defined;
  for (const auto& i : g.input()) defined.insert(i.name());
  for (const auto& [name, c] : consts_) defined.insert(name);
  for (int i = 0; i < n; ++i)
    for (const auto& o : g.node(i).output()) {
      if (o.empty()) continue;
      if (producer.count(o) || defined.count(o))
        fail(fmt::format("tensor \"{}\" is written twice (by node {} {} and earlier): the graph is invalid", o, i,
                         g.node(i).op_type()));
      producer[o] = i;
    }
  std::vector<std::vector<int>> users(static_cast<std::size_t>(n));
  std::vector<int> pending(static_cast<std::size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    const auto& node = g.node(i);
    std::set<int> deps;
    for (const auto& in : node.input()) {
      if (in.empty() || defined.count(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end())
        fail(
            fmt::format("node {} ({} \"{}\") reads \"{}\", which no node, input or initializer defines (a "
                        "truncated or corrupt file?)",
                        i, node.op_type(), node.name(), in));
      deps.insert(it->second);
    }
    for (int d : deps) users[static_cast<std::size_t>(d)].push_back(i);
    pending[static_cast<std::size_t>(i)] = static_cast<int>(deps.size());
  }
  std::vector<int> order;
  std::vector<int> ready;
  for (int i = n - 1; i >= 0; --i)
    if (pending[static_cast<std::size_t>(i)] == 0) ready.push_back(i);
  // Keep the file's order where it is already topological (a min-heap on the node index).
  std::make_heap(ready.begin(), ready.end(), std::greater<>());
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), std::greater<>());
    const int i = ready.back();
    ready.pop_back();
    order.push_back(i);
    for (int u : users[static_cast<std::size_t>(i)])
      if (--pending[static_cast<std::size_t>(u)] == 0) {
        ready.push_back(u);
        std::push_heap(ready.begin(), ready.end(), std::greater<>());
      }
  }
  if (static_cast<int>(order.size()) != n) fail("the graph has a cycle");
  for (const auto& o : g.output())
    if (!producer.count(o.name()) && !defined.count(o.name()))
      fail(fmt::format("graph output \"{}\" is not written by any node (a truncated or corrupt file?)", o.name()));
  producer_ = std::move(producer);
  return order;
}

/// Which nodes contribute to a graph output, and which values something reads.
/// Nodes that contribute to a graph output through the inputs in `inputs_of`.
std::vector<bool> OnnxImporter::liveness(const std::vector<int>& order,
                                         const std::function<std::vector<std::string>(int)>& inputs_of,
                                         std::unordered_set<std::string>& needed) const {
  const auto& g = model_.graph();
  std::vector<bool> live(static_cast<std::size_t>(g.node_size()), false);
  for (const auto& o : g.output()) needed.insert(o.name());
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    bool used = false;
    for (const auto& o : g.node(*it).output())
      if (!o.empty() && needed.count(o)) used = true;
    if (!used) continue;
    live[static_cast<std::size_t>(*it)] = true;
    for (const auto& in : inputs_of(*it))
      if (!in.empty()) needed.insert(in);
  }
  return live;
}

void OnnxImporter::mark_needed(const std::vector<int>& order) {
  const auto& g = model_.graph();
  live_ = liveness(
      order, [&](int i) { return std::vector<std::string>(g.node(i).input().begin(), g.node(i).input().end()); },
      needed_);
  std::unordered_set<std::string> needed_before_folding;
  const auto live_before_folding = liveness(
      order, [&](int i) { return original_inputs_[static_cast<std::size_t>(i)]; }, needed_before_folding);
  std::vector<std::string> dropped;
  for (int i = 0; i < g.node_size(); ++i) {
    if (live_[static_cast<std::size_t>(i)]) continue;
    // Nodes whose work went into a constant folded here (shape arithmetic and its inputs): folded, not dropped.
    if (live_before_folding[static_cast<std::size_t>(i)]) {
      ++folded_[original_ops_[static_cast<std::size_t>(i)]];
      continue;
    }
    dropped.push_back(node_label(i));
  }
  if (!dropped.empty())
    result_.warnings.push_back(fmt::format(
        "{} node{} contribute{} to no graph output and {} dropped: {}", dropped.size(), dropped.size() == 1 ? "" : "s",
        dropped.size() == 1 ? "s" : "", dropped.size() == 1 ? "was" : "were", join_names(dropped)));

  // Layer names: the node name when non-empty and unique (and not a graph input's), else OpType_index.
  std::map<std::string, int> count;
  for (const auto& node : g.node())
    if (!node.name().empty()) ++count[node.name()];
  for (const auto& i : g.input()) used_names_.insert(i.name());
  base_names_.resize(static_cast<std::size_t>(g.node_size()));
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& node = g.node(i);
    base_names_[static_cast<std::size_t>(i)] =
        (!node.name().empty() && count[node.name()] == 1 && !used_names_.count(node.name()))
            ? node.name()
            : fmt::format("{}_{}", original_ops_[static_cast<std::size_t>(i)], i);
  }
}

std::string OnnxImporter::node_label(int i) const {
  const auto& node = model_.graph().node(i);
  const std::string& op = original_ops_[static_cast<std::size_t>(i)];
  return node.name().empty() ? fmt::format("{}_{}", op, i) : fmt::format("{} ({})", node.name(), op);
}

/// A constant's stored type; noted as lossy only if a layer reads it as weights (see stored()).
void OnnxImporter::set_type(Const& c, int elem_type, const std::string& name) {
  bool lossy = false;
  c.storage = precision_of(elem_type, lossy);
  c.onnx_type = elem_type;
  c.name = name;
}

/// The stored precision of a constant a layer reads as weights.
Precision OnnxImporter::stored(const Const& c) {
  if (weight_elements(c) > 0) {
    bool lossy = false;
    precision_of(c.onnx_type, lossy);
    if (lossy && c.onnx_type != 0) lossy_[elem_type_name(c.onnx_type)].insert(c.name);
  }
  return c.storage;
}

Precision OnnxImporter::tensor_precision(int elem_type, const std::string& name) {
  bool lossy = false;
  const Precision p = precision_of(elem_type, lossy);
  if (lossy && elem_type != 0) lossy_[elem_type_name(elem_type)].insert(name);
  return p;
}

const onnx::TypeProto* OnnxImporter::type_of(const std::string& name) const {
  auto it = types_.find(name);
  return it == types_.end() ? nullptr : it->second;
}

int OnnxImporter::elem_type(const std::string& name) const {
  const auto* t = type_of(name);
  return t && t->has_tensor_type() ? t->tensor_type().elem_type() : 0;
}

std::optional<Shape> OnnxImporter::known_shape(const std::string& name) const {
  const auto* t = type_of(name);
  if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) return std::nullopt;
  Shape s;
  for (const auto& d : t->tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
    s.push_back(d.dim_value());
  }
  return s;
}

/// A tensor's static shape, or a UserError saying why there is none.
Shape OnnxImporter::require_shape(const std::string& name, const std::string& where) const {
  const auto* t = type_of(name);
  if (t && !t->has_tensor_type())
    fail(fmt::format("{}: \"{}\" is {}, not a tensor: framesim imports tensor graphs only", where, name, kind_of(*t)));
  auto s = known_shape(name);
  if (!s)
    fail(
        fmt::format("{}: ONNX shape inference gives \"{}\" no static shape ({}); framesim needs static shapes "
                    "(fix the graph inputs' shapes with --input NAME=..., or this op's output depends on values "
                    "known only at run time)",
                    where, name, t ? describe_type(*t) : "no type at all"));
  for (auto d : *s)
    if (d == 0)
      fail(fmt::format("{}: \"{}\" has shape {} with a zero-sized dimension: framesim needs non-empty tensors", where,
                       name, describe_type(*t)));
  return *s;
}

void OnnxImporter::add_graph_inputs() {
  for (const auto& i : model_.graph().input()) {
    if (consts_.count(i.name())) continue;
    if (!needed_.count(i.name()) && !options_.input_shapes.count(i.name())) {
      unused_inputs_.push_back(i.name());
    }
    model::TensorSpec t;
    t.name = i.name();
    t.shape = require_shape(i.name(), fmt::format("input \"{}\"", i.name()));
    t.precision = tensor_precision(i.type().tensor_type().elem_type(), i.name());
    tensor_of_[i.name()] = static_cast<int>(net_().tensors.size());
    net_().inputs.push_back(static_cast<int>(net_().tensors.size()));
    net_().tensors.push_back(std::move(t));
  }
  auto& net = net_();
  // The file's name says which model it is (graph names are often the exporter's: "tf2onnx", "main_graph");
  // a file called model.onnx (as in ONNX's test data) says less than its graph's name.
  net.name = path_.stem().string();
  if ((net.name.empty() || net.name == "model") && !model_.graph().name().empty()) net.name = model_.graph().name();
  std::string opsets;
  for (const auto& o : model_.opset_import())
    opsets +=
        fmt::format("{}{} {}", opsets.empty() ? "" : ", ", o.domain().empty() ? "ai.onnx" : o.domain(), o.version());
  net.description =
      fmt::format("imported from {} (ONNX IR {}, opset {}{})", path_.filename().string(), model_.ir_version(), opsets,
                  model_.producer_name().empty()
                      ? ""
                      : fmt::format(", produced by {}{}", model_.producer_name(),
                                    model_.producer_version().empty() ? "" : " " + model_.producer_version()));
  net.source_file = file_;
  net.fusion = model::FusionMode::automatic;
}

model::NetworkSpec& OnnxImporter::net_() { return result_.network; }

void OnnxImporter::add_graph_outputs() {
  for (const auto& o : model_.graph().output()) {
    const std::string& v = o.name();
    auto it = tensor_of_.find(v);
    if (it == tensor_of_.end()) {
      auto k = consts_.find(v);
      FRAMESIM_ASSERT(k != consts_.end(), "a graph output is a layer's, an input's or a constant");
      // A constant as a graph output: a layer copying it out (read as weights, written once).
      const int index = producer_.count(v) ? producer_.at(v) : -1;
      const onnx::NodeProto empty;
      const auto& node = index >= 0 ? model_.graph().node(index) : empty;
      const Ctx c{
          node, index, index >= 0 ? base_names_[static_cast<std::size_t>(index)] : v,
          index >= 0 ? fmt::format("node {} ({})", index, node.op_type()) : fmt::format("initializer \"{}\"", v),
          index >= 0 ? node_label(index) : v};
      const Precision p = stored(k->second);
      note("a graph output that is a constant: written by a custom layer that reads it as weights", c);
      emit_custom(c, v, {}, 0, weight_elements(k->second), LayerPrecision{p, p, p}, "",
                  k->second.shape ? k->second.shape : std::optional<Shape>(require_shape(v, c.where)));
      it = tensor_of_.find(v);
    }
    if (std::find(net_().outputs.begin(), net_().outputs.end(), it->second) == net_().outputs.end())
      net_().outputs.push_back(it->second);
  }
}

void OnnxImporter::finish_warnings() {
  auto& w = result_.warnings;
  for (const auto& message : note_order_) {
    const auto& nodes = notes_[message];
    w.push_back(
        fmt::format("{} ({} node{}): {}", join_names(nodes), nodes.size(), nodes.size() == 1 ? "" : "s", message));
  }
  if (!folded_.empty()) {
    int total = 0;
    std::vector<std::string> parts;
    for (const auto& [op, n] : folded_) {
      total += n;
      parts.push_back(fmt::format("{} x{}", op, n));
    }
    w.push_back(fmt::format("{} node{} compute only constants and were folded into weights (not costed): {}", total,
                            total == 1 ? "" : "s", join_names(parts, 20)));
  }
  for (const auto& [type, names] : lossy_) {
    std::vector<std::string> list(names.begin(), names.end());
    const bool wide = type == "INT64" || type == "UINT64" || type == "DOUBLE";
    w.push_back(fmt::format("{} tensor{} of type {} ({}) counted as {}: framesim has no such type{}", list.size(),
                            list.size() == 1 ? "" : "s", type, join_names(list),
                            type == "DOUBLE" || type.find("COMPLEX") == 0 ? "fp32" : "int32",
                            wide ? ", so their bytes are halved" : ""));
  }
  if (!unused_inputs_.empty())
    w.push_back(fmt::format("graph input{} {} read by no layer", unused_inputs_.size() == 1 ? "" : "s",
                            join_names(unused_inputs_)));
}

}  // namespace framesim::trace::onnx_detail
