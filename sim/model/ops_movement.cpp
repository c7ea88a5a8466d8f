// The ops that move data: embedding gathers, reshapes (free), copies (transpose, concat, pad, slice), resize,
// and custom layers of stated work (op_build.hpp).
#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "model/op_build.hpp"

namespace framesim::model::op_build {

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

}  // namespace framesim::model::op_build
