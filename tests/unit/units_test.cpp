// The one quantity parser: every family of units, SI vs IEC, bits vs bytes, ops vs MACs, and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/units.hpp"

using framesim::core::Dimension;
using framesim::core::parse_quantity;

namespace {
double parse(const char* text, Dimension d) {
  auto q = parse_quantity(text, d);
  EXPECT_TRUE(q.value.has_value()) << text << ": " << q.error;
  return q.value.value_or(NAN);
}
std::string error(const char* text, Dimension d) {
  auto q = parse_quantity(text, d);
  EXPECT_FALSE(q.value.has_value()) << text << " parsed as " << q.value.value_or(0);
  return q.error;
}
}  // namespace

TEST(Units, BytesSiAndIec) {
  EXPECT_DOUBLE_EQ(parse("2 MiB", Dimension::Bytes), 2.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(parse("2 MB", Dimension::Bytes), 2e6);
  EXPECT_DOUBLE_EQ(parse("8 GiB", Dimension::Bytes), 8.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(parse("1 kB", Dimension::Bytes), 1000);
  EXPECT_DOUBLE_EQ(parse("1 KiB", Dimension::Bytes), 1024);
  EXPECT_DOUBLE_EQ(parse("64 B", Dimension::Bytes), 64);
  EXPECT_DOUBLE_EQ(parse("64B", Dimension::Bytes), 64);
}

TEST(Units, BitsAreEighthsOfBytes) {
  EXPECT_DOUBLE_EQ(parse("8 Mb", Dimension::Bytes), 1e6);
  EXPECT_DOUBLE_EQ(parse("16 Gbit", Dimension::Bytes), 2e9);
  EXPECT_DOUBLE_EQ(parse("100 Gb/s", Dimension::BytesPerSecond), 12.5e9);
  EXPECT_DOUBLE_EQ(parse("100 Gbps", Dimension::BytesPerSecond), 12.5e9);
}

TEST(Units, Bandwidth) {
  EXPECT_DOUBLE_EQ(parse("50 GB/s", Dimension::BytesPerSecond), 50e9);
  EXPECT_DOUBLE_EQ(parse("68 GBps", Dimension::BytesPerSecond), 68e9);
  EXPECT_DOUBLE_EQ(parse("1 GiB/s", Dimension::BytesPerSecond), 1073741824.0);
}

TEST(Units, OpsAndMacs) {
  EXPECT_DOUBLE_EQ(parse("2 TFLOP/s", Dimension::OpsPerSecond), 2e12);
  EXPECT_DOUBLE_EQ(parse("4 TOPS", Dimension::OpsPerSecond), 4e12);
  EXPECT_DOUBLE_EQ(parse("1.5 GFLOPS", Dimension::OpsPerSecond), 1.5e9);
  // A multiply-accumulate counts as two operations.
  EXPECT_DOUBLE_EQ(parse("1 TMAC/s", Dimension::OpsPerSecond), 2e12);
  EXPECT_DOUBLE_EQ(parse("3 GMAC", Dimension::Ops), 6e9);
  EXPECT_DOUBLE_EQ(parse("3 GFLOP", Dimension::Ops), 3e9);
}

// Compute rates as datasheets and papers spell them (issue 13): each spelling against its value by hand
// (T = 1e12, G = 1e9, a MAC two operations). The key's dimension decides what "TOPs" means: a rate where a rate
// is due, a count where a count is due.
TEST(Units, ComputeRateSpellings) {
  for (const char* text : {"6 TOP/s", "6 TOPS", "6 TOPs", "6 Tops", "6 tops", "6TOPS", "6 top/s", "6 TFLOP/s",
                           "6 TFLOPS", "6 TFLOPs", "6 TFlops", "6 Tflops", "6 tflops", "6 tflop/s", "3 TMAC/s"})
    EXPECT_DOUBLE_EQ(parse(text, Dimension::OpsPerSecond), 6e12) << text;
  for (const char* text : {"6 GOPS", "6 GOPs", "6 gops", "6 GFLOPS", "6 GFLOPs", "6 gflops", "6 GFlops"})
    EXPECT_DOUBLE_EQ(parse(text, Dimension::OpsPerSecond), 6e9) << text;
  EXPECT_DOUBLE_EQ(parse("6 kops", Dimension::OpsPerSecond), 6e3);
  EXPECT_DOUBLE_EQ(parse("6 POPS", Dimension::OpsPerSecond), 6e15);
  // A count stays a count: "6 TOPs" of work is 6e12 operations; "6 TOPS" where a count is due is a rate, refused.
  EXPECT_DOUBLE_EQ(parse("6 TOPs", Dimension::Ops), 6e12);
  EXPECT_DOUBLE_EQ(parse("6 GFLOPs", Dimension::Ops), 6e9);
  EXPECT_EQ(error("6 TOPS", Dimension::Ops),
            "expected an operation count like \"2 GFLOP\", got \"6 TOPS\" (TOPS is a compute rate)");
}

// The lowercase prefixes "t" and "g" stand only before lowercase rate symbols: nothing else changes meaning,
// "m" (milli) never becomes mega, "p" (pico) never peta, and times keep ms apart from a bare "Ts".
TEST(Units, LowercaseRatePrefixesChangeNothingElse) {
  for (const char* text : {"6 mops", "6 pops", "6 Mflops/s", "6 eops", "6 tOPS", "6 gOPS", "6 tFLOPS"})
    EXPECT_FALSE(parse_quantity(text, Dimension::OpsPerSecond).value) << text;
  EXPECT_DOUBLE_EQ(parse("6 Mops", Dimension::OpsPerSecond), 6e6);
  EXPECT_FALSE(parse_quantity("6 tB", Dimension::Bytes).value);
  EXPECT_FALSE(parse_quantity("6 gB/s", Dimension::BytesPerSecond).value);
  EXPECT_FALSE(parse_quantity("6 Ts", Dimension::Seconds).value);
  EXPECT_FALSE(parse_quantity("6 ts", Dimension::Seconds).value);
  EXPECT_DOUBLE_EQ(parse("6 ms", Dimension::Seconds), 6e-3);
  EXPECT_FALSE(parse_quantity("6 gHz", Dimension::Hertz).value);
  EXPECT_FALSE(parse_quantity("6 tops", Dimension::Ops).value);
}

TEST(Units, TimeAndFrequency) {
  EXPECT_DOUBLE_EQ(parse("12 ms", Dimension::Seconds), 0.012);
  EXPECT_DOUBLE_EQ(parse("100 ns", Dimension::Seconds), 100e-9);
  EXPECT_DOUBLE_EQ(parse("20 us", Dimension::Seconds), 20e-6);
  EXPECT_DOUBLE_EQ(parse("20 \xC2\xB5s", Dimension::Seconds), 20e-6);
  EXPECT_DOUBLE_EQ(parse("20 min", Dimension::Seconds), 1200);
  EXPECT_DOUBLE_EQ(parse("1 h", Dimension::Seconds), 3600);
  EXPECT_DOUBLE_EQ(parse("30 Hz", Dimension::Hertz), 30);
  EXPECT_DOUBLE_EQ(parse("1.1 GHz", Dimension::Hertz), 1.1e9);
  EXPECT_DOUBLE_EQ(parse("30 fps", Dimension::Hertz), 30);
}

TEST(Units, PowerEnergyVoltage) {
  EXPECT_DOUBLE_EQ(parse("4.5 W", Dimension::Watts), 4.5);
  EXPECT_DOUBLE_EQ(parse("190 mW", Dimension::Watts), 0.19);
  EXPECT_DOUBLE_EQ(parse("6.4 mJ", Dimension::Joules), 6.4e-3);
  EXPECT_DOUBLE_EQ(parse("1 mWh", Dimension::Joules), 3.6);
  EXPECT_DOUBLE_EQ(parse("160 pJ", Dimension::JoulesPerByte), 160e-12);
  EXPECT_DOUBLE_EQ(parse("160 pJ/B", Dimension::JoulesPerByte), 160e-12);
  EXPECT_DOUBLE_EQ(parse("20 pJ/bit", Dimension::JoulesPerByte), 160e-12);
  EXPECT_DOUBLE_EQ(parse("0.2 pJ", Dimension::JoulesPerOp), 0.2e-12);
  EXPECT_DOUBLE_EQ(parse("0.4 pJ/MAC", Dimension::JoulesPerOp), 0.2e-12);
  EXPECT_DOUBLE_EQ(parse("0.8 V", Dimension::Volts), 0.8);
  EXPECT_DOUBLE_EQ(parse("800 mV", Dimension::Volts), 0.8);
}

TEST(Units, Thermal) {
  EXPECT_DOUBLE_EQ(parse("85 C", Dimension::Celsius), 85);
  EXPECT_DOUBLE_EQ(parse("85 \xC2\xB0"
                         "C",
                         Dimension::Celsius),
                   85);
  EXPECT_DOUBLE_EQ(parse("-20 C", Dimension::Celsius), -20);
  EXPECT_NEAR(parse("358.15 K", Dimension::Celsius), 85, 1e-9);
  EXPECT_DOUBLE_EQ(parse("8 C/W", Dimension::KelvinPerWatt), 8);
  EXPECT_DOUBLE_EQ(parse("8 K/W", Dimension::KelvinPerWatt), 8);
  EXPECT_DOUBLE_EQ(parse("5 J/C", Dimension::JoulesPerKelvin), 5);
  EXPECT_DOUBLE_EQ(parse("5 J/K", Dimension::JoulesPerKelvin), 5);
}

TEST(Units, Ratio) {
  EXPECT_DOUBLE_EQ(parse("0.7", Dimension::Ratio), 0.7);
  EXPECT_DOUBLE_EQ(parse("70 %", Dimension::Ratio), 0.7);
  EXPECT_DOUBLE_EQ(parse("70%", Dimension::Ratio), 0.7);
}

TEST(Units, BareZeroIsAllowedBareNonZeroIsNot) {
  EXPECT_DOUBLE_EQ(parse("0", Dimension::Seconds), 0);
  EXPECT_EQ(error("68", Dimension::BytesPerSecond),
            "expected a bandwidth like \"68 GB/s\", got \"68\" (the unit is missing)");
}

TEST(Units, WrongDimensionNamesWhatItIs) {
  EXPECT_EQ(error("50 GHz", Dimension::BytesPerSecond),
            "expected a bandwidth like \"68 GB/s\", got \"50 GHz\" (GHz is a frequency)");
  EXPECT_EQ(error("12 ms", Dimension::Bytes), "expected a size like \"2 MiB\", got \"12 ms\" (ms is a time)");
}

TEST(Units, AmbiguousKiloIsRejected) {
  EXPECT_EQ(
      error("64 KB", Dimension::Bytes),
      "expected a size like \"2 MiB\", got \"64 KB\" (\"K\" is ambiguous: write kB for 1000 B or KiB for 1024 B)");
}

TEST(Units, NotANumber) {
  EXPECT_EQ(error("nan GB/s", Dimension::BytesPerSecond),
            "expected a bandwidth like \"68 GB/s\", got \"nan GB/s\" (not a finite number)");
  EXPECT_EQ(error("inf W", Dimension::Watts), "expected a power like \"4.5 W\", got \"inf W\" (not a finite number)");
  EXPECT_EQ(error("fast", Dimension::Hertz), "expected a frequency like \"30 Hz\", got \"fast\"");
  EXPECT_EQ(error("12 parsecs", Dimension::Seconds),
            "expected a time like \"12 ms\", got \"12 parsecs\" (unknown unit \"parsecs\")");
}

TEST(Units, NegativeParsesRangeIsCheckedByTheReader) {
  // The parser keeps the sign (ambient temperatures can be negative); config rejects negative bandwidth.
  EXPECT_DOUBLE_EQ(parse("-50 GB/s", Dimension::BytesPerSecond), -50e9);
}

TEST(Units, Formatting) {
  using namespace framesim::core;
  EXPECT_EQ(format_seconds(1.0737e-3), "1.074 ms");
  EXPECT_EQ(format_seconds(84.05e-6), "84.05 us");
  // From 100 s on, minutes and hours instead of kiloseconds: 1148.3 s = 19 x 60 + 8.3; 1200 s = 20 min;
  // 4830 s = 1 h + 1230 s = 1 h 20.5 min; 99.9 s stays SI; 3599.97 s rounds to 60 min 0 s = 1 h.
  EXPECT_EQ(format_seconds(1148.3), "19 min 8.3 s");
  EXPECT_EQ(format_seconds(1200), "20 min");
  EXPECT_EQ(format_seconds(-150), "-2 min 30 s");
  EXPECT_EQ(format_seconds(4830), "1 h 20.5 min");
  EXPECT_EQ(format_seconds(7200), "2 h");
  EXPECT_EQ(format_seconds(99.9), "99.9 s");
  EXPECT_EQ(format_seconds(3599.97), "1 h");
  // From two days on, days: 1e6 s = 11.574 days. Just below two days, 172799 s = 47 h + 59.98 min, which rounds
  // to 60 min: 48 h.
  EXPECT_EQ(format_seconds(1e6), "11.57 days");
  EXPECT_EQ(format_seconds(172799), "48 h");
  EXPECT_EQ(format_bytes(12.58e6), "12.58 MB");
  EXPECT_EQ(format_capacity(8.0 * 1073741824.0), "8 GiB");
  EXPECT_EQ(format_joules(6.4e-3), "6.4 mJ");
  EXPECT_EQ(format_watts(0.192), "192 mW");
  EXPECT_EQ(format_si(999.96, "s"), "1 ks");
  EXPECT_EQ(format_number(0.08333333, 4), "0.08333");
}

TEST(Units, ASubnormalQuantityIsFormattedNotThrown) {
  // Found by fuzz_units: "2e-323 C" is 2e-308 fC, a subnormal mantissa; reading it back with stod threw
  // out_of_range and ended the process. Expected: the mantissa in scientific notation under the smallest prefix.
  EXPECT_EQ(framesim::core::format_si(2e-323, "C"), "1.976e-308 fC");
  EXPECT_EQ(framesim::core::format_si(-5e-324, "s"), "-4.941e-309 fs");
}

TEST(Units, NumbersAreRoundedAsPrintfRoundsThem) {
  // format_number prints `digits` significant digits, in fixed notation from 1e-4 to 1e15 (trailing zeros
  // dropped), else as %g. The oracle is the C library's printf, which rounds the exact binary value to nearest,
  // ties to even: 50,000 random magnitudes over 40 decades and every digit count, plus exact binary ties.
  std::mt19937_64 rng(25);
  auto printf_text = [](double v, int digits) {
    char buffer[128];
    const double m = std::fabs(v);
    if (m >= 1e-4 && m < 1e15) {
      const int decimals = std::max(0, digits - 1 - static_cast<int>(std::floor(std::log10(m))));
      std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
      std::string s = buffer;
      if (s.find('.') != std::string::npos) {
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
      }
      return s;
    }
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
    return std::string(buffer);
  };
  std::vector<double> values{0.125, 0.375, 2.5, 1.5, 0.0625, 1234.5, 8.125, 999.5, 1e15, 1e-4, 9.99995e-5};
  for (int i = 0; i < 50000; ++i) {
    const double mantissa = std::uniform_real_distribution<double>(1.0, 10.0)(rng);
    const double v = mantissa * std::pow(10.0, static_cast<int>(rng() % 40) - 20);
    values.push_back(rng() % 2 ? v : -v);
  }
  for (const double v : values)
    for (int digits = 1; digits <= 17; ++digits)
      ASSERT_EQ(framesim::core::format_number(v, digits), printf_text(v, digits)) << v << " " << digits;
}
