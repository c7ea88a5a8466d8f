// From an op of the catalogue and its inputs to a layer: the checks every op shares (inputs, required
// parameters, finite counts), the dispatch to the op's builder (op_build.hpp), and a network rebuilt at another
// precision.
#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "core/error.hpp"
#include "model/op_build.hpp"

namespace framesim::model {

namespace op_build {

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

}  // namespace op_build

namespace {

using op_build::Build;
using op_build::Result;

using Builder = Result (*)(Build&);

Builder builder_for(OpKind kind) {
  switch (kind) {
    case OpKind::linear: return op_build::build_linear;
    case OpKind::matmul: return op_build::build_matmul;
    case OpKind::conv2d: return op_build::build_conv2d;
    case OpKind::pool: return op_build::build_pool;
    case OpKind::global_pool: return op_build::build_global_pool;
    case OpKind::elementwise: return op_build::build_elementwise;
    case OpKind::activation: return op_build::build_activation;
    case OpKind::batchnorm: return op_build::build_batchnorm;
    case OpKind::norm: return op_build::build_norm;
    case OpKind::softmax: return op_build::build_softmax;
    case OpKind::embedding: return op_build::build_embedding;
    case OpKind::attention: return op_build::build_attention;
    case OpKind::reshape: return op_build::build_reshape;
    case OpKind::copy: return op_build::build_copy;
    case OpKind::resize: return op_build::build_resize;
    case OpKind::custom: return op_build::build_custom;
  }
  return op_build::build_custom;
}

/// sparse_zeros and index_bytes (an imported sparse tensor): the stored weight bytes are those of the elements the
/// file keeps, plus its index arrays; what the layer reads per inference (weight_access) stays the dense weights.
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

}  // namespace

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