// Where weights live (model/weight_placement.hpp), against placements and times worked by hand: the bound keeps
// weights on chip up to the on-chip level's whole declared capacity (the best case no runtime can beat), the
// estimate as the unit's runtime does (`whole`: on chip only when every weight fits; `partial`: as many as fit, in
// execution order, the rest streamed).
#include <gtest/gtest.h>

#include "model/cost.hpp"
#include "model/plan.hpp"
#include "test_support.hpp"

using namespace framesim::model;
using framesim::testing::NetBuilder;
using framesim::testing::seed_device;

namespace {

/// 2 TFLOP/s; a 10 MB SRAM at 500 GB/s in front of the seed's 50 GB/s DRAM.
HardwareSpec device() {
  auto hw = seed_device();
  MemoryLevelSpec sram;
  sram.name = "sram";
  sram.kind = MemoryKind::sram;
  sram.capacity_bytes = 10e6;
  sram.bandwidth_Bps = 500e9;
  hw.memory.insert(hw.memory.begin(), sram);
  hw.units[0].memory_path = {0, 1};
  return hw;
}

/// Three layers in a chain on a 1-element fp32 input: a (1 M fp32 weights = 4 MB, 1 M ops), b (2 M = 8 MB, 1 G
/// ops), c (4 MB, 1 M ops): 16 MB of weights, more than the SRAM.
NetworkSpec chain() {
  NetBuilder b;
  int x = b.input("x", {1, 1});
  x = b.layer("custom", "a", {x}, {{"weights", std::int64_t{1'000'000}}, {"ops", 1e6}});
  x = b.layer("custom", "b", {x}, {{"weights", std::int64_t{2'000'000}}, {"ops", 1e9}});
  b.layer("custom", "c", {x}, {{"weights", std::int64_t{1'000'000}}, {"ops", 1e6}});
  return b.done();
}

double total_s(const ExecutionPlan& plan, const HardwareSpec& hw, Roofs roofs) {
  const auto bw = bandwidths_Bps(hw, hw.units[0], {}, roofs);
  double t = 0;
  for (const auto& k : plan.kernels) t += kernel_time(k, hw.units[0], bw, {}, roofs).bound_s;
  return t;
}

}  // namespace

TEST(WeightPlacement, TheBoundFillsTheSramWithTheWeightsThatReadMostBytesPerOp) {
  // Best case: a and c read 4 B of weights per op, b 0.008: a and c on chip (8 MB), then 2 MB of b's 8 MB; b's
  // other 6 MB from DRAM. Bound by hand, per kernel max(compute, each level): a = max(0.5 us, 4 MB / 500 GB/s =
  // 8 us) (+ its 4 B output in SRAM), b = max(1 G / 2 T = 500 us, 6 MB / 50 GB/s = 120 us, 2 MB / 500 GB/s), c = 8 us
  // (+ its 4 B input from SRAM) (its 4 B output in DRAM: 0.08 ns): 516 us.
  const auto hw = device();
  const auto plan = plan_network(chain(), hw, 0);
  EXPECT_DOUBLE_EQ(plan.bound_weight_bytes_at[0], 10e6);
  EXPECT_DOUBLE_EQ(plan.bound_weight_bytes_at[1], 6e6);
  EXPECT_NEAR(total_s(plan, hw, Roofs::peak), 8e-6 + 4 / 500e9 + 500e-6 + 8e-6 + 4 / 500e9, 1e-12);
  // The runtime's default (`whole`): 16 MB do not fit 10 MB, so every weight streams from DRAM: a = 80 us, b = 500
  // us (160 us of weights hidden under its compute), c = 80 us (each of a and c with 4 B of graph input or output in
  // DRAM): 660 us, above the bound.
  EXPECT_DOUBLE_EQ(plan.weight_bytes_at[1], 16e6);
  EXPECT_EQ(plan.weight_level, 1);
  EXPECT_NEAR(total_s(plan, hw, Roofs::effective), 80e-6 + 500e-6 + 80e-6 + 8 / 50e9, 1e-12);
}

TEST(WeightPlacement, PartialCachingKeepsWhatFitsInExecutionOrderAndStreamsTheRest) {
  // `partial` (the Edge TPU compiler): the SRAM less the activation peak (a's 4 B input and output: 8 B) holds a's
  // 4 MB and 6 MB - 8 B of b's; c's 4 MB stream: a = 8 us, b = 500 us, c = 80 us by hand.
  auto hw = device();
  hw.units[0].weight_caching = WeightCaching::partial;
  const auto plan = plan_network(chain(), hw, 0);
  EXPECT_DOUBLE_EQ(plan.peak_activation_bytes, 8);
  EXPECT_DOUBLE_EQ(plan.weight_bytes_at[0], 10e6 - 8);
  EXPECT_DOUBLE_EQ(plan.weight_bytes_at[1], 6e6 + 8);
  EXPECT_EQ(plan.weight_level, 1);                 // the streamed rest's level
  EXPECT_NEAR(plan.kernels[0].bytes[1], 4, 1e-9);  // a: its input only from DRAM
  EXPECT_NEAR(plan.kernels[2].bytes[1], 4e6 + 4, 1e-6);
  const auto bw = effective_bandwidths_Bps(hw, hw.units[0]);
  EXPECT_NEAR(kernel_time(plan.kernels[2], hw.units[0], bw).bound_s, (4e6 + 4) / 50e9, 1e-12);
  // The bound does not depend on what the runtime does.
  auto whole = device();
  EXPECT_DOUBLE_EQ(total_s(plan, hw, Roofs::peak), total_s(plan_network(chain(), whole, 0), whole, Roofs::peak));
}

TEST(WeightPlacement, WeightsThatFitStayOnChipInBothAndARuntimeLevelMovesOnlyTheEstimate) {
  // 16 MB of weights in a 20 MB SRAM: on chip for the estimate (weights plus the 8 B peak fit) and the bound.
  auto hw = device();
  hw.memory[0].capacity_bytes = 20e6;
  auto plan = plan_network(chain(), hw, 0);
  EXPECT_DOUBLE_EQ(plan.weight_bytes_at[0], 16e6);
  EXPECT_DOUBLE_EQ(plan.bound_weight_bytes_at[0], 16e6);
  // A runtime that reads them from DRAM (`weights: dram`) slows the estimate, never the bound: a = 80 us from DRAM
  // in the estimate, 8 us from SRAM in the bound.
  hw.units[0].weights_level = 1;
  plan = plan_network(chain(), hw, 0);
  EXPECT_DOUBLE_EQ(plan.weight_bytes_at[1], 16e6);
  EXPECT_DOUBLE_EQ(plan.bound_weight_bytes_at[0], 16e6);
  const auto& a = plan.kernels[0];
  EXPECT_NEAR(kernel_time(a, hw.units[0], effective_bandwidths_Bps(hw, hw.units[0])).bound_s, (4e6 + 4) / 50e9, 1e-12);
  EXPECT_NEAR(kernel_time(a, hw.units[0], peak_bandwidths_Bps(hw, hw.units[0], {}), {}, Roofs::peak).bound_s,
              (4e6 + 4) / 500e9, 1e-12);
}
