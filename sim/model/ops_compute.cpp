// The ops with a reduction inside: linear, matmul, conv2d, pooling and attention (op_build.hpp).
#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "model/op_build.hpp"

namespace framesim::model::op_build {

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

}  // namespace framesim::model::op_build
