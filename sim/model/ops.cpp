// Operations and bytes of every op framesim knows, computed from shapes.
// Conventions: a multiply-accumulate is two operations; bias is counted only when asked for;
// a transcendental function (exp, tanh, erf) counts as one operation; every layer reads each
// of its inputs once and writes its output once (the ideal traffic of the seed's worked examples).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "core/error.hpp"
#include "model/network.hpp"

namespace framesim::model {

std::string shape_to_string(const Shape& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out += "x";
    out += std::to_string(s[i]);
  }
  return out.empty() ? "scalar" : out;
}

double shape_elements(const Shape& s) {
  double n = 1;
  for (auto d : s) n *= static_cast<double>(d);
  return n;
}

double effective_bytes(const Access& a, double line_bytes) {
  if (a.rows <= 0 || a.bytes <= 0) return a.bytes;
  const double row_bytes = a.bytes / a.rows;
  return a.rows * std::ceil(row_bytes / line_bytes) * line_bytes;
}

std::string_view param_type_name(ParamType t) {
  switch (t) {
    case ParamType::integer: return "an integer";
    case ParamType::integers: return "an integer or a list of integers";
    case ParamType::boolean: return "true or false";
    case ParamType::text: return "a string";
    case ParamType::number: return "a number";
    case ParamType::precision: return "a precision";
  }
  return "?";
}

std::string_view fusion_mode_name(FusionMode m) {
  switch (m) {
    case FusionMode::automatic: return "auto";
    case FusionMode::explicit_only: return "explicit";
    case FusionMode::none: return "none";
  }
  return "?";
}

OpClass default_op_class(OpKind kind) {
  switch (kind) {
    case OpKind::linear:
    case OpKind::matmul:
    case OpKind::attention: return OpClass::matmul;
    case OpKind::conv2d: return OpClass::conv;
    case OpKind::pool:
    case OpKind::global_pool: return OpClass::pooling;
    case OpKind::elementwise:
    case OpKind::activation:
    case OpKind::batchnorm:
    case OpKind::norm:
    case OpKind::softmax: return OpClass::elementwise;
    case OpKind::embedding:
    case OpKind::reshape:
    case OpKind::copy:
    case OpKind::resize:
    case OpKind::custom: return OpClass::data_movement;
  }
  return OpClass::data_movement;
}

bool LayerSpec::epilogue_fusable() const {
  return kind == OpKind::elementwise || kind == OpKind::activation || kind == OpKind::batchnorm ||
         kind == OpKind::reshape || (kind == OpKind::custom && op_class == OpClass::elementwise);
}

double NetworkSpec::total_params() const {
  double n = 0;
  for (const auto& l : layers) n += l.params_count;
  return n;
}
double NetworkSpec::total_weight_bytes() const {
  double n = 0;
  for (const auto& l : layers) n += l.weight_bytes;
  return n;
}
double NetworkSpec::total_ops() const {
  double n = 0;
  for (const auto& l : layers) n += l.ops;
  return n;
}
double NetworkSpec::total_state_bytes() const {
  double n = 0;
  for (const auto& l : layers) n += l.state_bytes;
  return n;
}

std::vector<int> NetworkSpec::consumers(int tensor) const {
  std::vector<int> out;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& ins = layers[i].inputs;
    if (std::find(ins.begin(), ins.end(), tensor) != ins.end()) out.push_back(static_cast<int>(i));
  }
  return out;
}

ConsumerIndex::ConsumerIndex(const NetworkSpec& net) : consumers_(net.tensors.size()), aliases_(net.tensors.size()) {
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    for (int t : net.layers[i].inputs) {
      auto& list = consumers_[static_cast<std::size_t>(t)];
      if (list.empty() || list.back() != static_cast<int>(i)) list.push_back(static_cast<int>(i));
    }
  }
  for (std::size_t t = 0; t < net.tensors.size(); ++t)
    if (net.tensors[t].alias_of >= 0)
      aliases_[static_cast<std::size_t>(net.tensors[t].alias_of)].push_back(static_cast<int>(t));
}

bool ConsumerIndex::used(int tensor, const std::vector<int>& outputs) const {
  auto direct = [&](int t) { return !of(t).empty() || std::find(outputs.begin(), outputs.end(), t) != outputs.end(); };
  if (direct(tensor)) return true;
  for (int a : aliases_[static_cast<std::size_t>(tensor)])
    if (direct(a)) return true;
  return false;
}

int NetworkSpec::storage_of(int tensor) const {
  while (tensors[static_cast<std::size_t>(tensor)].alias_of >= 0)
    tensor = tensors[static_cast<std::size_t>(tensor)].alias_of;
  return tensor;
}

std::optional<int> NetworkSpec::find_layer(std::string_view layer_name) const {
  for (std::size_t i = 0; i < layers.size(); ++i)
    if (layers[i].name == layer_name) return static_cast<int>(i);
  return std::nullopt;
}

namespace {

using Result = std::variant<BuiltLayer, OpError>;

/// What one builder sees: the inputs, the parameters, and the layer being filled in.
struct Build {
  const OpSchema& schema;
  const OpParams& params;
  const std::vector<const TensorSpec*>& in;
  BuiltLayer out;

  const Shape& shape(std::size_t i) const { return in[i]->shape; }
  Precision act() const { return out.layer.precision.activations; }
  Precision wts() const { return out.layer.precision.weights; }

  std::optional<std::int64_t> integer(std::string_view key) const {
    auto it = params.find(key);
    if (it == params.end()) return std::nullopt;
    return std::get<std::int64_t>(it->second);
  }
  std::optional<std::vector<std::int64_t>> integers(std::string_view key) const {
    auto it = params.find(key);
    if (it == params.end()) return std::nullopt;
    if (auto* v = std::get_if<std::int64_t>(&it->second)) return std::vector<std::int64_t>{*v};
    if (auto* v = std::get_if<std::vector<std::int64_t>>(&it->second)) return *v;
    return std::nullopt;  // a named value ("same"), read with text()
  }
  bool flag(std::string_view key, bool fallback) const {
    auto it = params.find(key);
    return it == params.end() ? fallback : std::get<bool>(it->second);
  }
  std::optional<std::string> text(std::string_view key) const {
    auto it = params.find(key);
    if (it == params.end()) return std::nullopt;
    if (auto* s = std::get_if<std::string>(&it->second)) return *s;
    return std::nullopt;
  }
  std::optional<double> number(std::string_view key) const {
    auto it = params.find(key);
    if (it == params.end()) return std::nullopt;
    if (auto* i = std::get_if<std::int64_t>(&it->second)) return static_cast<double>(*i);
    return std::get<double>(it->second);
  }
  std::optional<Precision> precision(std::string_view key) const {
    auto it = params.find(key);
    if (it == params.end()) return std::nullopt;
    return std::get<Precision>(it->second);
  }

  /// Every input read once, streamed; output of `shape` at the activation precision.
  void stream_inputs_to(Shape output_shape) {
    auto& l = out.layer;
    for (const auto* t : in) l.input_access.push_back({t->bytes(), 0});
    out.output.shape = std::move(output_shape);
    out.output.precision = act();
  }
  void set_weights(double elements) {
    auto& l = out.layer;
    l.params_count = elements;
    l.weight_bytes = tensor_bytes(elements, wts());
    l.weight_access = {l.weight_bytes, 0};
  }
};

OpError err(std::string key, std::string message) { return OpError{std::move(key), std::move(message)}; }

/// A per-dimension parameter given as one value or one per spatial dimension (2 for conv2d).
std::variant<std::array<std::int64_t, 2>, OpError> pair_param(const Build& b, std::string_view key,
                                                              std::int64_t fallback, std::int64_t minimum) {
  auto v = b.integers(key);
  std::array<std::int64_t, 2> out{fallback, fallback};
  if (v) {
    if (v->size() == 1) out = {(*v)[0], (*v)[0]};
    else if (v->size() == 2) out = {(*v)[0], (*v)[1]};
    else return err(std::string(key), fmt::format("expected 1 or 2 values, got {}", v->size()));
  }
  for (auto x : out)
    if (x < minimum) return err(std::string(key), fmt::format("must be at least {}, got {}", minimum, x));
  return out;
}

std::variant<std::array<std::int64_t, 4>, OpError> padding_param(const Build& b, std::string_view key, std::int64_t h,
                                                                 std::int64_t w, std::array<std::int64_t, 2> kernel,
                                                                 std::array<std::int64_t, 2> stride,
                                                                 std::array<std::int64_t, 2> dilation) {
  // [top, left, bottom, right]
  if (auto mode = b.text(key)) {
    if (*mode == "valid") return std::array<std::int64_t, 4>{0, 0, 0, 0};
    if (*mode == "same") {
      std::array<std::int64_t, 2> total{};
      const std::array<std::int64_t, 2> size{h, w};
      for (int d = 0; d < 2; ++d) {
        const std::int64_t out = (size[d] + stride[d] - 1) / stride[d];
        total[d] = std::max<std::int64_t>(0, (out - 1) * stride[d] + dilation[d] * (kernel[d] - 1) + 1 - size[d]);
      }
      return std::array<std::int64_t, 4>{total[0] / 2, total[1] / 2, total[0] - total[0] / 2, total[1] - total[1] / 2};
    }
    return err(std::string(key), fmt::format("expected \"same\", \"valid\" or 1, 2 or 4 integers, got \"{}\"", *mode));
  }
  auto v = b.integers(key);
  if (!v) return std::array<std::int64_t, 4>{0, 0, 0, 0};
  std::array<std::int64_t, 4> p{};
  if (v->size() == 1) p = {(*v)[0], (*v)[0], (*v)[0], (*v)[0]};
  else if (v->size() == 2) p = {(*v)[0], (*v)[1], (*v)[0], (*v)[1]};
  else if (v->size() == 4) p = {(*v)[0], (*v)[1], (*v)[2], (*v)[3]};
  else return err(std::string(key), fmt::format("expected 1, 2 or 4 values, got {}", v->size()));
  for (auto x : p)
    if (x < 0) return err(std::string(key), fmt::format("must not be negative, got {}", x));
  return p;
}

std::optional<OpError> require_rank(const Build& b, std::size_t input, std::size_t rank, std::string_view what) {
  if (b.shape(input).size() != rank)
    return err("", fmt::format("{} expects a rank-{} input ({}), got {} of shape {}", b.schema.name, rank, what,
                               b.in[input]->name, shape_to_string(b.shape(input))));
  return std::nullopt;
}

template <class T>
bool is_error(const std::variant<T, OpError>& v) {
  return std::holds_alternative<OpError>(v);
}

Result build_linear(Build& b) {
  const Shape& x = b.shape(0);
  if (x.empty()) return err("", "linear layers need an input of rank 1 or more");
  const auto k = x.back();
  auto n = b.integer("out_features");
  if (!n) n = b.integer("n");
  if (!n || *n <= 0) {
    // linear says out_features, a matmul with one input says n: name the key this op declares.
    const bool has_out_features = std::any_of(b.schema.params.begin(), b.schema.params.end(),
                                              [](const ParamSchema& p) { return p.key == "out_features"; });
    const char* key = b.integer("n") || !has_out_features ? "n" : "out_features";
    return err(key, b.integer(key) ? std::string("must be a positive integer")
                                   : fmt::format("{} needs {} (the number of output features)", b.schema.name, key));
  }
  if (auto want_k = b.integer("k"); want_k && *want_k != k)
    return err("k", fmt::format("is {} but the input {} has {} features (shape {})", *want_k, b.in[0]->name, k,
                                shape_to_string(x)));
  const double m = shape_elements(x) / static_cast<double>(k);
  if (auto want_m = b.integer("m"); want_m && static_cast<double>(*want_m) != m)
    return err("m", fmt::format("is {} but the input {} has {} rows (shape {})", *want_m, b.in[0]->name, m,
                                shape_to_string(x)));
  const bool bias = b.flag("bias", false);
  auto& l = b.out.layer;
  l.ops = 2.0 * m * static_cast<double>(k) * static_cast<double>(*n) + (bias ? m * static_cast<double>(*n) : 0.0);
  b.set_weights(static_cast<double>(k) * static_cast<double>(*n) + (bias ? static_cast<double>(*n) : 0.0));
  if (b.text("weights_from")) {
    // Tied weights (e.g. an LM head sharing the embedding table): read in full, stored once elsewhere.
    l.params_count = 0;
    l.weight_bytes = 0;
  }
  Shape y = x;
  y.back() = *n;
  b.stream_inputs_to(y);
  l.summary = fmt::format("m={} k={} n={}{}", m, k, *n, bias ? " +bias" : "");
  return std::move(b.out);
}

Result build_matmul(Build& b) {
  if (b.in.size() == 1) return build_linear(b);
  // Activation x activation: A [..., m, k] x B [..., k, n] (B [..., n, k] with transpose_b).
  const Shape& a = b.shape(0);
  const Shape& c = b.shape(1);
  if (a.size() < 2 || c.size() < 2)
    return err("", fmt::format("matmul of two activations needs rank >= 2 inputs, got {} and {}", shape_to_string(a),
                               shape_to_string(c)));
  const bool tb = b.flag("transpose_b", false);
  const auto m = a[a.size() - 2];
  const auto k = a.back();
  const auto kb = tb ? c.back() : c[c.size() - 2];
  const auto n = tb ? c[c.size() - 2] : c.back();
  if (k != kb)
    return err("", fmt::format("inner dimensions differ: {} is {} and {} is {}{}", b.in[0]->name, shape_to_string(a),
                               b.in[1]->name, shape_to_string(c), tb ? " (transposed)" : ""));
  const Shape batch_a(a.begin(), a.end() - 2);
  const Shape batch_c(c.begin(), c.end() - 2);
  if (shape_elements(batch_a) != shape_elements(batch_c) && shape_elements(batch_c) != 1.0)
    return err("", fmt::format("batch dimensions differ: {} and {}", shape_to_string(a), shape_to_string(c)));
  const double batch = shape_elements(batch_a);
  b.out.layer.ops = 2.0 * batch * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
  Shape y = a;
  y.back() = n;
  b.stream_inputs_to(y);
  b.out.layer.summary = fmt::format("batch={} m={} k={} n={}", batch, m, k, n);
  return std::move(b.out);
}

Result build_conv2d(Build& b) {
  if (auto e = require_rank(b, 0, 4, "NCHW")) return *e;
  const Shape& x = b.shape(0);
  const auto n = x[0], c = x[1], h = x[2], w = x[3];
  auto kernel = pair_param(b, "kernel", 1, 1);
  if (is_error(kernel)) return std::get<OpError>(kernel);
  auto stride = pair_param(b, "stride", 1, 1);
  if (is_error(stride)) return std::get<OpError>(stride);
  auto dilation = pair_param(b, "dilation", 1, 1);
  if (is_error(dilation)) return std::get<OpError>(dilation);
  const auto k = std::get<0>(kernel);
  const auto s = std::get<0>(stride);
  const auto d = std::get<0>(dilation);
  auto pad = padding_param(b, "padding", h, w, k, s, d);
  if (is_error(pad)) return std::get<OpError>(pad);
  const auto p = std::get<0>(pad);

  const bool depthwise = b.flag("depthwise", false);
  std::int64_t groups = b.integer("groups").value_or(depthwise ? c : 1);
  if (depthwise && groups != c)
    return err("groups", fmt::format("a depthwise convolution has groups = input channels ({}), got {}", c, groups));
  if (groups <= 0 || c % groups != 0)
    return err("groups", fmt::format("must divide the input channels ({}), got {}", c, groups));
  std::int64_t cout = b.integer("out_channels").value_or(depthwise ? c : 0);
  if (cout <= 0) return err("out_channels", "must be a positive integer");
  if (cout % groups != 0)
    return err("out_channels", fmt::format("must be a multiple of groups ({}), got {}", groups, cout));

  const std::int64_t ho = (h + p[0] + p[2] - d[0] * (k[0] - 1) - 1) / s[0] + 1;
  const std::int64_t wo = (w + p[1] + p[3] - d[1] * (k[1] - 1) - 1) / s[1] + 1;
  if (ho <= 0 || wo <= 0)
    return err("kernel",
               fmt::format("a {}x{} kernel does not fit the {}x{} input with this padding", k[0], k[1], h, w));

  const bool bias = b.flag("bias", false);
  const double outputs = shape_elements({n, cout, ho, wo});
  const auto channels_per_group = c / groups;  // checked above: groups divides the input channels
  const double macs_per_output =
      static_cast<double>(channels_per_group) * static_cast<double>(k[0]) * static_cast<double>(k[1]);
  b.out.layer.ops = 2.0 * outputs * macs_per_output + (bias ? outputs : 0.0);
  b.set_weights(static_cast<double>(cout) * macs_per_output + (bias ? static_cast<double>(cout) : 0.0));
  b.stream_inputs_to({n, cout, ho, wo});
  if (groups == c && c > 1) b.out.layer.op_class = OpClass::depthwise;
  b.out.layer.summary =
      fmt::format("{}x{} s{} p{} {}{}->{} {}x{}->{}x{}", k[0], k[1], s[0], p[0],
                  groups == 1 ? "" : (groups == c ? "dw " : fmt::format("g{} ", groups)), c, cout, h, w, ho, wo);
  return std::move(b.out);
}

Result build_pool(Build& b) {
  if (auto e = require_rank(b, 0, 4, "NCHW")) return *e;
  const Shape& x = b.shape(0);
  auto kernel = pair_param(b, "kernel", 1, 1);
  if (is_error(kernel)) return std::get<OpError>(kernel);
  const auto k = std::get<0>(kernel);
  auto stride = pair_param(b, "stride", k[0], 1);
  if (is_error(stride)) return std::get<OpError>(stride);
  if (!b.integers("stride") && k[0] != k[1]) stride = std::array<std::int64_t, 2>{k[0], k[1]};
  const auto s = std::get<0>(stride);
  auto pad = padding_param(b, "padding", x[2], x[3], k, s, {1, 1});
  if (is_error(pad)) return std::get<OpError>(pad);
  const auto p = std::get<0>(pad);
  const std::int64_t ho = (x[2] + p[0] + p[2] - k[0]) / s[0] + 1;
  const std::int64_t wo = (x[3] + p[1] + p[3] - k[1]) / s[1] + 1;
  if (ho <= 0 || wo <= 0)
    return err("kernel", fmt::format("a {}x{} window does not fit the {}x{} input", k[0], k[1], x[2], x[3]));
  b.out.layer.ops = shape_elements({x[0], x[1], ho, wo}) * static_cast<double>(k[0]) * static_cast<double>(k[1]);
  b.stream_inputs_to({x[0], x[1], ho, wo});
  b.out.layer.summary = fmt::format("{}x{} s{} p{}", k[0], k[1], s[0], p[0]);
  return std::move(b.out);
}

Result build_global_pool(Build& b) {
  const Shape& x = b.shape(0);
  if (x.size() < 3) return err("", fmt::format("global pooling needs an NCHW-like input, got {}", shape_to_string(x)));
  b.out.layer.ops = shape_elements(x);
  Shape y = x;
  for (std::size_t i = 2; i < y.size(); ++i) y[i] = 1;
  b.stream_inputs_to(y);
  return std::move(b.out);
}

/// Numpy broadcasting of all inputs.
std::variant<Shape, OpError> broadcast(const Build& b) {
  Shape out;
  for (const auto* t : b.in) {
    const Shape& s = t->shape;
    if (s.size() > out.size()) out.insert(out.begin(), s.size() - out.size(), 1);
    for (std::size_t i = 0; i < s.size(); ++i) {
      auto& o = out[out.size() - s.size() + i];
      const auto v = s[i];
      if (o == v || v == 1) continue;
      if (o == 1) {
        o = v;
        continue;
      }
      std::vector<std::string> shapes;
      for (const auto* u : b.in) shapes.push_back(u->name + " " + shape_to_string(u->shape));
      return err("", fmt::format("input shapes do not broadcast: {}", fmt::join(shapes, ", ")));
    }
  }
  return out;
}

/// Arithmetic operations per element of the unary activations (a transcendental counts as one).
double activation_ops_per_element(std::string_view op) {
  if (op == "relu" || op == "tanh" || op == "exp" || op == "log" || op == "sqrt" || op == "abs" || op == "neg" ||
      op == "reciprocal" || op == "erf")
    return 1;
  if (op == "relu6" || op == "clip" || op == "leaky_relu") return 2;  // two compares / mul + max
  if (op == "sigmoid" || op == "hardsigmoid") return 4;               // neg, exp, add, div / add, div, 2 clips
  if (op == "gelu" || op == "silu" || op == "hardswish") return 5;    // erf form / x*sigmoid(x) / x*relu6(x+3)/6
  return 0;                                                           // cast and friends: no arithmetic
}

Result build_elementwise(Build& b) {
  auto shape = broadcast(b);
  if (is_error(shape)) return std::get<OpError>(shape);
  const Shape y = std::get<Shape>(shape);
  const double per_element = b.number("ops_per_element").value_or(static_cast<double>(b.in.size() - 1));
  if (per_element < 0) return err("ops_per_element", "must not be negative");
  b.out.layer.ops = per_element * shape_elements(y);
  b.stream_inputs_to(y);
  b.out.layer.summary = fmt::format("{} input{}", b.in.size(), b.in.size() == 1 ? "" : "s");
  return std::move(b.out);
}

Result build_activation(Build& b) {
  const double per_element = b.number("ops_per_element").value_or(activation_ops_per_element(b.schema.name));
  if (per_element < 0) return err("ops_per_element", "must not be negative");
  b.out.layer.ops = per_element * b.in[0]->elements();
  b.stream_inputs_to(b.shape(0));
  if (b.schema.name == "cast") {
    auto to = b.precision("to");
    b.out.output.precision = *to;
    b.out.layer.summary = fmt::format("{} -> {}", precision_name(b.in[0]->precision), precision_name(*to));
  }
  return std::move(b.out);
}

Result build_batchnorm(Build& b) {
  const Shape& x = b.shape(0);
  if (x.size() < 2)
    return err("", fmt::format("batchnorm needs a channel dimension (axis 1), got {}", shape_to_string(x)));
  // Inference form: one scale and one shift per channel (mean and variance already folded in).
  b.out.layer.ops = 2.0 * shape_elements(x);
  b.set_weights(2.0 * static_cast<double>(x[1]));
  b.stream_inputs_to(x);
  return std::move(b.out);
}

Result build_norm(Build& b) {
  const Shape& x = b.shape(0);
  if (x.empty()) return err("", "normalisation needs an input of rank 1 or more");
  const bool rms = b.schema.name == "rmsnorm";
  // layernorm: mean (1), variance (3), normalise (2), affine (2) per element; rmsnorm: square-sum (2), scale (1),
  // affine (1).
  b.out.layer.ops = (rms ? 4.0 : 8.0) * shape_elements(x);
  b.set_weights((rms ? 1.0 : 2.0) * static_cast<double>(x.back()));
  b.stream_inputs_to(x);
  return std::move(b.out);
}

Result build_softmax(Build& b) {
  // max, subtract, exp, sum, divide per element.
  b.out.layer.ops = 5.0 * b.in[0]->elements();
  b.stream_inputs_to(b.shape(0));
  return std::move(b.out);
}

Result build_embedding(Build& b) {
  const auto vocab = b.integer("num_embeddings");
  const auto dim = b.integer("embedding_dim");
  if (*vocab <= 0) return err("num_embeddings", "must be a positive integer");
  if (*dim <= 0) return err("embedding_dim", "must be a positive integer");
  const double lookups = b.in[0]->elements();
  b.set_weights(static_cast<double>(*vocab) * static_cast<double>(*dim));
  // Each lookup reads one row from a random place: it costs whole lines of the level serving it.
  const double row_bytes = tensor_bytes(static_cast<double>(*dim), b.wts());
  b.out.layer.weight_access = {lookups * row_bytes, lookups};
  Shape y = b.shape(0);
  y.push_back(*dim);
  b.stream_inputs_to(y);
  b.out.layer.summary = fmt::format("{} lookups of {}x{}", lookups, *vocab, *dim);
  return std::move(b.out);
}

Result build_attention(Build& b) {
  const Shape& q = b.shape(0);
  const Shape& k = b.shape(1);
  const Shape& v = b.shape(2);
  if (q.size() < 2 || k.size() < 2 || v.size() < 2)
    return err("", "attention needs q, k and v of shape [..., tokens, heads x head_dim]");
  const auto heads = *b.integer("heads");
  if (heads <= 0) return err("heads", "must be a positive integer");
  const auto kv_heads = b.integer("kv_heads").value_or(heads);
  if (kv_heads <= 0 || heads % kv_heads != 0)
    return err("kv_heads", fmt::format("must divide heads ({}), got {}", heads, kv_heads));
  if (q.back() % heads != 0)
    return err("heads", fmt::format("q has {} features, not a multiple of {} heads", q.back(), heads));
  const auto head_dim = b.integer("head_dim").value_or(q.back() / heads);
  if (head_dim * heads != q.back())
    return err("head_dim", fmt::format("heads x head_dim = {} but q has {} features", heads * head_dim, q.back()));
  if (k.back() != kv_heads * head_dim || v.back() != kv_heads * head_dim)
    return err("kv_heads", fmt::format("k and v need kv_heads x head_dim = {} features, got {} and {}",
                                       kv_heads * head_dim, k.back(), v.back()));
  const double batch = shape_elements(Shape(q.begin(), q.end() - 2));
  const double s = static_cast<double>(q[q.size() - 2]);
  const double s_new = static_cast<double>(k[k.size() - 2]);
  const bool cache = b.flag("kv_cache", false);
  const double context = static_cast<double>(b.integer("context").value_or(0));
  if (cache && !b.integer("context")) return err("context", "kv_cache needs the number of cached tokens (context)");
  if (context < 0) return err("context", "must not be negative");
  if (!cache && b.integer("context"))
    return err("context", "only meaningful with kv_cache: true (tokens already in the cache)");
  const double length = (cache ? context : 0.0) + s_new;  // keys attended per query
  double pairs = s * length;
  if (b.flag("causal", false)) pairs = s * (length - s) + s * (s + 1) / 2;  // query i sees keys up to its position
  const double h = static_cast<double>(heads);
  const double d = static_cast<double>(head_dim);
  auto& l = b.out.layer;
  l.ops = batch * h * pairs * (2 * d + 5 + 2 * d);  // QK^T, softmax, PV
  b.stream_inputs_to(q);
  const Precision kv_precision = b.precision("kv_precision").value_or(b.act());
  if (cache) {
    const double per_token = 2.0 * static_cast<double>(kv_heads) * d;  // K and V
    l.state_read = {tensor_bytes(batch * context * per_token, kv_precision), 0};
    l.state_write_bytes = tensor_bytes(batch * s_new * per_token, kv_precision);
    l.state_bytes = tensor_bytes(batch * length * per_token, kv_precision);
  }
  const bool fused = b.flag("fused", true);
  if (!fused) {
    // Scores written, read by softmax, probabilities written, read by PV: four passes over h x s x L.
    l.scratch_bytes = 4.0 * tensor_bytes(batch * h * pairs, b.act());
  }
  l.summary = fmt::format("{} heads ({} kv) x {}, {} queries over {} keys{}{}", heads, kv_heads, head_dim, s, length,
                          cache ? " (kv cache)" : "", fused ? "" : ", materialised");
  return std::move(b.out);
}

Result build_reshape(Build& b) {
  const Shape& x = b.shape(0);
  Shape y;
  if (b.schema.name == "flatten") {
    const auto axis = b.integer("axis").value_or(1);
    if (axis < 0 || static_cast<std::size_t>(axis) > x.size())
      return err("axis", fmt::format("must be between 0 and {}, got {}", x.size(), axis));
    y = {static_cast<std::int64_t>(shape_elements(Shape(x.begin(), x.begin() + axis))),
         static_cast<std::int64_t>(shape_elements(Shape(x.begin() + axis, x.end())))};
  } else {
    y = *b.integers("shape");
    int unknown = -1;
    double known = 1;
    for (std::size_t i = 0; i < y.size(); ++i) {
      if (y[i] == 0 && i < x.size()) y[i] = x[i];
      if (y[i] == -1) {
        if (unknown >= 0) return err("shape", "at most one dimension may be -1");
        unknown = static_cast<int>(i);
      } else if (y[i] <= 0) {
        return err("shape", fmt::format("dimensions must be positive (or -1 once), got {}", y[i]));
      } else {
        known *= static_cast<double>(y[i]);
      }
    }
    if (unknown >= 0) y[static_cast<std::size_t>(unknown)] = static_cast<std::int64_t>(shape_elements(x) / known);
    if (shape_elements(y) != shape_elements(x))
      return err("shape", fmt::format("{} has {} elements but the input {} has {} ({})", shape_to_string(y),
                                      shape_elements(y), b.in[0]->name, shape_elements(x), shape_to_string(x)));
  }
  b.out.output.shape = y;
  b.out.output.precision = b.in[0]->precision;
  b.out.layer.input_access.push_back({0, 0});  // free: only the shape changes
  b.out.layer.summary = shape_to_string(x) + " -> " + shape_to_string(y);
  return std::move(b.out);
}

Result build_copy(Build& b) {
  const std::string_view op = b.schema.name;
  Shape y = b.shape(0);
  if (op == "transpose") {
    auto perm = b.integers("perm");
    if (perm) {
      if (perm->size() != y.size())
        return err("perm", fmt::format("has {} entries for a rank-{} input", perm->size(), y.size()));
      Shape z(y.size());
      std::vector<bool> seen(y.size(), false);
      for (std::size_t i = 0; i < perm->size(); ++i) {
        const auto p = (*perm)[i];
        if (p < 0 || static_cast<std::size_t>(p) >= y.size() || seen[static_cast<std::size_t>(p)])
          return err("perm", "must be a permutation of the input's axes");
        seen[static_cast<std::size_t>(p)] = true;
        z[i] = y[static_cast<std::size_t>(p)];
      }
      y = z;
    } else {
      std::reverse(y.begin(), y.end());
    }
  } else if (op == "concat") {
    auto axis = b.integer("axis").value_or(1);
    if (axis < 0) axis += static_cast<std::int64_t>(y.size());
    if (axis < 0 || static_cast<std::size_t>(axis) >= y.size())
      return err("axis", fmt::format("out of range for a rank-{} input", y.size()));
    const auto ax = static_cast<std::size_t>(axis);
    y[ax] = 0;
    for (const auto* t : b.in) {
      if (t->shape.size() != b.shape(0).size()) return err("", "concat inputs must have the same rank");
      for (std::size_t i = 0; i < t->shape.size(); ++i)
        if (i != ax && t->shape[i] != b.shape(0)[i])
          return err("", fmt::format("concat inputs differ outside axis {}: {} and {}", ax, shape_to_string(b.shape(0)),
                                     shape_to_string(t->shape)));
      y[ax] += t->shape[ax];
    }
  } else if (op == "pad") {
    if (auto e = require_rank(b, 0, 4, "NCHW")) return *e;
    auto pad = padding_param(b, "pads", y[2], y[3], {1, 1}, {1, 1}, {1, 1});
    if (is_error(pad)) return std::get<OpError>(pad);
    const auto p = std::get<0>(pad);
    y[2] += p[0] + p[2];
    y[3] += p[1] + p[3];
  } else if (op == "slice") {
    y = *b.integers("shape");
    if (y.size() != b.shape(0).size()) return err("shape", "must have the input's rank");
    for (std::size_t i = 0; i < y.size(); ++i)
      if (y[i] <= 0 || y[i] > b.shape(0)[i])
        return err("shape", fmt::format("must fit inside the input {}", shape_to_string(b.shape(0))));
  }
  b.stream_inputs_to(y);
  if (op == "slice") b.out.layer.input_access[0].bytes = tensor_bytes(shape_elements(y), b.in[0]->precision);
  b.out.layer.summary = shape_to_string(y);
  return std::move(b.out);
}

Result build_resize(Build& b) {
  if (auto e = require_rank(b, 0, 4, "NCHW")) return *e;
  Shape y = b.shape(0);
  if (auto size = b.integers("size")) {
    if (size->size() != 2) return err("size", "expected [height, width]");
    y[2] = (*size)[0];
    y[3] = (*size)[1];
  } else {
    auto scale = pair_param(b, "scale", 0, 1);
    if (is_error(scale)) return std::get<OpError>(scale);
    if (!b.integers("scale")) return err("", "resize needs scale or size");
    y[2] *= std::get<0>(scale)[0];
    y[3] *= std::get<0>(scale)[1];
  }
  const std::string mode = b.text("mode").value_or("nearest");
  if (mode != "nearest" && mode != "linear")
    return err("mode", fmt::format("expected one of \"nearest\", \"linear\", got \"{}\"", mode));
  b.out.layer.ops = (mode == "linear" ? 7.0 : 0.0) * shape_elements(y);  // 4 multiplies + 3 adds per output
  b.stream_inputs_to(y);
  b.out.layer.summary = fmt::format("{} -> {} ({})", shape_to_string(b.shape(0)), shape_to_string(y), mode);
  return std::move(b.out);
}

Result build_custom(Build& b) {
  const double ops = b.number("ops").value_or(0);
  if (ops < 0) return err("ops", "must not be negative");
  Shape y = b.integers("output_shape").value_or(b.in.empty() ? Shape{1} : b.shape(0));
  for (auto d : y)
    if (d <= 0) return err("output_shape", "dimensions must be positive");
  b.out.layer.ops = ops;
  const double weights = static_cast<double>(b.integer("weights").value_or(0));
  if (weights < 0) return err("weights", "must not be negative");
  if (weights > 0) b.set_weights(weights);
  b.stream_inputs_to(y);
  if (auto text = b.text("class")) {
    auto c = parse_op_class(*text);
    if (!c)
      return err("class",
                 fmt::format("\"{}\" is not an op class; allowed: {}", *text, fmt::join(op_class_names(), ", ")));
    b.out.layer.op_class = *c;
  }
  b.out.layer.summary = fmt::format("{} ops", ops);
  return std::move(b.out);
}

using Builder = Result (*)(Build&);

Builder builder_for(OpKind kind) {
  switch (kind) {
    case OpKind::linear: return build_linear;
    case OpKind::matmul: return build_matmul;
    case OpKind::conv2d: return build_conv2d;
    case OpKind::pool: return build_pool;
    case OpKind::global_pool: return build_global_pool;
    case OpKind::elementwise: return build_elementwise;
    case OpKind::activation: return build_activation;
    case OpKind::batchnorm: return build_batchnorm;
    case OpKind::norm: return build_norm;
    case OpKind::softmax: return build_softmax;
    case OpKind::embedding: return build_embedding;
    case OpKind::attention: return build_attention;
    case OpKind::reshape: return build_reshape;
    case OpKind::copy: return build_copy;
    case OpKind::resize: return build_resize;
    case OpKind::custom: return build_custom;
  }
  return build_custom;
}

const ParamSchema kBias{"bias", ParamType::boolean, "add a bias per output (default false)"};
const ParamSchema kWeightsFrom{"weights_from", ParamType::text,
                               "use the weights of this earlier layer (tied weights: read here, stored once)"};
const ParamSchema kOpsPerElement{"ops_per_element", ParamType::number, "override the operations per output element"};
// Sparse weights (an imported TFLite tensor with sparsity metadata): the file stores fewer bytes than the layer reads.
const ParamSchema kSparseZeros{"sparse_zeros", ParamType::integer,
                               "weight elements a sparse tensor leaves out of the file (its zeros): not in the stored "
                               "weight bytes; still read every inference, dense"};
const ParamSchema kIndexBytes{"index_bytes", ParamType::integer,
                              "bytes of a sparse tensor's index arrays, stored with the weights (default 0)"};

/// sparse_zeros and index_bytes: the stored weight bytes are those of the elements the file keeps, plus its index
/// arrays; what the layer reads per inference (weight_access) stays the dense weights.
std::optional<OpError> apply_sparse_storage(const OpParams& params, LayerSpec& l) {
  const auto zeros_it = params.find("sparse_zeros"), index_it = params.find("index_bytes");
  if (zeros_it == params.end() && index_it == params.end()) return std::nullopt;
  const char* key = zeros_it != params.end() ? "sparse_zeros" : "index_bytes";
  if (l.params_count <= 0) return OpError{key, "the layer has no weights of its own to store sparse"};
  const auto zeros = zeros_it == params.end() ? 0 : std::get<std::int64_t>(zeros_it->second);
  const auto index = index_it == params.end() ? 0 : std::get<std::int64_t>(index_it->second);
  if (zeros < 0 || static_cast<double>(zeros) > l.params_count)
    return OpError{"sparse_zeros",
                   fmt::format("must be between 0 and the layer's {} weight elements, got {}", l.params_count, zeros)};
  if (index < 0) return OpError{"index_bytes", fmt::format("must not be negative, got {}", index)};
  l.weight_bytes =
      tensor_bytes(l.params_count - static_cast<double>(zeros), l.precision.weights) + static_cast<double>(index);
  return std::nullopt;
}

std::vector<OpSchema> make_catalogue() {
  std::vector<OpSchema> ops;
  ops.push_back({"linear",
                 OpKind::linear,
                 "fully connected: input [..., k] x weights [k, n]",
                 {{"out_features", ParamType::integer, "n, the output features", true},
                  kBias,
                  {"m", ParamType::integer, "check: rows of the input"},
                  {"k", ParamType::integer, "check: input features"},
                  kWeightsFrom,
                  kSparseZeros,
                  kIndexBytes},
                 1,
                 1});
  ops.push_back({"matmul",
                 OpKind::matmul,
                 "matrix multiply: with n, input [..., m, k] x weights [k, n]; with two inputs, A x B of activations",
                 {{"n", ParamType::integer, "output columns of the weight operand (one input)"},
                  {"m", ParamType::integer, "check: rows of the input"},
                  {"k", ParamType::integer, "check: inner dimension"},
                  {"transpose_b", ParamType::boolean, "second input is [..., n, k] (two inputs)"},
                  kBias,
                  kWeightsFrom,
                  kSparseZeros,
                  kIndexBytes},
                 1,
                 2});
  ops.push_back({"conv2d",
                 OpKind::conv2d,
                 "2-D convolution over NCHW, incl. grouped and depthwise",
                 {{"out_channels", ParamType::integer, "output channels (default: input channels when depthwise)"},
                  {"kernel", ParamType::integers, "kernel size, k or [kh, kw]", true},
                  {"stride", ParamType::integers, "stride (default 1)"},
                  {"padding", ParamType::integers, "padding: p, [ph, pw], [t, l, b, r], \"same\" or \"valid\""},
                  {"dilation", ParamType::integers, "dilation (default 1)"},
                  {"groups", ParamType::integer, "channel groups (default 1)"},
                  {"depthwise", ParamType::boolean, "groups = input channels"},
                  kBias,
                  kSparseZeros,
                  kIndexBytes},
                 1,
                 1});
  for (std::string_view name : {"maxpool", "avgpool"}) {
    ops.push_back({name,
                   OpKind::pool,
                   "pooling window over NCHW",
                   {{"kernel", ParamType::integers, "window, k or [kh, kw]", true},
                    {"stride", ParamType::integers, "stride (default: the window)"},
                    {"padding", ParamType::integers, "padding: p, [ph, pw], [t, l, b, r], \"same\" or \"valid\""}},
                   1,
                   1});
  }
  for (std::string_view name : {"global_avgpool", "global_maxpool"})
    ops.push_back({name, OpKind::global_pool, "pool every spatial position to 1x1", {}, 1, 1});
  for (std::string_view name : {"add", "sub", "mul", "div", "max", "min", "pow"})
    ops.push_back({name,
                   OpKind::elementwise,
                   "elementwise over broadcast inputs: inputs-1 ops per element",
                   {kOpsPerElement},
                   2,
                   -1});
  ops.push_back({"elementwise",
                 OpKind::elementwise,
                 "generic elementwise op over broadcast inputs",
                 {{"ops_per_element", ParamType::number, "operations per output element", true}},
                 1,
                 -1});
  for (std::string_view name : {"relu", "relu6", "leaky_relu", "clip", "sigmoid", "hardsigmoid", "tanh", "gelu", "silu",
                                "hardswish", "exp", "log", "sqrt", "abs", "neg", "reciprocal", "erf"})
    ops.push_back({name, OpKind::activation, "unary activation", {kOpsPerElement}, 1, 1});
  ops.push_back({"activation",
                 OpKind::activation,
                 "generic unary op",
                 {{"ops_per_element", ParamType::number, "operations per element", true}},
                 1,
                 1});
  ops.push_back({"cast",
                 OpKind::activation,
                 "convert precision (no arithmetic)",
                 {{"to", ParamType::precision, "output precision", true}},
                 1,
                 1});
  ops.push_back(
      {"batchnorm", OpKind::batchnorm, "inference batch normalisation (scale and shift per channel)", {}, 1, 1});
  ops.push_back({"layernorm", OpKind::norm, "layer normalisation over the last axis", {}, 1, 1});
  ops.push_back({"rmsnorm", OpKind::norm, "RMS normalisation over the last axis", {}, 1, 1});
  ops.push_back({"softmax", OpKind::softmax, "softmax over the last axis", {}, 1, 1});
  ops.push_back({"embedding",
                 OpKind::embedding,
                 "gather rows of a weight table (random access: whole lines)",
                 {{"num_embeddings", ParamType::integer, "rows of the table", true},
                  {"embedding_dim", ParamType::integer, "row length", true},
                  kSparseZeros,
                  kIndexBytes},
                 1,
                 1});
  ops.push_back({"attention",
                 OpKind::attention,
                 "scaled dot-product attention over q, k, v",
                 {{"heads", ParamType::integer, "query heads", true},
                  {"kv_heads", ParamType::integer, "key/value heads (grouped-query attention; default heads)"},
                  {"head_dim", ParamType::integer, "per-head dimension (default q features / heads)"},
                  {"fused", ParamType::boolean, "never materialise the score matrix (default true)"},
                  {"causal", ParamType::boolean, "each query attends only to earlier keys (default false)"},
                  {"kv_cache", ParamType::boolean, "k, v are appended to a cache read every step (decode)"},
                  {"context", ParamType::integer, "tokens already in the KV cache"},
                  {"kv_precision", ParamType::precision, "precision of the KV cache (default activations)"}},
                 3,
                 3});
  ops.push_back({"reshape",
                 OpKind::reshape,
                 "change the shape, no data moved",
                 {{"shape", ParamType::integers,
                   "new shape; -1 once for the rest, 0 keeps a dimension; [] for a scalar", true, true}},
                 1,
                 1});
  ops.push_back({"flatten",
                 OpKind::reshape,
                 "flatten to 2-D at an axis, no data moved",
                 {{"axis", ParamType::integer, "first flattened axis (default 1)"}},
                 1,
                 1});
  ops.push_back({"transpose",
                 OpKind::copy,
                 "permute axes (a copy)",
                 {{"perm", ParamType::integers, "permutation (default reverse)"}},
                 1,
                 1});
  ops.push_back({"concat",
                 OpKind::copy,
                 "concatenate along an axis (a copy)",
                 {{"axis", ParamType::integer, "axis (default 1)"}},
                 2,
                 -1});
  ops.push_back({"pad",
                 OpKind::copy,
                 "pad the spatial dimensions of NCHW (a copy)",
                 {{"pads", ParamType::integers, "p, [ph, pw] or [t, l, b, r]", true}},
                 1,
                 1});
  ops.push_back({"slice",
                 OpKind::copy,
                 "take a part of the input (reads only that part)",
                 {{"shape", ParamType::integers, "output shape", true}},
                 1,
                 1});
  ops.push_back({"copy", OpKind::copy, "an explicit copy", {}, 1, 1});
  ops.push_back({"resize",
                 OpKind::resize,
                 "spatial resize of NCHW",
                 {{"scale", ParamType::integers, "integer scale, s or [sh, sw]"},
                  {"size", ParamType::integers, "output [height, width]"},
                  {"mode", ParamType::text, "nearest (default) or linear"}},
                 1,
                 1});
  ops.push_back(
      {"custom",
       OpKind::custom,
       "stated work: reads its inputs, writes its output",
       {{"ops", ParamType::number, "operations"},
        {"output_shape", ParamType::integers, "output shape (default: first input's; [] for a scalar)", false, true},
        {"weights", ParamType::integer, "weight elements"},
        {"class", ParamType::text, "op class its arithmetic runs at (default data_movement)"},
        kSparseZeros,
        kIndexBytes},
       0,
       -1});
  return ops;
}

}  // namespace

const std::vector<OpSchema>& op_catalogue() {
  static const std::vector<OpSchema> catalogue = make_catalogue();
  return catalogue;
}

const OpSchema* find_op(std::string_view name) {
  for (const auto& s : op_catalogue())
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<std::string> op_names() {
  std::vector<std::string> out;
  for (const auto& s : op_catalogue()) out.emplace_back(s.name);
  return out;
}

std::variant<BuiltLayer, OpError> build_layer(const OpSchema& schema, const std::string& name, const OpParams& params,
                                              const std::vector<const TensorSpec*>& inputs, LayerPrecision precision) {
  const int n = static_cast<int>(inputs.size());
  if (n < schema.min_inputs || (schema.max_inputs >= 0 && n > schema.max_inputs)) {
    std::string want = schema.max_inputs < 0 ? fmt::format("at least {}", schema.min_inputs)
                       : schema.min_inputs == schema.max_inputs
                           ? fmt::format("{}", schema.min_inputs)
                           : fmt::format("{} to {}", schema.min_inputs, schema.max_inputs);
    return OpError{"inputs", fmt::format("{} takes {} input{}, got {}", schema.name, want,
                                         schema.max_inputs == 1 && schema.min_inputs == 1 ? "" : "s", n)};
  }
  for (const auto& p : schema.params) {
    if (p.required && params.find(p.key) == params.end())
      return OpError{std::string(p.key), fmt::format("{} needs {} ({})", schema.name, p.key, p.description)};
  }
  Build b{schema, params, inputs, {}};
  auto& l = b.out.layer;
  l.name = name;
  l.op = std::string(schema.name);
  l.kind = schema.kind;
  l.op_class = default_op_class(schema.kind);
  l.params = params;
  l.precision = precision;
  b.out.output.name = name;
  Result r = builder_for(schema.kind)(b);
  if (auto* built = std::get_if<BuiltLayer>(&r)) {
    // Counts must stay finite and exact enough to be meaningful: 2^53 elements is far beyond any real tensor.
    constexpr double kMaxElements = 9007199254740992.0;
    if (built->output.elements() > kMaxElements)
      return OpError{"",
                     fmt::format("the output {} has more than 2^53 elements", shape_to_string(built->output.shape))};
    if (!std::isfinite(built->layer.ops) || built->layer.ops > 1e30) {
      const bool per_element = params.find("ops_per_element") != params.end();
      return OpError{per_element ? "ops_per_element" : (params.find("ops") != params.end() ? "ops" : ""),
                     "makes the layer's operation count overflow"};
    }
    if (auto e = apply_sparse_storage(params, built->layer)) return *e;
    FRAMESIM_ASSERT(built->layer.input_access.size() == inputs.size(), "one access per input");
    FRAMESIM_ASSERT(built->layer.ops >= 0 && built->layer.weight_bytes >= 0, "counts are non-negative");
  }
  return r;
}

NetworkSpec with_precision(const NetworkSpec& net, const LayerPrecision& precision) {
  NetworkSpec out = net;
  for (int t : out.inputs) {
    auto& tensor = out.tensors[static_cast<std::size_t>(t)];
    if (is_float(tensor.precision) || tensor.precision == Precision::int8 || tensor.precision == Precision::int4)
      tensor.precision = precision.activations;
  }
  for (std::size_t i = 0; i < out.layers.size(); ++i) {
    LayerSpec& layer = out.layers[i];
    std::vector<const TensorSpec*> inputs;
    for (int t : layer.inputs) inputs.push_back(&out.tensors[static_cast<std::size_t>(t)]);
    const OpSchema* schema = find_op(layer.op);
    FRAMESIM_ASSERT(schema != nullptr, "layers are built from catalogue ops");
    OpParams params = layer.params;
    if (auto it = params.find("kv_precision"); it != params.end()) it->second = precision.activations;
    auto result = build_layer(*schema, layer.name, params, inputs, precision);
    FRAMESIM_ASSERT(std::holds_alternative<BuiltLayer>(result), "a valid layer stays valid at another precision");
    auto& built = std::get<BuiltLayer>(result);
    built.layer.inputs = layer.inputs;
    built.layer.output = layer.output;
    built.layer.source = layer.source;
    TensorSpec& output = out.tensors[static_cast<std::size_t>(layer.output)];
    output.precision = built.output.precision;
    layer = std::move(built.layer);
  }
  return out;
}

}  // namespace framesim::model
