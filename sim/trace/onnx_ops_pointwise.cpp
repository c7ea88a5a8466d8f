// ONNX import, the costers of elementwise ops (arithmetic, comparisons, Clip, PRelu) and of normalisation
// (BatchNormalization, InstanceNormalization, LayerNormalization).
#include <algorithm>

#include "trace/onnx_importer.hpp"

namespace framesim::trace::onnx_detail {

/// n-ary elementwise. Constant operands of one element are immediates; larger ones are weights (custom).
void OnnxImporter::elementwise(const Ctx& c, const std::vector<Operand>& ops, const std::string& op,
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

void OnnxImporter::clip(const Ctx& c, const std::vector<Operand>& ops) {
  std::optional<double> lo, hi;
  bool known = true;
  if (c.node.input_size() > 1) {  // opset 11+: min and max are inputs
    for (int i : {1, 2}) {
      const Operand o = operand(c, i);
      if (!o.present()) continue;
      if (o.cst() && o.c->has_values && o.c->values.size() == 1) (i == 1 ? lo : hi) = o.c->values[0];
      else known = false;
    }
  } else {  // before opset 11: attributes
    if (attr(c, "min")) lo = attr_float(c, "min", 0);
    if (attr(c, "max")) hi = attr_float(c, "max", 0);
  }
  const bool unbounded_above = !hi || std::isinf(*hi) || *hi >= 3.4e38;
  std::string op = "clip";
  if (known && lo && *lo == 0.0 && hi && *hi == 6.0) op = "relu6";
  else if (known && lo && *lo == 0.0 && unbounded_above) op = "relu";
  single(c, ops, op, {});
}

void OnnxImporter::prelu(const Ctx& c, const std::vector<Operand>& ops) {
  const Operand slope = operand(c, 1);
  if (slope.cst() && weight_elements(*slope.c) == 0) return single(c, ops, "leaky_relu", {});
  elementwise(c, ops, "elementwise", 2.0);  // multiply and max per element; the slopes are weights
}

void OnnxImporter::batchnorm(const Ctx& c, const std::vector<Operand>& ops) {
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

void OnnxImporter::normalization(const Ctx& c, const std::vector<Operand>& ops, double per_element,
                                 const std::string& what) {
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

void OnnxImporter::layernorm(const Ctx& c, const std::vector<Operand>& ops) {
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

}  // namespace framesim::trace::onnx_detail
