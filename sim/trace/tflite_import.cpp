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
//   ADD / SUB / MUL / DIV / MAXIMUM / MINIMUM / POW [add ... pow; with a constant operand of one element (an
//   immediate): elementwise over the activation operand(s); of more (a bias, a scale): custom of class elementwise,
//   the same ops, the constants as weights at their stored precision; PRELU's slopes likewise, 2 ops per element], RELU
//   / RELU6 / RELU_N1_TO_1 / LOGISTIC / TANH / HARD_SWISH / LEAKY_RELU / PRELU / GELU / EXP / LOG / SQRT / ABS / NEG
//   [relu / relu6 / clip / sigmoid / tanh / hardswish / leaky_relu / leaky_relu / gelu / exp / log / sqrt / abs / neg],
//   CONCATENATION [concat], RESHAPE / SQUEEZE / EXPAND_DIMS [reshape, free], TRANSPOSE [transpose], PAD / PADV2 /
//   MIRROR_PAD [pad over H and W; other axes: custom copy], RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR [resize linear /
//   nearest], SOFTMAX / LOG_SOFTMAX [softmax], STRIDED_SLICE / SLICE / SPLIT / SPLIT_V [slice (+ reshape for shrunk
//   axes)], GATHER [embedding of a constant table; slice or custom of an activation], BATCH_MATMUL [matmul; one input
//   with weights when the right side is constant], QUANTIZE / DEQUANTIZE / CAST of an activation [cast], TRANSPOSE_CONV
//   and MediaPipe's CUSTOM Convolution2DTransposeBias [custom of class conv: 2 x N x H x W x Cin x kh x kw x Cout ops,
//   kernel and bias as weights; the output_shape input is not].
// Fused activations in the options become an activation layer after the op (automatic fusion folds it back).
// Constants: an operator whose inputs are all constant is folded (no layer). In particular a DEQUANTIZE of a
// constant FLOAT16 (or INT8) tensor is folded into the layer it feeds, which holds its weights at the stored
// precision: MediaPipe's fp16 models give fp16 weights and fp32 activations. Biases are counted as weights at
// the weights' precision (TFLite keeps int32 biases for int8 models: a few bytes per output channel more).
// Sparse constants (a `sparsity` field) and the DENSIFY that decodes them are folded too: the layer's weight bytes
// are the stored values and index arrays, its reads per inference the dense tensor (tflite_sparse.cpp).
// Unknown operators (CUSTOM included) become custom layers over their tensors (0 operations, constant inputs
// counted as weights) and are listed in the warnings; nothing is dropped silently.
//
// Accounting: each layer's `source` is "FILE:op K NAME" (the operator it comes from; one operator may give
// several layers: a fused activation, free reshapes), and the description states "N operators -> L layers from
// M operators, F folded" with M + F = N. Shapes framesim computes are checked against the shapes the file
// states; a difference is a warning. --input shapes (ImportOptions::input_shapes) are in the model's own layout
// (NHWC for images); with them the file's static shapes are not checked, and RESHAPE follows its new_shape, or
// its target computed from SHAPE of an activation (SHAPE and the integer arithmetic after it are folded).
//
// This file: the entry point (import_tflite), reading and verifying the flatbuffer, and the end of an import
// (graph outputs, accounting, warnings). tflite_tensors.cpp: tensors, layout and emitting layers;
// tflite_ops.cpp: one costing function per operator family; tflite_fold.cpp: shape arithmetic computed at load time.
#include <algorithm>
#include <cstring>
#include <fstream>

#include "trace/tflite_importer.hpp"

namespace framesim::trace::tflite_detail {

ImportResult Importer::run() {
  read_file();
  verify();
  check_references();
  make_inputs();
  for (std::size_t k = 0; k < graph_->operators()->size(); ++k) import_operator(k);
  finish();
  return {std::move(net_), std::move(warnings_)};
}

void Importer::fail(const std::string& message) const { throw core::UserError(fmt::format("{}: {}", file_, message)); }

void Importer::fail_op(const Op& o, const std::string& message) const {
  const std::string writes = o.out.empty() || o.out[0] < 0 ? "" : " -> " + tensor_name(o.out[0]);
  fail(fmt::format("operator {} ({}{}): {}", o.index, o.name, writes, message));
}

void Importer::read_file() {
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

void Importer::verify() {
  if (bytes_.size() < 8)
    fail(fmt::format("{} bytes, too short for a TFLite model (a flatbuffer with identifier \"TFL3\")", bytes_.size()));
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
    warnings_.push_back(
        fmt::format("the model has {} subgraphs; only subgraph 0 (the main graph) is imported: ops "
                    "calling the others (WHILE, IF, CALL_ONCE) are unknown ops",
                    model_->subgraphs()->size()));
}

std::size_t Importer::tensor_count() const { return graph_->tensors()->size(); }

const fb::Tensor* Importer::tensor(int t) const {
  return graph_->tensors()->Get(static_cast<flatbuffers::uoffset_t>(t));
}

std::string Importer::tensor_name(int t) const {
  const auto* n = tensor(t)->name();
  return n && n->size() ? n->str() : fmt::format("tensor{}", t);
}

Shape Importer::file_shape(int t) const {
  Shape s;
  if (const auto* v = tensor(t)->shape())
    for (auto d : *v) s.push_back(d);
  return s;
}

std::string Importer::op_code_name(int code) const {
  if (code == fb::BuiltinOperator_PLACEHOLDER_FOR_GREATER_OP_CODES) return "BUILTIN_127";
  const char* n = fb::EnumNameBuiltinOperator(static_cast<fb::BuiltinOperator>(code));
  return n && *n ? n : fmt::format("BUILTIN_{}", code);
}

/// Indices, opcodes and buffers in range, shapes non-negative: after this, reads cannot go astray.
void Importer::check_references() {
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
      fail(fmt::format("operator {} uses operator code {}, but the model has {} operator codes", k, op->opcode_index(),
                       codes));
    const std::string what = fmt::format("operator {} ({})", k, op_code_name(code_of(*op)));
    check_list(op->inputs(), what + ": input", true);
    check_list(op->outputs(), what + ": output", false);
    if (!op->outputs() || op->outputs()->size() == 0) fail(what + ": has no outputs");
  }
}

int Importer::code_of(const fb::Operator& op) const {
  const auto* oc = model_->operator_codes()->Get(op.opcode_index());
  // Files written before the int32 builtin_code field hold the op in the byte field only (builtin_code reads 0);
  // newer files put codes above 127 in builtin_code and 127 in the byte field: the larger of the two is the op.
  return std::max<int>(oc->deprecated_builtin_code(), static_cast<int>(oc->builtin_code()));
}

void Importer::finish() {
  std::set<int> outputs;
  for (auto t : *graph_->outputs()) {
    const auto& s = slots_[static_cast<std::size_t>(t)];
    if (s.framesim < 0) {
      warnings_.push_back(
          fmt::format("graph output '{}' is a constant: not an output of the imported network", tensor_name(t)));
      continue;
    }
    if (spec(s.framesim).producer < 0 && spec(s.framesim).alias_of < 0) {
      warnings_.push_back(
          fmt::format("graph output '{}' is a graph input passed through: no layer writes it", tensor_name(t)));
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
  const auto folded = static_cast<std::size_t>(dequantize_folded) + static_cast<std::size_t>(other_folded);
  const std::size_t operators = graph_->operators()->size();
  net_.name = path_.stem().string();
  net_.source_file = file_;
  net_.fusion = model::FusionMode::automatic;
  const auto* desc = model_->description();
  net_.description =
      fmt::format("TFLite model{}: {} operators -> {} layers from {} operators, {} folded; 4-D tensors NHWC -> NCHW",
                  desc && desc->size() ? fmt::format(" ({})", desc->str()) : "", operators, net_.layers.size(),
                  sourced_ops_.size(), folded);
  FRAMESIM_ASSERT(sourced_ops_.size() + folded == operators, "every operator is a layer or folded");

  if (!folded_dequantize_.empty()) {
    std::vector<std::string> parts;
    for (const auto& [type, count] : folded_dequantize_) parts.push_back(fmt::format("{} of {}", count, type));
    warnings_.push_back(
        fmt::format("{} DEQUANTIZE operators of constant tensors ({}) folded into the layers they "
                    "feed: those layers hold their weights at the stored precision",
                    dequantize_folded, core::join_list(parts, ", ")));
  }
  if (!folded_other_.empty()) {
    std::vector<std::string> parts;
    for (const auto& [name, count] : folded_other_) parts.push_back(fmt::format("{} x{}", name, count));
    warnings_.push_back(
        fmt::format("{} operators with only constant inputs folded (computed once, not per "
                    "inference): {}",
                    other_folded, core::join_list(parts, ", ")));
  }
  sparse_note();
  for (const auto& [name, layers] : unknown_)
    warnings_.push_back(
        fmt::format("unknown op {} ({}x): imported as custom layers (0 operations; reading their "
                    "inputs, writing their outputs, constant inputs as weights): {}",
                    name, layers.size(), list_some(layers)));
  if (!other_pads_.empty())
    warnings_.push_back(
        fmt::format("{} PAD operators pad axes other than height and width (e.g. channels); "
                    "framesim's pad pads H and W only, so they are custom copy layers (0 "
                    "operations): {}",
                    other_pads_.size(), list_some(other_pads_)));
  if (!other_reductions_.empty())
    warnings_.push_back(
        fmt::format("{} reductions over axes other than height and width are custom layers of one "
                    "operation per input element: {}",
                    other_reductions_.size(), list_some(other_reductions_)));
  if (!batched_constants_.empty())
    warnings_.push_back(
        fmt::format("BATCH_MATMUL with a batched constant right operand counts one batch of "
                    "weights: {}",
                    list_some(batched_constants_)));
  if (!computed_weights_.empty())
    warnings_.push_back(
        fmt::format("kernels computed at run time are counted as stored weights: {}", list_some(computed_weights_)));
  if (!variables_.empty())
    warnings_.push_back(
        fmt::format("variable tensors (state kept between runs) are read like constants: {}", list_some(variables_)));
  for (const auto& [type, tensors] : odd_types_)
    warnings_.push_back(fmt::format("{} tensors have no framesim precision; counted as {}: {}", type,
                                    type == "FLOAT64" || type.rfind("COMPLEX", 0) == 0 ? "fp32" : "int32",
                                    list_some({tensors.begin(), tensors.end()})));
  if (!mismatches_.empty())
    warnings_.push_back(
        fmt::format("{} layer shapes differ from the model's: {}", mismatches_.size(), list_some(mismatches_, 3)));
  if (!unread.empty())
    warnings_.push_back(fmt::format("layer outputs no one reads are kept as graph outputs: {}", list_some(unread)));
}

}  // namespace framesim::trace::tflite_detail

namespace framesim::trace {

ImportResult import_tflite(const std::filesystem::path& path, const ImportOptions& options) {
  return tflite_detail::Importer(path, options).run();
}

}  // namespace framesim::trace
