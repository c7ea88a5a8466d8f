// ONNX import, shape arithmetic computed at load time ("folding"): Shape -> Gather -> Concat -> Reshape and the
// like, evaluated on small constant values and written back into the graph as Constant nodes.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "trace/onnx_importer.hpp"

namespace framesim::trace::onnx_detail {

namespace {

/// The IEEE half-precision bit pattern nearest `f` (ties to even; overflow to infinity, NaN kept).
std::uint16_t half_bits(float f) {
  std::uint32_t x = 0;
  std::memcpy(&x, &f, sizeof x);
  const std::uint32_t sign = (x >> 16) & 0x8000U;
  const std::uint32_t raw_exp = (x >> 23) & 0xffU;
  std::uint32_t mant = x & 0x7fffffU;
  if (raw_exp == 0xffU) return static_cast<std::uint16_t>(sign | 0x7c00U | (mant ? 0x200U : 0U));
  const int exp = static_cast<int>(raw_exp) - 127 + 15;
  if (exp >= 31) return static_cast<std::uint16_t>(sign | 0x7c00U);
  std::uint32_t half = 0, rem = 0, mid = 0;
  if (exp <= 0) {  // a subnormal half (or zero)
    if (exp < -10) return static_cast<std::uint16_t>(sign);
    mant |= 0x800000U;
    const auto shift = static_cast<std::uint32_t>(14 - exp);
    half = mant >> shift;
    rem = mant & ((1U << shift) - 1U);
    mid = 1U << (shift - 1U);
  } else {
    half = (static_cast<std::uint32_t>(exp) << 10) | (mant >> 13);
    rem = mant & 0x1fffU;
    mid = 0x1000U;
  }
  if (rem > mid || (rem == mid && (half & 1U))) ++half;  // a carry into the exponent is still right
  return static_cast<std::uint16_t>(sign | half);
}

/// The bfloat16 bit pattern nearest `f` (ties to even).
std::uint16_t bf16_bits(float f) {
  std::uint32_t x = 0;
  std::memcpy(&x, &f, sizeof x);
  if (((x >> 23) & 0xffU) == 0xffU) return static_cast<std::uint16_t>((x >> 16) | ((x & 0xffffU) ? 0x40U : 0U));
  return static_cast<std::uint16_t>((x + 0x7fffU + ((x >> 16) & 1U)) >> 16);
}

}  // namespace

bool OnnxImporter::integer_type(int t) {
  using TP = onnx::TensorProto;
  return t == TP::INT64 || t == TP::INT32 || t == TP::INT16 || t == TP::INT8 || t == TP::UINT8 || t == TP::UINT16 ||
         t == TP::UINT32 || t == TP::UINT64 || t == TP::BOOL;
}

/// Values of `name` if known: an initializer, a Constant node, or computed in an earlier step.
const OnnxImporter::Value* OnnxImporter::value(const std::string& name) {
  if (auto it = values_.find(name); it != values_.end()) return &it->second;
  auto it = init_index_.find(name);
  if (it == init_index_.end() || no_value_.count(name)) return nullptr;
  const auto& t = model_.graph().initializer(it->second);
  Value v;
  v.dims.assign(t.dims().begin(), t.dims().end());
  v.type = t.data_type();
  if (!read_values(t, v.v)) {
    no_value_.insert(name);
    return nullptr;
  }
  return &(values_[name] = std::move(v));
}

/// numpy broadcasting of `ins` through `fn`.
std::optional<OnnxImporter::Value> OnnxImporter::broadcast_values(
    const std::vector<const Value*>& ins, int type, const std::function<double(const std::vector<double>&)>& fn) {
  Shape out;
  for (const auto* in : ins) {
    if (in->dims.size() > out.size()) out.insert(out.begin(), in->dims.size() - out.size(), 1);
    for (std::size_t i = 0; i < in->dims.size(); ++i) {
      auto& o = out[out.size() - in->dims.size() + i];
      const auto d = in->dims[i];
      if (o == d || d == 1) continue;
      if (o != 1) return std::nullopt;
      o = d;
    }
  }
  Value r;
  r.dims = out;
  r.type = type;
  const auto n = static_cast<std::size_t>(model::shape_elements(out));
  if (static_cast<double>(n) > kMaxFoldedElements) return std::nullopt;
  std::vector<double> args(ins.size());
  for (std::size_t flat = 0; flat < n; ++flat) {
    for (std::size_t k = 0; k < ins.size(); ++k) {
      const Shape& d = ins[k]->dims;
      std::size_t rest = flat, index = 0, stride = 1;
      for (std::size_t axis = out.size(); axis-- > 0;) {
        const auto coord = rest % static_cast<std::size_t>(out[axis]);
        rest /= static_cast<std::size_t>(out[axis]);
        const std::size_t in_axis = axis + d.size();
        if (in_axis < out.size()) continue;  // broadcast leading axis
        const auto dim = static_cast<std::size_t>(d[in_axis - out.size()]);
        index += (dim == 1 ? 0 : coord) * stride;
        stride *= dim;
      }
      if (index >= ins[k]->v.size()) return std::nullopt;
      args[k] = ins[k]->v[index];
    }
    r.v.push_back(fn(args));
  }
  return r;
}

/// `x` as an element of ONNX type `type` holds it (bool 0/1, integers truncated, float rounded to single).
double OnnxImporter::cast_to(double x, int type) {
  if (type == onnx::TensorProto::BOOL) return x != 0 ? 1.0 : 0.0;
  if (integer_type(type)) return std::trunc(x);
  if (type == onnx::TensorProto::FLOAT) return static_cast<double>(static_cast<float>(x));
  return x;
}

/// Values of a node's single output, when its inputs' values (or, for Shape and Size, its input's shape)
/// are known and the op is one of the shape-arithmetic ops below.
std::optional<OnnxImporter::Value> OnnxImporter::compute_value(const onnx::NodeProto& node) {
  const std::string& op = node.op_type();
  if (node.output_size() != 1 || !(node.domain().empty() || node.domain() == "ai.onnx")) return std::nullopt;
  const int out_type = elem_type(node.output(0));
  const auto out_shape = known_shape(node.output(0));
  if (out_type == 0) return std::nullopt;
  const onnx::NodeProto& n = node;
  const Ctx c{n, -1, "", "", ""};
  if (op == "Shape" || op == "Size") {
    const auto s = node.input_size() ? known_shape(node.input(0)) : std::nullopt;
    if (!s) return std::nullopt;
    Value r;
    r.type = onnx::TensorProto::INT64;
    if (op == "Size") {
      r.v = {model::shape_elements(*s)};
      return r;
    }
    const auto rank = static_cast<std::int64_t>(s->size());
    auto clamp = [&](std::int64_t x) { return std::clamp<std::int64_t>(x < 0 ? x + rank : x, 0, rank); };
    for (auto d = clamp(attr_int(c, "start", 0)); d < clamp(attr_int(c, "end", rank)); ++d)
      r.v.push_back(static_cast<double>((*s)[static_cast<std::size_t>(d)]));
    r.dims = {static_cast<std::int64_t>(r.v.size())};
    return r;
  }
  std::vector<const Value*> in;
  for (const auto& name : node.input()) {
    if (name.empty()) {
      in.push_back(nullptr);
      continue;
    }
    const Value* v = value(name);
    if (!v) return std::nullopt;
    // Float constants of the file with more than one element are weights: folding them here would lose their
    // stored precision (fp16 behind a Cast); the ordinary fold keeps it.
    if (!integer_type(v->type) && v->v.size() > 1 && !computed_.count(name)) return std::nullopt;
    in.push_back(v);
  }
  auto unary = [&](const std::function<double(double)>& fn) -> std::optional<Value> {
    if (in.empty() || !in[0]) return std::nullopt;
    Value r = *in[0];
    r.type = out_type;
    for (auto& x : r.v) x = cast_to(fn(x), out_type);
    return r;
  };
  auto nary = [&](const std::function<double(const std::vector<double>&)>& fn) -> std::optional<Value> {
    for (const auto* v : in)
      if (!v) return std::nullopt;
    auto r = broadcast_values(in, out_type, fn);
    if (r)
      for (auto& x : r->v) x = cast_to(x, out_type);
    return r;
  };
  const bool ints = integer_type(out_type);
  if (op == "Identity" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten") {
    if (!out_shape || in.empty() || !in[0]) return std::nullopt;
    Value r = *in[0];
    r.dims = *out_shape;
    return r;
  }
  if (op == "Cast") return unary([](double x) { return x; });
  if (op == "Neg") return unary([](double x) { return -x; });
  if (op == "Abs") return unary([](double x) { return std::fabs(x); });
  if (op == "Not") return unary([](double x) { return x == 0 ? 1.0 : 0.0; });
  if (op == "Floor") return unary([](double x) { return std::floor(x); });
  if (op == "Ceil") return unary([](double x) { return std::ceil(x); });
  if (op == "Sqrt") return unary([](double x) { return std::sqrt(x); });
  if (op == "Add") return nary([](const auto& a) { return a[0] + a[1]; });
  if (op == "Sub") return nary([](const auto& a) { return a[0] - a[1]; });
  if (op == "Mul") return nary([](const auto& a) { return a[0] * a[1]; });
  if (op == "Div")
    return nary([ints](const auto& a) { return a[1] == 0 ? 0.0 : ints ? std::trunc(a[0] / a[1]) : a[0] / a[1]; });
  if (op == "Mod") return nary([](const auto& a) { return a[1] == 0 ? 0.0 : a[0] - a[1] * std::floor(a[0] / a[1]); });
  if (op == "Max") return nary([](const auto& a) { return *std::max_element(a.begin(), a.end()); });
  if (op == "Min") return nary([](const auto& a) { return *std::min_element(a.begin(), a.end()); });
  if (op == "Equal") return nary([](const auto& a) { return a[0] == a[1] ? 1.0 : 0.0; });
  if (op == "Less") return nary([](const auto& a) { return a[0] < a[1] ? 1.0 : 0.0; });
  if (op == "Greater") return nary([](const auto& a) { return a[0] > a[1] ? 1.0 : 0.0; });
  if (op == "LessOrEqual") return nary([](const auto& a) { return a[0] <= a[1] ? 1.0 : 0.0; });
  if (op == "GreaterOrEqual") return nary([](const auto& a) { return a[0] >= a[1] ? 1.0 : 0.0; });
  if (op == "And") return nary([](const auto& a) { return a[0] != 0 && a[1] != 0 ? 1.0 : 0.0; });
  if (op == "Or") return nary([](const auto& a) { return a[0] != 0 || a[1] != 0 ? 1.0 : 0.0; });
  if (op == "Where") return nary([](const auto& a) { return a[0] != 0 ? a[1] : a[2]; });
  if (op == "ConstantOfShape") return constant_of_shape_value(c, out_shape, out_type);
  if (op == "Range") return range_value(in, out_type);
  if (op == "Gather") return gather_value(c, in, out_type);
  if (op == "Concat") return concat_value(c, in, out_type);
  if (op == "Slice") return slice_value(c, in, out_type);
  if (op == "ReduceProd" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin")
    return reduce_value(op, in, out_shape, out_type);
  return std::nullopt;
}

/// ConstantOfShape: the fill value (0 when not given) over the output shape.
std::optional<OnnxImporter::Value> OnnxImporter::constant_of_shape_value(const Ctx& c,
                                                                         const std::optional<Shape>& out_shape,
                                                                         int out_type) {
  if (!out_shape || model::shape_elements(*out_shape) > kMaxFoldedElements) return std::nullopt;
  std::vector<double> fill{0};
  if (const auto* a = attr(c, "value")) {
    if (!read_values(a->t(), fill) || fill.size() != 1) return std::nullopt;
  }
  Value r;
  r.dims = *out_shape;
  r.type = out_type;
  r.v.assign(static_cast<std::size_t>(model::shape_elements(*out_shape)), fill[0]);
  return r;
}

/// Range: start, start + delta, ... below limit (above it for a negative delta).
std::optional<OnnxImporter::Value> OnnxImporter::range_value(const std::vector<const Value*>& in, int out_type) {
  if (in.size() != 3 || !in[0] || !in[1] || !in[2] || in[0]->v.size() != 1 || in[1]->v.size() != 1 ||
      in[2]->v.size() != 1 || in[2]->v[0] == 0)
    return std::nullopt;
  Value r;
  r.type = out_type;
  const double start = in[0]->v[0], limit = in[1]->v[0], delta = in[2]->v[0];
  const double count = std::max(0.0, std::ceil((limit - start) / delta));
  if (count > kMaxFoldedElements) return std::nullopt;
  for (double k = 0; k < count; ++k) r.v.push_back(cast_to(start + k * delta, out_type));
  r.dims = {static_cast<std::int64_t>(r.v.size())};
  return r;
}

/// Gather: the slices of the data at the indices, along `axis`.
std::optional<OnnxImporter::Value> OnnxImporter::gather_value(const Ctx& c, const std::vector<const Value*>& in,
                                                              int out_type) {
  if (in.size() < 2 || !in[0] || !in[1]) return std::nullopt;
  const Value& d = *in[0];
  if (d.dims.empty()) return std::nullopt;
  auto axis = attr_int(c, "axis", 0);
  if (axis < 0) axis += static_cast<std::int64_t>(d.dims.size());
  if (axis < 0 || axis >= static_cast<std::int64_t>(d.dims.size())) return std::nullopt;
  const auto ax = static_cast<std::size_t>(axis);
  const double outer = model::shape_elements(Shape(d.dims.begin(), d.dims.begin() + axis));
  const double inner = model::shape_elements(Shape(d.dims.begin() + axis + 1, d.dims.end()));
  const auto len = d.dims[ax];
  Value r;
  r.type = out_type;
  r.dims.assign(d.dims.begin(), d.dims.begin() + axis);
  r.dims.insert(r.dims.end(), in[1]->dims.begin(), in[1]->dims.end());
  r.dims.insert(r.dims.end(), d.dims.begin() + axis + 1, d.dims.end());
  if (model::shape_elements(r.dims) > kMaxFoldedElements) return std::nullopt;
  for (double o = 0; o < outer; ++o)
    for (double idx : in[1]->v) {
      auto k = static_cast<std::int64_t>(idx);
      if (k < 0) k += len;
      if (k < 0 || k >= len) return std::nullopt;
      for (double i = 0; i < inner; ++i)
        r.v.push_back(
            d.v[static_cast<std::size_t>((o * static_cast<double>(len) + static_cast<double>(k)) * inner + i)]);
    }
  return r;
}

/// Concat: the inputs one after the other along `axis`.
std::optional<OnnxImporter::Value> OnnxImporter::concat_value(const Ctx& c, const std::vector<const Value*>& in,
                                                              int out_type) {
  if (in.empty()) return std::nullopt;
  for (const auto* v : in)
    if (!v || v->dims.size() != in[0]->dims.size() || v->dims.empty()) return std::nullopt;
  auto axis = attr_int(c, "axis", 0);
  const auto rank = static_cast<std::int64_t>(in[0]->dims.size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  const double outer = model::shape_elements(Shape(in[0]->dims.begin(), in[0]->dims.begin() + axis));
  Value r;
  r.type = out_type;
  r.dims = in[0]->dims;
  r.dims[static_cast<std::size_t>(axis)] = 0;
  for (const auto* v : in) r.dims[static_cast<std::size_t>(axis)] += v->dims[static_cast<std::size_t>(axis)];
  if (model::shape_elements(r.dims) > kMaxFoldedElements) return std::nullopt;
  for (double o = 0; o < outer; ++o)
    for (const auto* v : in) {
      const double chunk = model::shape_elements(Shape(v->dims.begin() + axis, v->dims.end()));
      for (double i = 0; i < chunk; ++i) r.v.push_back(v->v[static_cast<std::size_t>(o * chunk + i)]);
    }
  return r;
}

/// Slice of rank-1 data (shape vectors); starts/ends/axes/steps as inputs (opset 10+) or attributes (before).
std::optional<OnnxImporter::Value> OnnxImporter::slice_value(const Ctx& c, const std::vector<const Value*>& in,
                                                             int out_type) {
  if (in.empty() || !in[0] || in[0]->dims.size() != 1) return std::nullopt;
  double start = 0, end = 0, step = 1;
  if (c.node.input_size() >= 3) {
    if (!in[1] || !in[2] || in[1]->v.size() != 1 || in[2]->v.size() != 1) return std::nullopt;
    if (c.node.input_size() >= 4 && in[3] && (in[3]->v.size() != 1 || (in[3]->v[0] != 0 && in[3]->v[0] != -1)))
      return std::nullopt;
    start = in[1]->v[0];
    end = in[2]->v[0];
    if (c.node.input_size() >= 5 && in[4]) {
      if (in[4]->v.size() != 1 || in[4]->v[0] == 0) return std::nullopt;
      step = in[4]->v[0];
    }
  } else {
    const auto s = attr_ints(c, "starts"), e = attr_ints(c, "ends");
    if (!s || !e || s->size() != 1 || e->size() != 1) return std::nullopt;
    start = static_cast<double>((*s)[0]);
    end = static_cast<double>((*e)[0]);
  }
  const double len = static_cast<double>(in[0]->dims[0]);
  auto clamp = [&](double x, double lo, double hi) { return std::clamp(x < 0 ? x + len : x, lo, hi); };
  Value r;
  r.type = out_type;
  if (step > 0) {
    for (double i = clamp(start, 0, len); i < clamp(end, 0, len); i += step)
      r.v.push_back(in[0]->v[static_cast<std::size_t>(i)]);
  } else {
    for (double i = clamp(start, -1, len - 1); i > clamp(end, -1, len - 1); i += step)
      r.v.push_back(in[0]->v[static_cast<std::size_t>(i)]);
  }
  r.dims = {static_cast<std::int64_t>(r.v.size())};
  return r;
}

/// ReduceProd, ReduceSum, ReduceMax, ReduceMin over every element (a shape vector): what shape arithmetic uses.
std::optional<OnnxImporter::Value> OnnxImporter::reduce_value(const std::string& op,
                                                              const std::vector<const Value*>& in,
                                                              const std::optional<Shape>& out_shape, int out_type) {
  if (in.empty() || !in[0] || !out_shape || model::shape_elements(*out_shape) != 1 || in[0]->v.empty())
    return std::nullopt;
  double acc = op == "ReduceProd" ? 1.0 : op == "ReduceSum" ? 0.0 : in[0]->v[0];
  for (double x : in[0]->v)
    acc = op == "ReduceProd"  ? acc * x
          : op == "ReduceSum" ? acc + x
          : op == "ReduceMax" ? std::max(acc, x)
                              : std::min(acc, x);
  Value r;
  r.dims = *out_shape;
  r.type = out_type;
  r.v = {acc};
  return r;
}

/// The outputs of a Split of a small known value (pads or shapes split and concatenated again, as exporters
/// write them): made known values, so that what reads them (Concat -> Pad) folds. The Split node stays; with
/// nothing reading it any more it is counted as folded. True if it gave new values.
bool OnnxImporter::split_values(const onnx::NodeProto& node) {
  if (node.input_size() < 1 || node.output_size() < 1) return false;
  if (std::all_of(node.output().begin(), node.output().end(), [&](const auto& o) { return values_.count(o) > 0; }))
    return false;
  const Value* in = value(node.input(0));
  if (!in || static_cast<double>(in->v.size()) > kMaxFoldedElements || in->dims.empty()) return false;
  const Ctx c{node, -1, "", "", ""};
  const auto rank = static_cast<std::int64_t>(in->dims.size());
  std::int64_t axis = attr_int(c, "axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return false;
  const std::int64_t length = in->dims[static_cast<std::size_t>(axis)];
  const auto parts = static_cast<std::int64_t>(node.output_size());
  std::vector<std::int64_t> sizes;
  if (node.input_size() > 1 && !node.input(1).empty()) {  // opset 13+: the sizes are an input
    const Value* split = value(node.input(1));
    if (!split) return false;
    for (double x : split->v) sizes.push_back(static_cast<std::int64_t>(x));
  } else if (auto attr = attr_ints(c, "split")) {
    sizes = *attr;
  } else {  // equal parts, the last one smaller (opset 18)
    const std::int64_t each = (length + parts - 1) / parts;
    for (std::int64_t k = 0; k < parts; ++k) sizes.push_back(std::min(each, length - k * each));
  }
  if (static_cast<std::int64_t>(sizes.size()) != parts) return false;
  std::int64_t total = 0;
  for (auto x : sizes) {
    if (x < 0) return false;
    total += x;
  }
  if (total != length) return false;
  std::int64_t inner = 1;
  for (auto d = static_cast<std::size_t>(axis) + 1; d < in->dims.size(); ++d) inner *= in->dims[d];
  const std::int64_t outer = static_cast<std::int64_t>(in->v.size()) / std::max<std::int64_t>(1, length * inner);
  std::int64_t start = 0;
  for (std::int64_t k = 0; k < parts; ++k) {
    Value out;
    out.type = in->type;
    out.dims = in->dims;
    out.dims[static_cast<std::size_t>(axis)] = sizes[static_cast<std::size_t>(k)];
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i = start * inner; i < (start + sizes[static_cast<std::size_t>(k)]) * inner; ++i)
        out.v.push_back(in->v[static_cast<std::size_t>(o * length * inner + i)]);
    start += sizes[static_cast<std::size_t>(k)];
    const std::string& name = node.output(static_cast<int>(k));
    if (!name.empty()) values_[name] = std::move(out);
  }
  return true;
}

/// Replaces every node whose small output can be computed by a Constant node holding it. True if any was.
bool OnnxImporter::fold_small_values(const std::vector<int>& order) {
  bool changed = false;
  auto* g = model_.mutable_graph();
  for (int index : order) {
    auto* node = g->mutable_node(index);
    if (node->op_type() == "Constant") {
      if (node->output_size() == 1 && node->attribute_size() == 1 && node->attribute(0).name() == "value" &&
          !values_.count(node->output(0))) {
        Value v;
        v.dims.assign(node->attribute(0).t().dims().begin(), node->attribute(0).t().dims().end());
        v.type = node->attribute(0).t().data_type();
        if (read_values(node->attribute(0).t(), v.v)) values_[node->output(0)] = std::move(v);
      }
      continue;
    }
    if (node->op_type() == "Split") {
      changed = split_values(*node) || changed;
      continue;
    }
    if (node->output_size() != 1 || values_.count(node->output(0))) continue;
    auto computed = compute_value(*node);
    if (!computed || static_cast<double>(computed->v.size()) != model::shape_elements(computed->dims) ||
        static_cast<double>(computed->v.size()) > kMaxFoldedElements)
      continue;
    onnx::TensorProto t;
    using TP = onnx::TensorProto;
    const int type = computed->type;
    t.set_data_type(type);
    for (auto d : computed->dims) t.add_dims(d);
    if (type == TP::INT64) {
      for (double x : computed->v) t.add_int64_data(static_cast<std::int64_t>(x));
    } else if (type == TP::INT32 || type == TP::BOOL || type == TP::INT8 || type == TP::UINT8 || type == TP::INT16 ||
               type == TP::UINT16) {
      for (double x : computed->v) t.add_int32_data(static_cast<std::int32_t>(x));
    } else if (type == TP::FLOAT) {
      for (double x : computed->v) t.add_float_data(static_cast<float>(x));
    } else if (type == TP::DOUBLE) {
      for (double x : computed->v) t.add_double_data(x);
    } else if (type == TP::FLOAT16 || type == TP::BFLOAT16) {  // fp16 exports compute shapes in half precision
      for (double x : computed->v)
        t.add_int32_data(type == TP::FLOAT16 ? half_bits(static_cast<float>(x)) : bf16_bits(static_cast<float>(x)));
    } else {
      continue;
    }
    const std::string out = node->output(0);
    const std::string name = node->name();
    node->Clear();
    node->set_op_type("Constant");
    node->set_name(name);
    node->add_output(out);
    auto* a = node->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = std::move(t);
    values_[out] = std::move(*computed);
    computed_.insert(out);
    changed = true;
  }
  return changed;
}

}  // namespace framesim::trace::onnx_detail
