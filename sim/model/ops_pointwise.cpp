// The pointwise ops: elementwise over broadcast inputs, activations, batchnorm, layer/RMS norm, softmax
// (op_build.hpp).
#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "model/op_build.hpp"

namespace framesim::model::op_build {

namespace {

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

}  // namespace

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

}  // namespace framesim::model::op_build
