// Imperfect overlap (model/overlap.hpp) and derived hand-off work (model/handoff.hpp) against hand calculations
// on the seed device (2 TFLOP/s, 50 GB/s DRAM), on both sides of the ridge point.
#include <gtest/gtest.h>

#include "model/cost.hpp"
#include "model/handoff.hpp"
#include "model/overlap.hpp"
#include "test_support.hpp"

using namespace framesim::model;
using framesim::testing::seed_device;

namespace {

/// One kernel of `ops` fp32 operations of op class `c` moving `bytes` through DRAM.
Kernel kernel(double ops, double bytes, OpClass c = OpClass::conv) {
  Kernel k;
  k.name = "k";
  k.ops[Precision::fp32] = ops;
  k.ops_by_class[static_cast<std::size_t>(c)][Precision::fp32] = ops;
  k.total_ops = ops;
  k.bytes = {bytes};
  return k;
}

}  // namespace

TEST(Overlap, PerfectOverlapIsTheRoofline) {
  // 2 GFLOP (1 ms) and 25 MB (0.5 ms): max = 1 ms, no stall at the default overlap 1.
  const auto hw = seed_device();
  const auto t = kernel_time(kernel(2e9, 25e6), hw.units[0], effective_bandwidths_Bps(hw, hw.units[0]));
  EXPECT_DOUBLE_EQ(t.stall_s, 0.0);
  EXPECT_NEAR(t.bound_s, 1e-3, 1e-15);
}

TEST(Overlap, TheShorterTermIsPartlyExposedOnBothSidesOfTheRidge) {
  auto hw = seed_device();
  hw.units[0].overlap = 0.4;
  const auto bw = effective_bandwidths_Bps(hw, hw.units[0]);
  // Compute-bound: c = 1 ms, m = 0.5 ms: t = 1 + 0.6 x 0.5 = 1.3 ms.
  auto t = kernel_time(kernel(2e9, 25e6), hw.units[0], bw);
  EXPECT_NEAR(t.stall_s, 0.3e-3, 1e-15);
  EXPECT_NEAR(t.bound_s, 1.3e-3, 1e-15);
  EXPECT_EQ(t.limit, LimitKind::compute);
  // Memory-bound: c = 0.2 ms, m = 1 ms: t = 1 + 0.6 x 0.2 = 1.12 ms.
  t = kernel_time(kernel(0.4e9, 50e6), hw.units[0], bw);
  EXPECT_NEAR(t.bound_s, 1.12e-3, 1e-15);
  // The bound (peak roofs) keeps perfect overlap: no measurement beats max(c, m).
  const auto peak = kernel_time(kernel(2e9, 25e6), hw.units[0], peak_bandwidths_Bps(hw, hw.units[0]), {}, Roofs::peak);
  EXPECT_DOUBLE_EQ(peak.stall_s, 0.0);
}

TEST(Overlap, PerOpClassOverlapIsWeightedByOperations) {
  auto hw = seed_device();
  hw.units[0].overlap = 1.0;
  hw.units[0].overlap_by_op[static_cast<std::size_t>(OpClass::depthwise)] = 0.2;
  // 3/4 of the ops conv (overlap 1), 1/4 depthwise (0.2): 1 - o = 0.25 x 0.8 = 0.2.
  Kernel k = kernel(4e9, 10e6);
  k.ops_by_class[static_cast<std::size_t>(OpClass::conv)][Precision::fp32] = 3e9;
  k.ops_by_class[static_cast<std::size_t>(OpClass::depthwise)][Precision::fp32] = 1e9;
  EXPECT_DOUBLE_EQ(non_overlap(k, hw.units[0]), 0.25 * 0.8);
}

TEST(Overlap, TheStallStretchesWithTheMemoryFactor) {
  // c = 1 ms, m = 0.5 ms, o = 0.4: alone 0.6 x 0.5 = 0.3 ms; memory factor 3 -> m' = 1.5 ms, stall 0.6 x 1 = 0.6.
  EXPECT_NEAR(stall_s(0.6, 1e-3, {0.5e-3}, {}), 0.3e-3, 1e-15);
  EXPECT_NEAR(stall_s(0.6, 1e-3, {0.5e-3}, {3.0}), 0.6e-3, 1e-15);
  EXPECT_DOUBLE_EQ(stall_s(0.0, 1e-3, {0.5e-3}, {3.0}), 0.0);
  // A curve f(rho) = 1 + 2 rho (one point (1, 3)) at rho = 0.25: the port carries 50 / 1.5 GB/s, factor 1.5.
  auto hw = seed_device();
  hw.memory[0].contention = ContentionCurve{{{1.0, 3.0}}};
  EXPECT_DOUBLE_EQ(memory_factor(hw.memory[0], hw.units[0], 0, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(memory_factor(hw.memory[0], hw.units[0], 0, 0.25), 1.5);
}

TEST(Handoff, ReformatBytesAndSideWorkFollowFromTheNetwork) {
  // Accelerator b hosted by the seed's gpu: input [1, 1000, 1000] int8 read, written fp32 (1 + 4 B per element)
  // at efficiency 0.5: 1e6 x 5 / 0.5 = 10 MB; the output likewise.
  auto hw = seed_device();
  auto b = hw.units[0];
  b.name = "b";
  b.peak_ops_per_s[Precision::int8] = 1e12;
  b.handoff = HandoffSpec{0, true, true, 0.5, 1e-4, Precision::fp32};
  hw.units.push_back(b);
  NetworkSpec net;
  net.tensors.push_back({"x", {1, 1000, 1000}, Precision::int8, -1, -1});
  net.tensors.push_back({"y", {1, 1000, 1000}, Precision::int8, 0, -1});
  net.inputs = {0};
  net.outputs = {1};
  EXPECT_DOUBLE_EQ(reformat_bytes(net, net.inputs, *hw.units[1].handoff), 10e6);
  const auto side = handoff_side_work(hw, 1, net);
  ASSERT_EQ(side.size(), 3u);  // input reformat and launch before, output reformat after
  EXPECT_FALSE(side[0].after);
  EXPECT_DOUBLE_EQ(side[0].work.bytes_per_level[0], 10e6);
  EXPECT_EQ(side[1].work.kind, WorkSpec::Kind::time);
  EXPECT_DOUBLE_EQ(side[1].work.time_s.mean(), 1e-4);
  EXPECT_TRUE(side[2].after);
  EXPECT_EQ(side[2].unit, 0u);
  // Without a handoff nothing is derived.
  EXPECT_TRUE(handoff_side_work(hw, 0, net).empty());
}
