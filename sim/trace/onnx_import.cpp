// ONNX models as framesim networks.
//
// The file is parsed as a ModelProto (a file that does not parse, or parses into no graph, is a UserError naming
// it). Graph input shapes come from the file or ImportOptions::input_shapes (a dynamic dimension without one is
// an error saying how to give it). ONNX shape inference (with data propagation; run in a child process, because
// ONNX's inference functions crash on some malformed models) gives every tensor its shape; shape arithmetic it
// does not follow (Shape -> Gather -> Concat -> Reshape, ...) is computed here, written back as Constant nodes,
// and shapes are inferred again. Each node then becomes layers of framesim's op set (model::build_layer), and
// framesim's own shape arithmetic is checked against ONNX's for every layer: a disagreement is an error (or, for
// ops with a formula, a custom layer with that formula, listed in the warnings), never papered over.
//
// Node accounting: every node of the file is a layer (or several, e.g. Split), folded into a constant, or
// dropped because no graph output depends on it; the warnings count the folded and the dropped by op type.
//
// What becomes what
//   Weights. Initializers, Constant nodes, and the outputs of nodes whose inputs are all constants ("folded":
//   computed once at load time, not costed) are constants. Shape and Size are folded too (shapes are static).
//   A constant read by a layer is that layer's weights, at its *stored* precision: Cast, DequantizeLinear,
//   Reshape, Transpose, ... of an initializer keep the initializer's precision and size, so int8 weights
//   behind a DequantizeLinear give a w8a32 layer (LayerPrecision{weights int8, activations fp32}).
//   A constant of one stored element (a scalar, or a ConstantOfShape fill value) is an immediate: no bytes.
//   Nodes that contribute to no graph output are dropped (listed in the warnings).
//   Conv, ConvInteger, QLinearConv   -> conv2d (out_channels, kernel, stride, padding [t,l,b,r] or "same",
//                                      dilation, groups, bias when the bias input exists); auto_pad SAME_UPPER is
//                                      framesim's "same", SAME_LOWER explicit pads with the odd one at the start.
//                                      Not 2-D, or weights that are not constants: custom with the conv formula
//                                      2 x N x Cout x spatial_out x Cin/groups x prod(kernel) (+ outputs for bias).
//   ConvTranspose                    -> custom: 2 x N x Cin x spatial_in x Cout/groups x prod(kernel) (+ bias).
//   Gemm                             -> linear (constant B, optional bias C of N elements); two activations:
//                                      matmul (transpose_b = transB); transA or other bias shapes: custom with
//                                      2 x M x K x N (+ M x N for C). alpha and beta are scalars a runtime folds.
//   MatMul, MatMulInteger, QLinearMatMul -> matmul with n (constant rank-2 B) or matmul of two activations;
//                                      otherwise custom with 2 x output elements x K.
//   MaxPool, AveragePool             -> maxpool / avgpool (stride always explicit: ONNX's default is 1, framesim's
//                                      the window; ceil_mode as extra bottom/right padding); others: custom with
//                                      output elements x window.
//   GlobalAveragePool/GlobalMaxPool  -> global_avgpool / global_maxpool; ReduceMean/ReduceMax over all spatial
//                                      axes with keepdims likewise. Other reductions and ArgMax/ArgMin: custom with
//                                      1 or 2 ops per input element (framesim has no reduction op).
//   Add Sub Mul Div Max Min Pow Sum  -> add sub mul div max min pow (two or more activations). With a constant
//   Mean, comparisons, logic, Where     operand: an immediate (one element) leaves `elementwise` over the
//                                      activations with ops_per_element = operands - 1; a constant of more
//                                      elements (a bias, a scale) is weights: `custom` with ops = (operands - 1) x
//                                      output elements, output_shape, weights = its elements (custom, because no
//                                      elementwise op of framesim carries weights; its class is elementwise, so
//                                      automatic fusion still takes it into its producer's epilogue).
//   Relu, Clip (relu6 for [0, 6], relu for [0, inf)), Sigmoid, HardSigmoid, Tanh, Erf, Exp, Log, Sqrt, Abs, Neg,
//   Reciprocal, HardSwish, Gelu, LeakyRelu -> the activation of that name; PRelu -> leaky_relu (one slope) or
//   custom (2 ops per element, the slopes as weights); other unary math (Sin, Floor, Softplus, Elu, ...) ->
//   `activation` with stated ops per element.
//   BatchNormalization               -> batchnorm (constant statistics); InstanceNormalization -> custom, 8 ops per
//                                      element, scale and bias as weights.
//   LayerNormalization               -> layernorm over the last axis with scale and bias of that length; other
//                                      axes or no bias: custom, 8 ops per element, scale and bias as weights.
//   Softmax, LogSoftmax              -> softmax (5 ops per element whatever the axis); Hardmax -> activation.
//   Gather                           -> from a constant table on axis 0: embedding (+ a free reshape to ONNX's shape
//                                      when the table has rank > 2); from an activation with constant indices: a
//                                      slice of the gathered elements (+ free reshape); with activation indices:
//                                      custom reading both (a data-dependent gather).
//   Resize, Upsample                 -> resize (integer scale, else size; nearest / linear); cubic: custom with
//                                      32 ops per output (4x4 taps).
//   Concat -> concat; with constant operands: custom (reads the activations, the constants as weights unless
//   they are immediates, e.g. the zero fill of a channel pad). Reshape, Flatten, Squeeze, Unsqueeze, Identity,
//   Dropout -> reshape to ONNX's output shape (free: aliases its input). Transpose -> transpose. Pad -> pad
//   (NCHW, spatial only; else custom data movement). Slice -> slice. Split -> one slice per output. Cast, CastLike,
//   QuantizeLinear, DequantizeLinear -> cast (the scale arithmetic is not counted); with a scale or zero point
//   computed at run time (DynamicQuantizeLinear's scalars): custom of class elementwise, 0 ops, reading all of
//   them; a Cast to the type the tensor already has -> reshape (free). A scalar (rank 0) is written as shape [].
//   If -> the nodes of one branch, inlined (a constant condition's, or one shape folding computes; else the larger
//   of the two, both costed, said in the warnings; onnx_control_flow.cpp). Loop, Scan -> refused by name.
//   Anything else -> custom: reads its activation inputs and its constants (as weights), writes its output shape,
//   0 ops; listed in the warnings ("costed as data movement"). Extra outputs of a node (MaxPool indices,
//   LayerNormalization mean, ...) that something reads are written by 0-op custom layers without inputs.
//
// Precision: tensors from their element type: float -> fp32, float16 -> fp16, bfloat16 -> bf16, (u)int8 and bool
// -> int8, (u)int16 -> int16, (u)int32 -> int32; int64, double and the rest have no framesim type and become
// int32 / fp32 (listed in the warnings, their bytes are then undercounted). A layer's activations precision is
// its output's, its weights precision the stored precision of its weights, its compute precision the first
// float input's (int8 for QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger).
//
// Names: a layer is named after its node when that name is non-empty and unique, else OpType_index; a node that
// becomes several layers adds _0, _1, ... (Split) or keeps its name on the layer writing its output.
//
// This file: the importer's entry point (import_onnx) and its first steps: reading the file, resolving If
// (onnx_control_flow.cpp), refusing Loop and Scan, the initializers and the graph inputs (their shapes from the
// file or ImportOptions::input_shapes).
// The other parts of the importer: see onnx_importer.hpp.
#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <fstream>

#include "trace/onnx_importer.hpp"

namespace framesim::trace::onnx_detail {

ImportResult OnnxImporter::run() {
  if (!preloaded_) load();
  resolve_if_nodes();
  reject_control_flow();
  collect_initializers();
  prepare_inputs();
  const auto order = topological_order();
  for (const auto& node : model_.graph().node()) {
    original_ops_.push_back(node.op_type());
    original_inputs_.emplace_back(node.input().begin(), node.input().end());
  }
  // Shape arithmetic (Shape -> Gather -> Concat -> Reshape, ...) that ONNX's data propagation does not follow:
  // computed here, written back as Constant nodes, and shapes inferred again until nothing changes.
  for (int round = 0; round < 16; ++round) {
    infer_shapes();
    collect_types();
    if (!fold_small_values(order)) break;
  }
  mark_needed(order);
  add_graph_inputs();
  for (int index : order) {
    if (!live_[static_cast<std::size_t>(index)]) continue;
    handle(index);
  }
  add_graph_outputs();
  finish_warnings();
  result_.warnings.insert(result_.warnings.begin(), control_notes_.begin(), control_notes_.end());
  return std::move(result_);
}

void OnnxImporter::fail(const std::string& message) const { throw core::UserError(file_ + ": " + message); }

/// Loop and Scan run subgraphs repeated at run time (reading outer tensors implicitly): framesim costs a static
/// graph, so the first one is the error, by name, before anything downstream of it is blamed. (If nodes are
/// resolved before: onnx_control_flow.cpp.)
void OnnxImporter::reject_control_flow() const {
  const auto& g = model_.graph();
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& node = g.node(i);
    if (!(node.domain().empty() || node.domain() == "ai.onnx")) continue;
    const std::string& op = node.op_type();
    if (op != "Loop" && op != "Scan") continue;
    int count = 0;
    for (const auto& other : g.node())
      if (other.op_type() == op && (other.domain().empty() || other.domain() == "ai.onnx")) ++count;
    fail(
        fmt::format("node {} ({} \"{}\"){}: control flow ({} runs a subgraph repeated at run time) is not "
                    "supported: framesim costs a static graph. Export the model with the loop unrolled or without it",
                    i, op, node.name(), count > 1 ? fmt::format(", the first of {} {} nodes", count, op) : "", op));
  }
}

void OnnxImporter::load() {
  std::error_code ec;
  if (!fs::exists(path_, ec)) fail("no such file");
  if (fs::is_directory(path_, ec)) fail("is a directory, not an ONNX model");
  std::ifstream in(path_, std::ios::binary);
  if (!in) fail("cannot be opened for reading");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty()) fail("is empty, not an ONNX model");
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                                static_cast<int>(std::min<std::size_t>(bytes.size(), INT32_MAX)));
  stream.SetTotalBytesLimit(INT32_MAX);
  stream.SetRecursionLimit(200);
  const bool parsed =
      bytes.size() <= INT32_MAX && model_.ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage();
  if (!parsed)
    fail(
        fmt::format("not a valid ONNX model: the protobuf does not parse ({} bytes; a truncated or corrupt file, "
                    "or not ONNX)",
                    bytes.size()));
  if (!model_.has_graph() || model_.ir_version() <= 0)
    fail("not an ONNX model: it parses as protobuf but has no graph or no IR version (a truncated file, or not ONNX)");
  if (model_.opset_import_size() == 0 && model_.ir_version() >= 3)
    fail("not a usable ONNX model: it has no opset_import (a truncated or corrupt file?)");
  for (const auto& node : model_.graph().node())
    if (node.op_type().empty()) fail("a node without an op type: the file is corrupt");
  if (model_.graph().output_size() == 0) fail("the graph has no outputs");
}

void OnnxImporter::collect_initializers() {
  const auto& g = model_.graph();
  for (int i = 0; i < g.initializer_size(); ++i) init_index_[g.initializer(i).name()] = i;
  for (const auto& t : g.initializer()) {
    Const c;
    Shape s;
    for (auto d : t.dims()) s.push_back(d);
    c.shape = s;
    set_type(c, t.data_type(), t.name());
    c.stored = model::shape_elements(s);
    c.has_values = read_values(t, c.values);
    c.origin = "initializer";
    consts_[t.name()] = std::move(c);
  }
  for (const auto& sp : g.sparse_initializer()) {
    Const c;
    Shape s;
    for (auto d : sp.dims()) s.push_back(d);
    c.shape = s;
    set_type(c, sp.values().data_type(), sp.values().name());
    double nnz = 1;
    for (auto d : sp.values().dims()) nnz *= static_cast<double>(d);
    c.stored = nnz;  // only the non-zero values are stored, with their indices
    c.sparse = true;
    c.index_bytes = sparse_index_bytes(sp);
    c.origin = "sparse initializer";
    consts_[sp.values().name()] = std::move(c);
  }
}

/// Graph inputs that are not initializers; their shapes from the file or the options; dynamic ones refused.
void OnnxImporter::prepare_inputs() {
  auto* g = model_.mutable_graph();
  std::vector<std::string> names;
  for (const auto& i : g->input())
    if (!consts_.count(i.name())) names.push_back(i.name());
  for (const auto& [name, shape] : options_.input_shapes) {
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    std::vector<std::string> described;
    for (const auto& i : g->input())
      if (!consts_.count(i.name())) described.push_back(fmt::format("{} ({})", i.name(), describe_type(i.type())));
    if (consts_.count(name))
      fail(fmt::format("--input {}: \"{}\" is a weight (an initializer), not a graph input; the inputs are: {}", name,
                       name, described.empty() ? "none" : join_names(described, 50)));
    fail(fmt::format("--input {}={}: the model has no input \"{}\"; its inputs are: {}", name, shape_text(shape), name,
                     described.empty() ? "none" : join_names(described, 50)));
  }
  for (const auto& [name, shape] : options_.input_shapes)
    for (auto d : shape)
      if (d <= 0) fail(fmt::format("--input {}={}: dimensions must be positive", name, shape_text(shape)));

  std::vector<std::string> problems;
  for (auto& i : *g->mutable_input()) {
    if (consts_.count(i.name())) continue;
    if (!i.type().has_tensor_type())
      fail(fmt::format("input \"{}\" is {}, not a tensor: framesim imports tensor graphs only", i.name(),
                       kind_of(i.type())));
    auto it = options_.input_shapes.find(i.name());
    if (it != options_.input_shapes.end()) {
      auto* shape = i.mutable_type()->mutable_tensor_type()->mutable_shape();
      shape->clear_dim();
      for (auto d : it->second) shape->add_dim()->set_dim_value(d);
      continue;
    }
    const auto& tt = i.type().tensor_type();
    std::string why;
    Shape example;
    bool zero_sized = false;
    if (!tt.has_shape()) {
      why = "has no shape (not even a rank)";
    } else {
      for (int d = 0; d < tt.shape().dim_size(); ++d) {
        const auto& dim = tt.shape().dim(d);
        if (dim.has_dim_value() && dim.dim_value() > 0) {
          example.push_back(dim.dim_value());
          continue;
        }
        if (dim.has_dim_value() && dim.dim_value() == 0) {
          zero_sized = true;
          example.push_back(1);
          if (why.empty()) why = fmt::format("dimension {} is 0", d);
          continue;
        }
        example.push_back(1);
        if (why.empty())
          why = dim.has_dim_param()   ? fmt::format("dimension {} is \"{}\"", d, dim.dim_param())
                : dim.has_dim_value() ? fmt::format("dimension {} is {}", d, dim.dim_value())
                                      : fmt::format("dimension {} is unknown", d);
      }
    }
    if (why.empty()) continue;
    const std::string hint =
        example.empty() ? fmt::format("{}=1x3x224x224", i.name()) : fmt::format("{}={}", i.name(), shape_text(example));
    problems.push_back(
        zero_sized
            ? fmt::format("input \"{}\" is empty ({}: {}) and framesim needs non-empty tensors: give it a "
                          "shape with --input {} (framesim import; in a scenario: networks.<name>.inputs.{}.shape)",
                          i.name(), describe_type(i.type()), why, hint, i.name())
            : fmt::format("input \"{}\" has a dynamic shape {} ({}): give its shape with --input {} "
                          "(framesim import; in a scenario: networks.<name>.inputs.{}.shape)",
                          i.name(), describe_type(i.type()), why, hint, i.name()));
  }
  if (!problems.empty()) {
    std::vector<core::Diagnostic> ds;
    for (auto& p : problems) ds.push_back({{file_, 0, 0}, {}, std::move(p)});
    throw core::UserError(std::move(ds));
  }
  if (!options_.input_shapes.empty()) {
    // Shapes recorded for the old input shapes would contradict the new ones: infer them again from scratch.
    g->clear_value_info();
    for (auto& o : *g->mutable_output())
      if (o.type().has_tensor_type()) o.mutable_type()->mutable_tensor_type()->clear_shape();
  }
}

}  // namespace framesim::trace::onnx_detail

namespace framesim::trace {

ImportResult import_onnx(const std::filesystem::path& path, const ImportOptions& options) {
  return onnx_detail::OnnxImporter(path, options).run();
}

}  // namespace framesim::trace
