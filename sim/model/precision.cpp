#include "model/precision.hpp"

#include <charconv>

namespace framesim::model {

std::string_view precision_name(Precision p) { return kPrecisionNames.name(p); }

std::optional<Precision> parse_precision(std::string_view name) { return kPrecisionNames.value(name); }

std::vector<std::string> precision_names() { return kPrecisionNames.names(); }

int precision_bits(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::int32: return 32;
    case Precision::fp16:
    case Precision::bf16:
    case Precision::int16: return 16;
    case Precision::int8: return 8;
    case Precision::int4: return 4;
  }
  return 32;
}

bool is_float(Precision p) { return p == Precision::fp32 || p == Precision::fp16 || p == Precision::bf16; }

namespace {
// "w4a16": integer weights of 4 bits, activations of 16 bits (float for 16/32 bits, integer for 8/4).
std::optional<Precision> from_bits(int bits) {
  switch (bits) {
    case 32: return Precision::fp32;
    case 16: return Precision::fp16;  // the usual meaning of w4a16 / w8a16
    case 8: return Precision::int8;
    case 4: return Precision::int4;
    default: return std::nullopt;
  }
}
}  // namespace

std::optional<LayerPrecision> parse_layer_precision(std::string_view text) {
  // "wXaY/P": weights, activations, and arithmetic in P (when it is not the activations' precision).
  if (const auto slash = text.find('/'); slash != std::string_view::npos) {
    auto base = parse_layer_precision(text.substr(0, slash));
    auto compute = parse_precision(text.substr(slash + 1));
    if (!base || !compute) return std::nullopt;
    base->compute = *compute;
    return base;
  }
  if (auto p = parse_precision(text)) return LayerPrecision{*p, *p, *p};
  // wXaY
  if (text.size() < 4 || text[0] != 'w') return std::nullopt;
  const auto a = text.find('a');
  if (a == std::string_view::npos || a < 2) return std::nullopt;
  int wbits = 0;
  int abits = 0;
  const auto w_part = text.substr(1, a - 1);
  const auto a_part = text.substr(a + 1);
  auto r1 = std::from_chars(w_part.data(), w_part.data() + w_part.size(), wbits);
  auto r2 = std::from_chars(a_part.data(), a_part.data() + a_part.size(), abits);
  if (r1.ec != std::errc() || r1.ptr != w_part.data() + w_part.size()) return std::nullopt;
  if (r2.ec != std::errc() || r2.ptr != a_part.data() + a_part.size()) return std::nullopt;
  auto w = from_bits(wbits);
  auto act = from_bits(abits);
  if (!w || !act) return std::nullopt;
  return LayerPrecision{*w, *act, *act};
}

std::string layer_precision_name(const LayerPrecision& p) {
  if (p.weights == p.activations && p.activations == p.compute) return std::string(precision_name(p.weights));
  std::string out =
      "w" + std::to_string(precision_bits(p.weights)) + "a" + std::to_string(precision_bits(p.activations));
  if (p.compute != p.activations) out += "/" + std::string(precision_name(p.compute));
  return out;
}

}  // namespace framesim::model
