// ONNX import, one node at a time: its attributes and operands, the precision of what it writes, the layers it
// emits (checked against ONNX's shapes), folding of constant nodes, and the dispatch by op type.
#include <algorithm>
#include <cmath>

#include "trace/onnx_importer.hpp"

namespace framesim::trace::onnx_detail {

const onnx::AttributeProto* OnnxImporter::attr(const Ctx& c, std::string_view name) const {
  for (const auto& a : c.node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::int64_t OnnxImporter::attr_int(const Ctx& c, std::string_view name, std::int64_t fallback) const {
  const auto* a = attr(c, name);
  return a ? a->i() : fallback;
}

double OnnxImporter::attr_float(const Ctx& c, std::string_view name, double fallback) const {
  const auto* a = attr(c, name);
  return a ? a->f() : fallback;
}

std::string OnnxImporter::attr_string(const Ctx& c, std::string_view name, const std::string& fallback) const {
  const auto* a = attr(c, name);
  return a ? a->s() : fallback;
}

std::optional<std::vector<std::int64_t>> OnnxImporter::attr_ints(const Ctx& c, std::string_view name) const {
  const auto* a = attr(c, name);
  if (!a) return std::nullopt;
  return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
}

Operand OnnxImporter::operand(const Ctx& c, int i) const {
  Operand o;
  if (i >= c.node.input_size() || c.node.input(i).empty()) return o;
  o.name = c.node.input(i);
  if (auto it = consts_.find(o.name); it != consts_.end()) {
    o.kind = Operand::constant;
    o.c = &it->second;
    return o;
  }
  auto it = tensor_of_.find(o.name);
  if (it == tensor_of_.end()) fail(fmt::format("{}: reads \"{}\", which no earlier layer wrote", c.where, o.name));
  o.kind = Operand::activation;
  o.tensor = it->second;
  return o;
}

std::vector<Operand> OnnxImporter::operands(const Ctx& c) const {
  std::vector<Operand> out;
  for (int i = 0; i < c.node.input_size(); ++i) out.push_back(operand(c, i));
  return out;
}

const model::TensorSpec& OnnxImporter::tensor(int id) { return net_().tensors[static_cast<std::size_t>(id)]; }

const Shape& OnnxImporter::shape_of(const Operand& o) {
  if (o.act()) return tensor(o.tensor).shape;
  if (!o.c->shape) fail(fmt::format("the constant \"{}\" ({}) has no static shape", o.name, o.c->origin));
  return *o.c->shape;
}

/// Output precision of the node's output `i`.
Precision OnnxImporter::out_precision(const Ctx& c, int i, const std::vector<Operand>& ops) {
  const std::string& name = c.node.output(i);
  const int t = elem_type(name);
  if (t != 0) return tensor_precision(t, name);
  for (const auto& o : ops)
    if (o.act()) return tensor(o.tensor).precision;
  return Precision::fp32;
}

/// Activations: the output's; compute: the first float activation input's (else the first input's).
LayerPrecision OnnxImporter::precision_for(const std::vector<Operand>& ops, Precision out,
                                           std::optional<Precision> weights, std::optional<Precision> compute) {
  LayerPrecision p{out, out, out};
  if (weights) p.weights = *weights;
  if (compute) {
    p.compute = *compute;
    return p;
  }
  std::optional<Precision> first, first_float;
  for (const auto& o : ops) {
    if (!o.act()) continue;
    const Precision q = tensor(o.tensor).precision;
    if (!first) first = q;
    if (!first_float && model::is_float(q)) first_float = q;
  }
  p.compute = first_float ? *first_float : first ? *first : out;
  return p;
}

/// The stored precision of the biggest constant among `ops` (the weights' precision of a layer).
std::optional<Precision> OnnxImporter::weights_precision(const std::vector<Operand>& ops) {
  std::optional<Precision> p;
  double most = 0;  // immediates (one element) are no weights
  for (const auto& o : ops)
    if (o.cst() && weight_elements(*o.c) > most) {
      most = weight_elements(*o.c);
      p = stored(*o.c);
    }
  return p;
}

double OnnxImporter::constant_weights(const std::vector<Operand>& ops) {
  double n = 0;
  for (const auto& o : ops)
    if (o.cst()) {
      stored(*o.c);
      n += weight_elements(*o.c);
    }
  return n;
}

std::vector<int> OnnxImporter::activations(const std::vector<Operand>& ops) {
  std::vector<int> out;
  for (const auto& o : ops)
    if (o.act()) out.push_back(o.tensor);
  return out;
}

void OnnxImporter::note(const std::string& message, const Ctx& c) {
  auto [it, inserted] = notes_.try_emplace(message);
  if (inserted) note_order_.push_back(message);
  it->second.push_back(c.label);
}

std::string OnnxImporter::layer_name(const Ctx& c, const std::string& suffix) {
  std::string name = c.base + suffix;
  if (used_names_.count(name)) {
    int k = 2;
    while (used_names_.count(fmt::format("{}_{}", name, k))) ++k;
    name = fmt::format("{}_{}", name, k);
  }
  used_names_.insert(name);
  return name;
}

/// Sparse constants (sparse initializers, a Constant's sparse_value) among the node's inputs: a layer holding
/// weights stores their non-zero values and indices, not the dense tensor (the same as TFLite's sparse tensors,
/// tflite_sparse.cpp): conv2d, linear, matmul of one input and embedding get sparse_zeros (the dense elements
/// left out) and index_bytes; a custom layer, whose weights already count the stored values, index_bytes.
void OnnxImporter::sparse_storage(const Ctx& c, Spec& s) const {
  const bool dense_weights =
      s.op == "conv2d" || s.op == "linear" || s.op == "embedding" || (s.op == "matmul" && s.inputs.size() == 1);
  if (!dense_weights && !(s.op == "custom" && s.params.count("weights"))) return;
  double zeros = 0, index = 0;
  bool any = false;
  std::set<std::string> seen;
  for (const auto& in : c.node.input()) {
    const auto it = consts_.find(in);
    if (it == consts_.end() || !it->second.sparse || !it->second.shape || !seen.insert(in).second) continue;
    any = true;
    zeros += model::shape_elements(*it->second.shape) - it->second.stored.value_or(0);
    index += it->second.index_bytes;
  }
  if (!any) return;
  if (dense_weights) s.params["sparse_zeros"] = static_cast<std::int64_t>(std::max(0.0, zeros));
  s.params["index_bytes"] = static_cast<std::int64_t>(index);
}

/// Throws on a build error or a shape that differs from ONNX's, unless `fallback_ops` is given: then the
/// node is costed as custom with those ops (and listed in the warnings).
int OnnxImporter::emit(const Ctx& c, Spec s, std::optional<double> fallback_ops, double fallback_weights) {
  sparse_storage(c, s);
  const model::OpSchema* schema = model::find_op(s.op);
  FRAMESIM_ASSERT(schema != nullptr, "the importer maps to catalogue ops");
  const Shape expect = s.expect ? *s.expect : require_shape(s.value, c.where);
  std::vector<const model::TensorSpec*> ins;
  for (int t : s.inputs) ins.push_back(&tensor(t));
  const std::string name = layer_name(c, s.suffix);
  auto result = model::build_layer(*schema, name, s.params, ins, s.precision);
  std::string problem;
  if (auto* e = std::get_if<model::OpError>(&result)) {
    problem = fmt::format("framesim's {} refuses it: {}{}", s.op, e->key.empty() ? "" : e->key + ": ", e->message);
  } else if (std::get<model::BuiltLayer>(result).output.shape != expect) {
    problem = fmt::format("framesim's {} gives {} but ONNX shape inference gives {}", s.op,
                          shape_text(std::get<model::BuiltLayer>(result).output.shape), shape_text(expect));
  }
  if (!problem.empty()) {
    if (!fallback_ops) fail(fmt::format("{}: {}", c.where, problem));
    used_names_.erase(name);
    note(fmt::format("{} could not be expressed as framesim's {} ({}); costed as custom with the same formula",
                     c.node.op_type(), s.op, problem),
         c);
    return emit_custom(c, s.value, s.inputs, *fallback_ops, fallback_weights, s.precision, s.suffix, expect);
  }
  auto& built = std::get<model::BuiltLayer>(result);
  auto& net = net_();
  const int layer_index = static_cast<int>(net.layers.size());
  const int tensor_index = static_cast<int>(net.tensors.size());
  built.layer.inputs = s.inputs;
  built.layer.output = tensor_index;
  built.layer.source = fmt::format("{}: {}", file_, c.where);
  built.output.producer = layer_index;
  if (built.layer.kind == model::OpKind::reshape) built.output.alias_of = net.storage_of(s.inputs.front());
  net.layers.push_back(std::move(built.layer));
  net.tensors.push_back(std::move(built.output));
  tensor_of_[s.value] = tensor_index;
  return tensor_index;
}

/// A custom layer; `op_class` (an op_class_name) says which efficiency its arithmetic runs at (default:
/// data movement), and an elementwise one may join its producer's epilogue.
int OnnxImporter::emit_custom(const Ctx& c, const std::string& value, std::vector<int> inputs, double ops,
                              double weights, LayerPrecision precision, const std::string& suffix,
                              std::optional<Shape> expect, std::string_view op_class) {
  const Shape shape = expect ? *expect : require_shape(value, c.where);
  OpParams p{{"ops", ops}, {"output_shape", shape}};
  if (!op_class.empty()) p["class"] = std::string(op_class);
  if (weights > 9.0e15) fail(fmt::format("{}: {} weight elements is beyond any real model", c.where, weights));
  if (weights > 0) p["weights"] = static_cast<std::int64_t>(std::llround(weights));
  return emit(c, Spec{"custom", std::move(p), std::move(inputs), precision, value, suffix, shape});
}

/// An op framesim does not know: reads its inputs (constants as weights), writes each output, 0 ops.
void OnnxImporter::unknown(const Ctx& c, const std::vector<Operand>& ops) {
  note(
      "not an op framesim knows; costed as data movement (custom: reads its inputs, constants as weights, writes "
      "its outputs, 0 ops)",
      c);
  data_movement(c, ops);
}

void OnnxImporter::data_movement(const Ctx& c, const std::vector<Operand>& ops) {
  const auto wprec = weights_precision(ops);
  bool first = true;
  const int outs = c.node.output_size();
  for (int i = 0; i < outs; ++i) {
    const std::string& v = c.node.output(i);
    if (v.empty() || !needed_.count(v)) continue;
    const Precision out = out_precision(c, i, ops);
    const LayerPrecision prec = precision_for(ops, out, wprec.value_or(out));
    const std::string suffix = outs > 1 ? fmt::format("_{}", i) : "";
    if (first) emit_custom(c, v, activations(ops), 0, constant_weights(ops), prec, suffix);
    else emit_custom(c, v, {}, 0, 0, prec, suffix);
    first = false;
  }
}

/// Outputs after the first that something reads: 0-op custom layers without inputs.
void OnnxImporter::extra_outputs(const Ctx& c, const std::vector<Operand>& ops, int from) {
  for (int i = from; i < c.node.output_size(); ++i) {
    const std::string& v = c.node.output(i);
    if (v.empty() || !needed_.count(v)) continue;
    note(fmt::format("output {} of {} is written by a 0-op custom layer without inputs (its inputs are counted on "
                     "the node's main layer)",
                     i, c.node.op_type()),
         c);
    const Precision out = out_precision(c, i, ops);
    emit_custom(c, v, {}, 0, 0, precision_for(ops, out, out), fmt::format("_out{}", i));
  }
}

/// Marks every output of a node as a constant (computed at load time).
void OnnxImporter::fold(const Ctx& c, const std::vector<Operand>& ops) {
  static const std::set<std::string> keeps_storage{"DequantizeLinear", "Cast",    "CastLike", "Identity",
                                                   "Reshape",          "Flatten", "Squeeze",  "Unsqueeze",
                                                   "Transpose",        "Expand",  "Tile",     "Dropout"};
  const std::string& op = c.node.op_type();
  for (int i = 0; i < c.node.output_size(); ++i) {
    const std::string& v = c.node.output(i);
    if (v.empty()) continue;
    Const k;
    k.shape = known_shape(v);
    k.origin = fmt::format("computed by folded {}", c.where);
    const int t = elem_type(v);
    set_type(k, t ? t : onnx::TensorProto::FLOAT, v);
    if (k.shape) k.stored = model::shape_elements(*k.shape);
    if (i == 0 && keeps_storage.count(op) && !ops.empty() && ops[0].cst()) {
      set_type(k, ops[0].c->onnx_type, ops[0].c->name);
      k.stored = ops[0].c->stored;
      if (op != "DequantizeLinear" && op != "Cast" && op != "CastLike") {
        k.values = ops[0].c->values;
        k.has_values = ops[0].c->has_values;
      }
    }
    if (op == "ConstantOfShape") {
      k.stored = 1;  // one fill value, generated: nothing stored per element
      const auto* a = attr(c, "value");
      set_type(k, a ? a->t().data_type() : onnx::TensorProto::FLOAT, v);
    }
    if (op == "Shape" && k.shape && !ops.empty() && (ops[0].act() || ops[0].c->shape)) {
      const Shape& s = shape_of(ops[0]);
      const auto start = attr_int(c, "start", 0), end = attr_int(c, "end", static_cast<std::int64_t>(s.size()));
      auto clamp = [&](std::int64_t x) {
        if (x < 0) x += static_cast<std::int64_t>(s.size());
        return std::clamp<std::int64_t>(x, 0, static_cast<std::int64_t>(s.size()));
      };
      for (auto d = clamp(start); d < clamp(end); ++d)
        k.values.push_back(static_cast<double>(s[static_cast<std::size_t>(d)]));
      k.has_values = static_cast<double>(k.values.size()) == model::shape_elements(*k.shape);
    }
    consts_[v] = std::move(k);
  }
  ++folded_[original_ops_[static_cast<std::size_t>(c.index)]];
}

void OnnxImporter::constant_node(const Ctx& c) {
  Const k;
  k.origin = fmt::format("Constant {}", c.where);
  const auto& node = c.node;
  const onnx::AttributeProto* a = node.attribute_size() ? &node.attribute(0) : nullptr;
  const std::string v = node.output_size() ? node.output(0) : "";
  if (a && a->name() == "value") {
    Shape s(a->t().dims().begin(), a->t().dims().end());
    k.shape = s;
    set_type(k, a->t().data_type(), v);
    k.stored = model::shape_elements(s);
    k.has_values = read_values(a->t(), k.values);
  } else if (a && a->name() == "sparse_value") {
    Shape s(a->sparse_tensor().dims().begin(), a->sparse_tensor().dims().end());
    k.shape = s;
    set_type(k, a->sparse_tensor().values().data_type(), v);
    double nnz = 1;
    for (auto d : a->sparse_tensor().values().dims()) nnz *= static_cast<double>(d);
    k.stored = nnz;
    k.sparse = true;
    k.index_bytes = sparse_index_bytes(a->sparse_tensor());
  } else if (a && (a->name() == "value_float" || a->name() == "value_int")) {
    k.shape = Shape{};
    k.stored = 1;
    set_type(k, a->name() == "value_float" ? onnx::TensorProto::FLOAT : onnx::TensorProto::INT64, v);
    k.values = {a->name() == "value_float" ? static_cast<double>(a->f()) : static_cast<double>(a->i())};
    k.has_values = true;
  } else if (a && (a->name() == "value_floats" || a->name() == "value_ints")) {
    const bool floats = a->name() == "value_floats";
    const auto n = floats ? a->floats_size() : a->ints_size();
    k.shape = Shape{n};
    k.stored = n;
    set_type(k, floats ? onnx::TensorProto::FLOAT : onnx::TensorProto::INT64, v);
    for (int i = 0; i < n; ++i)
      k.values.push_back(floats ? static_cast<double>(a->floats(i)) : static_cast<double>(a->ints(i)));
    k.has_values = true;
  } else {
    k.shape = known_shape(v);
    if (k.shape) k.stored = model::shape_elements(*k.shape);
    set_type(k, elem_type(v) ? elem_type(v) : onnx::TensorProto::STRING, v);
  }
  if (!v.empty()) consts_[v] = std::move(k);
  ++folded_[original_ops_[static_cast<std::size_t>(c.index)]];
}

void OnnxImporter::handle(int index) {
  const auto& node = model_.graph().node(index);
  const std::string base = base_names_[static_cast<std::size_t>(index)];
  const std::string& original = original_ops_[static_cast<std::size_t>(index)];
  Ctx c{node, index, base,
        node.name().empty() ? fmt::format("node {} ({})", index, original)
                            : fmt::format("node {} ({} \"{}\")", index, original, node.name()),
        node.name().empty() ? fmt::format("{}_{}", original, index) : node.name()};
  const std::string& op = node.op_type();
  const std::string& domain = node.domain();
  if (op == "Constant" && (domain.empty() || domain == "ai.onnx")) return constant_node(c);
  const auto ops = operands(c);
  bool any_activation = false, any_input = false;
  for (const auto& o : ops) {
    any_activation = any_activation || o.act();
    any_input = any_input || o.present();
  }
  const bool is_onnx = domain.empty() || domain == "ai.onnx";
  const bool is_ms = domain == "com.microsoft";
  // Metadata of a static shape, and anything computed from constants only, is known at load time.
  if (!any_activation || (is_onnx && (op == "Shape" || op == "Size"))) return fold(c, ops);
  if (!is_onnx && !is_ms) return unknown(c, ops);
  if (node.output_size() == 0 || node.output(0).empty()) return unknown(c, ops);  // only optional outputs used
  map_node(c, ops);
}

void OnnxImporter::map_node(const Ctx& c, const std::vector<Operand>& ops) {
  const std::string& op = c.node.op_type();
  // clang-format off
  static const std::map<std::string, std::string> unary{
      {"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"HardSigmoid", "hardsigmoid"}, {"Tanh", "tanh"}, {"Erf", "erf"},
      {"Exp", "exp"}, {"Log", "log"}, {"Sqrt", "sqrt"}, {"Abs", "abs"}, {"Neg", "neg"}, {"Reciprocal", "reciprocal"},
      {"HardSwish", "hardswish"}, {"Gelu", "gelu"}, {"FastGelu", "gelu"}, {"BiasGelu", "gelu"},
      {"QuickGelu", "gelu"}, {"LeakyRelu", "leaky_relu"}};
  // Unary math framesim has no name for: `activation` with these operations per element (a transcendental
  // function counts as one, as in ops.cpp).
  static const std::map<std::string, double> generic_unary{
      {"Not", 1}, {"Ceil", 1}, {"Floor", 1}, {"Round", 1}, {"Sign", 1}, {"IsNaN", 1}, {"IsInf", 1}, {"Sin", 1},
      {"Cos", 1}, {"Tan", 1}, {"Asin", 1}, {"Acos", 1}, {"Atan", 1}, {"Sinh", 1}, {"Cosh", 1}, {"Asinh", 1},
      {"Acosh", 1}, {"Atanh", 1}, {"BitwiseNot", 1},
      {"Softplus", 3},         // exp, add, log
      {"Softsign", 3},         // abs, add, divide
      {"Elu", 3},              // compare, exp, multiply-subtract
      {"Selu", 4},             // Elu and a scale
      {"Celu", 4},             // Elu with a divide
      {"ThresholdedRelu", 2},  // compare, select
      {"Shrink", 3},           // two compares, add
      {"Mish", 5},             // softplus, tanh, multiply
      {"Hardmax", 2}};         // max along the axis, compare
  static const std::map<std::string, std::string> binary{
      {"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"}, {"Div", "div"}, {"Max", "max"}, {"Min", "min"},
      {"Pow", "pow"}, {"Sum", "add"}};
  static const std::set<std::string> compare{
      "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "And", "Or", "Xor", "Mod", "BitShift", "Where",
      "BitwiseAnd", "BitwiseOr", "BitwiseXor"};
  // clang-format on
  static const std::set<std::string> reshapes{"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"};

  if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv") return conv(c, ops);
  if (op == "ConvTranspose") return conv_transpose(c, ops);
  if (op == "Gemm") return gemm(c, ops);
  if (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") return matmul(c, ops);
  if (op == "MaxPool" || op == "AveragePool") return pool(c, ops);
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    single(c, ops, op == "GlobalAveragePool" ? "global_avgpool" : "global_maxpool", {});
    return extra_outputs(c, ops);
  }
  if (auto it = unary.find(op); it != unary.end()) return single(c, ops, it->second, {});
  if (op == "Clip") return clip(c, ops);
  if (op == "PRelu") return prelu(c, ops);
  if (auto it = generic_unary.find(op); it != generic_unary.end())
    return single(c, ops, "activation", {{"ops_per_element", it->second}});
  if (auto it = binary.find(op); it != binary.end()) return elementwise(c, ops, it->second, std::nullopt);
  if (op == "Mean") return elementwise(c, ops, "elementwise", static_cast<double>(ops.size()));  // adds + divide
  if (compare.count(op)) return elementwise(c, ops, "elementwise", 1.0);
  if (op == "BatchNormalization") return batchnorm(c, ops);
  if (op == "InstanceNormalization") return normalization(c, ops, 8.0, "InstanceNormalization");
  if (op == "LayerNormalization" || op == "SimplifiedLayerNormalization") return layernorm(c, ops);
  if (op == "Softmax" || op == "LogSoftmax") {
    // LogSoftmax: max, subtract, exp, sum, then log of the sum and a subtract: the same 5 ops per element.
    return single(c, ops, "softmax", {});
  }
  if (op == "Gather") return gather(c, ops);
  if (op == "Resize" || op == "Upsample") return resize(c, ops);
  if (op == "Concat") return concat(c, ops);
  if (reshapes.count(op)) {
    if (!ops.at(0).act()) return fold(c, ops);
    reshape_to(c, ops[0].tensor, c.node.output(0));
    return extra_outputs(c, ops);  // Dropout's mask
  }
  if (op == "Transpose") {
    OpParams p;
    if (auto perm = attr_ints(c, "perm")) p["perm"] = *perm;
    return single(c, ops, "transpose", std::move(p));
  }
  if (op == "Pad") return pad(c, ops);
  if (op == "Slice") return slice(c, ops);
  if (op == "Split") return split(c, ops);
  if ((op == "Cast" || op == "CastLike") && ops.at(0).act() && elem_type(c.node.input(0)) != 0 &&
      elem_type(c.node.input(0)) == elem_type(c.node.output(0))) {
    // A cast to the type it already has converts nothing: a free alias, as Identity.
    return reshape_to(c, ops[0].tensor, c.node.output(0));
  }
  if (op == "Cast" || op == "CastLike" || op == "QuantizeLinear" || op == "DequantizeLinear") {
    const Precision to = out_precision(c, 0, ops);
    if (const auto read = activations(ops); read.size() > 1) {
      // A scale or zero point computed at run time (DynamicQuantizeLinear's scalars): the conversion reads them
      // too. Still no arithmetic counted, as for the cast; its class keeps it in its producer's epilogue.
      emit_custom(c, c.node.output(0), read, 0, 0, precision_for(ops, to, std::nullopt), "", std::nullopt,
                  "elementwise");
      return;
    }
    return single(c, ops, "cast", {{"to", to}});
  }
  if (op == "ReduceMean" || op == "ReduceMax" || op == "ReduceSum" || op == "ReduceMin" || op == "ReduceProd" ||
      op == "ReduceL1" || op == "ReduceL2" || op == "ReduceSumSquare" || op == "ReduceLogSum" ||
      op == "ReduceLogSumExp" || op == "ArgMax" || op == "ArgMin")
    return reduce(c, ops);
  unknown(c, ops);
}

/// The first activation operand, which most ops read.
const Operand& OnnxImporter::data(const Ctx& c, const std::vector<Operand>& ops) const {
  for (const auto& o : ops)
    if (o.act()) return o;
  fail(fmt::format("{}: has no activation input", c.where));
}

/// A one-input framesim op on the first activation operand (constants are immediates or ignored attributes).
void OnnxImporter::single(const Ctx& c, const std::vector<Operand>& ops, const std::string& op, OpParams params) {
  const auto& x = data(c, ops);
  const Precision out = out_precision(c, 0, ops);
  emit(c, Spec{op,
               std::move(params),
               {x.tensor},
               precision_for(ops, out, std::nullopt),
               c.node.output(0),
               "",
               std::nullopt});
}

}  // namespace framesim::trace::onnx_detail
