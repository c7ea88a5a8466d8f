// ONNX import, the costers of data movement: reshapes, Gather, Resize, Concat, Pad, Slice, Split.
#include "trace/onnx_importer.hpp"

namespace framesim::trace::onnx_detail {

/// A free reshape from `from` to the node's output `value`, for nodes framesim expresses in another shape.
void OnnxImporter::reshape_to(const Ctx& c, int from, const std::string& value) {
  const Shape out = require_shape(value, c.where);
  emit(c, Spec{"reshape",
               {{"shape", out}},
               {from},
               precision_for({}, tensor(from).precision, std::nullopt),
               value,
               "",
               out});
}

void OnnxImporter::gather(const Ctx& c, const std::vector<Operand>& ops) {
  const Operand d = operand(c, 0);
  const Operand idx = operand(c, 1);
  const Shape ys = require_shape(c.node.output(0), c.where);
  const Precision out = out_precision(c, 0, ops);
  const std::string v = c.node.output(0);
  auto axis = attr_int(c, "axis", 0);
  const Shape& ds = shape_of(d);
  if (axis < 0) axis += static_cast<std::int64_t>(ds.size());
  if (d.cst() && idx.act() && axis == 0 && ds.size() >= 2) {
    // A table lookup: each index reads one row of prod(shape[1:]) elements.
    const auto dim = static_cast<std::int64_t>(model::shape_elements(Shape(ds.begin() + 1, ds.end())));
    Shape emb = tensor(idx.tensor).shape;
    emb.push_back(dim);
    const bool reshape = emb != ys;
    const int t = emit(c, Spec{"embedding",
                               {{"num_embeddings", ds[0]}, {"embedding_dim", dim}},
                               {idx.tensor},
                               precision_for(ops, out, stored(*d.c), out),
                               reshape ? v + "#rows" : v,
                               reshape ? "_rows" : "",
                               emb});
    if (reshape) reshape_to(c, t, v);
    return;
  }
  if (d.act() && idx.cst() && idx.c->shape && axis >= 0 && axis < static_cast<std::int64_t>(ds.size())) {
    // The gathered elements, copied: a slice of as many rows as there are indices (reads only those).
    Shape part = ds;
    const auto count = static_cast<std::int64_t>(model::shape_elements(*idx.c->shape));
    part[static_cast<std::size_t>(axis)] = count;
    if (count >= 1 && count <= ds[static_cast<std::size_t>(axis)]) {
      const bool reshape = part != ys;
      const int t = emit(c, Spec{"slice",
                                 {{"shape", part}},
                                 {d.tensor},
                                 precision_for(ops, out, std::nullopt),
                                 reshape ? v + "#rows" : v,
                                 reshape ? "_rows" : "",
                                 part});
      if (reshape) reshape_to(c, t, v);
      return;
    }
  }
  note(
      "Gather with indices known only at run time, or a table lookup off axis 0: costed as custom reading its "
      "inputs in full (0 ops)",
      c);
  data_movement(c, ops);
}

void OnnxImporter::resize(const Ctx& c, const std::vector<Operand>& ops) {
  const auto& x = ops.at(0);
  if (!x.act()) return unknown(c, ops);
  const Shape& xs = tensor(x.tensor).shape;
  const Shape ys = require_shape(c.node.output(0), c.where);
  std::string mode = attr_string(c, "mode", "nearest");
  if (mode == "bilinear") mode = "linear";  // Upsample-7
  const bool spatial = xs.size() == 4 && ys.size() == 4 && xs[0] == ys[0] && xs[1] == ys[1];
  if (spatial && (mode == "nearest" || mode == "linear")) {
    OpParams p{{"mode", mode}};
    if (ys[2] % xs[2] == 0 && ys[3] % xs[3] == 0 && ys[2] >= xs[2] && ys[3] >= xs[3])
      p["scale"] = std::vector<std::int64_t>{ys[2] / xs[2], ys[3] / xs[3]};
    else p["size"] = std::vector<std::int64_t>{ys[2], ys[3]};
    return single(c, ops, "resize", std::move(p));
  }
  const double per_output = mode == "cubic" ? 32.0 : mode == "linear" ? 7.0 : 0.0;  // 4x4 taps / as ops.cpp
  note(fmt::format("{} in {} mode, or not a spatial NCHW resize: costed as custom with {} ops per output",
                   c.node.op_type(), mode, per_output),
       c);
  const Precision out = out_precision(c, 0, ops);
  emit_custom(c, c.node.output(0), {x.tensor}, per_output * model::shape_elements(ys), 0,
              precision_for(ops, out, std::nullopt));
}

void OnnxImporter::concat(const Ctx& c, const std::vector<Operand>& ops) {
  const auto acts = activations(ops);
  const Precision out = out_precision(c, 0, ops);
  bool all_act = true;
  for (const auto& o : ops) all_act = all_act && (o.act() || !o.present());
  if (all_act && acts.size() >= 2) {
    emit(c, Spec{"concat",
                 {{"axis", attr_int(c, "axis", 1)}},
                 acts,
                 precision_for(ops, out, std::nullopt),
                 c.node.output(0),
                 "",
                 std::nullopt});
    return;
  }
  if (all_act) {
    emit(c, Spec{"copy", {}, acts, precision_for(ops, out, std::nullopt), c.node.output(0), "", std::nullopt});
    return;
  }
  // Constant parts: read as weights (an immediate fill, e.g. ConstantOfShape zeros of a channel pad, is written
  // without being read).
  const auto wprec = weights_precision(ops);
  emit_custom(c, c.node.output(0), acts, 0, constant_weights(ops), precision_for(ops, out, wprec.value_or(out)));
}

void OnnxImporter::pad(const Ctx& c, const std::vector<Operand>& ops) {
  const auto& x = ops.at(0);
  if (!x.act()) return unknown(c, ops);
  const Shape& xs = tensor(x.tensor).shape;
  const Shape ys = require_shape(c.node.output(0), c.where);
  bool spatial =
      xs.size() == 4 && ys.size() == 4 && xs[0] == ys[0] && xs[1] == ys[1] && ys[2] >= xs[2] && ys[3] >= xs[3];
  if (spatial) {
    // The amounts from the pads (attribute before opset 11, an input after), else split from the shapes (the
    // split changes no count).
    std::vector<double> pads;
    if (auto a = attr_ints(c, "pads")) pads.assign(a->begin(), a->end());
    else if (const Operand p = operand(c, 1); p.cst() && p.c->has_values) pads = p.c->values;
    std::vector<std::int64_t> tlbr;
    if (pads.size() == 8 && pads[0] == 0 && pads[1] == 0 && pads[4] == 0 && pads[5] == 0 && pads[2] >= 0 &&
        pads[3] >= 0 && pads[6] >= 0 && pads[7] >= 0) {
      tlbr = {static_cast<std::int64_t>(pads[2]), static_cast<std::int64_t>(pads[3]),
              static_cast<std::int64_t>(pads[6]), static_cast<std::int64_t>(pads[7])};
    } else {
      const auto h = ys[2] - xs[2], w = ys[3] - xs[3];
      tlbr = {h / 2, w / 2, h - h / 2, w - w / 2};
    }
    return single(c, ops, "pad", {{"pads", tlbr}});
  }
  note("Pad of other than the spatial axes of NCHW, or negative (a crop): costed as custom data movement (0 ops)", c);
  const Precision out = out_precision(c, 0, ops);
  emit_custom(c, c.node.output(0), {x.tensor}, 0, 0, precision_for(ops, out, std::nullopt));
}

bool OnnxImporter::fits_inside(const Shape& part, const Shape& whole) const {
  if (part.size() != whole.size()) return false;
  for (std::size_t i = 0; i < part.size(); ++i)
    if (part[i] <= 0 || part[i] > whole[i]) return false;
  return true;
}

void OnnxImporter::slice(const Ctx& c, const std::vector<Operand>& ops) {
  const auto& x = ops.at(0);
  if (!x.act()) return unknown(c, ops);
  const Shape ys = require_shape(c.node.output(0), c.where);
  if (fits_inside(ys, tensor(x.tensor).shape)) return single(c, ops, "slice", {{"shape", ys}});
  note("Slice whose output does not fit inside its input: costed as custom data movement", c);
  const Precision out = out_precision(c, 0, ops);
  emit_custom(c, c.node.output(0), {x.tensor}, 0, 0, precision_for(ops, out, std::nullopt));
}

void OnnxImporter::split(const Ctx& c, const std::vector<Operand>& ops) {
  const auto& x = ops.at(0);
  if (!x.act()) return unknown(c, ops);
  for (int i = 0; i < c.node.output_size(); ++i) {
    const std::string& v = c.node.output(i);
    if (v.empty() || !needed_.count(v)) continue;
    const Shape ys = require_shape(v, c.where);
    const Precision out = out_precision(c, i, ops);
    const std::string suffix = fmt::format("_{}", i);
    if (fits_inside(ys, tensor(x.tensor).shape))
      emit(c,
           Spec{"slice", {{"shape", ys}}, {x.tensor}, precision_for(ops, out, std::nullopt), v, suffix, std::nullopt});
    else emit_custom(c, v, {x.tensor}, 0, 0, precision_for(ops, out, std::nullopt), suffix);
  }
}

}  // namespace framesim::trace::onnx_detail
