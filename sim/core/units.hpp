// Quantities with units: the one parser for every physical value a user writes, and the
// formatters for every value framesim prints.
//
// Values are converted to SI base units: bytes, seconds, operations (a multiply-accumulate
// counts as two), hertz, watts, joules, degrees Celsius, kelvin per watt, joules per kelvin, volts.
// SI prefixes are powers of ten (GB = 1e9 B); IEC prefixes are powers of two (GiB = 2^30 B).
// A bare number where a unit is due is an error, except zero.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace framesim::core {

enum class Dimension {
  Bytes,            // B, kB, MiB, Gb (bits), ...
  BytesPerSecond,   // GB/s, GiB/s, Gb/s, GBps, Gbps
  Ops,              // OP, FLOP, MAC (= 2 OP)
  OpsPerSecond,     // TOP/s, TOPS, TOPs, tops, GOPS, TFLOP/s, TFLOPS, TFLOPs, gflops, TMAC/s
  Seconds,          // s, ms, us, µs, ns, ps, min, h
  Hertz,            // Hz, kHz, MHz, GHz, fps
  Watts,            // W, mW, uW, kW
  Joules,           // J, mJ, uJ, nJ, pJ, fJ, Wh, mWh
  JoulesPerByte,    // pJ, pJ/B, pJ/bit
  JoulesPerOp,      // pJ, pJ/op, pJ/FLOP, pJ/MAC
  Celsius,          // C, °C, degC, K
  KelvinPerWatt,    // C/W, K/W
  JoulesPerKelvin,  // J/C, J/K
  Volts,            // V, mV
  MetresPerSecond,  // m/s, km/h, mm/s
  Ratio,            // 0.7 or 70 %
};

/// Human name of a dimension, e.g. "bandwidth".
std::string_view dimension_name(Dimension d);
/// A valid example of a dimension, e.g. "68 GB/s".
std::string_view dimension_example(Dimension d);
/// The symbol of the SI base unit parse_quantity converts to, e.g. "B/s" for a bandwidth; empty for a ratio.
std::string_view base_unit(Dimension d);

/// Every spelling of a unit parse_quantity accepts for `d`, prefixed or not ("B", "kB", "KiB", "bit", ...; "%" for
/// a ratio): for tools that check quantities without framesim (the JSON Schemas of `framesim schema`).
std::vector<std::string> unit_spellings(Dimension d);

/// The range framesim accepts for a dimension, in its SI base unit (README "Limits"). Values outside it are
/// errors at parse time: they are typos or overflow (1e308 GHz), never a device or a scenario.
struct QuantityLimits {
  double smallest;  // smallest non-zero magnitude (0 itself is allowed where the key allows it)
  double largest;   // largest magnitude
  double lowest;    // lowest value (-largest, or absolute zero for a temperature)
};
/// The one table of limits, by dimension.
const QuantityLimits& quantity_limits(Dimension d);
/// Why `value_si` (a value in base units of `d`) is outside the limits, e.g. "too large: at most 1e+07 s"; nothing if
/// inside.
std::optional<std::string> quantity_range_problem(double value_si, Dimension d);

/// Result of parsing one quantity: a value in SI base units, or a message for the user.
struct ParsedQuantity {
  std::optional<double> value;
  std::string error;  // set when !value: `expected a bandwidth like "68 GB/s", got "68"`
};

/// Parses `text` (e.g. "50 GB/s", "1.5GHz", "70 %") as a quantity of dimension `dim`.
/// Rejects NaN, infinities, a missing unit (unless the number is 0), a unit of another dimension, and a value
/// outside quantity_limits(dim) (overflow to infinity, underflow to zero or a denormal included).
ParsedQuantity parse_quantity(std::string_view text, Dimension dim);

// ---- formatting for reports (4 significant digits, engineering prefixes) ----
std::string format_seconds(double seconds);        // "1.074 ms", "84.05 us"; from 100 s: "19 min 8.3 s", "1 h 20 min"
std::string format_bytes(double bytes);            // "12.58 MB"
std::string format_capacity(double bytes);         // "8 GiB" (IEC: how memories are sized)
std::string format_bandwidth(double bytes_per_s);  // "50 GB/s"
std::string format_ops(double ops);                // "2.147 GOP"
std::string format_ops_rate(double ops_per_s);     // "2 TOP/s"
std::string format_joules(double joules);          // "6.4 mJ"
std::string format_watts(double watts);            // "190 mW"
std::string format_hertz(double hertz);            // "1.3 GHz"
/// `value` with an SI prefix and `unit`, `digits` significant digits, trailing zeros removed.
std::string format_si(double value, std::string_view unit, int digits = 4);
/// A plain number with `digits` significant digits and no exponent for ordinary magnitudes.
std::string format_number(double value, int digits = 4);

}  // namespace framesim::core
