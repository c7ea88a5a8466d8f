// TFLite import: a .tflite flatbuffer (read through the schema subset in tflite_schema.fbs, verified with the
// flatbuffers Verifier before anything is read) becomes a NetworkSpec of framesim's op set.
//
// Layout. TFLite's image ops work on NHWC; framesim's conv2d, pools, pad and resize work on NCHW. Every rank-4
// tensor is therefore given to framesim as NCHW ([N, H, W, C] -> [N, C, H, W]); tensors of other ranks keep
// TFLite's order. Axis arguments (concatenation, reductions, transpose, pad) are mapped accordingly. Ops that
// are not about images (fully connected, batch matmul) see TFLite's own order through free reshapes.
//
// Operator -> layer mapping (framesim op in brackets):
//   CONV_2D [conv2d, groups when the kernel has fewer input channels], DEPTHWISE_CONV_2D [conv2d with groups =
//   input channels, out_channels from the kernel: depth_multiplier], FULLY_CONNECTED [linear; matmul when the
//   weights are not constant], AVERAGE_POOL_2D / MAX_POOL_2D [avgpool / maxpool], MEAN / SUM / REDUCE_MAX over
//   H and W [global_avgpool / global_maxpool; other axes: custom, one operation per input element],
//   ADD / SUB / MUL / DIV / MAXIMUM / MINIMUM / POW [add ... pow; with a constant operand: elementwise over the
//   activation operand(s)], RELU / RELU6 / RELU_N1_TO_1 / LOGISTIC / TANH / HARD_SWISH / LEAKY_RELU / PRELU / GELU
//   / EXP / LOG / SQRT / ABS / NEG [relu / relu6 / clip / sigmoid / tanh / hardswish / leaky_relu / leaky_relu /
//   gelu / exp / log / sqrt / abs / neg], CONCATENATION [concat], RESHAPE / SQUEEZE / EXPAND_DIMS [reshape, free],
//   TRANSPOSE [transpose], PAD / PADV2 / MIRROR_PAD [pad over H and W; other axes: custom copy], RESIZE_BILINEAR /
//   RESIZE_NEAREST_NEIGHBOR [resize linear / nearest], SOFTMAX / LOG_SOFTMAX [softmax], STRIDED_SLICE / SLICE /
//   SPLIT / SPLIT_V [slice (+ reshape for shrunk axes)], GATHER [embedding of a constant table; slice or custom
//   of an activation], BATCH_MATMUL [matmul; one input with weights when the right side is constant],
//   QUANTIZE / DEQUANTIZE / CAST of an activation [cast], TRANSPOSE_CONV and MediaPipe's CUSTOM
//   Convolution2DTransposeBias [custom of class conv: 2 x N x H x W x Cin x kh x kw x Cout ops, kernel and bias as
//   weights; the output_shape input is not].
// Fused activations in the options become an activation layer after the op (automatic fusion folds it back).
// Constants: an operator whose inputs are all constant is folded (no layer). In particular a DEQUANTIZE of a
// constant FLOAT16 (or INT8) tensor is folded into the layer it feeds, which holds its weights at the stored
// precision: MediaPipe's fp16 models give fp16 weights and fp32 activations. Biases are counted as weights at
// the weights' precision (TFLite keeps int32 biases for int8 models: a few bytes per output channel more).
// Unknown operators (CUSTOM included) become custom layers over their tensors (0 operations, constant inputs
// counted as weights) and are listed in the warnings; nothing is dropped silently.
//
// Accounting: each layer's `source` is "FILE:op K NAME" (the operator it comes from; one operator may give
// several layers: a fused activation, free reshapes), and the description states "N operators -> L layers from
// M operators, F folded" with M + F = N. Shapes framesim computes are checked against the shapes the file
// states; a difference is a warning. --input shapes (ImportOptions::input_shapes) are in the model's own layout
// (NHWC for images); with them the file's static shapes are not checked, and RESHAPE follows its new_shape.
#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <flatbuffers/flatbuffers.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "tflite_schema_generated.h"
#include "trace/import.hpp"

namespace framesim::trace {

namespace {

namespace fb = ::framesim::tflite;
using model::LayerPrecision;
using model::OpParams;
using model::Precision;
using model::Shape;

// ---- layout: rank-4 tensors are NHWC in TFLite and NCHW in framesim ----

Shape to_framesim(const Shape& s) {
  if (s.size() != 4) return s;
  return {s[0], s[3], s[1], s[2]};
}

/// A TFLite axis (may be negative) of a rank-`rank` tensor as framesim's axis, or -1 when out of range.
int framesim_axis(std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return -1;
  if (rank != 4) return static_cast<int>(axis);
  static constexpr int kMap[4] = {0, 2, 3, 1};  // N H W C -> N C H W
  return kMap[axis];
}

std::string nhwc_note(const Shape& tflite_shape) {
  return tflite_shape.size() == 4 ? fmt::format(" (NHWC {})", model::shape_to_string(tflite_shape)) : "";
}

std::string list_some(const std::vector<std::string>& names, std::size_t most = 5) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < most; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > most) out += fmt::format(", ... ({} in all)", names.size());
  return out;
}

// ---- the importer ----

struct Slot {
  int framesim = -1;        // framesim tensor id when this is an activation
  bool constant = false;    // data known before inference (a buffer, or a folded operator's output)
  fb::TensorType stored{};  // for constants: the stored type (a folded DEQUANTIZE keeps its source's)
  int data = -1;            // for constants: the TFLite tensor whose buffer holds the values (-1: not at hand)
};

struct Op {
  std::size_t index = 0;
  int code = 0;
  std::string name;  // "CONV_2D", or the custom code
  const fb::Operator* op = nullptr;
  std::vector<int> in, out;  // TFLite tensor ids (-1: optional input left out)
};

class Importer {
 public:
  Importer(const std::filesystem::path& path, const ImportOptions& options)
      : path_(path), file_(path.string()), options_(options) {}

  ImportResult run() {
    read_file();
    verify();
    check_references();
    make_inputs();
    for (std::size_t k = 0; k < graph_->operators()->size(); ++k) import_operator(k);
    finish();
    return {std::move(net_), std::move(warnings_)};
  }

 private:
  // ---- errors ----

  [[noreturn]] void fail(const std::string& message) const {
    throw core::UserError(fmt::format("{}: {}", file_, message));
  }
  [[noreturn]] void fail_op(const Op& o, const std::string& message) const {
    const std::string writes = o.out.empty() || o.out[0] < 0 ? "" : " -> " + tensor_name(o.out[0]);
    fail(fmt::format("operator {} ({}{}): {}", o.index, o.name, writes, message));
  }

  // ---- reading and checking the file ----

  void read_file() {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path_, ec)) fail("no such file (or not a regular file)");
    const auto size = std::filesystem::file_size(path_, ec);
    if (ec) fail("cannot read its size: " + ec.message());
    if (size == 0) fail("the file is empty, not a TFLite model");
    // The flatbuffer format addresses 2 GiB; larger TFLite files keep their weights after it (external buffers).
    if (size >= static_cast<std::uintmax_t>(FLATBUFFERS_MAX_BUFFER_SIZE))
      fail(fmt::format("{} bytes: TFLite models of 2 GiB or more (weights outside the flatbuffer) are not supported",
                       size));
    std::ifstream in(path_, std::ios::binary);
    if (!in) fail("cannot open the file");
    bytes_.resize(static_cast<std::size_t>(size));
    in.read(reinterpret_cast<char*>(bytes_.data()), static_cast<std::streamsize>(size));
    if (!in) fail("cannot read the file");
  }

  void verify() {
    if (bytes_.size() < 8)
      fail(fmt::format("{} bytes, too short for a TFLite model (a flatbuffer with identifier \"TFL3\")",
                       bytes_.size()));
    if (!fb::ModelBufferHasIdentifier(bytes_.data())) {
      std::string id;
      for (std::size_t i = 4; i < 8; ++i) {
        const auto c = static_cast<unsigned char>(bytes_[i]);
        id += (c >= 32 && c < 127) ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
      }
      fail(fmt::format("not a TFLite model: the file identifier is \"{}\", expected \"TFL3\"", id));
    }
    flatbuffers::Verifier::Options opts;
    opts.max_tables = 50'000'000;  // large models have many tensors and buffers
    opts.max_depth = 64;
    flatbuffers::Verifier verifier(bytes_.data(), bytes_.size(), opts);
    if (!fb::VerifyModelBuffer(verifier))
      fail(fmt::format("not a valid TFLite model: the flatbuffer does not verify ({} bytes; truncated or corrupt?)",
                       bytes_.size()));
    model_ = fb::GetModel(bytes_.data());
    if (!model_->subgraphs() || model_->subgraphs()->size() == 0) fail("the model has no subgraphs");
    graph_ = model_->subgraphs()->Get(0);
    if (!graph_->tensors() || graph_->tensors()->size() == 0) fail("subgraph 0 has no tensors");
    if (!graph_->operators() || graph_->operators()->size() == 0) fail("subgraph 0 has no operators");
    if (model_->subgraphs()->size() > 1)
      warnings_.push_back(fmt::format("the model has {} subgraphs; only subgraph 0 (the main graph) is imported: ops "
                                      "calling the others (WHILE, IF, CALL_ONCE) are unknown ops",
                                      model_->subgraphs()->size()));
  }

  std::size_t tensor_count() const { return graph_->tensors()->size(); }
  const fb::Tensor* tensor(int t) const { return graph_->tensors()->Get(static_cast<flatbuffers::uoffset_t>(t)); }
  std::string tensor_name(int t) const {
    const auto* n = tensor(t)->name();
    return n && n->size() ? n->str() : fmt::format("tensor{}", t);
  }
  Shape file_shape(int t) const {
    Shape s;
    if (const auto* v = tensor(t)->shape())
      for (auto d : *v) s.push_back(d);
    return s;
  }

  std::string op_code_name(int code) const {
    if (code == fb::BuiltinOperator_PLACEHOLDER_FOR_GREATER_OP_CODES) return "BUILTIN_127";
    const char* n = fb::EnumNameBuiltinOperator(static_cast<fb::BuiltinOperator>(code));
    return n && *n ? n : fmt::format("BUILTIN_{}", code);
  }

  /// Indices, opcodes and buffers in range, shapes non-negative: after this, reads cannot go astray.
  void check_references() {
    const auto n = static_cast<std::int64_t>(tensor_count());
    const std::size_t buffers = model_->buffers() ? model_->buffers()->size() : 0;
    const std::size_t codes = model_->operator_codes() ? model_->operator_codes()->size() : 0;
    for (std::size_t t = 0; t < tensor_count(); ++t) {
      const auto* tt = tensor(static_cast<int>(t));
      if (tt->buffer() != 0 && tt->buffer() >= buffers)
        fail(fmt::format("tensor {} ('{}') refers to buffer {}, but the model has {} buffers", t,
                         tensor_name(static_cast<int>(t)), tt->buffer(), buffers));
      for (auto d : file_shape(static_cast<int>(t)))
        if (d < 0)
          fail(fmt::format("tensor {} ('{}') has a negative dimension in its shape {}", t,
                           tensor_name(static_cast<int>(t)), model::shape_to_string(file_shape(static_cast<int>(t)))));
    }
    auto check_list = [&](const flatbuffers::Vector<int32_t>* v, const std::string& what, bool optional_allowed) {
      if (!v) return;
      for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) {
        const auto t = v->Get(i);
        if ((t == -1 && optional_allowed) || (t >= 0 && t < n)) continue;
        fail(fmt::format("{} {} refers to tensor {}, but subgraph 0 has {} tensors", what, i, t, n));
      }
    };
    check_list(graph_->inputs(), "graph input", false);
    check_list(graph_->outputs(), "graph output", false);
    for (std::size_t k = 0; k < graph_->operators()->size(); ++k) {
      const auto* op = graph_->operators()->Get(static_cast<flatbuffers::uoffset_t>(k));
      if (op->opcode_index() >= codes)
        fail(fmt::format("operator {} uses operator code {}, but the model has {} operator codes", k,
                         op->opcode_index(), codes));
      const std::string what = fmt::format("operator {} ({})", k, op_code_name(code_of(*op)));
      check_list(op->inputs(), what + ": input", true);
      check_list(op->outputs(), what + ": output", false);
      if (!op->outputs() || op->outputs()->size() == 0) fail(what + ": has no outputs");
    }
  }

  int code_of(const fb::Operator& op) const {
    const auto* oc = model_->operator_codes()->Get(op.opcode_index());
    // Files written before the int32 builtin_code field hold the op in the byte field only (builtin_code reads 0);
    // newer files put codes above 127 in builtin_code and 127 in the byte field: the larger of the two is the op.
    return std::max<int>(oc->deprecated_builtin_code(), static_cast<int>(oc->builtin_code()));
  }

  // ---- tensors ----

  bool has_data(int t) const {
    const auto b = tensor(t)->buffer();
    if (b == 0 || !model_->buffers()) return false;
    const auto* buffer = model_->buffers()->Get(b);
    if (!buffer) return false;
    return (buffer->data() && buffer->data()->size() > 0) || buffer->offset() > 1;
  }

  Precision precision_of(int t) {
    const auto type = tensor(t)->type();
    return precision_of_type(type, t);
  }
  Precision precision_of_type(fb::TensorType type, int t) {
    switch (type) {
      case fb::TensorType_FLOAT32: return Precision::fp32;
      case fb::TensorType_FLOAT16: return Precision::fp16;
      case fb::TensorType_BFLOAT16: return Precision::bf16;
      case fb::TensorType_INT32:
      case fb::TensorType_UINT32: return Precision::int32;
      case fb::TensorType_INT16:
      case fb::TensorType_UINT16: return Precision::int16;
      case fb::TensorType_INT8:
      case fb::TensorType_UINT8:
      case fb::TensorType_BOOL: return Precision::int8;
      case fb::TensorType_INT4: return Precision::int4;
      default: break;
    }
    const char* name = fb::EnumNameTensorType(type);
    const std::string type_name = name && *name ? name : fmt::format("type {}", static_cast<int>(type));
    const bool wide_float = type == fb::TensorType_FLOAT64 || type == fb::TensorType_COMPLEX64 ||
                            type == fb::TensorType_COMPLEX128;
    odd_types_[type_name].insert(tensor_name(t));
    return wide_float ? Precision::fp32 : Precision::int32;
  }

  /// Values of a constant integer tensor (INT32 or INT64), if they are at hand.
  std::optional<std::vector<std::int64_t>> const_ints(int t) const {
    if (t < 0 || !slots_[static_cast<std::size_t>(t)].constant) return std::nullopt;
    const int src = slots_[static_cast<std::size_t>(t)].data;
    if (src < 0) return std::nullopt;
    const auto* tt = tensor(src);
    const auto* buffer = model_->buffers()->Get(tt->buffer());
    if (!buffer || !buffer->data()) return std::nullopt;
    const auto* data = buffer->data();
    const std::size_t width = tt->type() == fb::TensorType_INT32 ? 4 : tt->type() == fb::TensorType_INT64 ? 8 : 0;
    if (width == 0) return std::nullopt;
    const double count = model::shape_elements(file_shape(src));
    if (count * static_cast<double>(width) > static_cast<double>(data->size())) return std::nullopt;
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < static_cast<std::size_t>(count); ++i) {
      if (width == 4) {
        std::int32_t v;
        std::memcpy(&v, data->data() + i * 4, 4);
        out.push_back(v);
      } else {
        std::int64_t v;
        std::memcpy(&v, data->data() + i * 8, 8);
        out.push_back(v);
      }
    }
    return out;
  }

  bool is_const(int t) const { return t >= 0 && slots_[static_cast<std::size_t>(t)].constant; }

  Precision stored_precision(int t) {
    const auto& s = slots_[static_cast<std::size_t>(t)];
    return s.constant ? precision_of_type(s.stored, t) : precision_of(t);
  }

  /// The framesim tensor of an activation input.
  int act(const Op& o, int t) const {
    const auto& s = slots_[static_cast<std::size_t>(t)];
    if (s.framesim < 0)
      fail_op(o, fmt::format("reads tensor {} ('{}'), which is not a graph input, a constant, or the output of an "
                             "earlier operator",
                             t, tensor_name(t)));
    return s.framesim;
  }
  const model::TensorSpec& spec(int framesim_tensor) const {
    return net_.tensors[static_cast<std::size_t>(framesim_tensor)];
  }

  std::vector<int> activation_inputs(const Op& o) const {
    std::vector<int> out;
    for (int t : o.in)
      if (t >= 0 && !is_const(t)) out.push_back(t);
    return out;
  }
  std::vector<int> constant_inputs(const Op& o) const {
    std::vector<int> out;
    for (int t : o.in)
      if (is_const(t)) out.push_back(t);
    return out;
  }

  void make_inputs() {
    slots_.resize(tensor_count());
    for (std::size_t t = 0; t < tensor_count(); ++t) {
      auto& s = slots_[t];
      if (has_data(static_cast<int>(t))) {
        s.constant = true;
        s.stored = tensor(static_cast<int>(t))->type();
        s.data = static_cast<int>(t);
      } else if (tensor(static_cast<int>(t))->is_variable()) {
        // State kept between invocations (e.g. LSTM cells): read like a constant, not an activation.
        s.constant = true;
        s.stored = tensor(static_cast<int>(t))->type();
        variables_.push_back(tensor_name(static_cast<int>(t)));
      }
    }
    if (!graph_->inputs() || graph_->inputs()->size() == 0) fail("subgraph 0 has no inputs");
    std::vector<std::string> input_names;
    for (auto t : *graph_->inputs()) input_names.push_back(tensor_name(t));
    for (const auto& entry : options_.input_shapes)
      if (std::find(input_names.begin(), input_names.end(), entry.first) == input_names.end())
        fail(fmt::format("--input names '{}', which is not an input of the model (inputs: {})", entry.first,
                         list_some(input_names, 20)));
    for (auto t : *graph_->inputs()) {
      const std::string name = tensor_name(t);
      Shape shape = file_shape(t);
      if (auto it = options_.input_shapes.find(name); it != options_.input_shapes.end()) {
        shape = it->second;
      } else {
        bool dynamic = false;
        if (const auto* sig = tensor(t)->shape_signature())
          for (auto d : *sig) dynamic = dynamic || d < 0;
        if (dynamic || shape.empty() || std::find(shape.begin(), shape.end(), 0) != shape.end()) {
          Shape sig;
          if (const auto* v = tensor(t)->shape_signature())
            for (auto d : *v) sig.push_back(d);
          fail(fmt::format("input '{}' has a dynamic shape ({}); give it with --input {}=DIMS (in the model's own "
                           "layout, NHWC for images)",
                           name, sig.empty() ? "no static shape" : model::shape_to_string(sig), name));
        }
      }
      for (auto d : shape)
        if (d <= 0)
          fail(fmt::format("input '{}': dimensions must be positive, got {}", name, model::shape_to_string(shape)));
      if (slots_[static_cast<std::size_t>(t)].framesim >= 0) continue;  // listed twice
      model::TensorSpec spec_in;
      spec_in.name = unique_name(name);
      spec_in.shape = to_framesim(shape);
      spec_in.precision = precision_of(t);
      slots_[static_cast<std::size_t>(t)].framesim = static_cast<int>(net_.tensors.size());
      slots_[static_cast<std::size_t>(t)].constant = false;
      net_.inputs.push_back(static_cast<int>(net_.tensors.size()));
      net_.tensors.push_back(std::move(spec_in));
    }
  }

  std::string unique_name(const std::string& base) {
    std::string name = base;
    for (int i = 1; used_names_.count(name); ++i) name = fmt::format("{}_{}", base, i);
    used_names_.insert(name);
    return name;
  }

  // ---- emitting layers ----

  /// Builds one layer; `inputs` are framesim tensor ids. Returns the framesim id of its output.
  int emit(const Op& o, std::string_view op, const std::string& name, const OpParams& params,
           const std::vector<int>& inputs, LayerPrecision precision) {
    const model::OpSchema* schema = model::find_op(op);
    FRAMESIM_ASSERT(schema != nullptr, "the importer uses catalogue ops");
    std::vector<const model::TensorSpec*> tensors;
    for (int t : inputs) tensors.push_back(&net_.tensors[static_cast<std::size_t>(t)]);
    const std::string layer_name = unique_name(name);
    auto result = model::build_layer(*schema, layer_name, params, tensors, precision);
    if (auto* e = std::get_if<model::OpError>(&result)) {
      std::vector<std::string> shapes;
      for (const auto* t : tensors) shapes.push_back(t->name + " " + model::shape_to_string(t->shape));
      fail_op(o, fmt::format("cannot be imported as framesim {} ({}{}{}; inputs {})", op, e->key,
                             e->key.empty() ? "" : ": ", e->message, list_some(shapes)));
    }
    auto& built = std::get<model::BuiltLayer>(result);
    const int layer_index = static_cast<int>(net_.layers.size());
    const int tensor_index = static_cast<int>(net_.tensors.size());
    built.layer.inputs = inputs;
    built.layer.output = tensor_index;
    built.layer.source = fmt::format("{}:op {} {}", file_, o.index, o.name);
    built.output.producer = layer_index;
    if (built.layer.kind == model::OpKind::reshape) built.output.alias_of = net_.storage_of(inputs.front());
    net_.layers.push_back(std::move(built.layer));
    net_.tensors.push_back(std::move(built.output));
    sourced_ops_.insert(o.index);
    return tensor_index;
  }

  int reshape(const Op& o, int from, const Shape& shape, const std::string& name) {
    if (spec(from).shape == shape) return from;
    const Precision p = spec(from).precision;
    return emit(o, "reshape", name, {{"shape", shape}}, {from}, {p, p, p});
  }

  static LayerPrecision same(Precision p) { return {p, p, p}; }

  /// Appends the fused activation of the options, if any.
  int fused(const Op& o, int from, fb::ActivationFunctionType f, const std::string& base) {
    const Precision p = spec(from).precision;
    switch (f) {
      case fb::ActivationFunctionType_NONE: return from;
      case fb::ActivationFunctionType_RELU: return emit(o, "relu", base + "/relu", {}, {from}, same(p));
      case fb::ActivationFunctionType_RELU6: return emit(o, "relu6", base + "/relu6", {}, {from}, same(p));
      case fb::ActivationFunctionType_RELU_N1_TO_1: return emit(o, "clip", base + "/relu_n1_to_1", {}, {from}, same(p));
      case fb::ActivationFunctionType_TANH: return emit(o, "tanh", base + "/tanh", {}, {from}, same(p));
      case fb::ActivationFunctionType_SIGN_BIT:
        return emit(o, "activation", base + "/sign_bit", {{"ops_per_element", 1.0}}, {from}, same(p));
      default: break;
    }
    fail_op(o, fmt::format("unknown fused activation function {}", static_cast<int>(f)));
  }

  /// Binds TFLite output `pos` of `o` to framesim tensor `t`, checking the shape against the file's.
  void bind(const Op& o, std::size_t pos, int t) {
    const int out = o.out[pos];
    auto& s = slots_[static_cast<std::size_t>(out)];
    s.framesim = t;
    s.constant = false;
    const Shape stated = file_shape(out);
    if (!options_.input_shapes.empty() || stated.empty()) return;  // overridden inputs change shapes downstream
    const Shape want = to_framesim(stated);
    if (spec(t).shape != want)
      mismatches_.push_back(fmt::format("{} (operator {} {}): framesim computes {} but the model states {}{}",
                                        spec(t).name, o.index, o.name, model::shape_to_string(spec(t).shape),
                                        model::shape_to_string(want), nhwc_note(stated)));
  }

  /// The file's shape of output `pos`, in framesim's layout.
  Shape out_shape(const Op& o, std::size_t pos = 0) const { return to_framesim(file_shape(o.out[pos])); }
  std::string out_name(const Op& o, std::size_t pos = 0) const { return tensor_name(o.out[pos]); }
  Precision out_precision(const Op& o, std::size_t pos = 0) {
    return precision_of(o.out[pos]);
  }

  /// A layer reading `inputs` (TFLite ids) and writing output `pos` with the file's shape: data movement only.
  /// With `constants_as_weights`, the op's constant inputs are its weights (unknown ops, constant concat pieces);
  /// otherwise they are parameters (paddings, axes, permutations) and not counted.
  int custom_layer(const Op& o, const std::vector<int>& inputs, std::size_t pos, double ops = 0,
                   bool constants_as_weights = false) {
    std::vector<int> fs;
    for (int t : inputs) fs.push_back(act(o, t));
    Shape shape = out_shape(o, pos);
    if (shape.empty()) shape = {1};
    OpParams params{{"output_shape", shape}, {"ops", ops}};
    Precision w = out_precision(o, pos);
    if (pos == 0 && constants_as_weights) {
      double weights = 0;
      for (int c : constant_inputs(o)) {
        weights += model::shape_elements(file_shape(c));
        w = stored_precision(c);
      }
      if (weights > 0) params["weights"] = static_cast<std::int64_t>(weights);
    }
    const Precision a = out_precision(o, pos);
    return emit(o, "custom", out_name(o, pos), params, fs, {w, a, a});
  }

  // ---- operators ----

  void import_operator(std::size_t k) {
    Op o;
    o.index = k;
    o.op = graph_->operators()->Get(static_cast<flatbuffers::uoffset_t>(k));
    o.code = code_of(*o.op);
    o.name = op_code_name(o.code);
    if (o.code == fb::BuiltinOperator_CUSTOM) {
      const auto* oc = model_->operator_codes()->Get(o.op->opcode_index());
      o.name = oc->custom_code() && oc->custom_code()->size() ? "CUSTOM " + oc->custom_code()->str() : "CUSTOM";
    }
    if (o.op->inputs())
      for (auto t : *o.op->inputs()) o.in.push_back(t);
    for (auto t : *o.op->outputs()) o.out.push_back(t);
    for (int t : o.out)
      if (slots_[static_cast<std::size_t>(t)].framesim >= 0)
        fail_op(o, fmt::format("writes tensor {} ('{}'), which is already written (a graph input or an earlier "
                               "operator's output)",
                               t, tensor_name(t)));

    // Operators on constants only are computed once (DEQUANTIZE of fp16 weights, shape arithmetic): folded.
    bool any_input = false, all_const = true;
    for (int t : o.in) {
      if (t < 0) continue;
      any_input = true;
      all_const = all_const && is_const(t);
    }
    if (any_input && all_const) {
      fold(o);
      return;
    }
    dispatch(o);
  }

  void fold(const Op& o) {
    const bool passes_through = o.code == fb::BuiltinOperator_DEQUANTIZE || o.code == fb::BuiltinOperator_RESHAPE ||
                                o.code == fb::BuiltinOperator_SQUEEZE || o.code == fb::BuiltinOperator_EXPAND_DIMS;
    const int first = o.in.empty() ? -1 : o.in[0];
    for (int t : o.out) {
      auto& s = slots_[static_cast<std::size_t>(t)];
      s.constant = true;
      if (passes_through && first >= 0) {
        // A DEQUANTIZE keeps the stored type of its source: the weights stay at fp16 (or int8) in memory.
        s.stored = slots_[static_cast<std::size_t>(first)].stored;
        s.data = o.code == fb::BuiltinOperator_DEQUANTIZE ? -1 : slots_[static_cast<std::size_t>(first)].data;
      } else {
        s.stored = tensor(t)->type();
        s.data = -1;
      }
    }
    if (o.code == fb::BuiltinOperator_DEQUANTIZE && first >= 0) {
      const char* n = fb::EnumNameTensorType(slots_[static_cast<std::size_t>(first)].stored);
      folded_dequantize_[n && *n ? n : "?"]++;
    } else {
      folded_other_[o.name]++;
    }
  }

  void dispatch(const Op& o) {
    using B = fb::BuiltinOperator;
    switch (static_cast<B>(o.code)) {
      case fb::BuiltinOperator_CONV_2D: return conv(o, false);
      case fb::BuiltinOperator_DEPTHWISE_CONV_2D: return conv(o, true);
      case fb::BuiltinOperator_FULLY_CONNECTED: return fully_connected(o);
      case fb::BuiltinOperator_AVERAGE_POOL_2D: return pool(o, "avgpool");
      case fb::BuiltinOperator_MAX_POOL_2D: return pool(o, "maxpool");
      case fb::BuiltinOperator_MEAN:
      case fb::BuiltinOperator_SUM: return reduce(o, "global_avgpool");
      case fb::BuiltinOperator_REDUCE_MAX: return reduce(o, "global_maxpool");
      case fb::BuiltinOperator_ADD: return binary(o, "add");
      case fb::BuiltinOperator_SUB: return binary(o, "sub");
      case fb::BuiltinOperator_MUL: return binary(o, "mul");
      case fb::BuiltinOperator_DIV: return binary(o, "div");
      case fb::BuiltinOperator_MAXIMUM: return binary(o, "max");
      case fb::BuiltinOperator_MINIMUM: return binary(o, "min");
      case fb::BuiltinOperator_POW: return binary(o, "pow");
      case fb::BuiltinOperator_RELU: return unary(o, "relu");
      case fb::BuiltinOperator_RELU6: return unary(o, "relu6");
      case fb::BuiltinOperator_RELU_N1_TO_1: return unary(o, "clip");
      case fb::BuiltinOperator_LOGISTIC: return unary(o, "sigmoid");
      case fb::BuiltinOperator_TANH: return unary(o, "tanh");
      case fb::BuiltinOperator_HARD_SWISH: return unary(o, "hardswish");
      case fb::BuiltinOperator_LEAKY_RELU: return unary(o, "leaky_relu");
      case fb::BuiltinOperator_PRELU: return unary(o, "leaky_relu");  // compare and multiply by the slope
      case fb::BuiltinOperator_GELU: return unary(o, "gelu");
      case fb::BuiltinOperator_EXP: return unary(o, "exp");
      case fb::BuiltinOperator_LOG: return unary(o, "log");
      case fb::BuiltinOperator_SQRT: return unary(o, "sqrt");
      case fb::BuiltinOperator_ABS: return unary(o, "abs");
      case fb::BuiltinOperator_NEG: return unary(o, "neg");
      case fb::BuiltinOperator_SOFTMAX:
      case fb::BuiltinOperator_LOG_SOFTMAX: return unary(o, "softmax");
      case fb::BuiltinOperator_CONCATENATION: return concatenation(o);
      case fb::BuiltinOperator_RESHAPE:
      case fb::BuiltinOperator_SQUEEZE:
      case fb::BuiltinOperator_EXPAND_DIMS: return reshape_op(o);
      case fb::BuiltinOperator_TRANSPOSE: return transpose(o);
      case fb::BuiltinOperator_PAD:
      case fb::BuiltinOperator_PADV2:
      case fb::BuiltinOperator_MIRROR_PAD: return pad(o);
      case fb::BuiltinOperator_RESIZE_BILINEAR: return resize(o, "linear");
      case fb::BuiltinOperator_RESIZE_NEAREST_NEIGHBOR: return resize(o, "nearest");
      case fb::BuiltinOperator_STRIDED_SLICE:
      case fb::BuiltinOperator_SLICE:
      case fb::BuiltinOperator_SPLIT:
      case fb::BuiltinOperator_SPLIT_V: return slice(o);
      case fb::BuiltinOperator_GATHER: return gather(o);
      case fb::BuiltinOperator_BATCH_MATMUL: return batch_matmul(o);
      case fb::BuiltinOperator_QUANTIZE:
      case fb::BuiltinOperator_DEQUANTIZE:
      case fb::BuiltinOperator_CAST: return cast(o);
      case fb::BuiltinOperator_TRANSPOSE_CONV: return transpose_conv(o, 2, 1, 3);  // [output_shape, w, x, bias]
      case fb::BuiltinOperator_CUSTOM:
        if (o.name == "CUSTOM Convolution2DTransposeBias") return transpose_conv(o, 0, 1, 2);  // MediaPipe
        return unknown(o);
      default: return unknown(o);
    }
  }

  /// The single activation input an op works on (its first non-constant input).
  int data_input(const Op& o) const {
    for (int t : o.in)
      if (t >= 0 && !is_const(t)) return t;
    fail_op(o, "has no activation input");
  }

  void conv(const Op& o, bool depthwise) {
    if (o.in.size() < 2 || o.in[0] < 0 || o.in[1] < 0) fail_op(o, "needs an input and a kernel");
    const int x = o.in[0], w = o.in[1];
    const int b = o.in.size() > 2 ? o.in[2] : -1;
    const Shape xs = file_shape(x), ws = file_shape(w);
    if (xs.size() != 4) fail_op(o, fmt::format("expects an NHWC input, got {}", model::shape_to_string(xs)));
    if (ws.size() != 4) fail_op(o, fmt::format("expects a rank-4 kernel, got {}", model::shape_to_string(ws)));
    fb::Padding padding = fb::Padding_SAME;
    std::int64_t sh = 1, sw = 1, dh = 1, dw = 1;
    fb::ActivationFunctionType act_fn = fb::ActivationFunctionType_NONE;
    if (const auto* opt = o.op->builtin_options_as_Conv2DOptions(); opt && !depthwise) {
      padding = opt->padding();
      sh = opt->stride_h(), sw = opt->stride_w(), dh = opt->dilation_h_factor(), dw = opt->dilation_w_factor();
      act_fn = opt->fused_activation_function();
    }
    if (const auto* opt = o.op->builtin_options_as_DepthwiseConv2DOptions(); opt && depthwise) {
      padding = opt->padding();
      sh = opt->stride_h(), sw = opt->stride_w(), dh = opt->dilation_h_factor(), dw = opt->dilation_w_factor();
      act_fn = opt->fused_activation_function();
    }
    const std::int64_t channels = xs[3];
    OpParams params{{"kernel", std::vector<std::int64_t>{ws[1], ws[2]}},
                    {"stride", std::vector<std::int64_t>{sh, sw}},
                    {"dilation", std::vector<std::int64_t>{dh, dw}},
                    {"padding", std::string(padding == fb::Padding_VALID ? "valid" : "same")},
                    {"bias", b >= 0}};
    if (depthwise) {
      // Kernel [1, kh, kw, C x depth_multiplier]: one group per input channel.
      params["out_channels"] = ws[3];
      params["groups"] = channels;
      if (ws[3] == channels) params["depthwise"] = true;
    } else {
      // Kernel [O, kh, kw, I]: I < C is a grouped convolution (C / I groups).
      params["out_channels"] = ws[0];
      if (ws[3] > 0 && ws[3] != channels && channels % ws[3] == 0) params["groups"] = channels / ws[3];
    }
    weights_from_activation(o, w);
    const Precision a = out_precision(o);
    const LayerPrecision p{stored_precision(w), a, a};
    int t = emit(o, "conv2d", out_name(o), params, {act(o, x)}, p);
    t = fused(o, t, act_fn, out_name(o));
    bind(o, 0, t);
  }

  /// TRANSPOSE_CONV and MediaPipe's Convolution2DTransposeBias: inputs at positions `x`, `w` (kernel [O, kh, kw, I])
  /// and `b` (bias, absent when past the end or -1). Every input element is multiplied into O x kh x kw outputs:
  /// 2 x N x H x W x I x kh x kw x O ops (+ one add per output for the bias). The kernel and bias are the weights;
  /// TRANSPOSE_CONV's output_shape input is shape data, not weights. Costed as a custom layer of class conv.
  void transpose_conv(const Op& o, std::size_t x, std::size_t w, std::size_t b) {
    if (o.in.size() <= std::max(x, w) || o.in[x] < 0 || o.in[w] < 0) fail_op(o, "needs an input and a kernel");
    const int xt = o.in[x], wt = o.in[w];
    const int bt = b < o.in.size() ? o.in[b] : -1;
    const Shape xs = file_shape(xt), ws = file_shape(wt);
    if (xs.size() != 4) fail_op(o, fmt::format("expects an NHWC input, got {}", model::shape_to_string(xs)));
    if (ws.size() != 4) fail_op(o, fmt::format("expects a kernel [O, kh, kw, I], got {}", model::shape_to_string(ws)));
    const Shape ys = out_shape(o);
    const double outputs = model::shape_elements(ys);
    const double ops = 2.0 * model::shape_elements(xs) * static_cast<double>(ws[0] * ws[1] * ws[2]) +
                       (bt >= 0 ? outputs : 0.0);
    double weights = model::shape_elements(ws);
    if (bt >= 0) weights += model::shape_elements(file_shape(bt));
    weights_from_activation(o, wt);
    const Precision a = out_precision(o);
    OpParams params{{"output_shape", ys}, {"ops", ops}, {"weights", static_cast<std::int64_t>(weights)},
                    {"class", std::string("conv")}};
    bind(o, 0, emit(o, "custom", out_name(o), params, {act(o, xt)}, {stored_precision(wt), a, a}));
  }

  void weights_from_activation(const Op& o, int w) {
    if (!is_const(w))
      computed_weights_.push_back(fmt::format("{} (operator {} {}, weights '{}')", out_name(o), o.index, o.name,
                                              tensor_name(w)));
  }

  void fully_connected(const Op& o) {
    if (o.in.size() < 2 || o.in[0] < 0 || o.in[1] < 0) fail_op(o, "needs an input and weights");
    const int x = o.in[0], w = o.in[1];
    const int b = o.in.size() > 2 ? o.in[2] : -1;
    const Shape ws = file_shape(w);
    if (ws.size() != 2) fail_op(o, fmt::format("expects weights [out, in], got {}", model::shape_to_string(ws)));
    const std::int64_t n = ws[0], k = ws[1];
    fb::ActivationFunctionType act_fn = fb::ActivationFunctionType_NONE;
    if (const auto* opt = o.op->builtin_options_as_FullyConnectedOptions()) act_fn = opt->fused_activation_function();
    int in = act(o, x);
    const auto& xs = spec(in).shape;
    // TFLite flattens the input to rows of k features.
    if (xs.empty() || xs.back() != k) {
      const double elements = model::shape_elements(xs);
      if (k <= 0 || static_cast<std::int64_t>(elements) % k != 0)
        fail_op(o, fmt::format("the input {} does not split into rows of {} features", model::shape_to_string(xs), k));
      in = reshape(o, in, {static_cast<std::int64_t>(elements) / k, k}, out_name(o) + "/rows");
    }
    const Precision a = out_precision(o);
    int t;
    if (is_const(w)) {
      t = emit(o, "linear", out_name(o), {{"out_features", n}, {"bias", b >= 0}}, {in}, {stored_precision(w), a, a});
    } else {
      t = emit(o, "matmul", out_name(o), {{"transpose_b", true}}, {in, act(o, w)}, same(a));
    }
    t = fused(o, t, act_fn, out_name(o));
    t = conform(o, t, 0);
    bind(o, 0, t);
  }

  /// For ops that do not care about layout: a free reshape to the file's shape when only the shape differs.
  int conform(const Op& o, int t, std::size_t pos) {
    const Shape want = out_shape(o, pos);
    if (want.empty() || spec(t).shape == want) return t;
    if (model::shape_elements(want) != spec(t).elements()) return t;  // reported by bind()
    return reshape(o, t, want, out_name(o, pos) + "/shape");
  }

  void pool(const Op& o, std::string_view op) {
    const int x = data_input(o);
    const auto* opt = o.op->builtin_options_as_Pool2DOptions();
    if (!opt) fail_op(o, "has no Pool2DOptions");
    OpParams params{{"kernel", std::vector<std::int64_t>{opt->filter_height(), opt->filter_width()}},
                    {"stride", std::vector<std::int64_t>{opt->stride_h(), opt->stride_w()}},
                    {"padding", std::string(opt->padding() == fb::Padding_VALID ? "valid" : "same")}};
    int t = emit(o, op, out_name(o), params, {act(o, x)}, same(out_precision(o)));
    t = fused(o, t, opt->fused_activation_function(), out_name(o));
    bind(o, 0, t);
  }

  void reduce(const Op& o, std::string_view global_op) {
    const int x = data_input(o);
    const Shape xs = file_shape(x);
    std::set<int> axes;
    auto values = o.in.size() > 1 ? const_ints(o.in[1]) : std::nullopt;
    if (values)
      for (auto v : *values) axes.insert(static_cast<int>(v < 0 ? v + static_cast<std::int64_t>(xs.size()) : v));
    int t;
    if (xs.size() == 4 && axes == std::set<int>{1, 2}) {
      t = emit(o, global_op, out_name(o), {}, {act(o, x)}, same(out_precision(o)));
      t = conform(o, t, 0);
    } else {
      other_reductions_.push_back(fmt::format("{} ({})", out_name(o), o.name));
      t = custom_layer(o, {x}, 0, model::shape_elements(xs));
    }
    bind(o, 0, t);
  }

  /// Lower-rank operands of a rank-4 elementwise op broadcast in TFLite's (NHWC) order: give them rank 4 first.
  int broadcast_ready(const Op& o, int t, std::size_t out_rank) {
    const int fs = act(o, t);
    const Shape s = file_shape(t);
    if (out_rank != 4 || s.size() >= 4) return fs;
    Shape padded(4 - s.size(), 1);
    padded.insert(padded.end(), s.begin(), s.end());
    return reshape(o, fs, to_framesim(padded), spec(fs).name + "/nchw");
  }

  void binary(const Op& o, std::string_view op) {
    fb::ActivationFunctionType act_fn = fb::ActivationFunctionType_NONE;
    if (const auto* a = o.op->builtin_options_as_AddOptions()) act_fn = a->fused_activation_function();
    if (const auto* a = o.op->builtin_options_as_SubOptions()) act_fn = a->fused_activation_function();
    if (const auto* a = o.op->builtin_options_as_MulOptions()) act_fn = a->fused_activation_function();
    if (const auto* a = o.op->builtin_options_as_DivOptions()) act_fn = a->fused_activation_function();
    const auto activations = activation_inputs(o);
    const auto constants = constant_inputs(o);
    const std::size_t rank = file_shape(o.out[0]).size();
    std::vector<int> inputs;
    for (int t : activations) inputs.push_back(broadcast_ready(o, t, rank));
    note_constant_operands(o, constants);
    const Precision a = out_precision(o);
    int t;
    if (constants.empty() && inputs.size() >= 2) {
      t = emit(o, op, out_name(o), {}, inputs, same(a));
    } else {
      // A constant operand (a scale, a bias): framesim's elementwise over the activations, same operation count.
      const double per_element = static_cast<double>(activations.size() + constants.size()) - 1.0;
      t = emit(o, "elementwise", out_name(o), {{"ops_per_element", per_element}}, inputs, same(a));
    }
    t = fused(o, t, act_fn, out_name(o));
    bind(o, 0, t);
  }

  void note_constant_operands(const Op& o, const std::vector<int>& constants) {
    for (int c : constants) {
      const double bytes = model::tensor_bytes(model::shape_elements(file_shape(c)), stored_precision(c));
      constant_operand_bytes_ += bytes;
      constant_operands_.push_back(fmt::format("{} ({})", out_name(o), tensor_name(c)));
    }
  }

  void unary(const Op& o, std::string_view op) {
    const int x = data_input(o);
    std::vector<int> rest = constant_inputs(o);
    note_constant_operands(o, rest);  // PRELU's slopes
    int t = emit(o, op, out_name(o), {}, {act(o, x)}, same(out_precision(o)));
    bind(o, 0, t);
  }

  void concatenation(const Op& o) {
    const auto* opt = o.op->builtin_options_as_ConcatenationOptions();
    const std::int64_t axis = opt ? opt->axis() : 0;
    const auto act_fn = opt ? opt->fused_activation_function() : fb::ActivationFunctionType_NONE;
    const auto activations = activation_inputs(o);
    const auto constants = constant_inputs(o);
    const int fs_axis = framesim_axis(axis, file_shape(o.out[0]).size());
    if (fs_axis < 0) fail_op(o, fmt::format("axis {} is out of range for the output {}", axis,
                                            model::shape_to_string(file_shape(o.out[0]))));
    const Precision a = out_precision(o);
    int t;
    if (constants.empty() && activations.size() >= 2) {
      std::vector<int> inputs;
      for (int x : activations) inputs.push_back(act(o, x));
      t = emit(o, "concat", out_name(o), {{"axis", static_cast<std::int64_t>(fs_axis)}}, inputs, same(a));
    } else if (constants.empty()) {
      t = emit(o, "copy", out_name(o), {}, {act(o, activations[0])}, same(a));
    } else {
      // Constant pieces (e.g. anchors) are read like weights: a custom copy with the file's output shape.
      t = custom_layer(o, activations, 0, 0, true);
    }
    t = fused(o, t, act_fn, out_name(o));
    bind(o, 0, t);
  }

  void reshape_op(const Op& o) {
    const int x = data_input(o);
    Shape target = file_shape(o.out[0]);
    if (!options_.input_shapes.empty() && o.code == fb::BuiltinOperator_RESHAPE) {
      // With --input the file's static shapes may be stale: use the requested shape (-1 allowed).
      std::optional<std::vector<std::int64_t>> wanted = o.in.size() > 1 ? const_ints(o.in[1]) : std::nullopt;
      if (!wanted)
        if (const auto* opt = o.op->builtin_options_as_ReshapeOptions(); opt && opt->new_shape()) {
          wanted = std::vector<std::int64_t>{};
          for (auto d : *opt->new_shape()) wanted->push_back(d);
        }
      if (wanted && !wanted->empty()) target = *wanted;
    }
    if (target.empty()) target = {1};
    const int in = act(o, x);
    const Precision p = spec(in).precision;
    const int t = emit(o, "reshape", out_name(o), {{"shape", to_framesim(target)}}, {in}, same(p));
    bind(o, 0, t);
  }

  void transpose(const Op& o) {
    const int x = data_input(o);
    auto perm = o.in.size() > 1 ? const_ints(o.in[1]) : std::nullopt;
    const std::size_t rank = file_shape(x).size();
    if (!perm || perm->size() != rank) {
      bind(o, 0, custom_layer(o, {x}, 0));
      return;
    }
    // out_tflite[j] = in_tflite[perm[j]]; framesim axis i of the output is TFLite axis j with framesim_axis(j) = i.
    std::vector<std::int64_t> fs_perm(rank);
    for (std::size_t j = 0; j < rank; ++j) {
      const int i = framesim_axis(static_cast<std::int64_t>(j), rank);
      const int from = framesim_axis((*perm)[j], rank);
      if (from < 0) fail_op(o, fmt::format("permutation entry {} is out of range", (*perm)[j]));
      fs_perm[static_cast<std::size_t>(i)] = from;
    }
    const int t = emit(o, "transpose", out_name(o), {{"perm", fs_perm}}, {act(o, x)}, same(out_precision(o)));
    bind(o, 0, t);
  }

  void pad(const Op& o) {
    const int x = data_input(o);
    const Shape xs = file_shape(x);
    auto p = o.in.size() > 1 ? const_ints(o.in[1]) : std::nullopt;
    if (xs.size() == 4 && p && p->size() == 8 && (*p)[0] == 0 && (*p)[1] == 0 && (*p)[6] == 0 && (*p)[7] == 0) {
      // paddings [[n0, n1], [top, bottom], [left, right], [c0, c1]] -> framesim's [top, left, bottom, right]
      const std::vector<std::int64_t> pads{(*p)[2], (*p)[4], (*p)[3], (*p)[5]};
      const int t = emit(o, "pad", out_name(o), {{"pads", pads}}, {act(o, x)}, same(out_precision(o)));
      bind(o, 0, t);
      return;
    }
    other_pads_.push_back(out_name(o));
    bind(o, 0, custom_layer(o, {x}, 0));
  }

  void resize(const Op& o, std::string_view mode) {
    const int x = data_input(o);
    auto size = o.in.size() > 1 ? const_ints(o.in[1]) : std::nullopt;
    std::vector<std::int64_t> hw;
    if (size && size->size() == 2) hw = *size;
    else if (file_shape(o.out[0]).size() == 4) hw = {file_shape(o.out[0])[1], file_shape(o.out[0])[2]};
    else fail_op(o, "needs a constant size [height, width]");
    const int t = emit(o, "resize", out_name(o), {{"size", hw}, {"mode", std::string(mode)}}, {act(o, x)},
                       same(out_precision(o)));
    bind(o, 0, t);
  }

  void slice(const Op& o) {
    const int x = data_input(o);
    const Shape xs = file_shape(x);
    int shrink = 0;
    if (const auto* opt = o.op->builtin_options_as_StridedSliceOptions()) {
      if (opt->ellipsis_mask() == 0 && opt->new_axis_mask() == 0) shrink = opt->shrink_axis_mask();
      else shrink = -1;
    }
    for (std::size_t pos = 0; pos < o.out.size(); ++pos) {
      Shape out = file_shape(o.out[pos]);
      // STRIDED_SLICE drops the axes of shrink_axis_mask: slice with those axes kept as 1, then reshape.
      Shape kept = out;
      if (shrink > 0 && out.size() < xs.size()) {
        kept.clear();
        std::size_t next = 0;
        for (std::size_t i = 0; i < xs.size(); ++i) {
          if (shrink & (1 << i)) kept.push_back(1);
          else if (next < out.size()) kept.push_back(out[next++]);
        }
      }
      bool fits = kept.size() == xs.size() && shrink >= 0;
      for (std::size_t i = 0; fits && i < kept.size(); ++i) fits = kept[i] > 0 && kept[i] <= xs[i];
      if (!fits) {
        bind(o, pos, custom_layer(o, {x}, pos));
        continue;
      }
      const Precision p = out_precision(o, pos);
      int t = emit(o, "slice", out_name(o, pos), {{"shape", to_framesim(kept)}}, {act(o, x)}, same(p));
      if (kept != out) t = reshape(o, t, to_framesim(out), out_name(o, pos) + "/shrink");
      bind(o, pos, t);
    }
  }

  void gather(const Op& o) {
    if (o.in.size() < 2 || o.in[0] < 0 || o.in[1] < 0) fail_op(o, "needs params and indices");
    const int params = o.in[0], indices = o.in[1];
    const auto* opt = o.op->builtin_options_as_GatherOptions();
    const std::int64_t axis = opt ? opt->axis() : 0;
    const Shape ps = file_shape(params);
    const Precision a = out_precision(o);
    if (is_const(params) && !is_const(indices) && (axis == 0 || axis == -static_cast<std::int64_t>(ps.size())) &&
        !ps.empty()) {
      // Rows of a constant table: framesim's embedding (scattered row reads).
      const std::int64_t rows = ps[0];
      const auto dim = static_cast<std::int64_t>(model::shape_elements(Shape(ps.begin() + 1, ps.end())));
      int t = emit(o, "embedding", out_name(o), {{"num_embeddings", rows}, {"embedding_dim", dim}},
                   {act(o, indices)}, {stored_precision(params), a, a});
      t = conform(o, t, 0);
      bind(o, 0, t);
      return;
    }
    if (!is_const(params) && is_const(indices)) {
      // Fixed rows of an activation: a slice when the output fits in the input, else a custom copy.
      const Shape out = file_shape(o.out[0]);
      bool fits = out.size() == ps.size();
      for (std::size_t i = 0; fits && i < out.size(); ++i) fits = out[i] > 0 && out[i] <= ps[i];
      if (fits) {
        bind(o, 0, emit(o, "slice", out_name(o), {{"shape", to_framesim(out)}}, {act(o, params)}, same(a)));
        return;
      }
    }
    bind(o, 0, custom_layer(o, activation_inputs(o), 0, 0, true));
  }

  void batch_matmul(const Op& o) {
    if (o.in.size() < 2 || o.in[0] < 0 || o.in[1] < 0) fail_op(o, "needs two inputs");
    const int x = o.in[0], y = o.in[1];
    bool adj_x = false, adj_y = false;
    if (const auto* opt = o.op->builtin_options_as_BatchMatMulOptions()) adj_x = opt->adj_x(), adj_y = opt->adj_y();
    if (is_const(x)) {
      bind(o, 0, custom_layer(o, activation_inputs(o), 0, 0, true));
      return;
    }
    // Matmul works in TFLite's own order: undo the NCHW view of rank-4 operands (free reshapes).
    Shape xs = file_shape(x);
    if (adj_x && xs.size() >= 2) std::swap(xs[xs.size() - 1], xs[xs.size() - 2]);  // read transposed, no copy
    const int in = reshape(o, act(o, x), xs, out_name(o) + "/a");
    const Precision a = out_precision(o);
    int t;
    const Shape ys = file_shape(y);
    if (ys.size() < 2) fail_op(o, fmt::format("expects a rank >= 2 right operand, got {}", model::shape_to_string(ys)));
    if (is_const(y)) {
      const std::int64_t n = adj_y ? ys[ys.size() - 2] : ys.back();
      if (model::shape_elements(Shape(ys.begin(), ys.end() - 2)) > 1)
        batched_constants_.push_back(out_name(o));
      t = emit(o, "matmul", out_name(o), {{"n", n}}, {in}, {stored_precision(y), a, a});
    } else {
      const int rhs = reshape(o, act(o, y), ys, out_name(o) + "/b");
      t = emit(o, "matmul", out_name(o), {{"transpose_b", adj_y}}, {in, rhs}, same(a));
    }
    t = conform(o, t, 0);
    bind(o, 0, t);
  }

  void cast(const Op& o) {
    const int x = data_input(o);
    const int in = act(o, x);
    const Precision from = spec(in).precision;
    const Precision to = out_precision(o);
    const int t = emit(o, "cast", out_name(o), {{"to", to}}, {in}, same(from));
    bind(o, 0, t);
  }

  void unknown(const Op& o) {
    // Costed as data movement: the first output reads every activation input; further outputs are written only.
    for (std::size_t pos = 0; pos < o.out.size(); ++pos) {
      const int t = custom_layer(o, pos == 0 ? activation_inputs(o) : std::vector<int>{}, pos, 0, true);
      bind(o, pos, t);
    }
    unknown_[o.name].push_back(out_name(o));
  }

  // ---- the end: outputs and what to tell the user ----

  void finish() {
    std::set<int> outputs;
    for (auto t : *graph_->outputs()) {
      const auto& s = slots_[static_cast<std::size_t>(t)];
      if (s.framesim < 0) {
        warnings_.push_back(fmt::format("graph output '{}' is a constant: not an output of the imported network",
                                        tensor_name(t)));
        continue;
      }
      if (spec(s.framesim).producer < 0 && spec(s.framesim).alias_of < 0) {
        warnings_.push_back(fmt::format("graph output '{}' is a graph input passed through: no layer writes it",
                                        tensor_name(t)));
        continue;
      }
      if (outputs.insert(s.framesim).second) net_.outputs.push_back(s.framesim);
    }
    // Every result goes somewhere: a layer output nobody reads is kept as an output.
    std::vector<std::string> unread;
    const model::ConsumerIndex consumers(net_);
    const std::vector<int> listed(outputs.begin(), outputs.end());
    for (const auto& l : net_.layers) {
      const int t = l.output;
      if (consumers.used(t, listed)) continue;
      outputs.insert(t);
      net_.outputs.push_back(t);
      unread.push_back(spec(t).name);
    }
    if (net_.layers.empty()) fail("no layers: every operator works on constants only");

    // fold() counts every folded operator in exactly one of the two tallies.
    auto total = [](const std::map<std::string, int>& counts) {
      int n = 0;
      for (const auto& [key, count] : counts) n += count;
      return n;
    };
    const int dequantize_folded = total(folded_dequantize_), other_folded = total(folded_other_);
    const auto folded = static_cast<std::size_t>(dequantize_folded + other_folded);
    const std::size_t operators = graph_->operators()->size();
    net_.name = path_.stem().string();
    net_.source_file = file_;
    net_.fusion = model::FusionMode::automatic;
    const auto* desc = model_->description();
    net_.description = fmt::format(
        "TFLite model{}: {} operators -> {} layers from {} operators, {} folded; 4-D tensors NHWC -> NCHW",
        desc && desc->size() ? fmt::format(" ({})", desc->str()) : "", operators, net_.layers.size(),
        sourced_ops_.size(), folded);
    FRAMESIM_ASSERT(sourced_ops_.size() + folded == operators, "every operator is a layer or folded");

    if (!folded_dequantize_.empty()) {
      std::vector<std::string> parts;
      for (const auto& [type, count] : folded_dequantize_) parts.push_back(fmt::format("{} of {}", count, type));
      warnings_.push_back(fmt::format("{} DEQUANTIZE operators of constant tensors ({}) folded into the layers they "
                                      "feed: those layers hold their weights at the stored precision",
                                      dequantize_folded, core::join_list(parts, ", ")));
    }
    if (!folded_other_.empty()) {
      std::vector<std::string> parts;
      for (const auto& [name, count] : folded_other_) parts.push_back(fmt::format("{} x{}", name, count));
      warnings_.push_back(fmt::format("{} operators with only constant inputs folded (computed once, not per "
                                      "inference): {}",
                                      other_folded, core::join_list(parts, ", ")));
    }
    for (const auto& [name, layers] : unknown_)
      warnings_.push_back(fmt::format("unknown op {} ({}x): imported as custom layers (0 operations; reading their "
                                      "inputs, writing their outputs, constant inputs as weights): {}",
                                      name, layers.size(), list_some(layers)));
    if (!other_pads_.empty())
      warnings_.push_back(fmt::format("{} PAD operators pad axes other than height and width (e.g. channels); "
                                      "framesim's pad pads H and W only, so they are custom copy layers (0 "
                                      "operations): {}",
                                      other_pads_.size(), list_some(other_pads_)));
    if (!other_reductions_.empty())
      warnings_.push_back(fmt::format("{} reductions over axes other than height and width are custom layers of one "
                                      "operation per input element: {}",
                                      other_reductions_.size(), list_some(other_reductions_)));
    if (!constant_operands_.empty())
      warnings_.push_back(fmt::format("{} constant operands of elementwise ops ({} bytes) are not counted as weights "
                                      "or traffic: {}",
                                      constant_operands_.size(), constant_operand_bytes_,
                                      list_some(constant_operands_)));
    if (!batched_constants_.empty())
      warnings_.push_back(fmt::format("BATCH_MATMUL with a batched constant right operand counts one batch of "
                                      "weights: {}",
                                      list_some(batched_constants_)));
    if (!computed_weights_.empty())
      warnings_.push_back(fmt::format("kernels computed at run time are counted as stored weights: {}",
                                      list_some(computed_weights_)));
    if (!variables_.empty())
      warnings_.push_back(fmt::format("variable tensors (state kept between runs) are read like constants: {}",
                                      list_some(variables_)));
    for (const auto& [type, tensors] : odd_types_)
      warnings_.push_back(fmt::format("{} tensors have no framesim precision; counted as {}: {}", type,
                                      type == "FLOAT64" || type.rfind("COMPLEX", 0) == 0 ? "fp32" : "int32",
                                      list_some({tensors.begin(), tensors.end()})));
    if (!mismatches_.empty())
      warnings_.push_back(fmt::format("{} layer shapes differ from the model's: {}", mismatches_.size(),
                                      list_some(mismatches_, 3)));
    if (!unread.empty())
      warnings_.push_back(fmt::format("layer outputs no one reads are kept as graph outputs: {}", list_some(unread)));
  }

  std::filesystem::path path_;
  std::string file_;
  const ImportOptions& options_;
  std::vector<std::uint8_t> bytes_;
  const fb::Model* model_ = nullptr;
  const fb::SubGraph* graph_ = nullptr;
  std::vector<Slot> slots_;
  model::NetworkSpec net_;
  std::vector<std::string> warnings_;
  std::set<std::string> used_names_;

  std::set<std::size_t> sourced_ops_;  // operators that became at least one layer
  std::map<std::string, int> folded_dequantize_;  // by stored type
  std::map<std::string, int> folded_other_;       // by op name
  std::map<std::string, std::vector<std::string>> unknown_;
  std::map<std::string, std::set<std::string>> odd_types_;
  std::vector<std::string> other_pads_, other_reductions_, constant_operands_, batched_constants_, computed_weights_,
      variables_, mismatches_;
  double constant_operand_bytes_ = 0;
};

}  // namespace

ImportResult import_tflite(const std::filesystem::path& path, const ImportOptions& options) {
  return Importer(path, options).run();
}

}  // namespace framesim::trace
