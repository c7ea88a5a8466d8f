// TFLite import, shape arithmetic: SHAPE of an activation gives the shape framesim computed (with --input, the
// requested one), and the integer operators after it (STRIDED_SLICE, GATHER, PACK, ...) are computed at load time,
// so a RESHAPE whose target is computed from the input's shape follows --input instead of the file's placeholders.
#include <algorithm>

#include "trace/tflite_importer.hpp"

namespace framesim::trace::tflite_detail {

/// The values of a folded operator's output when it is shape arithmetic on integers (SHAPE, STRIDED_SLICE,
/// GATHER, PACK, CONCATENATION, ADD, SUB, MUL, DIV, CAST, RESHAPE, SQUEEZE, EXPAND_DIMS of known values), so that
/// a RESHAPE reading it follows --input: nullopt otherwise.
std::optional<std::vector<std::int64_t>> Importer::fold_values(const Op& o) const {
  using V = std::vector<std::int64_t>;
  if (o.out.size() != 1 || o.in.empty() || o.in[0] < 0) return std::nullopt;
  const auto out_type = tensor(o.out[0])->type();
  if (out_type != fb::TensorType_INT32 && out_type != fb::TensorType_INT64) return std::nullopt;
  if (o.code == fb::BuiltinOperator_SHAPE) {
    const Shape s = file_shape(o.in[0]);
    return V(s.begin(), s.end());
  }
  std::vector<V> in;
  for (int t : o.in) {
    auto v = t < 0 ? std::optional<V>{V{}} : const_ints(t);
    if (!v || v->size() > 64) return std::nullopt;
    in.push_back(std::move(*v));
  }
  switch (o.code) {
    case fb::BuiltinOperator_RESHAPE:
    case fb::BuiltinOperator_SQUEEZE:
    case fb::BuiltinOperator_EXPAND_DIMS:
    case fb::BuiltinOperator_CAST: return in[0];
    case fb::BuiltinOperator_PACK: {
      const auto* opt = o.op->builtin_options_as_PackOptions();
      if (opt && opt->axis() != 0) return std::nullopt;
      V out;
      for (const auto& v : in) out.insert(out.end(), v.begin(), v.end());
      return out;
    }
    case fb::BuiltinOperator_CONCATENATION: {
      if (file_shape(o.out[0]).size() != 1) return std::nullopt;
      V out;
      for (const auto& v : in) out.insert(out.end(), v.begin(), v.end());
      return out;
    }
    case fb::BuiltinOperator_GATHER: {
      const auto* opt = o.op->builtin_options_as_GatherOptions();
      if ((opt && opt->axis() != 0) || in.size() < 2) return std::nullopt;
      V out;
      for (auto i : in[1]) {
        const auto n = static_cast<std::int64_t>(in[0].size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) return std::nullopt;
        out.push_back(in[0][static_cast<std::size_t>(i)]);
      }
      return out;
    }
    case fb::BuiltinOperator_STRIDED_SLICE: {
      // One axis (a shape vector): begin, end, stride, with the begin, end and shrink masks of bit 0.
      const auto* opt = o.op->builtin_options_as_StridedSliceOptions();
      if (in.size() < 4 || in[1].size() != 1 || in[2].size() != 1 || in[3].size() != 1 || in[3][0] <= 0)
        return std::nullopt;
      if (opt && (opt->ellipsis_mask() != 0 || opt->new_axis_mask() != 0)) return std::nullopt;
      const auto n = static_cast<std::int64_t>(in[0].size());
      auto clamp = [n](std::int64_t x) { return std::clamp<std::int64_t>(x < 0 ? x + n : x, 0, n); };
      std::int64_t begin = opt && (opt->begin_mask() & 1) ? 0 : clamp(in[1][0]);
      std::int64_t end = opt && (opt->end_mask() & 1) ? n : clamp(in[2][0]);
      if (opt && (opt->shrink_axis_mask() & 1)) end = std::min(n, begin + 1);
      V out;
      for (auto i = begin; i < end; i += in[3][0]) out.push_back(in[0][static_cast<std::size_t>(i)]);
      return out;
    }
    case fb::BuiltinOperator_ADD:
    case fb::BuiltinOperator_SUB:
    case fb::BuiltinOperator_MUL:
    case fb::BuiltinOperator_DIV: {
      if (in.size() != 2 || in[0].empty() || in[1].empty()) return std::nullopt;
      const auto& a = in[0];
      const auto& b = in[1];
      if (a.size() != b.size() && a.size() != 1 && b.size() != 1) return std::nullopt;
      V out;
      for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
        const auto x = a[a.size() == 1 ? 0 : i], y = b[b.size() == 1 ? 0 : i];
        if (o.code == fb::BuiltinOperator_DIV && y == 0) return std::nullopt;
        out.push_back(o.code == fb::BuiltinOperator_ADD   ? x + y
                      : o.code == fb::BuiltinOperator_SUB ? x - y
                      : o.code == fb::BuiltinOperator_MUL ? x * y
                                                          : x / y);
      }
      return out;
    }
    default: return std::nullopt;
  }
}

/// SHAPE of an activation: its shape as framesim computed it (with --input, the requested one), in TFLite's order,
/// a constant for the shape arithmetic after it. No layer.
void Importer::shape_op(const Op& o) {
  const int x = data_input(o);
  Shape s = spec(act(o, x)).shape;
  if (s.size() == 4) s = {s[0], s[2], s[3], s[1]};  // framesim's NCHW back to TFLite's NHWC
  for (int t : o.out) {
    auto& slot = slots_[static_cast<std::size_t>(t)];
    slot.constant = true;
    slot.stored = tensor(t)->type();
    slot.data = -1;
  }
  values_[o.out[0]] = std::vector<std::int64_t>(s.begin(), s.end());
  folded_other_[o.name]++;
}

}  // namespace framesim::trace::tflite_detail
