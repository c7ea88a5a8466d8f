// TFLite import, the operators: folding constant operators, the dispatch by operator code, and one costing function
// per operator family (convolution, fully connected, pooling, reductions, elementwise, data movement).
#include <algorithm>

#include "trace/tflite_importer.hpp"

namespace framesim::trace::tflite_detail {

void Importer::import_operator(std::size_t k) {
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

void Importer::fold(const Op& o) {
  // DENSIFY decodes a sparse constant (tflite_sparse.cpp): its output keeps the sparse source, whose stored bytes
  // the layer reading it counts.
  const bool passes_through = o.code == fb::BuiltinOperator_DEQUANTIZE || o.code == fb::BuiltinOperator_RESHAPE ||
                              o.code == fb::BuiltinOperator_SQUEEZE || o.code == fb::BuiltinOperator_EXPAND_DIMS ||
                              o.code == fb::BuiltinOperator_DENSIFY;
  const int first = o.in.empty() ? -1 : o.in[0];
  for (int t : o.out) {
    auto& s = slots_[static_cast<std::size_t>(t)];
    s.constant = true;
    if (passes_through && first >= 0) {
      // A DEQUANTIZE keeps the stored type of its source: the weights stay at fp16 (or int8) in memory.
      s.stored = slots_[static_cast<std::size_t>(first)].stored;
      s.sparse = slots_[static_cast<std::size_t>(first)].sparse;
      s.data = o.code == fb::BuiltinOperator_DEQUANTIZE ? -1 : slots_[static_cast<std::size_t>(first)].data;
    } else {
      s.stored = tensor(t)->type();
      s.data = -1;
      s.sparse = -1;
    }
  }
  if (o.code == fb::BuiltinOperator_DENSIFY) ++sparse_.densify;
  if (auto v = fold_values(o)) values_[o.out[0]] = std::move(*v);
  if (o.code == fb::BuiltinOperator_DEQUANTIZE && first >= 0) {
    const char* n = fb::EnumNameTensorType(slots_[static_cast<std::size_t>(first)].stored);
    folded_dequantize_[n && *n ? n : "?"]++;
  } else {
    folded_other_[o.name]++;
  }
}

void Importer::dispatch(const Op& o) {
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
    case fb::BuiltinOperator_LEAKY_RELU:
    case fb::BuiltinOperator_PRELU: return unary(o, "leaky_relu");  // PReLU: compare and multiply by the slope
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
    case fb::BuiltinOperator_SHAPE: return shape_op(o);
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
int Importer::data_input(const Op& o) const {
  for (int t : o.in)
    if (t >= 0 && !is_const(t)) return t;
  fail_op(o, "has no activation input");
}

void Importer::conv(const Op& o, bool depthwise) {
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
void Importer::transpose_conv(const Op& o, std::size_t x, std::size_t w, std::size_t b) {
  if (o.in.size() <= std::max(x, w) || o.in[x] < 0 || o.in[w] < 0) fail_op(o, "needs an input and a kernel");
  const int xt = o.in[x], wt = o.in[w];
  const int bt = b < o.in.size() ? o.in[b] : -1;
  const Shape xs = file_shape(xt), ws = file_shape(wt);
  if (xs.size() != 4) fail_op(o, fmt::format("expects an NHWC input, got {}", model::shape_to_string(xs)));
  if (ws.size() != 4) fail_op(o, fmt::format("expects a kernel [O, kh, kw, I], got {}", model::shape_to_string(ws)));
  const Shape ys = out_shape(o);
  const double outputs = model::shape_elements(ys);
  const double ops =
      2.0 * model::shape_elements(xs) * static_cast<double>(ws[0] * ws[1] * ws[2]) + (bt >= 0 ? outputs : 0.0);
  double weights = model::shape_elements(ws);
  if (bt >= 0) weights += model::shape_elements(file_shape(bt));
  weights_from_activation(o, wt);
  const Precision a = out_precision(o);
  OpParams params{{"output_shape", ys},
                  {"ops", ops},
                  {"weights", static_cast<std::int64_t>(weights)},
                  {"class", std::string("conv")}};
  bind(o, 0, emit(o, "custom", out_name(o), params, {act(o, xt)}, {stored_precision(wt), a, a}));
}

void Importer::weights_from_activation(const Op& o, int w) {
  if (!is_const(w))
    computed_weights_.push_back(
        fmt::format("{} (operator {} {}, weights '{}')", out_name(o), o.index, o.name, tensor_name(w)));
}

void Importer::fully_connected(const Op& o) {
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
int Importer::conform(const Op& o, int t, std::size_t pos) {
  const Shape want = out_shape(o, pos);
  if (want.empty() || spec(t).shape == want) return t;
  if (model::shape_elements(want) != spec(t).elements()) return t;  // reported by bind()
  return reshape(o, t, want, out_name(o, pos) + "/shape");
}

void Importer::pool(const Op& o, std::string_view op) {
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

void Importer::reduce(const Op& o, std::string_view global_op) {
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
int Importer::broadcast_ready(const Op& o, int t, std::size_t out_rank) {
  const int fs = act(o, t);
  const Shape s = file_shape(t);
  if (out_rank != 4 || s.size() >= 4) return fs;
  Shape padded(4 - s.size(), 1);
  padded.insert(padded.end(), s.begin(), s.end());
  return reshape(o, fs, to_framesim(padded), spec(fs).name + "/nchw");
}

void Importer::binary(const Op& o, std::string_view op) {
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
  const Precision a = out_precision(o);
  const double per_element = static_cast<double>(activations.size() + constants.size()) - 1.0;
  int t;
  if (constants.empty() && inputs.size() >= 2) {
    t = emit(o, op, out_name(o), {}, inputs, same(a));
  } else if (const int w = weights_of(constants); w >= 0) {
    t = weighted_elementwise(o, inputs, per_element, w);
  } else {
    // Constant operands of one element (immediates): framesim's elementwise over the activations, same count.
    t = emit(o, "elementwise", out_name(o), {{"ops_per_element", per_element}}, inputs, same(a));
  }
  t = fused(o, t, act_fn, out_name(o));
  bind(o, 0, t);
}

/// The last constant in `constants` of more than one element (a bias, a scale, PRELU's slopes: weights), or -1
/// when each is one element (an immediate, folded into the instruction: no bytes).
int Importer::weights_of(const std::vector<int>& constants) const {
  int w = -1;
  for (int c : constants)
    if (model::shape_elements(file_shape(c)) > 1) w = c;
  return w;
}

/// An elementwise op with constant operands stored as weights: custom of class elementwise (automatic fusion still
/// takes it into its producer's epilogue), `per_element` ops per output element, the constants of more than one
/// element as weights at their stored precision. The output is the activations' broadcast shape, or the file's when
/// a constant broadcasts it larger (without --input; with it, the file's shapes may be placeholders).
int Importer::weighted_elementwise(const Op& o, const std::vector<int>& inputs, double per_element, int stored) {
  Shape shape;
  for (int t : inputs) {
    const Shape& s = spec(t).shape;
    if (s.size() > shape.size()) shape.insert(shape.begin(), s.size() - shape.size(), 1);
    for (std::size_t i = 0; i < s.size(); ++i) {
      auto& d = shape[shape.size() - s.size() + i];
      d = std::max(d, s[i]);
    }
  }
  const Shape file = out_shape(o);
  if (options_.input_shapes.empty() && model::shape_elements(file) > model::shape_elements(shape)) shape = file;
  double weights = 0;
  for (int c : constant_inputs(o))
    if (model::shape_elements(file_shape(c)) > 1) weights += model::shape_elements(file_shape(c));
  const Precision a = out_precision(o);
  OpParams params{{"output_shape", shape},
                  {"ops", per_element * model::shape_elements(shape)},
                  {"weights", static_cast<std::int64_t>(weights)},
                  {"class", std::string("elementwise")}};
  return emit(o, "custom", out_name(o), params, inputs, {stored_precision(stored), a, a});
}

void Importer::unary(const Op& o, std::string_view op) {
  const int x = data_input(o);
  const int slopes = weights_of(constant_inputs(o));  // PRELU's slopes, one per channel (or per element)
  const int in = act(o, x);
  // PRELU: compare and multiply per element, as leaky_relu, with the slopes read as weights.
  const int t = slopes >= 0 ? weighted_elementwise(o, {in}, 2.0, slopes)
                            : emit(o, op, out_name(o), {}, {in}, same(out_precision(o)));
  bind(o, 0, t);
}

void Importer::concatenation(const Op& o) {
  const auto* opt = o.op->builtin_options_as_ConcatenationOptions();
  const std::int64_t axis = opt ? opt->axis() : 0;
  const auto act_fn = opt ? opt->fused_activation_function() : fb::ActivationFunctionType_NONE;
  const auto activations = activation_inputs(o);
  const auto constants = constant_inputs(o);
  const int fs_axis = framesim_axis(axis, file_shape(o.out[0]).size());
  if (fs_axis < 0)
    fail_op(o, fmt::format("axis {} is out of range for the output {}", axis,
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

void Importer::reshape_op(const Op& o) {
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

void Importer::transpose(const Op& o) {
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

void Importer::pad(const Op& o) {
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

void Importer::resize(const Op& o, std::string_view mode) {
  const int x = data_input(o);
  auto size = o.in.size() > 1 ? const_ints(o.in[1]) : std::nullopt;
  std::vector<std::int64_t> hw;
  if (size && size->size() == 2) hw = *size;
  else if (file_shape(o.out[0]).size() == 4) hw = {file_shape(o.out[0])[1], file_shape(o.out[0])[2]};
  else fail_op(o, "needs a constant size [height, width]");
  const int t =
      emit(o, "resize", out_name(o), {{"size", hw}, {"mode", std::string(mode)}}, {act(o, x)}, same(out_precision(o)));
  bind(o, 0, t);
}

void Importer::slice(const Op& o) {
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

void Importer::gather(const Op& o) {
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
    int t = emit(o, "embedding", out_name(o), {{"num_embeddings", rows}, {"embedding_dim", dim}}, {act(o, indices)},
                 {stored_precision(params), a, a});
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

void Importer::batch_matmul(const Op& o) {
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
    if (model::shape_elements(Shape(ys.begin(), ys.end() - 2)) > 1) batched_constants_.push_back(out_name(o));
    t = emit(o, "matmul", out_name(o), {{"n", n}}, {in}, {stored_precision(y), a, a});
  } else {
    const int rhs = reshape(o, act(o, y), ys, out_name(o) + "/b");
    t = emit(o, "matmul", out_name(o), {{"transpose_b", adj_y}}, {in, rhs}, same(a));
  }
  t = conform(o, t, 0);
  bind(o, 0, t);
}

void Importer::cast(const Op& o) {
  const int x = data_input(o);
  const int in = act(o, x);
  const Precision from = spec(in).precision;
  const Precision to = out_precision(o);
  const int t = emit(o, "cast", out_name(o), {{"to", to}}, {in}, same(from));
  bind(o, 0, t);
}

void Importer::unknown(const Op& o) {
  // Costed as data movement: the first output reads every activation input; further outputs are written only.
  for (std::size_t pos = 0; pos < o.out.size(); ++pos) {
    const int t = custom_layer(o, pos == 0 ? activation_inputs(o) : std::vector<int>{}, pos, 0, true);
    bind(o, pos, t);
  }
  unknown_[o.name].push_back(out_name(o));
}

}  // namespace framesim::trace::tflite_detail
