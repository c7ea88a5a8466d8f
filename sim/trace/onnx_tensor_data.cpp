// ONNX import, values and element types of stored tensors: a TensorProto's values as doubles (raw
// little-endian data or the typed fields), ONNX element type names, framesim's precision for an element type.
#include <cmath>
#include <cstring>
#include <limits>

#include "trace/onnx_importer.hpp"

namespace framesim::trace::onnx_detail {

/// Elements a constant stores, or 0 for an immediate (one element: folded into the instruction).
double weight_elements(const Const& c) {
  const double n = c.stored.value_or(c.shape ? model::shape_elements(*c.shape) : 0.0);
  return n <= 1.0 ? 0.0 : n;
}

double sparse_index_bytes(const onnx::SparseTensorProto& t) {
  const auto& i = t.indices();
  return i.has_raw_data() ? static_cast<double>(i.raw_data().size()) : 8.0 * i.int64_data_size();
}

namespace {

/// A little-endian value of type T at `p`, as double.
template <class T>
double load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return static_cast<double>(v);
}

double half_to_double(std::uint16_t h) {
  const int sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  const double v = exponent == 0 ? std::ldexp(mantissa, -24)
                   : exponent == 31
                       ? (mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity())
                       : std::ldexp(mantissa + 1024, exponent - 25);
  return sign ? -v : v;
}

double bf16_to_double(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return static_cast<double>(f);
}

}  // namespace

/// Values of a small tensor, converted to double (raw_data little-endian, or the typed fields).
bool read_values(const onnx::TensorProto& t, std::vector<double>& out) {
  double n = 1;
  for (auto d : t.dims()) n *= static_cast<double>(d);
  if (n > 4096 || n < 0 || t.data_location() == onnx::TensorProto::EXTERNAL) return false;
  const auto count = static_cast<std::size_t>(n);
  out.clear();
  const std::string& raw = t.raw_data();
  auto from_raw = [&](std::size_t width, double (*convert)(const char*)) {
    if (raw.size() != count * width) return false;
    for (std::size_t i = 0; i < count; ++i) out.push_back(convert(raw.data() + i * width));
    return true;
  };
  auto from_ints = [&](auto convert) {
    for (auto v : t.int32_data()) out.push_back(convert(v));
  };
  auto as_double = [](auto v) { return static_cast<double>(v); };
  using TP = onnx::TensorProto;
  const bool use_raw = t.has_raw_data();
  switch (t.data_type()) {
    case TP::FLOAT:
      if (use_raw) return from_raw(4, load<float>);
      for (float f : t.float_data()) out.push_back(f);
      break;
    case TP::DOUBLE:
      if (use_raw) return from_raw(8, load<double>);
      for (double d : t.double_data()) out.push_back(d);
      break;
    case TP::INT64:
      if (use_raw) return from_raw(8, load<std::int64_t>);
      for (auto v : t.int64_data()) out.push_back(static_cast<double>(v));
      break;
    case TP::UINT64:
    case TP::UINT32:  // both stored in uint64_data
      if (use_raw)
        return t.data_type() == TP::UINT64 ? from_raw(8, load<std::uint64_t>) : from_raw(4, load<std::uint32_t>);
      for (auto v : t.uint64_data()) out.push_back(static_cast<double>(v));
      break;
    case TP::INT32:
      if (use_raw) return from_raw(4, load<std::int32_t>);
      from_ints(as_double);
      break;
    case TP::INT16:
      if (use_raw) return from_raw(2, load<std::int16_t>);
      from_ints(as_double);
      break;
    case TP::UINT16:
      if (use_raw) return from_raw(2, load<std::uint16_t>);
      from_ints(as_double);
      break;
    case TP::INT8:
      if (use_raw) return from_raw(1, load<std::int8_t>);
      from_ints(as_double);
      break;
    case TP::UINT8:
    case TP::BOOL:
      if (use_raw) return from_raw(1, load<std::uint8_t>);
      from_ints(as_double);
      break;
    case TP::FLOAT16:
    case TP::BFLOAT16: {
      // Stored as 16-bit patterns (raw, or one per int32_data entry).
      auto convert = t.data_type() == TP::FLOAT16 ? half_to_double : bf16_to_double;
      if (use_raw) {
        if (raw.size() != count * 2) return false;
        for (std::size_t i = 0; i < count; ++i)
          out.push_back(convert(static_cast<std::uint16_t>(load<std::uint16_t>(raw.data() + i * 2))));
        return true;
      }
      from_ints([convert](std::int32_t v) { return convert(static_cast<std::uint16_t>(v)); });
      break;
    }
    default: return false;
  }
  return out.size() == count;
}

std::string elem_type_name(int t) {
  if (onnx::TensorProto_DataType_IsValid(t))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t));
  return fmt::format("type {}", t);
}

/// framesim's precision for an ONNX element type; `lossy` is set when the bytes per element differ.
Precision precision_of(int elem_type, bool& lossy) {
  using TP = onnx::TensorProto;
  lossy = false;
  switch (elem_type) {
    case TP::FLOAT: return Precision::fp32;
    case TP::FLOAT16: return Precision::fp16;
    case TP::BFLOAT16: return Precision::bf16;
    case TP::INT8:
    case TP::UINT8:
    case TP::BOOL: return Precision::int8;
    case TP::INT16:
    case TP::UINT16: return Precision::int16;
    case TP::INT32:
    case TP::UINT32: return Precision::int32;
    case TP::INT64:
    case TP::UINT64:
    case TP::STRING: lossy = true; return Precision::int32;
    default: lossy = true; return Precision::fp32;  // double, complex, undefined
  }
}

}  // namespace framesim::trace::onnx_detail
