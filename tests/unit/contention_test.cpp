// The contention model (model/contention.hpp) against hand calculations: the piecewise-linear curve, the
// unit's sensitivity, the port bandwidth with and without a Little's-law cap, and today's loaded latency when
// a level has no curve.
#include <gtest/gtest.h>

#include "model/contention.hpp"
#include "model/cost.hpp"
#include "test_support.hpp"

using namespace framesim::model;
using framesim::testing::seed_device;

namespace {
/// The seed device (50 GB/s DRAM) with the curve (0, 1) -> (0.2, 1.1) -> (0.6, 1.9), flat after.
HardwareSpec seed_with_curve() {
  auto hw = seed_device();
  hw.memory[0].contention = ContentionCurve{{{0.2, 1.1}, {0.6, 1.9}}};
  return hw;
}
}  // namespace

TEST(Contention, CurveIsPiecewiseLinearFromOneAndFlatAfterItsLastPoint) {
  const ContentionCurve c{{{0.2, 1.1}, {0.6, 1.9}}};
  EXPECT_DOUBLE_EQ(curve_slowdown(c, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(curve_slowdown(c, 0.1), 1.05);  // halfway from (0, 1) to (0.2, 1.1)
  EXPECT_DOUBLE_EQ(curve_slowdown(c, 0.4), 1.5);   // halfway from (0.2, 1.1) to (0.6, 1.9)
  EXPECT_DOUBLE_EQ(curve_slowdown(c, 0.9), 1.9);   // flat after the last point
  EXPECT_DOUBLE_EQ(curve_slowdown(c, -0.5), 1.0);  // clamped to [0, 1]
  EXPECT_DOUBLE_EQ(curve_slowdown(ContentionCurve{{{0.0, 1.0}, {1.0, 3.0}}}, 0.25), 1.5);
}

TEST(Contention, SensitivityScalesTheExcessOverOne) {
  auto hw = seed_with_curve();
  EXPECT_DOUBLE_EQ(contention_factor(hw.memory[0], hw.units[0], 0.4), 1.5);
  hw.units[0].contention_sensitivity = 0.5;
  EXPECT_DOUBLE_EQ(contention_factor(hw.memory[0], hw.units[0], 0.4), 1.25);  // 1 + 0.5 x 0.5
  hw.units[0].contention_sensitivity = 0;
  EXPECT_DOUBLE_EQ(contention_factor(hw.memory[0], hw.units[0], 0.4), 1.0);
}

TEST(Contention, PortCarriesTheBudgetBandwidthAloneAndLessUnderLoad) {
  auto hw = seed_with_curve();
  // No outstanding: the port is the level's 50 GB/s alone, 50 / 1.5 under 40 % from the others.
  EXPECT_DOUBLE_EQ(*port_bandwidth_Bps(hw.memory[0], hw.units[0], 0, 0.0), 50e9);
  EXPECT_DOUBLE_EQ(*port_bandwidth_Bps(hw.memory[0], hw.units[0], 0, 0.4), 50e9 / 1.5);
  // 4 KiB at 400 ns = 10.24 GB/s binds below the bus alone; the curve then loads the latency: 10.24 / 1.5.
  hw.units[0].outstanding_bytes = 4096;
  hw.memory[0].latency_s = 400e-9;
  EXPECT_DOUBLE_EQ(*port_bandwidth_Bps(hw.memory[0], hw.units[0], 0, 0.0),
                   effective_bandwidths_Bps(hw, hw.units[0])[0]);
  EXPECT_DOUBLE_EQ(*port_bandwidth_Bps(hw.memory[0], hw.units[0], 0, 0.4), 4096 / 400e-9 / 1.5);
}

TEST(Contention, WithoutACurveTheLevelKeepsTodaysLoadedLatency) {
  auto hw = seed_device();
  EXPECT_FALSE(port_bandwidth_Bps(hw.memory[0], hw.units[0], 0, 0.5).has_value());  // no port: max-min only
  hw.units[0].outstanding_bytes = 4096;
  hw.memory[0].latency_s = 400e-9;
  // L0 / (1 - 0.5): half the cap, as tests/engine's LoadedLatencyShrinksTheLittlesLawCap.
  EXPECT_DOUBLE_EQ(*port_bandwidth_Bps(hw.memory[0], hw.units[0], 0, 0.5), 4096 / 400e-9 / 2);
}
