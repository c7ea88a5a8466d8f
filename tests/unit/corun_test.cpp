// Calibration from co-run measurements (model/corun.hpp) against closed forms. The hardware: the seed device
// (2 TFLOP/s, 50 GB/s DRAM) with two units a and b on its DRAM and the curve f(rho) = 1 + 2 rho (one point
// (1, 3)), so a unit's factor is s = 1 + 2 sigma rho.
#include <gtest/gtest.h>

#include <cmath>

#include "model/corun.hpp"
#include "test_support.hpp"

using namespace framesim::model;
using framesim::testing::seed_device;

namespace {

constexpr double kCurveSlope = 2;  // f(rho) = 1 + 2 rho

HardwareSpec two_units(double sigma_a, double sigma_b) {
  auto hw = seed_device();
  hw.memory[0].contention = ContentionCurve{{{1.0, 1 + kCurveSlope}}};
  hw.memory[0].users = {"a", "b"};
  auto a = hw.units[0];
  a.name = "a";
  a.contention_sensitivity = sigma_a;
  auto b = a;
  b.name = "b";
  b.contention_sensitivity = sigma_b;
  hw.units = {a, b};
  return hw;
}

/// One kernel of `ops` fp32 operations moving `bytes` through DRAM.
std::vector<Kernel> network(double ops, double bytes) {
  Kernel k;
  k.name = "k";
  k.ops[Precision::fp32] = ops;
  k.total_ops = ops;
  k.bytes = {bytes};
  return {k};
}

/// Both members memory-bound (1 kop against 10 MB): with T0 = M / B, rho_a = (M_b / T_b) / B = 1 / s_b, so
///   s_a = 1 + A / s_b,  s_b = 1 + B / s_a   (A = 2 sigma_a, B = 2 sigma_b)
/// whence s_b = s_a + B - A and s_a^2 + (B - A - 1) s_a - B = 0.
std::pair<double, double> closed_form(double sigma_a, double sigma_b) {
  const double a = kCurveSlope * sigma_a, b = kCurveSlope * sigma_b;
  const double s_a = (-(b - a - 1) + std::sqrt((b - a - 1) * (b - a - 1) + 4 * b)) / 2;
  return {s_a, s_a + b - a};
}

std::vector<CorunMember> memory_bound_pair() {
  return {{"net_a", 0, network(1e3, 10e6)}, {"net_b", 1, network(1e3, 20e6)}};
}

}  // namespace

TEST(Corun, AloneNobodySlowsDown) {
  const auto hw = two_units(1, 1);
  EXPECT_DOUBLE_EQ(corun_slowdowns(hw, {{"net_a", 0, network(1e3, 10e6)}})[0], 1.0);
}

TEST(Corun, MemoryBoundPairMatchesTheClosedFixedPoint) {
  // sigma = (0.5, 2): s_a^2 + 2 s_a - 4 = 0, s_a = sqrt(5) - 1 = 1.23607, s_b = 4.23607.
  const auto s = corun_slowdowns(two_units(0.5, 2), memory_bound_pair());
  EXPECT_NEAR(s[0], std::sqrt(5.0) - 1, 1e-9);
  EXPECT_NEAR(s[1], std::sqrt(5.0) + 2, 1e-9);
}

TEST(Corun, FitRecoversSensitivitiesFromASyntheticTable) {
  const auto [s_a, s_b] = closed_form(0.5, 2);  // the table, generated without framesim's model
  const auto members = memory_bound_pair();
  const std::vector<CorunRow> rows{{"a beside b", members, 0, s_a}, {"b beside a", members, 1, s_b}};
  CorunOptions options;
  options.lambda = 0;
  options.fit_overlap = false;  // sensitivities only: overlap 1 everywhere, as the table was made
  const auto fit = fit_corun(two_units(1, 1), rows, options);  // priors 1, 1
  ASSERT_EQ(fit.parameters.size(), 2u);
  EXPECT_NEAR(fit.parameters[0].fitted, 0.5, 1e-3);
  EXPECT_NEAR(fit.parameters[1].fitted, 2.0, 1e-3);
  EXPECT_TRUE(fit.parameters[0].identifiable && fit.parameters[1].identifiable);
  EXPECT_LT(fit.rms_log, 1e-3);
  EXPECT_GT(fit.prior_rms_log, 0.1);
  EXPECT_DOUBLE_EQ(fit.calibrated.units[1].contention_sensitivity, fit.parameters[1].fitted);
  // The default pull toward the priors (lambda 1e-6) moves the answer only a little.
  const auto pulled = fit_corun(two_units(1, 1), rows);
  EXPECT_NEAR(pulled.parameters[0].fitted, 0.5, 0.05);
  EXPECT_NEAR(pulled.parameters[1].fitted, 2.0, 0.1);
}

// a memory-bound (10 MB, 0.2 ms); b compute-bound with slack: 2 Gop = 1 ms of compute, 1 MB = 0.02 ms of
// DRAM, which stays below 1 ms even at the largest factor 1 + 2 x 10 = 21. So b's time never changes,
// rho_a = (1 MB / 1 ms) / 50 GB/s = 0.02 and a's slowdown is s_a = 1 + 2 sigma_a 0.02 = 1 + 0.04 sigma_a.
TEST(Corun, RowsThatConstrainOneUnitLeaveTheOtherAtItsPrior) {
  const std::vector<CorunMember> members{{"net_a", 0, network(1e3, 10e6)}, {"net_b", 1, network(2e9, 1e6)}};
  const std::vector<CorunRow> rows{{"a beside b", members, 0, 1.06}, {"b beside a", members, 1, 1.3}};
  CorunOptions sensitivities_only;
  sensitivities_only.fit_overlap = false;  // with perfect overlap b's compute hides its memory time
  const auto fit = fit_corun(two_units(1, 0.7), rows, sensitivities_only);
  ASSERT_EQ(fit.parameters.size(), 2u);
  EXPECT_NEAR(fit.parameters[0].fitted, 1.5, 0.01);  // (1.06 - 1) / 0.04
  EXPECT_TRUE(fit.parameters[0].identifiable);
  EXPECT_FALSE(fit.parameters[1].identifiable);  // b's 1.3 cannot be reached: its sensitivity moves nothing
  EXPECT_DOUBLE_EQ(fit.parameters[1].fitted, 0.7);
  EXPECT_NEAR(fit.predicted_slowdown[1], 1.0, 1e-12);
}

TEST(Corun, AnUnreachableSlowdownPinsTheSensitivityAtItsBound) {
  // s_a = 2 would need sigma_a = 1 / 0.04 = 25, above the bound 10: the fit stops at 10 (s_a = 1.4).
  const std::vector<CorunMember> members{{"net_a", 0, network(1e3, 10e6)}, {"net_b", 1, network(2e9, 1e6)}};
  const auto fit = fit_corun(two_units(1, 1), {{"a beside b", members, 0, 2.0}});
  EXPECT_DOUBLE_EQ(fit.parameters[0].fitted, 10);
  EXPECT_TRUE(fit.parameters[0].at_bound);
  EXPECT_NEAR(fit.predicted_slowdown[0], 1.4, 1e-9);
}

// The same b (c = 1 ms of compute, m = 0.02 ms of DRAM) beside a memory-bound a that is immune (sigma_a = 0):
// a's 10 MB every 0.2 ms fill the 50 GB/s, rho_b = 1, f = 3, s_b = 1 + 2 x 1 = 3. With overlap o_b b takes
// 1 + (1 - o_b) 0.02 s_b ms together and 1 + (1 - o_b) 0.02 ms alone: at o_b = 0.5, 1.03 / 1.01 = 1.0198. With
// perfect overlap no sensitivity can reach it (the test above); fitting the overlap does, and reports that
// one row cannot tell o_b from sigma_b (both stretch the same stall): neither is pinned.
TEST(Corun, FittingTheOverlapReachesAComputeBoundSlowdown) {
  const std::vector<CorunMember> members{{"net_a", 0, network(1e3, 10e6)}, {"net_b", 1, network(2e9, 1e6)}};
  const double measured = 1.03 / 1.01;
  auto hw = two_units(0, 1);
  hw.units[1].overlap = 0.5;
  EXPECT_NEAR(corun_slowdowns(hw, members)[1], measured, 1e-9);  // the closed form above
  const std::vector<CorunRow> rows{{"b beside a", members, 1, measured}};
  const auto fit = fit_corun(two_units(0, 1), rows);  // the file says overlap 1: predicted 1.0
  EXPECT_NEAR(fit.prior_slowdown[0], 1.0, 1e-12);
  EXPECT_NEAR(fit.predicted_slowdown[0], measured, 1e-4);
  bool overlap_moved = false;
  for (const auto& p : fit.parameters) {
    if (p.kind == CorunParameterKind::overlap && p.unit == 1) {
      overlap_moved = p.fitted < 0.99;
      EXPECT_TRUE(p.identifiable);
      EXPECT_FALSE(p.pinned);
    }
    if (p.kind == CorunParameterKind::overlap && p.unit == 0) {
      EXPECT_FALSE(p.pinned);
    }
  }
  EXPECT_TRUE(overlap_moved);
}
