// The builders of the operation catalogue, private to model/: what one builder sees (`Build`), the parameter
// helpers they share, and one builder per op kind. ops_compute.cpp (linear, matmul, conv2d, pooling, attention),
// ops_pointwise.cpp (elementwise, activations, normalisation, softmax) and ops_movement.cpp (embedding, reshape,
// copies, resize, custom) define them; ops.cpp dispatches to them by kind (build_layer).
// Conventions: a multiply-accumulate is two operations; bias is counted only when asked for; a transcendental
// function (exp, tanh, erf) counts as one operation; every layer reads each of its inputs once and writes its
// output once (the ideal traffic of the seed's worked examples).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/network.hpp"

namespace framesim::model::op_build {

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

inline OpError err(std::string key, std::string message) { return OpError{std::move(key), std::move(message)}; }

/// A per-dimension parameter given as one value or one per spatial dimension (2 for conv2d), each >= `minimum`.
std::variant<std::array<std::int64_t, 2>, OpError> pair_param(const Build& b, std::string_view key,
                                                              std::int64_t fallback, std::int64_t minimum);
/// Padding [top, left, bottom, right] from p, [ph, pw], [t, l, b, r], "same" or "valid" for an h x w input.
std::variant<std::array<std::int64_t, 4>, OpError> padding_param(const Build& b, std::string_view key, std::int64_t h,
                                                                 std::int64_t w, std::array<std::int64_t, 2> kernel,
                                                                 std::array<std::int64_t, 2> stride,
                                                                 std::array<std::int64_t, 2> dilation);
/// An error unless input `input` has rank `rank` (`what` names the layout, "NCHW").
std::optional<OpError> require_rank(const Build& b, std::size_t input, std::size_t rank, std::string_view what);

template <class T>
bool is_error(const std::variant<T, OpError>& v) {
  return std::holds_alternative<OpError>(v);
}

// ops_compute.cpp
Result build_linear(Build& b);
Result build_matmul(Build& b);
Result build_conv2d(Build& b);
Result build_pool(Build& b);
Result build_global_pool(Build& b);
Result build_attention(Build& b);
// ops_pointwise.cpp
Result build_elementwise(Build& b);
Result build_activation(Build& b);
Result build_batchnorm(Build& b);
Result build_norm(Build& b);
Result build_softmax(Build& b);
// ops_movement.cpp
Result build_embedding(Build& b);
Result build_reshape(Build& b);
Result build_copy(Build& b);
Result build_resize(Build& b);
Result build_custom(Build& b);

}  // namespace framesim::model::op_build
