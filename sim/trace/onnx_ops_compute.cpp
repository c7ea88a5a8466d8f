// ONNX import, the costers of compute-heavy ops: convolution (Conv, ConvInteger, QLinearConv, ConvTranspose),
// matrix products (Gemm, MatMul and their integer forms), pooling and reductions.
#include <algorithm>

#include "trace/onnx_importer.hpp"

namespace framesim::trace::onnx_detail {

OnnxImporter::ConvGeometry OnnxImporter::conv_geometry(const Ctx& c, const Shape& x, const std::optional<Shape>& w) {
  ConvGeometry g;
  const std::size_t spatial = x.size() >= 2 ? x.size() - 2 : 0;
  if (auto k = attr_ints(c, "kernel_shape")) g.kernel = *k;
  else if (w && w->size() == spatial + 2) g.kernel = Shape(w->begin() + 2, w->end());
  else g.kernel = Shape(spatial, 1);
  g.stride = attr_ints(c, "strides").value_or(Shape(spatial, 1));
  g.dilation = attr_ints(c, "dilations").value_or(Shape(spatial, 1));
  g.groups = attr_int(c, "group", 1);
  g.pads = attr_ints(c, "pads").value_or(std::vector<std::int64_t>(2 * spatial, 0));
  g.auto_pad = attr_string(c, "auto_pad", "NOTSET");
  return g;
}

/// framesim padding [t, l, b, r] for a 2-D window, from ONNX's pads or auto_pad.
std::optional<model::ParamValue> OnnxImporter::padding_2d(const ConvGeometry& g, const Shape& x) const {
  if (g.kernel.size() != 2 || g.stride.size() != 2 || g.dilation.size() != 2) return std::nullopt;
  if (g.auto_pad == "SAME_UPPER") return model::ParamValue{std::string("same")};
  if (g.auto_pad == "VALID") return model::ParamValue{std::vector<std::int64_t>{0, 0, 0, 0}};
  if (g.auto_pad == "SAME_LOWER") {
    std::int64_t total[2];
    for (int d = 0; d < 2; ++d) {
      const auto size = x[static_cast<std::size_t>(d) + 2];
      const auto s = g.stride[static_cast<std::size_t>(d)];
      const auto out = (size + s - 1) / s;
      total[d] = std::max<std::int64_t>(
          0, (out - 1) * s + g.dilation[static_cast<std::size_t>(d)] * (g.kernel[static_cast<std::size_t>(d)] - 1) + 1 -
                 size);
    }
    // The odd pixel goes at the start (top, left).
    return model::ParamValue{
        std::vector<std::int64_t>{total[0] - total[0] / 2, total[1] - total[1] / 2, total[0] / 2, total[1] / 2}};
  }
  if (g.pads.size() != 4) return std::nullopt;
  // ONNX: [x1_begin, x2_begin, x1_end, x2_end] = [top, left, bottom, right], framesim's order.
  return model::ParamValue{g.pads};
}

void OnnxImporter::conv(const Ctx& c, const std::vector<Operand>& ops) {
  const std::string& op = c.node.op_type();
  const bool qlinear = op == "QLinearConv";
  const bool integer = qlinear || op == "ConvInteger";
  const Operand& x = ops.at(0);
  const Operand w = operand(c, qlinear ? 3 : 1);
  const Operand b = operand(c, qlinear ? 8 : op == "Conv" ? 2 : 99);
  if (!x.act()) return unknown(c, ops);
  const Shape& xs = tensor(x.tensor).shape;
  const Shape ys = require_shape(c.node.output(0), c.where);
  const std::optional<Shape> ws = w.present() ? std::optional<Shape>(shape_of(w)) : std::nullopt;
  const ConvGeometry g = conv_geometry(c, xs, ws);
  const Precision out = out_precision(c, 0, ops);
  const std::optional<Precision> compute = integer ? std::optional<Precision>(Precision::int8) : std::nullopt;
  // The formula, for custom: 2 x N x Cout x spatial_out x Cin/groups x prod(kernel) (+ one add per output for bias).
  double ops_count = 0;
  if (xs.size() >= 2 && ys.size() >= 2 && g.groups > 0) {
    double k = 1;
    for (auto d : g.kernel) k *= static_cast<double>(d);
    const auto channels_per_group = xs[1] / g.groups;  // ONNX: input channels = group x weight channels
    ops_count = 2.0 * model::shape_elements(ys) * static_cast<double>(channels_per_group) * k +
                (b.present() ? model::shape_elements(ys) : 0.0);
  }
  const auto padding = xs.size() == 4 ? padding_2d(g, xs) : std::nullopt;
  if (w.cst() && (!b.present() || b.cst()) && padding && ws && ws->size() == 4) {
    OpParams p{{"out_channels", (*ws)[0]}, {"kernel", g.kernel}, {"stride", g.stride},
               {"dilation", g.dilation},   {"groups", g.groups}, {"padding", *padding}};
    if (b.present()) p["bias"] = true;
    const Precision wp = stored(*w.c);
    emit(c,
         Spec{"conv2d",
              std::move(p),
              {x.tensor},
              precision_for(ops, out, wp, compute),
              c.node.output(0),
              "",
              std::nullopt},
         ops_count, constant_weights({w, b}));
    return extra_outputs(c, ops);
  }
  if (!w.cst())
    note(fmt::format("{}: the weights are not an initializer; costed as custom with the convolution formula "
                     "(2 x N x Cout x spatial_out x Cin/groups x kernel), reading them as an activation",
                     op),
         c);
  else
    note(fmt::format("{} that framesim's conv2d cannot express (rank {}, its padding, or a bias that is not an "
                     "initializer): costed as custom with the "
                     "convolution formula",
                     op, xs.size()),
         c);
  const auto wprec = weights_precision(ops);
  emit_custom(c, c.node.output(0), activations(ops), ops_count, constant_weights(ops),
              precision_for(ops, out, wprec.value_or(out), compute), "", std::nullopt, "conv");
  extra_outputs(c, ops);
}

void OnnxImporter::conv_transpose(const Ctx& c, const std::vector<Operand>& ops) {
  const Operand& x = ops.at(0);
  const Operand w = operand(c, 1);
  const Operand b = operand(c, 2);
  if (!x.act() || !w.present()) return unknown(c, ops);
  const Shape& xs = tensor(x.tensor).shape;
  const Shape& ws = shape_of(w);  // [Cin, Cout/groups, k...]
  const Shape ys = require_shape(c.node.output(0), c.where);
  // Every input element is multiplied into Cout/groups x prod(kernel) outputs.
  double k = 1;
  for (std::size_t i = 2; i < ws.size(); ++i) k *= static_cast<double>(ws[i]);
  const double per_input = ws.size() >= 2 ? static_cast<double>(ws[1]) * k : 0.0;
  const double count = 2.0 * model::shape_elements(xs) * per_input + (b.present() ? model::shape_elements(ys) : 0.0);
  note(
      "ConvTranspose (framesim has none): costed as custom with 2 x N x Cin x spatial_in x Cout/groups x kernel "
      "ops, the weights as weights",
      c);
  const Precision out = out_precision(c, 0, ops);
  emit_custom(c, c.node.output(0), activations(ops), count, constant_weights(ops),
              precision_for(ops, out, weights_precision(ops).value_or(out)), "", std::nullopt, "conv");
}

void OnnxImporter::gemm(const Ctx& c, const std::vector<Operand>& ops) {
  const Operand& a = ops.at(0);
  const Operand b = operand(c, 1);
  const Operand bias = operand(c, 2);
  const bool ta = attr_int(c, "transA", 0) != 0, tb = attr_int(c, "transB", 0) != 0;
  const Shape ys = require_shape(c.node.output(0), c.where);
  const Precision out = out_precision(c, 0, ops);
  if (!a.act() || !b.present()) return unknown(c, ops);
  const Shape& as = tensor(a.tensor).shape;
  const Shape& bs = shape_of(b);
  if (as.size() != 2 || bs.size() != 2) return unknown(c, ops);
  const double m = static_cast<double>(ta ? as[1] : as[0]), k = static_cast<double>(ta ? as[0] : as[1]);
  const std::int64_t n = tb ? bs[0] : bs[1];
  // alpha and beta scale the product and the bias: scalars a runtime folds into the weights.
  const double formula = 2.0 * m * k * static_cast<double>(n) + (bias.present() ? m * static_cast<double>(n) : 0.0);
  const bool vector_bias = !bias.present() || (bias.cst() && bias.c->shape &&
                                               model::shape_elements(*bias.c->shape) == static_cast<double>(n));
  if (!ta && b.cst() && vector_bias) {
    OpParams p{{"out_features", n}};
    if (bias.present()) p["bias"] = true;
    emit(c,
         Spec{"linear",
              std::move(p),
              {a.tensor},
              precision_for(ops, out, stored(*b.c)),
              c.node.output(0),
              "",
              std::nullopt},
         formula, constant_weights(ops));
    return;
  }
  if (!ta && b.act() && !bias.present()) {
    OpParams p;
    if (tb) p["transpose_b"] = true;
    emit(c,
         Spec{"matmul",
              std::move(p),
              {a.tensor, b.tensor},
              precision_for(ops, out, std::nullopt),
              c.node.output(0),
              "",
              std::nullopt},
         formula);
    return;
  }
  note(
      "Gemm with transA, activation weights with a bias, or a matrix bias: costed as custom with 2 x M x K x N "
      "(+ M x N for the bias) ops",
      c);
  emit_custom(c, c.node.output(0), activations(ops), formula, constant_weights(ops),
              precision_for(ops, out, weights_precision(ops).value_or(out)));
}

void OnnxImporter::matmul(const Ctx& c, const std::vector<Operand>& ops) {
  const std::string& op = c.node.op_type();
  const bool qlinear = op == "QLinearMatMul";
  const bool integer = qlinear || op == "MatMulInteger";
  const Operand& a = ops.at(0);
  const Operand b = operand(c, qlinear ? 3 : 1);
  if (!a.present() || !b.present()) return unknown(c, ops);
  const Shape ys = require_shape(c.node.output(0), c.where);
  const Shape& as = shape_of(a);
  const Shape& bs = shape_of(b);
  const Precision out = out_precision(c, 0, ops);
  const std::optional<Precision> compute = integer ? std::optional<Precision>(Precision::int8) : std::nullopt;
  // 2 x K per output element, whatever the batching (numpy matmul semantics).
  const double formula = 2.0 * model::shape_elements(ys) * static_cast<double>(as.empty() ? 1 : as.back());
  if (a.act() && b.cst() && bs.size() == 2) {
    emit(c,
         Spec{"matmul",
              {{"n", bs[1]}},
              {a.tensor},
              precision_for(ops, out, stored(*b.c), compute),
              c.node.output(0),
              "",
              std::nullopt},
         formula, weight_elements(*b.c));
    return;
  }
  if (a.act() && b.act() && as.size() >= 2 && bs.size() >= 2) {
    emit(c,
         Spec{"matmul",
              {},
              {a.tensor, b.tensor},
              precision_for(ops, out, std::nullopt, compute),
              c.node.output(0),
              "",
              std::nullopt},
         formula);
    return;
  }
  note(fmt::format("{} with a constant first operand, batched constant weights or a rank-1 operand: costed as "
                   "custom with 2 x output elements x K ops",
                   op),
       c);
  emit_custom(c, c.node.output(0), activations(ops), formula, constant_weights(ops),
              precision_for(ops, out, weights_precision(ops).value_or(out), compute));
}

void OnnxImporter::pool(const Ctx& c, const std::vector<Operand>& ops) {
  const std::string& op = c.node.op_type();
  const Operand& x = ops.at(0);
  if (!x.act()) return unknown(c, ops);
  const Shape& xs = tensor(x.tensor).shape;
  const Shape ys = require_shape(c.node.output(0), c.where);
  ConvGeometry g = conv_geometry(c, xs, std::nullopt);
  double window = 1;
  for (auto d : g.kernel) window *= static_cast<double>(d);
  const double formula = model::shape_elements(ys) * window;
  const Precision out = out_precision(c, 0, ops);
  const bool dilated = std::any_of(g.dilation.begin(), g.dilation.end(), [](auto d) { return d != 1; });
  auto padding = xs.size() == 4 && !dilated ? padding_2d(g, xs) : std::nullopt;
  if (padding && ys.size() == 4 && attr_int(c, "ceil_mode", 0) != 0) {
    // ceil_mode: the last, partial window counts. framesim rounds down, so the partial window becomes padding
    // at the bottom / right (the same windows, the same ops).
    auto p = std::holds_alternative<std::string>(*padding) ? std::vector<std::int64_t>{}
                                                           : std::get<std::vector<std::int64_t>>(*padding);
    if (p.size() == 4) {
      for (int d = 0; d < 2; ++d) {
        const auto size =
            xs[static_cast<std::size_t>(d) + 2] + p[static_cast<std::size_t>(d)] + p[static_cast<std::size_t>(d) + 2];
        const auto need = (ys[static_cast<std::size_t>(d) + 2] - 1) * g.stride[static_cast<std::size_t>(d)] +
                          g.kernel[static_cast<std::size_t>(d)];
        if (need > size) p[static_cast<std::size_t>(d) + 2] += need - size;
      }
      padding = model::ParamValue{p};
    }
  }
  if (padding) {
    emit(c,
         Spec{op == "MaxPool" ? "maxpool" : "avgpool",
              {{"kernel", g.kernel}, {"stride", g.stride}, {"padding", *padding}},
              {x.tensor},
              precision_for(ops, out, std::nullopt),
              c.node.output(0),
              "",
              std::nullopt},
         formula);
  } else {
    note(fmt::format("{} that is not 2-D or is dilated: costed as custom with output elements x window ops", op), c);
    emit_custom(c, c.node.output(0), {x.tensor}, formula, 0, precision_for(ops, out, std::nullopt));
  }
  extra_outputs(c, ops);  // MaxPool's indices
}

void OnnxImporter::reduce(const Ctx& c, const std::vector<Operand>& ops) {
  const std::string& op = c.node.op_type();
  const auto& x = data(c, ops);
  const Shape& xs = tensor(x.tensor).shape;
  const Shape ys = require_shape(c.node.output(0), c.where);
  const Precision out = out_precision(c, 0, ops);
  // Every spatial axis of an NCHW-like tensor reduced, N and C kept: global pooling.
  bool global = (op == "ReduceMean" || op == "ReduceMax") && xs.size() >= 3 && ys.size() == xs.size() &&
                ys[0] == xs[0] && ys[1] == xs[1];
  for (std::size_t i = 2; global && i < ys.size(); ++i) global = ys[i] == 1;
  if (global) return single(c, ops, op == "ReduceMean" ? "global_avgpool" : "global_maxpool", {});
  const double per_element =
      (op == "ReduceL1" || op == "ReduceL2" || op == "ReduceSumSquare" || op == "ReduceLogSumExp") ? 2.0 : 1.0;
  note(fmt::format("{} (framesim has no reduction op): costed as custom with {} op{} per input element", op,
                   per_element, per_element == 1 ? "" : "s"),
       c);
  emit_custom(c, c.node.output(0), {x.tensor}, per_element * model::shape_elements(xs), 0,
              precision_for(ops, out, std::nullopt));
}

}  // namespace framesim::trace::onnx_detail
