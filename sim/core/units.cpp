#include "core/units.hpp"

#include "core/text.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

namespace framesim::core {
namespace {

// kLowercase: "g" and "t" for giga and tera, only before lowercase rate symbols ("tops", "gflops"), where no
// small prefix can stand (a rate takes no milli or pico) and so "t", "g" cannot be misread.
enum PrefixSet : unsigned { kNone = 0, kLarge = 1, kSmall = 2, kIec = 4, kLowercase = 8, kAll = kLarge | kSmall };

struct UnitSymbol {
  std::string_view symbol;
  double factor;      // multiply by this to get the SI base unit
  unsigned prefixes;  // which prefixes may stand before the symbol
  double offset = 0;  // added after scaling (kelvin -> celsius)
};

struct Prefix {
  std::string_view text;
  double factor;
  PrefixSet set;
};

constexpr std::array kPrefixes{
    Prefix{"k", 1e3, kLarge},
    Prefix{"M", 1e6, kLarge},
    Prefix{"G", 1e9, kLarge},
    Prefix{"T", 1e12, kLarge},
    Prefix{"P", 1e15, kLarge},
    Prefix{"E", 1e18, kLarge},
    Prefix{"m", 1e-3, kSmall},
    Prefix{"u", 1e-6, kSmall},
    Prefix{"\xC2\xB5", 1e-6, kSmall},
    Prefix{"\xCE\xBC", 1e-6, kSmall},
    Prefix{"n", 1e-9, kSmall},
    Prefix{"p", 1e-12, kSmall},
    Prefix{"f", 1e-15, kSmall},
    Prefix{"Ki", 1024.0, kIec},
    Prefix{"Mi", 1048576.0, kIec},
    Prefix{"Gi", 1073741824.0, kIec},
    Prefix{"Ti", 1099511627776.0, kIec},
    Prefix{"Pi", 1125899906842624.0, kIec},
    Prefix{"g", 1e9, kLowercase},
    Prefix{"t", 1e12, kLowercase},
};

constexpr unsigned kBytePrefixes = kLarge | kIec;

const std::vector<UnitSymbol>& symbols(Dimension d) {
  static const std::vector<UnitSymbol> bytes{{"B", 1, kBytePrefixes},
                                             {"byte", 1, kBytePrefixes},
                                             {"bytes", 1, kBytePrefixes},
                                             {"bit", 0.125, kBytePrefixes},
                                             {"b", 0.125, kBytePrefixes}};
  static const std::vector<UnitSymbol> bytes_per_s{{"B/s", 1, kBytePrefixes},       {"Bps", 1, kBytePrefixes},
                                                   {"byte/s", 1, kBytePrefixes},    {"b/s", 0.125, kBytePrefixes},
                                                   {"bit/s", 0.125, kBytePrefixes}, {"bps", 0.125, kBytePrefixes}};
  static const std::vector<UnitSymbol> ops{
      {"OP", 1, kLarge},    {"OPs", 1, kLarge},  {"op", 1, kLarge},  {"ops", 1, kLarge},  {"FLOP", 1, kLarge},
      {"FLOPs", 1, kLarge}, {"flop", 1, kLarge}, {"MAC", 2, kLarge}, {"MACs", 2, kLarge}, {"MACC", 2, kLarge}};
  // A rate as datasheets spell it: TOP/s, TOPS, TOPs, Tops, tops, TFLOP/s, TFLOPS, TFLOPs, GFlops, gflops, ...
  // ("TOPs" is a count where a count is due: the key's dimension decides, never the spelling alone).
  constexpr unsigned kRatePrefixes = kLarge | kLowercase;
  static const std::vector<UnitSymbol> ops_per_s{
      {"OP/s", 1, kLarge},         {"OPS", 1, kLarge},        {"OPs", 1, kLarge},           {"op/s", 1, kRatePrefixes},
      {"ops/s", 1, kRatePrefixes}, {"ops", 1, kRatePrefixes}, {"FLOP/s", 1, kLarge},        {"FLOPS", 1, kLarge},
      {"FLOPs", 1, kLarge},        {"Flops", 1, kLarge},      {"flop/s", 1, kRatePrefixes}, {"flops", 1, kRatePrefixes},
      {"MAC/s", 2, kLarge},        {"MACS", 2, kLarge},       {"MACC/s", 2, kLarge}};
  static const std::vector<UnitSymbol> seconds{
      {"s", 1, kSmall}, {"sec", 1, kNone}, {"min", 60, kNone}, {"h", 3600, kNone}};
  static const std::vector<UnitSymbol> hertz{{"Hz", 1, kAll}, {"fps", 1, kNone}};
  static const std::vector<UnitSymbol> watts{{"W", 1, kAll}};
  static const std::vector<UnitSymbol> joules{{"J", 1, kAll}, {"Wh", 3600, kAll}};
  static const std::vector<UnitSymbol> joules_per_byte{
      {"J", 1, kAll}, {"J/B", 1, kAll}, {"J/byte", 1, kAll}, {"J/bit", 8, kAll}, {"J/b", 8, kAll}};
  static const std::vector<UnitSymbol> joules_per_op{{"J", 1, kAll},      {"J/op", 1, kAll},   {"J/OP", 1, kAll},
                                                     {"J/FLOP", 1, kAll}, {"J/flop", 1, kAll}, {"J/MAC", 0.5, kAll}};
  static const std::vector<UnitSymbol> celsius{{"C", 1, kNone},
                                               {"\xC2\xB0"
                                                "C",
                                                1, kNone},
                                               {"degC", 1, kNone},
                                               {"K", 1, kNone, -273.15}};
  static const std::vector<UnitSymbol> kelvin_per_watt{{"C/W", 1, kNone},
                                                       {"\xC2\xB0"
                                                        "C/W",
                                                        1, kNone},
                                                       {"K/W", 1, kNone},
                                                       {"degC/W", 1, kNone}};
  static const std::vector<UnitSymbol> joules_per_kelvin{{"J/C", 1, kAll},
                                                         {"J/\xC2\xB0"
                                                          "C",
                                                          1, kAll},
                                                         {"J/K", 1, kAll},
                                                         {"J/degC", 1, kAll}};
  static const std::vector<UnitSymbol> volts{{"V", 1, kAll}};
  static const std::vector<UnitSymbol> speed{{"m/s", 1, kAll}, {"km/h", 1 / 3.6, kNone}};
  static const std::vector<UnitSymbol> ratio{{"%", 0.01, kNone}};
  switch (d) {
    case Dimension::Bytes: return bytes;
    case Dimension::BytesPerSecond: return bytes_per_s;
    case Dimension::Ops: return ops;
    case Dimension::OpsPerSecond: return ops_per_s;
    case Dimension::Seconds: return seconds;
    case Dimension::Hertz: return hertz;
    case Dimension::Watts: return watts;
    case Dimension::Joules: return joules;
    case Dimension::JoulesPerByte: return joules_per_byte;
    case Dimension::JoulesPerOp: return joules_per_op;
    case Dimension::Celsius: return celsius;
    case Dimension::KelvinPerWatt: return kelvin_per_watt;
    case Dimension::JoulesPerKelvin: return joules_per_kelvin;
    case Dimension::Volts: return volts;
    case Dimension::MetresPerSecond: return speed;
    case Dimension::Ratio: return ratio;
  }
  return ratio;
}

const std::array kAllDimensions{Dimension::Bytes,
                                Dimension::BytesPerSecond,
                                Dimension::Ops,
                                Dimension::OpsPerSecond,
                                Dimension::Seconds,
                                Dimension::Hertz,
                                Dimension::Watts,
                                Dimension::Joules,
                                Dimension::Celsius,
                                Dimension::KelvinPerWatt,
                                Dimension::JoulesPerKelvin,
                                Dimension::Volts,
                                Dimension::MetresPerSecond,
                                Dimension::Ratio};

// The limits (README "Limits"): generous enough for any real device or scenario, tight enough that a
// value can be multiplied by another one without overflowing a double or underflowing to a denormal.
struct LimitRow {
  Dimension dimension;
  QuantityLimits limits;
};
constexpr double kAbsoluteZero_C = -273.15;
constexpr std::array kLimits{
    LimitRow{Dimension::Bytes, {1e-3, 1e18, -1e18}},           // 1 EB
    LimitRow{Dimension::BytesPerSecond, {1e-3, 1e16, -1e16}},  // 10 PB/s
    LimitRow{Dimension::Ops, {1e-3, 1e21, -1e21}},             // 1 ZOP
    LimitRow{Dimension::OpsPerSecond, {1e-3, 1e18, -1e18}},    // 1 EOP/s
    LimitRow{Dimension::Seconds, {1e-15, 1e7, -1e7}},          // 1 fs .. 116 days
    LimitRow{Dimension::Hertz, {1e-6, 1e12, -1e12}},           // 1 THz
    LimitRow{Dimension::Watts, {1e-15, 1e6, -1e6}},            // 1 MW
    LimitRow{Dimension::Joules, {1e-21, 1e12, -1e12}},
    LimitRow{Dimension::JoulesPerByte, {1e-21, 1e-3, -1e-3}},  // 1 mJ per byte
    LimitRow{Dimension::JoulesPerOp, {1e-21, 1e-3, -1e-3}},
    LimitRow{Dimension::Celsius, {0, 1e4, kAbsoluteZero_C}},  // absolute zero .. 10000 C
    LimitRow{Dimension::KelvinPerWatt, {1e-6, 1e6, -1e6}},
    LimitRow{Dimension::JoulesPerKelvin, {1e-6, 1e9, -1e9}},
    LimitRow{Dimension::Volts, {1e-6, 1e4, -1e4}},
    LimitRow{Dimension::MetresPerSecond, {1e-9, 3e8, -3e8}},  // the speed of light
    LimitRow{Dimension::Ratio, {1e-12, 1e18, -1e18}},         // also every plain number in YAML
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// Scale factor (and offset) of `unit` in dimension `d`, if it is one of its units.
std::optional<std::pair<double, double>> unit_factor(std::string_view unit, Dimension d) {
  for (const auto& sym : symbols(d)) {
    if (unit.size() < sym.symbol.size() || unit.substr(unit.size() - sym.symbol.size()) != sym.symbol) continue;
    const std::string_view prefix = unit.substr(0, unit.size() - sym.symbol.size());
    if (prefix.empty()) return std::pair{sym.factor, sym.offset};
    for (const auto& p : kPrefixes) {
      if (p.text == prefix && (sym.prefixes & p.set) != 0) return std::pair{sym.factor * p.factor, sym.offset};
    }
  }
  return std::nullopt;
}

struct SplitNumber {
  std::optional<double> number;
  std::string_view unit;
  bool out_of_range = false;  // a number too large or too small for a double (1e400)
};

SplitNumber split_number(std::string_view text) {
  text = trim(text);
  const char* begin = text.data();
  const char* end = begin + text.size();
  const char* p = begin;
  if (p != end && *p == '+') ++p;  // from_chars does not accept a leading '+'
  double value = 0;
  auto [ptr, ec] = std::from_chars(p, end, value);
  if (ec == std::errc::result_out_of_range) return {std::nullopt, {}, true};
  if (ec != std::errc() || ptr == p) return {};
  return {value, trim(std::string_view(ptr, static_cast<std::size_t>(end - ptr)))};
}

std::string expected_message(Dimension d, std::string_view text) {
  return fmt::format("expected {} like \"{}\", got \"{}\"", with_article(dimension_name(d)), dimension_example(d),
                     quote_capped(text));
}

std::string limit_text(double v, Dimension d) {
  const std::string_view unit = base_unit(d);
  return unit.empty() ? fmt::format("{:g}", v) : fmt::format("{:g} {}", v, unit);
}

}  // namespace

std::string_view dimension_name(Dimension d) {
  switch (d) {
    case Dimension::Bytes: return "size";
    case Dimension::BytesPerSecond: return "bandwidth";
    case Dimension::Ops: return "operation count";
    case Dimension::OpsPerSecond: return "compute rate";
    case Dimension::Seconds: return "time";
    case Dimension::Hertz: return "frequency";
    case Dimension::Watts: return "power";
    case Dimension::Joules: return "energy";
    case Dimension::JoulesPerByte: return "energy per byte";
    case Dimension::JoulesPerOp: return "energy per operation";
    case Dimension::Celsius: return "temperature";
    case Dimension::KelvinPerWatt: return "thermal resistance";
    case Dimension::JoulesPerKelvin: return "thermal capacitance";
    case Dimension::Volts: return "voltage";
    case Dimension::MetresPerSecond: return "speed";
    case Dimension::Ratio: return "ratio";
  }
  return "quantity";
}

std::string_view dimension_example(Dimension d) {
  switch (d) {
    case Dimension::Bytes: return "2 MiB";
    case Dimension::BytesPerSecond: return "68 GB/s";
    case Dimension::Ops: return "2 GFLOP";
    case Dimension::OpsPerSecond: return "2 TFLOP/s";
    case Dimension::Seconds: return "12 ms";
    case Dimension::Hertz: return "30 Hz";
    case Dimension::Watts: return "4.5 W";
    case Dimension::Joules: return "6.4 mJ";
    case Dimension::JoulesPerByte: return "160 pJ";
    case Dimension::JoulesPerOp: return "0.2 pJ";
    case Dimension::Celsius: return "85 C";
    case Dimension::KelvinPerWatt: return "8 C/W";
    case Dimension::JoulesPerKelvin: return "5 J/C";
    case Dimension::Volts: return "0.8 V";
    case Dimension::MetresPerSecond: return "1 m/s";
    case Dimension::Ratio: return "0.7";
  }
  return "";
}

std::string_view base_unit(Dimension d) {
  if (d == Dimension::Ratio) return {};  // its only symbol, "%", is a hundredth
  return symbols(d).front().symbol;      // each dimension lists its base unit first
}

std::vector<std::string> unit_spellings(Dimension d) {
  std::vector<std::string> out;
  for (const auto& sym : symbols(d)) {
    out.emplace_back(sym.symbol);
    for (const auto& p : kPrefixes)
      if ((sym.prefixes & p.set) != 0) out.push_back(std::string(p.text) + std::string(sym.symbol));
  }
  return out;
}

const QuantityLimits& quantity_limits(Dimension d) {
  for (const auto& row : kLimits)
    if (row.dimension == d) return row.limits;
  return kLimits.back().limits;
}

std::optional<std::string> quantity_range_problem(double value_si, Dimension d) {
  const QuantityLimits& l = quantity_limits(d);
  if (std::isnan(value_si)) return std::string("not a finite number");
  if (value_si > l.largest) return fmt::format("too large: at most {}", limit_text(l.largest, d));
  if (d == Dimension::Celsius && value_si < l.lowest)
    return fmt::format("below absolute zero ({} C)", format_number(kAbsoluteZero_C, 5));
  if (value_si < l.lowest) return fmt::format("too large: at least {}", limit_text(l.lowest, d));
  if (value_si != 0.0 && std::fabs(value_si) < l.smallest)
    return fmt::format("too small: a {} other than 0 is at least {}", dimension_name(d), limit_text(l.smallest, d));
  return std::nullopt;
}

ParsedQuantity parse_quantity(std::string_view text, Dimension dim) {
  const SplitNumber split = split_number(text);
  if (split.out_of_range) return {std::nullopt, expected_message(dim, text) + " (the number is out of range)"};
  if (!split.number) return {std::nullopt, expected_message(dim, text)};
  const double number = *split.number;
  if (!std::isfinite(number)) return {std::nullopt, expected_message(dim, text) + " (not a finite number)"};
  // A number that is not 0 must not become 0 (or a denormal) or infinite once scaled: a range error.
  auto checked = [&](double value_si) -> ParsedQuantity {
    if (number != 0.0 && value_si == 0.0 && dim != Dimension::Celsius)
      return {std::nullopt, fmt::format("{} (too small: a {} other than 0 is at least {})", expected_message(dim, text),
                                        dimension_name(dim), limit_text(quantity_limits(dim).smallest, dim))};
    if (auto problem = quantity_range_problem(value_si, dim))
      return {std::nullopt, fmt::format("{} ({})", expected_message(dim, text), *problem)};
    return {value_si, {}};
  };
  if (split.unit.empty()) {
    if (dim == Dimension::Ratio || number == 0.0) return checked(number);
    return {std::nullopt, expected_message(dim, text) + " (the unit is missing)"};
  }
  if (auto f = unit_factor(split.unit, dim)) return checked(number * f->first + f->second);

  std::string message = expected_message(dim, text);
  const bool bytes_like = dim == Dimension::Bytes || dim == Dimension::BytesPerSecond;
  if (bytes_like && split.unit.size() >= 2 && split.unit[0] == 'K' && split.unit[1] != 'i') {
    return {std::nullopt, message + " (\"K\" is ambiguous: write kB for 1000 B or KiB for 1024 B)"};
  }
  for (Dimension other : kAllDimensions) {
    if (other == dim || other == Dimension::Ratio) continue;
    if (unit_factor(split.unit, other)) {
      const std::string_view name = dimension_name(other);
      const bool vowel = name.find_first_of("aeiou") == 0;
      return {std::nullopt,
              fmt::format("{} ({} is {} {})", message, quote_capped(split.unit), vowel ? "an" : "a", name)};
    }
  }
  return {std::nullopt, fmt::format("{} (unknown unit \"{}\")", message, quote_capped(split.unit))};
}

namespace {

/// `value` printed by std::to_chars in `format` with `precision`: correctly rounded (ties to even), the same text as
/// printf's %.*f / %.*g, without parsing a format string at every call.
std::string printed(double value, std::chars_format format, int precision) {
  std::array<char, 64> buffer;  // a fixed value here is below 1e15 with at most 18 decimals; %g is shorter
  const auto [end, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, format, precision);
  if (error != std::errc())
    return format == std::chars_format::fixed ? fmt::format("{:.{}f}", value, precision)
                                              : fmt::format("{:.{}g}", value, precision);
  return std::string(buffer.data(), end);
}

}  // namespace

std::string format_number(double value, int digits) {
  if (value == 0.0) return "0";
  if (!std::isfinite(value)) return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e-4 && magnitude < 1e15) {
    const int exponent = static_cast<int>(std::floor(std::log10(magnitude)));
    const int decimals = std::max(0, digits - 1 - exponent);
    std::string s = printed(value, std::chars_format::fixed, decimals);
    if (s.find('.') != std::string::npos) {
      while (s.back() == '0') s.pop_back();
      if (s.back() == '.') s.pop_back();
    }
    return s;
  }
  return printed(value, std::chars_format::general, digits);
}

std::string format_si(double value, std::string_view unit, int digits) {
  static constexpr std::array<std::string_view, 11> kNames{"f", "p", "n", "u", "m", "", "k", "M", "G", "T", "P"};
  auto joined = [&](const std::string& number, std::string_view prefix) {
    std::string out;
    out.reserve(number.size() + 1 + prefix.size() + unit.size());
    out.append(number).append(" ").append(prefix).append(unit);
    return out;
  };
  if (value == 0.0 || !std::isfinite(value)) return joined(format_number(value, digits), "");
  int exponent3 = static_cast<int>(std::floor(std::log10(std::fabs(value)) / 3.0));
  exponent3 = std::clamp(exponent3, -5, 5);
  double mantissa = value / std::pow(10.0, 3 * exponent3);
  // Rounding can carry to 1000 (999.96 -> "1000"): move to the next prefix then.
  std::string text = format_number(mantissa, digits);
  const bool plain = text.find_first_of("eE") == std::string::npos;  // fixed notation: count its integer digits
  const std::size_t integer_digits = std::min(text.find('.'), text.size()) - (text[0] == '-' ? 1 : 0);
  // strtod, not stod: a subnormal mantissa (2e-323 C is 2e-308 fC) is a value, where stod throws out_of_range.
  const bool carried = plain ? integer_digits >= 4 : std::fabs(std::strtod(text.c_str(), nullptr)) >= 1000.0;
  if (carried && exponent3 < 5) {
    ++exponent3;
    mantissa = value / std::pow(10.0, 3 * exponent3);
    text = format_number(mantissa, digits);
  }
  return joined(text, kNames[static_cast<std::size_t>(exponent3) + 5]);
}

std::string format_seconds(double seconds) {
  // Below 100 s an SI prefix reads well; beyond, kiloseconds do not: minutes and seconds (to 0.1 s), hours and
  // minutes (to 0.1 min), from two days on days (4 digits).
  const double a = std::fabs(seconds);
  if (!(a >= 100) || !std::isfinite(a)) return format_si(seconds, "s");
  const std::string sign = seconds < 0 ? "-" : "";
  if (a < 3600) {
    double minutes = std::floor(a / 60);
    double rest = std::round((a - 60 * minutes) * 10) / 10;
    if (rest >= 60) minutes += 1, rest = 0;
    if (minutes >= 60) return sign + "1 h";
    return sign + fmt::format("{} min", format_number(minutes)) +
           (rest > 0 ? fmt::format(" {} s", format_number(rest)) : "");
  }
  if (a >= 2 * 86400) {
    const double days = a / 86400;
    return sign + (days < 1e4 ? format_number(days, 4) : fmt::format("{:.4g}", days)) + " days";
  }
  double hours = std::floor(a / 3600);
  double minutes = std::round((a - 3600 * hours) / 6) / 10;
  if (minutes >= 60) hours += 1, minutes = 0;
  return sign + fmt::format("{} h", format_number(hours, 15)) +
         (minutes > 0 ? fmt::format(" {} min", format_number(minutes)) : "");
}
std::string format_bytes(double bytes) { return format_si(bytes, "B"); }
std::string format_capacity(double bytes) {
  static constexpr std::array<std::string_view, 6> kNames{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t i = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024.0 && i + 1 < kNames.size()) {
    v /= 1024.0;
    ++i;
  }
  return fmt::format("{} {}", format_number(v, 4), kNames[i]);
}
std::string format_bandwidth(double bytes_per_s) { return format_si(bytes_per_s, "B/s"); }
std::string format_ops(double ops) { return format_si(ops, "OP"); }
std::string format_ops_rate(double ops_per_s) { return format_si(ops_per_s, "OP/s"); }
std::string format_joules(double joules) { return format_si(joules, "J"); }
std::string format_watts(double watts) { return format_si(watts, "W"); }
std::string format_hertz(double hertz) { return format_si(hertz, "Hz"); }

}  // namespace framesim::core
