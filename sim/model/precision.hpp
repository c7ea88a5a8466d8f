// Numeric precisions of weights, activations and arithmetic, and per-precision tables.
#pragma once

#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/enum_table.hpp"

namespace framesim::model {

enum class Precision { fp32, fp16, bf16, int32, int16, int8, int4 };
inline constexpr std::size_t kPrecisionCount = 7;
inline constexpr std::array<Precision, kPrecisionCount> kAllPrecisions{
    Precision::fp32,  Precision::fp16, Precision::bf16, Precision::int32,
    Precision::int16, Precision::int8, Precision::int4};
/// The names of the precisions as files write them, in kAllPrecisions' order (the one mapping, core/enum_table.hpp).
inline constexpr auto kPrecisionNames = core::enum_table<Precision>({{Precision::fp32, "fp32"},
                                                                     {Precision::fp16, "fp16"},
                                                                     {Precision::bf16, "bf16"},
                                                                     {Precision::int32, "int32"},
                                                                     {Precision::int16, "int16"},
                                                                     {Precision::int8, "int8"},
                                                                     {Precision::int4, "int4"}});

std::string_view precision_name(Precision p);
std::optional<Precision> parse_precision(std::string_view name);
/// Every precision name, for "allowed values" messages.
std::vector<std::string> precision_names();
/// Storage bits per element.
int precision_bits(Precision p);
bool is_float(Precision p);

/// Bytes to store `elements` values of precision `p` (sub-byte types packed, rounded up to a whole byte).
inline double tensor_bytes(double elements, Precision p) { return std::ceil(elements * precision_bits(p) / 8.0); }

/// A value per precision; unset entries mean "this unit has no such datapath".
template <class T>
class PerPrecision {
 public:
  const std::optional<T>& operator[](Precision p) const { return values_[static_cast<std::size_t>(p)]; }
  std::optional<T>& operator[](Precision p) { return values_[static_cast<std::size_t>(p)]; }
  bool any() const {
    for (const auto& v : values_)
      if (v) return true;
    return false;
  }

 private:
  std::array<std::optional<T>, kPrecisionCount> values_{};
};

/// Weights and activations may differ (w4a16: int4 weights, fp16 activations). Arithmetic runs in `compute`.
struct LayerPrecision {
  Precision weights = Precision::fp32;
  Precision activations = Precision::fp32;
  Precision compute = Precision::fp32;
};

/// Parses "fp16", "int8", "w4a16", "w8a8", "w8a16/int8" into a LayerPrecision. Compute precision defaults to the
/// activation precision (dequantised weights are multiplied in the activations' format); "/P" names it.
std::optional<LayerPrecision> parse_layer_precision(std::string_view text);
std::string layer_precision_name(const LayerPrecision& p);

}  // namespace framesim::model
