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
//   QuantizeLinear, DequantizeLinear -> cast (the scale arithmetic is not counted); a Cast to the type the tensor
//   already has -> reshape (free).
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
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/error.hpp"
#include "trace/import.hpp"

namespace framesim::trace {

namespace {

namespace fs = std::filesystem;
using model::LayerPrecision;
using model::OpParams;
using model::Precision;
using model::Shape;

std::string shape_text(const Shape& s) { return model::shape_to_string(s); }

std::string join_names(const std::vector<std::string>& names, std::size_t limit = 5) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < limit; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > limit) out += fmt::format(" and {} more", names.size() - limit);
  return out;
}

/// A constant value: an initializer, a Constant node, or the output of a folded node.
struct Const {
  std::optional<Shape> shape;  // unknown when shape inference could not give it
  Precision storage = Precision::fp32;
  std::optional<double> stored;  // elements actually stored (1 for a fill value); nullopt: unknown
  std::vector<double> values;    // small constants only (for Clip bounds and Pad amounts)
  bool has_values = false;
  std::string origin;  // "initializer", "Constant node 3", ...
  int onnx_type = 0;   // element type as stored (for the note on types framesim lacks)
  std::string name;
};

/// What an input of a node is.
struct Operand {
  enum Kind { missing, activation, constant } kind = missing;
  int tensor = -1;
  const Const* c = nullptr;
  std::string name;
  bool act() const { return kind == activation; }
  bool cst() const { return kind == constant; }
  bool present() const { return kind != missing; }
};

/// Elements a constant stores, or 0 for an immediate (one element: folded into the instruction).
double weight_elements(const Const& c) {
  const double n = c.stored.value_or(c.shape ? model::shape_elements(*c.shape) : 0.0);
  return n <= 1.0 ? 0.0 : n;
}

/// A little-endian value of type T at `p`, as double.
template <class T>
double load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return static_cast<double>(v);
}

double half_to_double(std::uint16_t h) {
  const int sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  const double v = exponent == 0 ? std::ldexp(mantissa, -24)
                   : exponent == 31
                       ? (mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity())
                       : std::ldexp(mantissa + 1024, exponent - 25);
  return sign ? -v : v;
}

double bf16_to_double(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return static_cast<double>(f);
}

/// Values of a small tensor, converted to double (raw_data little-endian, or the typed fields).
bool read_values(const onnx::TensorProto& t, std::vector<double>& out) {
  double n = 1;
  for (auto d : t.dims()) n *= static_cast<double>(d);
  if (n > 4096 || n < 0 || t.data_location() == onnx::TensorProto::EXTERNAL) return false;
  const auto count = static_cast<std::size_t>(n);
  out.clear();
  const std::string& raw = t.raw_data();
  auto from_raw = [&](std::size_t width, double (*convert)(const char*)) {
    if (raw.size() != count * width) return false;
    for (std::size_t i = 0; i < count; ++i) out.push_back(convert(raw.data() + i * width));
    return true;
  };
  auto from_ints = [&](auto convert) {
    for (auto v : t.int32_data()) out.push_back(convert(v));
  };
  auto as_double = [](auto v) { return static_cast<double>(v); };
  using TP = onnx::TensorProto;
  const bool use_raw = t.has_raw_data();
  switch (t.data_type()) {
    case TP::FLOAT:
      if (use_raw) return from_raw(4, load<float>);
      for (float f : t.float_data()) out.push_back(f);
      break;
    case TP::DOUBLE:
      if (use_raw) return from_raw(8, load<double>);
      for (double d : t.double_data()) out.push_back(d);
      break;
    case TP::INT64:
      if (use_raw) return from_raw(8, load<std::int64_t>);
      for (auto v : t.int64_data()) out.push_back(static_cast<double>(v));
      break;
    case TP::UINT64:
    case TP::UINT32:  // both stored in uint64_data
      if (use_raw)
        return t.data_type() == TP::UINT64 ? from_raw(8, load<std::uint64_t>) : from_raw(4, load<std::uint32_t>);
      for (auto v : t.uint64_data()) out.push_back(static_cast<double>(v));
      break;
    case TP::INT32:
      if (use_raw) return from_raw(4, load<std::int32_t>);
      from_ints(as_double);
      break;
    case TP::INT16:
      if (use_raw) return from_raw(2, load<std::int16_t>);
      from_ints(as_double);
      break;
    case TP::UINT16:
      if (use_raw) return from_raw(2, load<std::uint16_t>);
      from_ints(as_double);
      break;
    case TP::INT8:
      if (use_raw) return from_raw(1, load<std::int8_t>);
      from_ints(as_double);
      break;
    case TP::UINT8:
    case TP::BOOL:
      if (use_raw) return from_raw(1, load<std::uint8_t>);
      from_ints(as_double);
      break;
    case TP::FLOAT16:
    case TP::BFLOAT16: {
      // Stored as 16-bit patterns (raw, or one per int32_data entry).
      auto convert = t.data_type() == TP::FLOAT16 ? half_to_double : bf16_to_double;
      if (use_raw) {
        if (raw.size() != count * 2) return false;
        for (std::size_t i = 0; i < count; ++i)
          out.push_back(convert(static_cast<std::uint16_t>(load<std::uint16_t>(raw.data() + i * 2))));
        return true;
      }
      from_ints([convert](std::int32_t v) { return convert(static_cast<std::uint16_t>(v)); });
      break;
    }
    default:
      return false;
  }
  return out.size() == count;
}

std::string elem_type_name(int t) {
  if (onnx::TensorProto_DataType_IsValid(t))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t));
  return fmt::format("type {}", t);
}

/// framesim's precision for an ONNX element type; `lossy` is set when the bytes per element differ.
Precision precision_of(int elem_type, bool& lossy) {
  using TP = onnx::TensorProto;
  lossy = false;
  switch (elem_type) {
    case TP::FLOAT:
      return Precision::fp32;
    case TP::FLOAT16:
      return Precision::fp16;
    case TP::BFLOAT16:
      return Precision::bf16;
    case TP::INT8:
    case TP::UINT8:
    case TP::BOOL:
      return Precision::int8;
    case TP::INT16:
    case TP::UINT16:
      return Precision::int16;
    case TP::INT32:
    case TP::UINT32:
      return Precision::int32;
    case TP::INT64:
    case TP::UINT64:
    case TP::STRING:
      lossy = true;
      return Precision::int32;
    default:
      lossy = true;
      return Precision::fp32;  // double, complex, undefined
  }
}

/// Everything built while importing one file.
class OnnxImporter {
 public:
  OnnxImporter(const fs::path& path, const ImportOptions& options)
      : path_(path), file_(path.string()), options_(options) {}

  ImportResult run() {
    load();
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
    return std::move(result_);
  }

 private:
  // ---------------------------------------------------------------- reading the file

  [[noreturn]] void fail(const std::string& message) const { throw core::UserError(file_ + ": " + message); }

  /// If, Loop and Scan run subgraphs chosen or repeated at run time (reading outer tensors implicitly): framesim
  /// costs a static graph, so the first one is the error, by name, before anything downstream of it is blamed.
  void reject_control_flow() const {
    const auto& g = model_.graph();
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& node = g.node(i);
      if (!(node.domain().empty() || node.domain() == "ai.onnx")) continue;
      const std::string& op = node.op_type();
      if (op != "If" && op != "Loop" && op != "Scan") continue;
      int count = 0;
      for (const auto& other : g.node())
        if (other.op_type() == op && (other.domain().empty() || other.domain() == "ai.onnx")) ++count;
      fail(fmt::format("node {} ({} \"{}\"){}: control flow ({} runs a subgraph chosen or repeated at run time) is "
                       "not supported: framesim costs a static graph. Export the model with the branch resolved "
                       "(e.g. a constant condition folded by onnx-simplifier) or without it",
                       i, op, node.name(), count > 1 ? fmt::format(", the first of {} {} nodes", count, op) : "",
                       op));
    }
  }

  void load() {
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
      fail(
          "not an ONNX model: it parses as protobuf but has no graph or no IR version (a truncated file, or not ONNX)");
    if (model_.opset_import_size() == 0 && model_.ir_version() >= 3)
      fail("not a usable ONNX model: it has no opset_import (a truncated or corrupt file?)");
    for (const auto& node : model_.graph().node())
      if (node.op_type().empty()) fail("a node without an op type: the file is corrupt");
    if (model_.graph().output_size() == 0) fail("the graph has no outputs");
  }

  void collect_initializers() {
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
      c.stored = nnz;  // only the non-zero values are stored (their indices are not counted)
      c.origin = "sparse initializer";
      consts_[sp.values().name()] = std::move(c);
    }
  }

  /// Graph inputs that are not initializers; their shapes from the file or the options; dynamic ones refused.
  void prepare_inputs() {
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
      fail(fmt::format("--input {}={}: the model has no input \"{}\"; its inputs are: {}", name, shape_text(shape),
                       name, described.empty() ? "none" : join_names(described, 50)));
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
      const std::string hint = example.empty() ? fmt::format("{}=1x3x224x224", i.name())
                                               : fmt::format("{}={}", i.name(), shape_text(example));
      problems.push_back(
          zero_sized ? fmt::format("input \"{}\" is empty ({}: {}) and framesim needs non-empty tensors: give it a "
                                   "shape with --input {} (ImportOptions::input_shapes)",
                                   i.name(), describe_type(i.type()), why, hint)
                     : fmt::format("input \"{}\" has a dynamic shape {} ({}): give its shape with --input {} "
                                   "(ImportOptions::input_shapes)",
                                   i.name(), describe_type(i.type()), why, hint));
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

  /// ONNX shape inference on model_, in this process. Data propagation first (it follows some shape arithmetic);
  /// ONNX 1.12's propagators throw on a few valid graphs, so without it when it does.
  static void infer_in_process(onnx::ModelProto& m) {
    const onnx::ModelProto before = m;
    try {
      onnx::shape_inference::InferShapes(
          m, onnx::OpSchemaRegistry::Instance(),
          onnx::ShapeInferenceOptions(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true));
      return;
    } catch (const std::exception&) {
      m = before;
    }
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 0, false));
  }

  /// Shape inference in a child process: ONNX's inference functions are not hardened against malformed models
  /// (a Conv whose input rank disagrees with its weights' crashes ONNX 1.12), and a corrupt file must give an
  /// error, not a crash. The child sends back the inferred value_info and output types.
  void infer_shapes() {
    int fds[2];
    if (::pipe(fds) != 0) return infer_here();
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      return infer_here();
    }
    if (pid == 0) {
      ::close(fds[0]);
      std::string out;
      try {
        infer_in_process(model_);
        onnx::GraphProto g;
        *g.mutable_value_info() = model_.graph().value_info();
        *g.mutable_output() = model_.graph().output();
        out = "O" + g.SerializeAsString();
      } catch (const std::exception& e) {
        out = "E" + first_line(e.what());
      } catch (...) {
        out = "Ean unknown exception";
      }
      for (std::size_t done = 0; done < out.size();) {
        const auto n = ::write(fds[1], out.data() + done, out.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
      }
      ::_exit(0);
    }
    ::close(fds[1]);
    std::string in;
    char buffer[65536];
    for (;;) {
      const auto n = ::read(fds[0], buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      in.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status))
      fail(fmt::format("ONNX shape inference crashed on this model (signal {}): it is malformed (a corrupt file?)",
                       WTERMSIG(status)));
    if (in.empty()) fail("ONNX shape inference ended without a result: the model is malformed (a corrupt file?)");
    if (in[0] == 'E') fail(fmt::format("ONNX shape inference failed: {}", in.substr(1)));
    onnx::GraphProto g;
    if (in[0] != 'O' || !g.ParseFromArray(in.data() + 1, static_cast<int>(in.size() - 1)) ||
        g.output_size() != model_.graph().output_size())
      fail("ONNX shape inference returned no readable result");
    model_.mutable_graph()->mutable_value_info()->Swap(g.mutable_value_info());
    for (int i = 0; i < g.output_size(); ++i) model_.mutable_graph()->mutable_output(i)->Swap(g.mutable_output(i));
  }

  void infer_here() {
    try {
      infer_in_process(model_);
    } catch (const std::exception& e) {
      fail(fmt::format("ONNX shape inference failed: {}", first_line(e.what())));
    }
  }

  static std::string first_line(const std::string& s) {
    auto nl = s.find('\n');
    return nl == std::string::npos ? s : s.substr(0, nl);
  }

  void collect_types() {
    const auto& g = model_.graph();
    for (const auto& v : g.input()) types_[v.name()] = &v.type();
    for (const auto& v : g.value_info()) types_[v.name()] = &v.type();
    for (const auto& v : g.output())
      if (!types_.count(v.name()) || v.type().tensor_type().has_shape()) types_[v.name()] = &v.type();
  }

  /// "a sequence", "an optional", ... for values that are not tensors.
  static std::string kind_of(const onnx::TypeProto& t) {
    if (t.has_sequence_type()) return "a sequence";
    if (t.has_map_type()) return "a map";
    if (t.has_optional_type()) return "an optional";
    if (t.has_sparse_tensor_type()) return "a sparse tensor";
    if (!t.has_tensor_type()) return "a value of unknown type";
    return "a tensor";
  }

  static std::string describe_type(const onnx::TypeProto& t) {
    if (!t.has_tensor_type()) return kind_of(t).substr(kind_of(t).find(' ') + 1);
    const auto& tt = t.tensor_type();
    std::string dims;
    if (!tt.has_shape()) {
      dims = "unknown rank";
    } else {
      for (int d = 0; d < tt.shape().dim_size(); ++d) {
        const auto& dim = tt.shape().dim(d);
        if (d) dims += "x";
        dims += dim.has_dim_value() ? std::to_string(dim.dim_value()) : dim.has_dim_param() ? dim.dim_param() : "?";
      }
      if (dims.empty()) dims = "scalar";
    }
    return fmt::format("{} {}", elem_type_name(tt.elem_type()), dims);
  }

  // ---------------------------------------------------------------- small values (shape arithmetic)

  /// A small tensor whose values are known before run time.
  struct Value {
    Shape dims;
    std::vector<double> v;
    int type = 0;
  };
  static constexpr double kMaxFoldedElements = 64;  // shape-like tensors only: weights keep their own storage

  static bool integer_type(int t) {
    using TP = onnx::TensorProto;
    return t == TP::INT64 || t == TP::INT32 || t == TP::INT16 || t == TP::INT8 || t == TP::UINT8 || t == TP::UINT16 ||
           t == TP::UINT32 || t == TP::UINT64 || t == TP::BOOL;
  }

  /// Values of `name` if known: an initializer, a Constant node, or computed in an earlier step.
  const Value* value(const std::string& name) {
    if (auto it = values_.find(name); it != values_.end()) return &it->second;
    auto it = init_index_.find(name);
    if (it == init_index_.end() || no_value_.count(name)) return nullptr;
    const auto& t = model_.graph().initializer(it->second);
    Value v;
    v.dims.assign(t.dims().begin(), t.dims().end());
    v.type = t.data_type();
    if (!read_values(t, v.v)) {
      no_value_.insert(name);
      return nullptr;
    }
    return &(values_[name] = std::move(v));
  }

  /// numpy broadcasting of `ins` through `fn`.
  static std::optional<Value> broadcast_values(const std::vector<const Value*>& ins, int type,
                                               const std::function<double(const std::vector<double>&)>& fn) {
    Shape out;
    for (const auto* in : ins) {
      if (in->dims.size() > out.size()) out.insert(out.begin(), in->dims.size() - out.size(), 1);
      for (std::size_t i = 0; i < in->dims.size(); ++i) {
        auto& o = out[out.size() - in->dims.size() + i];
        const auto d = in->dims[i];
        if (o == d || d == 1) continue;
        if (o != 1) return std::nullopt;
        o = d;
      }
    }
    Value r;
    r.dims = out;
    r.type = type;
    const auto n = static_cast<std::size_t>(model::shape_elements(out));
    if (static_cast<double>(n) > kMaxFoldedElements) return std::nullopt;
    std::vector<double> args(ins.size());
    for (std::size_t flat = 0; flat < n; ++flat) {
      for (std::size_t k = 0; k < ins.size(); ++k) {
        const Shape& d = ins[k]->dims;
        std::size_t rest = flat, index = 0, stride = 1;
        for (std::size_t axis = out.size(); axis-- > 0;) {
          const auto coord = rest % static_cast<std::size_t>(out[axis]);
          rest /= static_cast<std::size_t>(out[axis]);
          const std::size_t in_axis = axis + d.size();
          if (in_axis < out.size()) continue;  // broadcast leading axis
          const auto dim = static_cast<std::size_t>(d[in_axis - out.size()]);
          index += (dim == 1 ? 0 : coord) * stride;
          stride *= dim;
        }
        if (index >= ins[k]->v.size()) return std::nullopt;
        args[k] = ins[k]->v[index];
      }
      r.v.push_back(fn(args));
    }
    return r;
  }

  /// Values of a node's single output, when its inputs' values (or, for Shape and Size, its input's shape)
  /// are known and the op is one of the shape-arithmetic ops below.
  std::optional<Value> compute_value(const onnx::NodeProto& node) {
    const std::string& op = node.op_type();
    if (node.output_size() != 1 || !(node.domain().empty() || node.domain() == "ai.onnx")) return std::nullopt;
    const int out_type = elem_type(node.output(0));
    const auto out_shape = known_shape(node.output(0));
    if (out_type == 0) return std::nullopt;
    const onnx::NodeProto& n = node;
    const Ctx c{n, -1, "", "", ""};
    if (op == "Shape" || op == "Size") {
      const auto s = node.input_size() ? known_shape(node.input(0)) : std::nullopt;
      if (!s) return std::nullopt;
      Value r;
      r.type = onnx::TensorProto::INT64;
      if (op == "Size") {
        r.v = {model::shape_elements(*s)};
        return r;
      }
      const auto rank = static_cast<std::int64_t>(s->size());
      auto clamp = [&](std::int64_t x) { return std::clamp<std::int64_t>(x < 0 ? x + rank : x, 0, rank); };
      for (auto d = clamp(attr_int(c, "start", 0)); d < clamp(attr_int(c, "end", rank)); ++d)
        r.v.push_back(static_cast<double>((*s)[static_cast<std::size_t>(d)]));
      r.dims = {static_cast<std::int64_t>(r.v.size())};
      return r;
    }
    std::vector<const Value*> in;
    for (const auto& name : node.input()) {
      if (name.empty()) {
        in.push_back(nullptr);
        continue;
      }
      const Value* v = value(name);
      if (!v) return std::nullopt;
      // Float constants of the file with more than one element are weights: folding them here would lose their
      // stored precision (fp16 behind a Cast); the ordinary fold keeps it.
      if (!integer_type(v->type) && v->v.size() > 1 && !computed_.count(name)) return std::nullopt;
      in.push_back(v);
    }
    auto cast_to = [&](double x, int type) {
      if (type == onnx::TensorProto::BOOL) return x != 0 ? 1.0 : 0.0;
      if (integer_type(type)) return std::trunc(x);
      if (type == onnx::TensorProto::FLOAT) return static_cast<double>(static_cast<float>(x));
      return x;
    };
    auto unary = [&](const std::function<double(double)>& fn) -> std::optional<Value> {
      if (in.empty() || !in[0]) return std::nullopt;
      Value r = *in[0];
      r.type = out_type;
      for (auto& x : r.v) x = cast_to(fn(x), out_type);
      return r;
    };
    auto nary = [&](const std::function<double(const std::vector<double>&)>& fn) -> std::optional<Value> {
      for (const auto* v : in)
        if (!v) return std::nullopt;
      auto r = broadcast_values(in, out_type, fn);
      if (r)
        for (auto& x : r->v) x = cast_to(x, out_type);
      return r;
    };
    const bool ints = integer_type(out_type);
    if (op == "Identity" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten") {
      if (!out_shape || in.empty() || !in[0]) return std::nullopt;
      Value r = *in[0];
      r.dims = *out_shape;
      return r;
    }
    if (op == "Cast") return unary([](double x) { return x; });
    if (op == "Neg") return unary([](double x) { return -x; });
    if (op == "Abs") return unary([](double x) { return std::fabs(x); });
    if (op == "Not") return unary([](double x) { return x == 0 ? 1.0 : 0.0; });
    if (op == "Floor") return unary([](double x) { return std::floor(x); });
    if (op == "Ceil") return unary([](double x) { return std::ceil(x); });
    if (op == "Sqrt") return unary([](double x) { return std::sqrt(x); });
    if (op == "Add") return nary([](const auto& a) { return a[0] + a[1]; });
    if (op == "Sub") return nary([](const auto& a) { return a[0] - a[1]; });
    if (op == "Mul") return nary([](const auto& a) { return a[0] * a[1]; });
    if (op == "Div")
      return nary([ints](const auto& a) { return a[1] == 0 ? 0.0 : ints ? std::trunc(a[0] / a[1]) : a[0] / a[1]; });
    if (op == "Mod") return nary([](const auto& a) { return a[1] == 0 ? 0.0 : a[0] - a[1] * std::floor(a[0] / a[1]); });
    if (op == "Max") return nary([](const auto& a) { return *std::max_element(a.begin(), a.end()); });
    if (op == "Min") return nary([](const auto& a) { return *std::min_element(a.begin(), a.end()); });
    if (op == "Equal") return nary([](const auto& a) { return a[0] == a[1] ? 1.0 : 0.0; });
    if (op == "Less") return nary([](const auto& a) { return a[0] < a[1] ? 1.0 : 0.0; });
    if (op == "Greater") return nary([](const auto& a) { return a[0] > a[1] ? 1.0 : 0.0; });
    if (op == "LessOrEqual") return nary([](const auto& a) { return a[0] <= a[1] ? 1.0 : 0.0; });
    if (op == "GreaterOrEqual") return nary([](const auto& a) { return a[0] >= a[1] ? 1.0 : 0.0; });
    if (op == "And") return nary([](const auto& a) { return a[0] != 0 && a[1] != 0 ? 1.0 : 0.0; });
    if (op == "Or") return nary([](const auto& a) { return a[0] != 0 || a[1] != 0 ? 1.0 : 0.0; });
    if (op == "Where") return nary([](const auto& a) { return a[0] != 0 ? a[1] : a[2]; });
    if (op == "ConstantOfShape") {
      if (!out_shape || model::shape_elements(*out_shape) > kMaxFoldedElements) return std::nullopt;
      std::vector<double> fill{0};
      if (const auto* a = attr(c, "value")) {
        if (!read_values(a->t(), fill) || fill.size() != 1) return std::nullopt;
      }
      Value r;
      r.dims = *out_shape;
      r.type = out_type;
      r.v.assign(static_cast<std::size_t>(model::shape_elements(*out_shape)), fill[0]);
      return r;
    }
    if (op == "Range") {
      if (in.size() != 3 || !in[0] || !in[1] || !in[2] || in[0]->v.size() != 1 || in[1]->v.size() != 1 ||
          in[2]->v.size() != 1 || in[2]->v[0] == 0)
        return std::nullopt;
      Value r;
      r.type = out_type;
      const double start = in[0]->v[0], limit = in[1]->v[0], delta = in[2]->v[0];
      const double count = std::max(0.0, std::ceil((limit - start) / delta));
      if (count > kMaxFoldedElements) return std::nullopt;
      for (double k = 0; k < count; ++k) r.v.push_back(cast_to(start + k * delta, out_type));
      r.dims = {static_cast<std::int64_t>(r.v.size())};
      return r;
    }
    if (op == "Gather") {
      if (in.size() < 2 || !in[0] || !in[1]) return std::nullopt;
      const Value& d = *in[0];
      if (d.dims.empty()) return std::nullopt;
      auto axis = attr_int(c, "axis", 0);
      if (axis < 0) axis += static_cast<std::int64_t>(d.dims.size());
      if (axis < 0 || axis >= static_cast<std::int64_t>(d.dims.size())) return std::nullopt;
      const auto ax = static_cast<std::size_t>(axis);
      const double outer = model::shape_elements(Shape(d.dims.begin(), d.dims.begin() + axis));
      const double inner = model::shape_elements(Shape(d.dims.begin() + axis + 1, d.dims.end()));
      const auto len = d.dims[ax];
      Value r;
      r.type = out_type;
      r.dims.assign(d.dims.begin(), d.dims.begin() + axis);
      r.dims.insert(r.dims.end(), in[1]->dims.begin(), in[1]->dims.end());
      r.dims.insert(r.dims.end(), d.dims.begin() + axis + 1, d.dims.end());
      if (model::shape_elements(r.dims) > kMaxFoldedElements) return std::nullopt;
      for (double o = 0; o < outer; ++o)
        for (double idx : in[1]->v) {
          auto k = static_cast<std::int64_t>(idx);
          if (k < 0) k += len;
          if (k < 0 || k >= len) return std::nullopt;
          for (double i = 0; i < inner; ++i)
            r.v.push_back(
                d.v[static_cast<std::size_t>((o * static_cast<double>(len) + static_cast<double>(k)) * inner + i)]);
        }
      return r;
    }
    if (op == "Concat") {
      if (in.empty()) return std::nullopt;
      for (const auto* v : in)
        if (!v || v->dims.size() != in[0]->dims.size() || v->dims.empty()) return std::nullopt;
      auto axis = attr_int(c, "axis", 0);
      const auto rank = static_cast<std::int64_t>(in[0]->dims.size());
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) return std::nullopt;
      const double outer = model::shape_elements(Shape(in[0]->dims.begin(), in[0]->dims.begin() + axis));
      Value r;
      r.type = out_type;
      r.dims = in[0]->dims;
      r.dims[static_cast<std::size_t>(axis)] = 0;
      for (const auto* v : in) r.dims[static_cast<std::size_t>(axis)] += v->dims[static_cast<std::size_t>(axis)];
      if (model::shape_elements(r.dims) > kMaxFoldedElements) return std::nullopt;
      for (double o = 0; o < outer; ++o)
        for (const auto* v : in) {
          const double chunk = model::shape_elements(Shape(v->dims.begin() + axis, v->dims.end()));
          for (double i = 0; i < chunk; ++i) r.v.push_back(v->v[static_cast<std::size_t>(o * chunk + i)]);
        }
      return r;
    }
    if (op == "Slice") {
      // Rank-1 data (shape vectors); starts/ends/axes/steps as inputs (opset 10+) or attributes (before).
      if (in.empty() || !in[0] || in[0]->dims.size() != 1) return std::nullopt;
      double start = 0, end = 0, step = 1;
      if (node.input_size() >= 3) {
        if (!in[1] || !in[2] || in[1]->v.size() != 1 || in[2]->v.size() != 1) return std::nullopt;
        if (node.input_size() >= 4 && in[3] && (in[3]->v.size() != 1 || (in[3]->v[0] != 0 && in[3]->v[0] != -1)))
          return std::nullopt;
        start = in[1]->v[0];
        end = in[2]->v[0];
        if (node.input_size() >= 5 && in[4]) {
          if (in[4]->v.size() != 1 || in[4]->v[0] == 0) return std::nullopt;
          step = in[4]->v[0];
        }
      } else {
        const auto s = attr_ints(c, "starts"), e = attr_ints(c, "ends");
        if (!s || !e || s->size() != 1 || e->size() != 1) return std::nullopt;
        start = static_cast<double>((*s)[0]);
        end = static_cast<double>((*e)[0]);
      }
      const double len = static_cast<double>(in[0]->dims[0]);
      auto clamp = [&](double x, double lo, double hi) { return std::clamp(x < 0 ? x + len : x, lo, hi); };
      Value r;
      r.type = out_type;
      if (step > 0) {
        for (double i = clamp(start, 0, len); i < clamp(end, 0, len); i += step)
          r.v.push_back(in[0]->v[static_cast<std::size_t>(i)]);
      } else {
        for (double i = clamp(start, -1, len - 1); i > clamp(end, -1, len - 1); i += step)
          r.v.push_back(in[0]->v[static_cast<std::size_t>(i)]);
      }
      r.dims = {static_cast<std::int64_t>(r.v.size())};
      return r;
    }
    if (op == "ReduceProd" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin") {
      // Over every element (a shape vector): what shape arithmetic uses.
      if (in.empty() || !in[0] || !out_shape || model::shape_elements(*out_shape) != 1 || in[0]->v.empty())
        return std::nullopt;
      double acc = op == "ReduceProd" ? 1.0 : op == "ReduceSum" ? 0.0 : in[0]->v[0];
      for (double x : in[0]->v)
        acc = op == "ReduceProd"  ? acc * x
              : op == "ReduceSum" ? acc + x
              : op == "ReduceMax" ? std::max(acc, x)
                                  : std::min(acc, x);
      Value r;
      r.dims = *out_shape;
      r.type = out_type;
      r.v = {acc};
      return r;
    }
    return std::nullopt;
  }

  /// The outputs of a Split of a small known value (pads or shapes split and concatenated again, as exporters
  /// write them): made known values, so that what reads them (Concat -> Pad) folds. The Split node stays; with
  /// nothing reading it any more it is counted as folded. True if it gave new values.
  bool split_values(const onnx::NodeProto& node) {
    if (node.input_size() < 1 || node.output_size() < 1) return false;
    if (std::all_of(node.output().begin(), node.output().end(), [&](const auto& o) { return values_.count(o) > 0; }))
      return false;
    const Value* in = value(node.input(0));
    if (!in || static_cast<double>(in->v.size()) > kMaxFoldedElements || in->dims.empty()) return false;
    const Ctx c{node, -1, "", "", ""};
    const auto rank = static_cast<std::int64_t>(in->dims.size());
    std::int64_t axis = attr_int(c, "axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return false;
    const std::int64_t length = in->dims[static_cast<std::size_t>(axis)];
    const auto parts = static_cast<std::int64_t>(node.output_size());
    std::vector<std::int64_t> sizes;
    if (node.input_size() > 1 && !node.input(1).empty()) {  // opset 13+: the sizes are an input
      const Value* split = value(node.input(1));
      if (!split) return false;
      for (double x : split->v) sizes.push_back(static_cast<std::int64_t>(x));
    } else if (auto attr = attr_ints(c, "split")) {
      sizes = *attr;
    } else {  // equal parts, the last one smaller (opset 18)
      const std::int64_t each = (length + parts - 1) / parts;
      for (std::int64_t k = 0; k < parts; ++k) sizes.push_back(std::min(each, length - k * each));
    }
    if (static_cast<std::int64_t>(sizes.size()) != parts) return false;
    std::int64_t total = 0;
    for (auto x : sizes) {
      if (x < 0) return false;
      total += x;
    }
    if (total != length) return false;
    std::int64_t inner = 1;
    for (auto d = static_cast<std::size_t>(axis) + 1; d < in->dims.size(); ++d) inner *= in->dims[d];
    const std::int64_t outer = static_cast<std::int64_t>(in->v.size()) / std::max<std::int64_t>(1, length * inner);
    std::int64_t start = 0;
    for (std::int64_t k = 0; k < parts; ++k) {
      Value out;
      out.type = in->type;
      out.dims = in->dims;
      out.dims[static_cast<std::size_t>(axis)] = sizes[static_cast<std::size_t>(k)];
      for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = start * inner; i < (start + sizes[static_cast<std::size_t>(k)]) * inner; ++i)
          out.v.push_back(in->v[static_cast<std::size_t>(o * length * inner + i)]);
      start += sizes[static_cast<std::size_t>(k)];
      const std::string& name = node.output(static_cast<int>(k));
      if (!name.empty()) values_[name] = std::move(out);
    }
    return true;
  }

  /// Replaces every node whose small output can be computed by a Constant node holding it. True if any was.
  bool fold_small_values(const std::vector<int>& order) {
    bool changed = false;
    auto* g = model_.mutable_graph();
    for (int index : order) {
      auto* node = g->mutable_node(index);
      if (node->op_type() == "Constant") {
        if (node->output_size() == 1 && node->attribute_size() == 1 && node->attribute(0).name() == "value" &&
            !values_.count(node->output(0))) {
          Value v;
          v.dims.assign(node->attribute(0).t().dims().begin(), node->attribute(0).t().dims().end());
          v.type = node->attribute(0).t().data_type();
          if (read_values(node->attribute(0).t(), v.v)) values_[node->output(0)] = std::move(v);
        }
        continue;
      }
      if (node->op_type() == "Split") {
        changed = split_values(*node) || changed;
        continue;
      }
      if (node->output_size() != 1 || values_.count(node->output(0))) continue;
      auto computed = compute_value(*node);
      if (!computed || static_cast<double>(computed->v.size()) != model::shape_elements(computed->dims) ||
          static_cast<double>(computed->v.size()) > kMaxFoldedElements)
        continue;
      onnx::TensorProto t;
      using TP = onnx::TensorProto;
      const int type = computed->type;
      t.set_data_type(type);
      for (auto d : computed->dims) t.add_dims(d);
      if (type == TP::INT64) {
        for (double x : computed->v) t.add_int64_data(static_cast<std::int64_t>(x));
      } else if (type == TP::INT32 || type == TP::BOOL || type == TP::INT8 || type == TP::UINT8 || type == TP::INT16 ||
                 type == TP::UINT16) {
        for (double x : computed->v) t.add_int32_data(static_cast<std::int32_t>(x));
      } else if (type == TP::FLOAT) {
        for (double x : computed->v) t.add_float_data(static_cast<float>(x));
      } else if (type == TP::DOUBLE) {
        for (double x : computed->v) t.add_double_data(x);
      } else {
        continue;
      }
      const std::string out = node->output(0);
      const std::string name = node->name();
      node->Clear();
      node->set_op_type("Constant");
      node->set_name(name);
      node->add_output(out);
      auto* a = node->add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::TENSOR);
      *a->mutable_t() = std::move(t);
      values_[out] = std::move(*computed);
      computed_.insert(out);
      changed = true;
    }
    return changed;
  }

  // ---------------------------------------------------------------- graph structure

  std::vector<int> topological_order() {
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
  std::vector<bool> liveness(const std::vector<int>& order,
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

  void mark_needed(const std::vector<int>& order) {
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
      result_.warnings.push_back(fmt::format("{} node{} contribute{} to no graph output and {} dropped: {}",
                                             dropped.size(), dropped.size() == 1 ? "" : "s",
                                             dropped.size() == 1 ? "s" : "", dropped.size() == 1 ? "was" : "were",
                                             join_names(dropped)));

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

  std::string node_label(int i) const {
    const auto& node = model_.graph().node(i);
    const std::string& op = original_ops_[static_cast<std::size_t>(i)];
    return node.name().empty() ? fmt::format("{}_{}", op, i) : fmt::format("{} ({})", node.name(), op);
  }

  // ---------------------------------------------------------------- tensors

  /// A constant's stored type; noted as lossy only if a layer reads it as weights (see stored()).
  static void set_type(Const& c, int elem_type, const std::string& name) {
    bool lossy = false;
    c.storage = precision_of(elem_type, lossy);
    c.onnx_type = elem_type;
    c.name = name;
  }

  /// The stored precision of a constant a layer reads as weights.
  Precision stored(const Const& c) {
    if (weight_elements(c) > 0) {
      bool lossy = false;
      precision_of(c.onnx_type, lossy);
      if (lossy && c.onnx_type != 0) lossy_[elem_type_name(c.onnx_type)].insert(c.name);
    }
    return c.storage;
  }

  Precision tensor_precision(int elem_type, const std::string& name) {
    bool lossy = false;
    const Precision p = precision_of(elem_type, lossy);
    if (lossy && elem_type != 0) lossy_[elem_type_name(elem_type)].insert(name);
    return p;
  }

  const onnx::TypeProto* type_of(const std::string& name) const {
    auto it = types_.find(name);
    return it == types_.end() ? nullptr : it->second;
  }

  int elem_type(const std::string& name) const {
    const auto* t = type_of(name);
    return t && t->has_tensor_type() ? t->tensor_type().elem_type() : 0;
  }

  std::optional<Shape> known_shape(const std::string& name) const {
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
  Shape require_shape(const std::string& name, const std::string& where) const {
    const auto* t = type_of(name);
    if (t && !t->has_tensor_type())
      fail(
          fmt::format("{}: \"{}\" is {}, not a tensor: framesim imports tensor graphs only", where, name, kind_of(*t)));
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

  void add_graph_inputs() {
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

  model::NetworkSpec& net_() { return result_.network; }

  // ---------------------------------------------------------------- nodes

  struct Ctx {
    const onnx::NodeProto& node;
    int index;
    std::string base;   // layer name
    std::string where;  // for messages: "node 12 (Conv \"name\")"
    std::string label;  // for warnings
  };

  const onnx::AttributeProto* attr(const Ctx& c, std::string_view name) const {
    for (const auto& a : c.node.attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  std::int64_t attr_int(const Ctx& c, std::string_view name, std::int64_t fallback) const {
    const auto* a = attr(c, name);
    return a ? a->i() : fallback;
  }
  double attr_float(const Ctx& c, std::string_view name, double fallback) const {
    const auto* a = attr(c, name);
    return a ? a->f() : fallback;
  }
  std::string attr_string(const Ctx& c, std::string_view name, std::string fallback) const {
    const auto* a = attr(c, name);
    return a ? a->s() : fallback;
  }
  std::optional<std::vector<std::int64_t>> attr_ints(const Ctx& c, std::string_view name) const {
    const auto* a = attr(c, name);
    if (!a) return std::nullopt;
    return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
  }

  Operand operand(const Ctx& c, int i) const {
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

  std::vector<Operand> operands(const Ctx& c) const {
    std::vector<Operand> out;
    for (int i = 0; i < c.node.input_size(); ++i) out.push_back(operand(c, i));
    return out;
  }

  const model::TensorSpec& tensor(int id) { return net_().tensors[static_cast<std::size_t>(id)]; }
  const Shape& shape_of(const Operand& o) {
    if (o.act()) return tensor(o.tensor).shape;
    if (!o.c->shape) fail(fmt::format("the constant \"{}\" ({}) has no static shape", o.name, o.c->origin));
    return *o.c->shape;
  }

  /// Output precision of the node's output `i`.
  Precision out_precision(const Ctx& c, int i, const std::vector<Operand>& ops) {
    const std::string& name = c.node.output(i);
    const int t = elem_type(name);
    if (t != 0) return tensor_precision(t, name);
    for (const auto& o : ops)
      if (o.act()) return tensor(o.tensor).precision;
    return Precision::fp32;
  }

  /// Activations: the output's; compute: the first float activation input's (else the first input's).
  LayerPrecision precision_for(const std::vector<Operand>& ops, Precision out, std::optional<Precision> weights,
                               std::optional<Precision> compute = std::nullopt) {
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
  std::optional<Precision> weights_precision(const std::vector<Operand>& ops) {
    std::optional<Precision> p;
    double most = 0;  // immediates (one element) are no weights
    for (const auto& o : ops)
      if (o.cst() && weight_elements(*o.c) > most) {
        most = weight_elements(*o.c);
        p = stored(*o.c);
      }
    return p;
  }

  double constant_weights(const std::vector<Operand>& ops) {
    double n = 0;
    for (const auto& o : ops)
      if (o.cst()) {
        stored(*o.c);
        n += weight_elements(*o.c);
      }
    return n;
  }

  static std::vector<int> activations(const std::vector<Operand>& ops) {
    std::vector<int> out;
    for (const auto& o : ops)
      if (o.act()) out.push_back(o.tensor);
    return out;
  }

  void note(const std::string& message, const Ctx& c) {
    auto [it, inserted] = notes_.try_emplace(message);
    if (inserted) note_order_.push_back(message);
    it->second.push_back(c.label);
  }

  std::string layer_name(const Ctx& c, const std::string& suffix) {
    std::string name = c.base + suffix;
    if (used_names_.count(name)) {
      int k = 2;
      while (used_names_.count(fmt::format("{}_{}", name, k))) ++k;
      name = fmt::format("{}_{}", name, k);
    }
    used_names_.insert(name);
    return name;
  }

  /// A layer for the ONNX value `value`: built by framesim, its shape checked against ONNX's.
  struct Spec {
    std::string op;
    OpParams params;
    std::vector<int> inputs;
    LayerPrecision precision;
    std::string value;            // the ONNX value written
    std::string suffix;           // added to the layer name
    std::optional<Shape> expect;  // default: the value's static shape
  };

  /// Throws on a build error or a shape that differs from ONNX's, unless `fallback_ops` is given: then the
  /// node is costed as custom with those ops (and listed in the warnings).
  int emit(const Ctx& c, Spec s, std::optional<double> fallback_ops = std::nullopt, double fallback_weights = 0) {
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
  int emit_custom(const Ctx& c, const std::string& value, std::vector<int> inputs, double ops, double weights,
                  LayerPrecision precision, const std::string& suffix = "",
                  std::optional<Shape> expect = std::nullopt, std::string_view op_class = {}) {
    const Shape shape = expect ? *expect : require_shape(value, c.where);
    OpParams p{{"ops", ops}, {"output_shape", shape}};
    if (!op_class.empty()) p["class"] = std::string(op_class);
    if (weights > 9.0e15) fail(fmt::format("{}: {} weight elements is beyond any real model", c.where, weights));
    if (weights > 0) p["weights"] = static_cast<std::int64_t>(std::llround(weights));
    return emit(c, Spec{"custom", std::move(p), std::move(inputs), precision, value, suffix, shape});
  }

  /// An op framesim does not know: reads its inputs (constants as weights), writes each output, 0 ops.
  void unknown(const Ctx& c, const std::vector<Operand>& ops) {
    note(
        "not an op framesim knows; costed as data movement (custom: reads its inputs, constants as weights, writes "
        "its outputs, 0 ops)",
        c);
    data_movement(c, ops);
  }

  void data_movement(const Ctx& c, const std::vector<Operand>& ops) {
    const auto wprec = weights_precision(ops);
    bool first = true;
    const int outs = c.node.output_size();
    for (int i = 0; i < outs; ++i) {
      const std::string& v = c.node.output(i);
      if (v.empty() || !needed_.count(v)) continue;
      const Precision out = out_precision(c, i, ops);
      const LayerPrecision prec = precision_for(ops, out, wprec.value_or(out));
      const std::string suffix = outs > 1 ? fmt::format("_{}", i) : "";
      if (first)
        emit_custom(c, v, activations(ops), 0, constant_weights(ops), prec, suffix);
      else
        emit_custom(c, v, {}, 0, 0, prec, suffix);
      first = false;
    }
  }

  /// Outputs after the first that something reads: 0-op custom layers without inputs.
  void extra_outputs(const Ctx& c, const std::vector<Operand>& ops, int from = 1) {
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
  void fold(const Ctx& c, const std::vector<Operand>& ops) {
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

  void constant_node(const Ctx& c) {
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

  void handle(int index) {
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

  void map_node(const Ctx& c, const std::vector<Operand>& ops) {
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
      return single(c, ops, "cast", {{"to", to}});
    }
    if (op == "ReduceMean" || op == "ReduceMax" || op == "ReduceSum" || op == "ReduceMin" || op == "ReduceProd" ||
        op == "ReduceL1" || op == "ReduceL2" || op == "ReduceSumSquare" || op == "ReduceLogSum" ||
        op == "ReduceLogSumExp" || op == "ArgMax" || op == "ArgMin")
      return reduce(c, ops);
    unknown(c, ops);
  }

  /// The first activation operand, which most ops read.
  const Operand& data(const Ctx& c, const std::vector<Operand>& ops) const {
    for (const auto& o : ops)
      if (o.act()) return o;
    fail(fmt::format("{}: has no activation input", c.where));
  }

  /// A one-input framesim op on the first activation operand (constants are immediates or ignored attributes).
  void single(const Ctx& c, const std::vector<Operand>& ops, const std::string& op, OpParams params) {
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

  // ---- convolution

  struct ConvGeometry {
    Shape kernel, stride, dilation;
    std::int64_t groups = 1;
    std::vector<std::int64_t> pads;  // begin..., end...
    std::string auto_pad;
  };

  ConvGeometry conv_geometry(const Ctx& c, const Shape& x, const std::optional<Shape>& w) {
    ConvGeometry g;
    const std::size_t spatial = x.size() >= 2 ? x.size() - 2 : 0;
    if (auto k = attr_ints(c, "kernel_shape"))
      g.kernel = *k;
    else if (w && w->size() == spatial + 2)
      g.kernel = Shape(w->begin() + 2, w->end());
    else
      g.kernel = Shape(spatial, 1);
    g.stride = attr_ints(c, "strides").value_or(Shape(spatial, 1));
    g.dilation = attr_ints(c, "dilations").value_or(Shape(spatial, 1));
    g.groups = attr_int(c, "group", 1);
    g.pads = attr_ints(c, "pads").value_or(std::vector<std::int64_t>(2 * spatial, 0));
    g.auto_pad = attr_string(c, "auto_pad", "NOTSET");
    return g;
  }

  /// framesim padding [t, l, b, r] for a 2-D window, from ONNX's pads or auto_pad.
  std::optional<model::ParamValue> padding_2d(const ConvGeometry& g, const Shape& x) const {
    if (g.kernel.size() != 2 || g.stride.size() != 2 || g.dilation.size() != 2) return std::nullopt;
    if (g.auto_pad == "SAME_UPPER") return model::ParamValue{std::string("same")};
    if (g.auto_pad == "VALID") return model::ParamValue{std::vector<std::int64_t>{0, 0, 0, 0}};
    if (g.auto_pad == "SAME_LOWER") {
      std::int64_t total[2];
      for (int d = 0; d < 2; ++d) {
        const auto size = x[static_cast<std::size_t>(d) + 2];
        const auto s = g.stride[static_cast<std::size_t>(d)];
        const auto out = (size + s - 1) / s;
        total[d] = std::max<std::int64_t>(
            0, (out - 1) * s + g.dilation[static_cast<std::size_t>(d)] * (g.kernel[static_cast<std::size_t>(d)] - 1) +
                   1 - size);
      }
      // The odd pixel goes at the start (top, left).
      return model::ParamValue{
          std::vector<std::int64_t>{total[0] - total[0] / 2, total[1] - total[1] / 2, total[0] / 2, total[1] / 2}};
    }
    if (g.pads.size() != 4) return std::nullopt;
    // ONNX: [x1_begin, x2_begin, x1_end, x2_end] = [top, left, bottom, right], framesim's order.
    return model::ParamValue{g.pads};
  }

  void conv(const Ctx& c, const std::vector<Operand>& ops) {
    const std::string& op = c.node.op_type();
    const bool qlinear = op == "QLinearConv";
    const bool integer = qlinear || op == "ConvInteger";
    const Operand x = ops.at(0);
    const Operand w = operand(c, qlinear ? 3 : 1);
    const Operand b = operand(c, qlinear ? 8 : op == "Conv" ? 2 : 99);
    if (!x.act()) return unknown(c, ops);
    const Shape& xs = tensor(x.tensor).shape;
    const Shape ys = require_shape(c.node.output(0), c.where);
    const std::optional<Shape> ws = w.present() ? std::optional<Shape>(shape_of(w)) : std::nullopt;
    const ConvGeometry g = conv_geometry(c, xs, ws);
    const Precision out = out_precision(c, 0, ops);
    const std::optional<Precision> compute = integer ? std::optional<Precision>(Precision::int8) : std::nullopt;
    // The formula, for custom: 2 x N x Cout x spatial_out x Cin/groups x prod(kernel) (+ one add per output for bias).
    double ops_count = 0;
    if (xs.size() >= 2 && ys.size() >= 2 && g.groups > 0) {
      double k = 1;
      for (auto d : g.kernel) k *= static_cast<double>(d);
      ops_count = 2.0 * model::shape_elements(ys) * static_cast<double>(xs[1] / g.groups) * k +
                  (b.present() ? model::shape_elements(ys) : 0.0);
    }
    const auto padding = xs.size() == 4 ? padding_2d(g, xs) : std::nullopt;
    if (w.cst() && (!b.present() || b.cst()) && padding && ws && ws->size() == 4) {
      OpParams p{{"out_channels", (*ws)[0]}, {"kernel", g.kernel}, {"stride", g.stride},
                 {"dilation", g.dilation},   {"groups", g.groups}, {"padding", *padding}};
      if (b.present()) p["bias"] = true;
      const Precision wp = stored(*w.c);
      emit(c,
           Spec{"conv2d",
                std::move(p),
                {x.tensor},
                precision_for(ops, out, wp, compute),
                c.node.output(0),
                "",
                std::nullopt},
           ops_count, constant_weights({w, b}));
      return extra_outputs(c, ops);
    }
    if (!w.cst())
      note(fmt::format("{}: the weights are not an initializer; costed as custom with the convolution formula "
                       "(2 x N x Cout x spatial_out x Cin/groups x kernel), reading them as an activation",
                       op),
           c);
    else
      note(fmt::format("{} that framesim's conv2d cannot express (rank {}, its padding, or a bias that is not an "
                       "initializer): costed as custom with the "
                       "convolution formula",
                       op, xs.size()),
           c);
    const auto wprec = weights_precision(ops);
    emit_custom(c, c.node.output(0), activations(ops), ops_count, constant_weights(ops),
                precision_for(ops, out, wprec.value_or(out), compute), "", std::nullopt, "conv");
    extra_outputs(c, ops);
  }

  void conv_transpose(const Ctx& c, const std::vector<Operand>& ops) {
    const Operand x = ops.at(0);
    const Operand w = operand(c, 1);
    const Operand b = operand(c, 2);
    if (!x.act() || !w.present()) return unknown(c, ops);
    const Shape& xs = tensor(x.tensor).shape;
    const Shape& ws = shape_of(w);  // [Cin, Cout/groups, k...]
    const Shape ys = require_shape(c.node.output(0), c.where);
    // Every input element is multiplied into Cout/groups x prod(kernel) outputs.
    double k = 1;
    for (std::size_t i = 2; i < ws.size(); ++i) k *= static_cast<double>(ws[i]);
    const double per_input = ws.size() >= 2 ? static_cast<double>(ws[1]) * k : 0.0;
    const double count = 2.0 * model::shape_elements(xs) * per_input + (b.present() ? model::shape_elements(ys) : 0.0);
    note(
        "ConvTranspose (framesim has none): costed as custom with 2 x N x Cin x spatial_in x Cout/groups x kernel "
        "ops, the weights as weights",
        c);
    const Precision out = out_precision(c, 0, ops);
    emit_custom(c, c.node.output(0), activations(ops), count, constant_weights(ops),
                precision_for(ops, out, weights_precision(ops).value_or(out)), "", std::nullopt, "conv");
  }

  // ---- matrix products

  void gemm(const Ctx& c, const std::vector<Operand>& ops) {
    const Operand a = ops.at(0);
    const Operand b = operand(c, 1);
    const Operand bias = operand(c, 2);
    const bool ta = attr_int(c, "transA", 0) != 0, tb = attr_int(c, "transB", 0) != 0;
    const Shape ys = require_shape(c.node.output(0), c.where);
    const Precision out = out_precision(c, 0, ops);
    if (!a.act() || !b.present()) return unknown(c, ops);
    const Shape& as = tensor(a.tensor).shape;
    const Shape& bs = shape_of(b);
    if (as.size() != 2 || bs.size() != 2) return unknown(c, ops);
    const double m = static_cast<double>(ta ? as[1] : as[0]), k = static_cast<double>(ta ? as[0] : as[1]);
    const std::int64_t n = tb ? bs[0] : bs[1];
    // alpha and beta scale the product and the bias: scalars a runtime folds into the weights.
    const double formula = 2.0 * m * k * static_cast<double>(n) + (bias.present() ? m * static_cast<double>(n) : 0.0);
    const bool vector_bias = !bias.present() || (bias.cst() && bias.c->shape &&
                                                 model::shape_elements(*bias.c->shape) == static_cast<double>(n));
    if (!ta && b.cst() && vector_bias) {
      OpParams p{{"out_features", n}};
      if (bias.present()) p["bias"] = true;
      emit(c,
           Spec{"linear",
                std::move(p),
                {a.tensor},
                precision_for(ops, out, stored(*b.c)),
                c.node.output(0),
                "",
                std::nullopt},
           formula, constant_weights(ops));
      return;
    }
    if (!ta && b.act() && !bias.present()) {
      OpParams p;
      if (tb) p["transpose_b"] = true;
      emit(c,
           Spec{"matmul",
                std::move(p),
                {a.tensor, b.tensor},
                precision_for(ops, out, std::nullopt),
                c.node.output(0),
                "",
                std::nullopt},
           formula);
      return;
    }
    note(
        "Gemm with transA, activation weights with a bias, or a matrix bias: costed as custom with 2 x M x K x N "
        "(+ M x N for the bias) ops",
        c);
    emit_custom(c, c.node.output(0), activations(ops), formula, constant_weights(ops),
                precision_for(ops, out, weights_precision(ops).value_or(out)));
  }

  void matmul(const Ctx& c, const std::vector<Operand>& ops) {
    const std::string& op = c.node.op_type();
    const bool qlinear = op == "QLinearMatMul";
    const bool integer = qlinear || op == "MatMulInteger";
    const Operand a = ops.at(0);
    const Operand b = operand(c, qlinear ? 3 : 1);
    if (!a.present() || !b.present()) return unknown(c, ops);
    const Shape ys = require_shape(c.node.output(0), c.where);
    const Shape& as = shape_of(a);
    const Shape& bs = shape_of(b);
    const Precision out = out_precision(c, 0, ops);
    const std::optional<Precision> compute = integer ? std::optional<Precision>(Precision::int8) : std::nullopt;
    // 2 x K per output element, whatever the batching (numpy matmul semantics).
    const double formula = 2.0 * model::shape_elements(ys) * static_cast<double>(as.empty() ? 1 : as.back());
    if (a.act() && b.cst() && bs.size() == 2) {
      emit(c,
           Spec{"matmul",
                {{"n", bs[1]}},
                {a.tensor},
                precision_for(ops, out, stored(*b.c), compute),
                c.node.output(0),
                "",
                std::nullopt},
           formula, weight_elements(*b.c));
      return;
    }
    if (a.act() && b.act() && as.size() >= 2 && bs.size() >= 2) {
      emit(c,
           Spec{"matmul",
                {},
                {a.tensor, b.tensor},
                precision_for(ops, out, std::nullopt, compute),
                c.node.output(0),
                "",
                std::nullopt},
           formula);
      return;
    }
    note(fmt::format("{} with a constant first operand, batched constant weights or a rank-1 operand: costed as "
                     "custom with 2 x output elements x K ops",
                     op),
         c);
    emit_custom(c, c.node.output(0), activations(ops), formula, constant_weights(ops),
                precision_for(ops, out, weights_precision(ops).value_or(out), compute));
  }

  // ---- pooling

  void pool(const Ctx& c, const std::vector<Operand>& ops) {
    const std::string& op = c.node.op_type();
    const Operand x = ops.at(0);
    if (!x.act()) return unknown(c, ops);
    const Shape& xs = tensor(x.tensor).shape;
    const Shape ys = require_shape(c.node.output(0), c.where);
    ConvGeometry g = conv_geometry(c, xs, std::nullopt);
    double window = 1;
    for (auto d : g.kernel) window *= static_cast<double>(d);
    const double formula = model::shape_elements(ys) * window;
    const Precision out = out_precision(c, 0, ops);
    const bool dilated = std::any_of(g.dilation.begin(), g.dilation.end(), [](auto d) { return d != 1; });
    auto padding = xs.size() == 4 && !dilated ? padding_2d(g, xs) : std::nullopt;
    if (padding && ys.size() == 4 && attr_int(c, "ceil_mode", 0) != 0) {
      // ceil_mode: the last, partial window counts. framesim rounds down, so the partial window becomes padding
      // at the bottom / right (the same windows, the same ops).
      auto p = std::holds_alternative<std::string>(*padding) ? std::vector<std::int64_t>{}
                                                             : std::get<std::vector<std::int64_t>>(*padding);
      if (p.size() == 4) {
        for (int d = 0; d < 2; ++d) {
          const auto size =
              xs[static_cast<std::size_t>(d) + 2] + p[static_cast<std::size_t>(d)] + p[static_cast<std::size_t>(d) + 2];
          const auto need = (ys[static_cast<std::size_t>(d) + 2] - 1) * g.stride[static_cast<std::size_t>(d)] +
                            g.kernel[static_cast<std::size_t>(d)];
          if (need > size) p[static_cast<std::size_t>(d) + 2] += need - size;
        }
        padding = model::ParamValue{p};
      }
    }
    if (padding) {
      emit(c,
           Spec{op == "MaxPool" ? "maxpool" : "avgpool",
                {{"kernel", g.kernel}, {"stride", g.stride}, {"padding", *padding}},
                {x.tensor},
                precision_for(ops, out, std::nullopt),
                c.node.output(0),
                "",
                std::nullopt},
           formula);
    } else {
      note(fmt::format("{} that is not 2-D or is dilated: costed as custom with output elements x window ops", op), c);
      emit_custom(c, c.node.output(0), {x.tensor}, formula, 0, precision_for(ops, out, std::nullopt));
    }
    extra_outputs(c, ops);  // MaxPool's indices
  }

  void reduce(const Ctx& c, const std::vector<Operand>& ops) {
    const std::string& op = c.node.op_type();
    const auto& x = data(c, ops);
    const Shape& xs = tensor(x.tensor).shape;
    const Shape ys = require_shape(c.node.output(0), c.where);
    const Precision out = out_precision(c, 0, ops);
    // Every spatial axis of an NCHW-like tensor reduced, N and C kept: global pooling.
    bool global = (op == "ReduceMean" || op == "ReduceMax") && xs.size() >= 3 && ys.size() == xs.size() &&
                  ys[0] == xs[0] && ys[1] == xs[1];
    for (std::size_t i = 2; global && i < ys.size(); ++i) global = ys[i] == 1;
    if (global) return single(c, ops, op == "ReduceMean" ? "global_avgpool" : "global_maxpool", {});
    const double per_element =
        (op == "ReduceL1" || op == "ReduceL2" || op == "ReduceSumSquare" || op == "ReduceLogSumExp") ? 2.0 : 1.0;
    note(fmt::format("{} (framesim has no reduction op): costed as custom with {} op{} per input element", op,
                     per_element, per_element == 1 ? "" : "s"),
         c);
    emit_custom(c, c.node.output(0), {x.tensor}, per_element * model::shape_elements(xs), 0,
                precision_for(ops, out, std::nullopt));
  }

  // ---- elementwise

  /// n-ary elementwise. Constant operands of one element are immediates; larger ones are weights (custom).
  void elementwise(const Ctx& c, const std::vector<Operand>& ops, const std::string& op,
                   std::optional<double> per_element) {
    const auto acts = activations(ops);
    int operands_present = 0;
    for (const auto& o : ops) operands_present += o.present() ? 1 : 0;
    const double per = per_element.value_or(static_cast<double>(std::max(1, operands_present - 1)));
    const Shape ys = require_shape(c.node.output(0), c.where);
    const double formula = per * model::shape_elements(ys);
    const Precision out = out_precision(c, 0, ops);
    const double weights = constant_weights(ops);
    if (operands_present == 1) {  // Max, Min, Sum or Mean of one tensor: a copy
      emit(c, Spec{"copy", {}, acts, precision_for(ops, out, std::nullopt), c.node.output(0), "", std::nullopt});
      return;
    }
    if (weights == 0) {
      const bool named = op != "elementwise" && static_cast<int>(acts.size()) == operands_present && !per_element;
      OpParams p;
      if (!named) p["ops_per_element"] = per;
      emit(c,
           Spec{named ? op : "elementwise", std::move(p), acts, precision_for(ops, out, std::nullopt), c.node.output(0),
                "", std::nullopt},
           formula);
      return;
    }
    emit_custom(c, c.node.output(0), acts, formula, weights, precision_for(ops, out, weights_precision(ops)), "",
                std::nullopt, "elementwise");
  }

  void clip(const Ctx& c, const std::vector<Operand>& ops) {
    std::optional<double> lo, hi;
    bool known = true;
    if (c.node.input_size() > 1) {  // opset 11+: min and max are inputs
      for (int i : {1, 2}) {
        const Operand o = operand(c, i);
        if (!o.present()) continue;
        if (o.cst() && o.c->has_values && o.c->values.size() == 1)
          (i == 1 ? lo : hi) = o.c->values[0];
        else
          known = false;
      }
    } else {  // before opset 11: attributes
      if (attr(c, "min")) lo = attr_float(c, "min", 0);
      if (attr(c, "max")) hi = attr_float(c, "max", 0);
    }
    const bool unbounded_above = !hi || std::isinf(*hi) || *hi >= 3.4e38;
    std::string op = "clip";
    if (known && lo && *lo == 0.0 && hi && *hi == 6.0)
      op = "relu6";
    else if (known && lo && *lo == 0.0 && unbounded_above)
      op = "relu";
    single(c, ops, op, {});
  }

  void prelu(const Ctx& c, const std::vector<Operand>& ops) {
    const Operand slope = operand(c, 1);
    if (slope.cst() && weight_elements(*slope.c) == 0) return single(c, ops, "leaky_relu", {});
    elementwise(c, ops, "elementwise", 2.0);  // multiply and max per element; the slopes are weights
  }

  // ---- normalisation

  void batchnorm(const Ctx& c, const std::vector<Operand>& ops) {
    bool constants = ops.size() >= 5;
    for (std::size_t i = 1; i < ops.size() && i < 5; ++i) constants = constants && ops[i].cst();
    if (constants) {
      single(c, ops, "batchnorm", {});
    } else {
      note(
          "BatchNormalization with statistics that are not initializers: costed as custom with 2 ops per element, "
          "reading them as activations",
          c);
      const Shape ys = require_shape(c.node.output(0), c.where);
      const Precision out = out_precision(c, 0, ops);
      emit_custom(c, c.node.output(0), activations(ops), 2.0 * model::shape_elements(ys), constant_weights(ops),
                  precision_for(ops, out, weights_precision(ops).value_or(out)));
    }
    extra_outputs(c, ops);  // running mean and variance in training mode
  }

  void normalization(const Ctx& c, const std::vector<Operand>& ops, double per_element, const std::string& what) {
    note(fmt::format("{} (not a framesim op): costed as custom with {} ops per element (as layernorm), scale and "
                     "bias as weights",
                     what, per_element),
         c);
    const Shape ys = require_shape(c.node.output(0), c.where);
    const Precision out = out_precision(c, 0, ops);
    emit_custom(c, c.node.output(0), activations(ops), per_element * model::shape_elements(ys), constant_weights(ops),
                precision_for(ops, out, weights_precision(ops).value_or(out)));
    extra_outputs(c, ops);
  }

  void layernorm(const Ctx& c, const std::vector<Operand>& ops) {
    const bool rms = c.node.op_type() == "SimplifiedLayerNormalization";
    const auto& x = data(c, ops);
    const Shape& xs = tensor(x.tensor).shape;
    auto axis = attr_int(c, "axis", -1);
    if (axis < 0) axis += static_cast<std::int64_t>(xs.size());
    const Operand scale = operand(c, 1);
    const Operand bias = operand(c, 2);
    const double last = xs.empty() ? 0.0 : static_cast<double>(xs.back());
    auto is_vector = [&](const Operand& o) {
      return o.cst() && o.c->shape && model::shape_elements(*o.c->shape) == last;
    };
    const bool last_axis = axis == static_cast<std::int64_t>(xs.size()) - 1;
    const bool fits = last_axis && is_vector(scale) && (rms ? !bias.present() : is_vector(bias));
    if (fits) {
      single(c, ops, rms ? "rmsnorm" : "layernorm", {});
      return extra_outputs(c, ops);
    }
    normalization(c, ops, rms ? 4.0 : 8.0,
                  rms ? "SimplifiedLayerNormalization not over the last axis alone, or with a bias"
                      : "LayerNormalization not over the last axis alone, without a bias, or with activation scales");
  }

  // ---- data movement

  /// A free reshape from `from` to the node's output `value`, for nodes framesim expresses in another shape.
  void reshape_to(const Ctx& c, int from, const std::string& value) {
    const Shape out = require_shape(value, c.where);
    emit(c, Spec{"reshape",
                 {{"shape", out}},
                 {from},
                 precision_for({}, tensor(from).precision, std::nullopt),
                 value,
                 "",
                 out});
  }

  void gather(const Ctx& c, const std::vector<Operand>& ops) {
    const Operand d = operand(c, 0);
    const Operand idx = operand(c, 1);
    const Shape ys = require_shape(c.node.output(0), c.where);
    const Precision out = out_precision(c, 0, ops);
    const std::string v = c.node.output(0);
    auto axis = attr_int(c, "axis", 0);
    const Shape& ds = shape_of(d);
    if (axis < 0) axis += static_cast<std::int64_t>(ds.size());
    if (d.cst() && idx.act() && axis == 0 && ds.size() >= 2) {
      // A table lookup: each index reads one row of prod(shape[1:]) elements.
      const auto dim = static_cast<std::int64_t>(model::shape_elements(Shape(ds.begin() + 1, ds.end())));
      Shape emb = tensor(idx.tensor).shape;
      emb.push_back(dim);
      const bool reshape = emb != ys;
      const int t = emit(c, Spec{"embedding",
                                 {{"num_embeddings", ds[0]}, {"embedding_dim", dim}},
                                 {idx.tensor},
                                 precision_for(ops, out, stored(*d.c), out),
                                 reshape ? v + "#rows" : v,
                                 reshape ? "_rows" : "",
                                 emb});
      if (reshape) reshape_to(c, t, v);
      return;
    }
    if (d.act() && idx.cst() && idx.c->shape && axis >= 0 && axis < static_cast<std::int64_t>(ds.size())) {
      // The gathered elements, copied: a slice of as many rows as there are indices (reads only those).
      Shape part = ds;
      const auto count = static_cast<std::int64_t>(model::shape_elements(*idx.c->shape));
      part[static_cast<std::size_t>(axis)] = count;
      if (count >= 1 && count <= ds[static_cast<std::size_t>(axis)]) {
        const bool reshape = part != ys;
        const int t = emit(c, Spec{"slice",
                                   {{"shape", part}},
                                   {d.tensor},
                                   precision_for(ops, out, std::nullopt),
                                   reshape ? v + "#rows" : v,
                                   reshape ? "_rows" : "",
                                   part});
        if (reshape) reshape_to(c, t, v);
        return;
      }
    }
    note(
        "Gather with indices known only at run time, or a table lookup off axis 0: costed as custom reading its "
        "inputs in full (0 ops)",
        c);
    data_movement(c, ops);
  }

  void resize(const Ctx& c, const std::vector<Operand>& ops) {
    const auto& x = ops.at(0);
    if (!x.act()) return unknown(c, ops);
    const Shape& xs = tensor(x.tensor).shape;
    const Shape ys = require_shape(c.node.output(0), c.where);
    std::string mode = attr_string(c, "mode", "nearest");
    if (mode == "bilinear") mode = "linear";  // Upsample-7
    const bool spatial = xs.size() == 4 && ys.size() == 4 && xs[0] == ys[0] && xs[1] == ys[1];
    if (spatial && (mode == "nearest" || mode == "linear")) {
      OpParams p{{"mode", mode}};
      if (ys[2] % xs[2] == 0 && ys[3] % xs[3] == 0 && ys[2] >= xs[2] && ys[3] >= xs[3])
        p["scale"] = std::vector<std::int64_t>{ys[2] / xs[2], ys[3] / xs[3]};
      else
        p["size"] = std::vector<std::int64_t>{ys[2], ys[3]};
      return single(c, ops, "resize", std::move(p));
    }
    const double per_output = mode == "cubic" ? 32.0 : mode == "linear" ? 7.0 : 0.0;  // 4x4 taps / as ops.cpp
    note(fmt::format("{} in {} mode, or not a spatial NCHW resize: costed as custom with {} ops per output",
                     c.node.op_type(), mode, per_output),
         c);
    const Precision out = out_precision(c, 0, ops);
    emit_custom(c, c.node.output(0), {x.tensor}, per_output * model::shape_elements(ys), 0,
                precision_for(ops, out, std::nullopt));
  }

  void concat(const Ctx& c, const std::vector<Operand>& ops) {
    const auto acts = activations(ops);
    const Precision out = out_precision(c, 0, ops);
    bool all_act = true;
    for (const auto& o : ops) all_act = all_act && (o.act() || !o.present());
    if (all_act && acts.size() >= 2) {
      emit(c, Spec{"concat",
                   {{"axis", attr_int(c, "axis", 1)}},
                   acts,
                   precision_for(ops, out, std::nullopt),
                   c.node.output(0),
                   "",
                   std::nullopt});
      return;
    }
    if (all_act) {
      emit(c, Spec{"copy", {}, acts, precision_for(ops, out, std::nullopt), c.node.output(0), "", std::nullopt});
      return;
    }
    // Constant parts: read as weights (an immediate fill, e.g. ConstantOfShape zeros of a channel pad, is written
    // without being read).
    const auto wprec = weights_precision(ops);
    emit_custom(c, c.node.output(0), acts, 0, constant_weights(ops), precision_for(ops, out, wprec.value_or(out)));
  }

  void pad(const Ctx& c, const std::vector<Operand>& ops) {
    const auto& x = ops.at(0);
    if (!x.act()) return unknown(c, ops);
    const Shape& xs = tensor(x.tensor).shape;
    const Shape ys = require_shape(c.node.output(0), c.where);
    bool spatial =
        xs.size() == 4 && ys.size() == 4 && xs[0] == ys[0] && xs[1] == ys[1] && ys[2] >= xs[2] && ys[3] >= xs[3];
    if (spatial) {
      // The amounts from the pads (attribute before opset 11, an input after), else split from the shapes (the
      // split changes no count).
      std::vector<double> pads;
      if (auto a = attr_ints(c, "pads"))
        pads.assign(a->begin(), a->end());
      else if (const Operand p = operand(c, 1); p.cst() && p.c->has_values)
        pads = p.c->values;
      std::vector<std::int64_t> tlbr;
      if (pads.size() == 8 && pads[0] == 0 && pads[1] == 0 && pads[4] == 0 && pads[5] == 0 && pads[2] >= 0 &&
          pads[3] >= 0 && pads[6] >= 0 && pads[7] >= 0) {
        tlbr = {static_cast<std::int64_t>(pads[2]), static_cast<std::int64_t>(pads[3]),
                static_cast<std::int64_t>(pads[6]), static_cast<std::int64_t>(pads[7])};
      } else {
        const auto h = ys[2] - xs[2], w = ys[3] - xs[3];
        tlbr = {h / 2, w / 2, h - h / 2, w - w / 2};
      }
      return single(c, ops, "pad", {{"pads", tlbr}});
    }
    note("Pad of other than the spatial axes of NCHW, or negative (a crop): costed as custom data movement (0 ops)", c);
    const Precision out = out_precision(c, 0, ops);
    emit_custom(c, c.node.output(0), {x.tensor}, 0, 0, precision_for(ops, out, std::nullopt));
  }

  bool fits_inside(const Shape& part, const Shape& whole) const {
    if (part.size() != whole.size()) return false;
    for (std::size_t i = 0; i < part.size(); ++i)
      if (part[i] <= 0 || part[i] > whole[i]) return false;
    return true;
  }

  void slice(const Ctx& c, const std::vector<Operand>& ops) {
    const auto& x = ops.at(0);
    if (!x.act()) return unknown(c, ops);
    const Shape ys = require_shape(c.node.output(0), c.where);
    if (fits_inside(ys, tensor(x.tensor).shape)) return single(c, ops, "slice", {{"shape", ys}});
    note("Slice whose output does not fit inside its input: costed as custom data movement", c);
    const Precision out = out_precision(c, 0, ops);
    emit_custom(c, c.node.output(0), {x.tensor}, 0, 0, precision_for(ops, out, std::nullopt));
  }

  void split(const Ctx& c, const std::vector<Operand>& ops) {
    const auto& x = ops.at(0);
    if (!x.act()) return unknown(c, ops);
    for (int i = 0; i < c.node.output_size(); ++i) {
      const std::string& v = c.node.output(i);
      if (v.empty() || !needed_.count(v)) continue;
      const Shape ys = require_shape(v, c.where);
      const Precision out = out_precision(c, i, ops);
      const std::string suffix = fmt::format("_{}", i);
      if (fits_inside(ys, tensor(x.tensor).shape))
        emit(
            c,
            Spec{"slice", {{"shape", ys}}, {x.tensor}, precision_for(ops, out, std::nullopt), v, suffix, std::nullopt});
      else
        emit_custom(c, v, {x.tensor}, 0, 0, precision_for(ops, out, std::nullopt), suffix);
    }
  }

  // ---------------------------------------------------------------- outputs and warnings

  void add_graph_outputs() {
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

  void finish_warnings() {
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

  // ---------------------------------------------------------------- state

  fs::path path_;
  std::string file_;
  const ImportOptions& options_;
  onnx::ModelProto model_;
  ImportResult result_;
  std::unordered_map<std::string, Const> consts_;
  std::unordered_map<std::string, int> tensor_of_;
  std::unordered_map<std::string, const onnx::TypeProto*> types_;
  std::unordered_map<std::string, int> producer_;
  std::unordered_set<std::string> needed_;
  std::vector<bool> live_;
  std::vector<std::string> base_names_;
  std::set<std::string> used_names_;
  std::map<std::string, std::vector<std::string>> notes_;
  std::vector<std::string> note_order_;
  std::map<std::string, int> folded_;
  std::map<std::string, std::set<std::string>> lossy_;
  std::vector<std::string> unused_inputs_;
  std::vector<std::string> original_ops_;  // op types as in the file (folding rewrites nodes)
  std::vector<std::vector<std::string>> original_inputs_;
  std::unordered_map<std::string, Value> values_;  // small values known before run time
  std::unordered_map<std::string, int> init_index_;
  std::unordered_set<std::string> no_value_;
  std::unordered_set<std::string> computed_;  // values computed here (not the file's)
};

}  // namespace

ImportResult import_onnx(const std::filesystem::path& path, const ImportOptions& options) {
  return OnnxImporter(path, options).run();
}

}  // namespace framesim::trace
