// The roofline cost model against the seed's worked numbers (peak roofs, no derating) and hand
// calculations on both sides of the ridge; fusion traversals; the capacity rule; Little's law; energy.
#include <gtest/gtest.h>

#include "model/budget.hpp"
#include "model/cost.hpp"
#include "model/plan.hpp"
#include "test_support.hpp"

using namespace framesim::model;
using framesim::testing::NetBuilder;
using framesim::testing::seed_device;

namespace {
KernelTime time_of(const NetworkSpec& net, const HardwareSpec& hw, std::size_t kernel = 0) {
  const auto plan = plan_network(net, hw, 0);
  return kernel_time(plan.kernels.at(kernel), hw.units[0], effective_bandwidths_Bps(hw, hw.units[0]));
}

/// The seed device with an SRAM of `capacity_bytes` (500 GB/s) in front of its DRAM.
HardwareSpec seed_device_with_sram(double capacity_bytes) {
  auto hw = seed_device();
  MemoryLevelSpec sram;
  sram.name = "sram";
  sram.kind = MemoryKind::sram;
  sram.capacity_bytes = capacity_bytes;
  sram.bandwidth_Bps = 500e9;
  hw.memory.insert(hw.memory.begin(), sram);
  hw.units[0].memory_path = {0, 1};
  return hw;
}
}  // namespace

TEST(Cost, RidgePointOfTheReferenceDevice) {
  // 2 TFLOP/s / 50 GB/s = 40 FLOP/byte.
  const auto hw = seed_device();
  EXPECT_DOUBLE_EQ(
      effective_compute_ops_per_s(hw.units[0], Precision::fp32) / effective_bandwidths_Bps(hw, hw.units[0])[0], 40.0);
}

TEST(Cost, SquareMatmulIsComputeBound) {
  // F = 2 * 1024^3 = 2.147e9; M = 4 * 3 * 1024^2 = 12.58 MB; I = 170.7; t = F / C = 1.074 ms.
  NetBuilder b;
  int a = b.input("a", {1024, 1024});
  b.layer("matmul", "mm", {a}, {{"n", std::int64_t{1024}}});
  const auto t = time_of(b.done(), seed_device());
  EXPECT_NEAR(t.intensity, 170.67, 0.01);
  EXPECT_EQ(t.limit, LimitKind::compute);
  EXPECT_NEAR(t.bound_s, 1.0737e-3, 1e-7);
  EXPECT_DOUBLE_EQ(t.bound_s, 2.0 * 1024 * 1024 * 1024 / 2e12);
}

TEST(Cost, BatchOneLinearIsMemoryBoundAtOnePercentOfPeak) {
  // M = 4 * (1024 + 1024^2 + 1024) = 4,202,496 B; t = M / B = 84.05 us; I = 0.499; 1.25 % of peak.
  NetBuilder b;
  int x = b.input("x", {1, 1024});
  b.layer("linear", "fc", {x}, {{"out_features", std::int64_t{1024}}});
  const auto hw = seed_device();
  const auto t = time_of(b.done(), hw);
  EXPECT_EQ(t.limit, LimitKind::memory);
  EXPECT_DOUBLE_EQ(t.bound_s, 4202496.0 / 50e9);
  EXPECT_NEAR(t.intensity, 0.499, 0.001);
  const double achieved = 2.0 * 1024 * 1024 / t.bound_s;
  EXPECT_NEAR(achieved / 2e12, 0.0125, 0.0001);
}

TEST(Cost, ConvVersusDepthwise) {
  // Standard: compute-bound 1.85 ms. Depthwise: 256x fewer ops, 73 % of the bytes, memory-bound 129 us: 14.4x.
  NetBuilder b;
  int x = b.input("x", {1, 256, 56, 56});
  b.layer("conv2d", "conv", {x},
          {{"out_channels", std::int64_t{256}}, {"kernel", std::int64_t{3}}, {"padding", std::int64_t{1}}});
  b.layer("conv2d", "dw", {x}, {{"depthwise", true}, {"kernel", std::int64_t{3}}, {"padding", std::int64_t{1}}});
  const auto net = b.done();
  const auto hw = seed_device();
  const auto plan = plan_network(net, hw, 0);
  const auto bw = effective_bandwidths_Bps(hw, hw.units[0]);
  const auto conv = kernel_time(plan.kernels[0], hw.units[0], bw);
  const auto dw = kernel_time(plan.kernels[1], hw.units[0], bw);
  EXPECT_EQ(conv.limit, LimitKind::compute);
  EXPECT_NEAR(conv.bound_s, 1.85e-3, 0.005e-3);
  EXPECT_EQ(dw.limit, LimitKind::memory);
  EXPECT_NEAR(dw.bound_s, 129e-6, 0.5e-6);
  EXPECT_NEAR(plan.kernels[1].total_bytes / plan.kernels[0].total_bytes, 0.73, 0.005);
  EXPECT_NEAR(conv.bound_s / dw.bound_s, 14.4, 0.05);
  EXPECT_DOUBLE_EQ(plan.kernels[0].total_ops / plan.kernels[1].total_ops, 256.0);
}

TEST(Cost, ElementwiseIntensities) {
  NetBuilder b;
  int a = b.input("a", {1, 4096});
  int c = b.input("c", {1, 4096});
  int s = b.layer("add", "add", {a, c});
  b.layer("relu", "relu", {s});
  const auto net = b.done(FusionMode::none);
  const auto hw = seed_device();
  EXPECT_DOUBLE_EQ(time_of(net, hw, 0).intensity, 1.0 / 12);
  EXPECT_DOUBLE_EQ(time_of(net, hw, 1).intensity, 1.0 / 8);
}

TEST(Cost, BoundBracketAndOverhead) {
  // Balanced kernel: F/C = M/B; the no-overlap upper end is twice the bound (before overhead).
  NetBuilder b;
  int a = b.input("a", {1, 1000});
  b.layer("custom", "k", {a}, {{"ops", 8000.0 * 40}, {"output_shape", std::vector<std::int64_t>{1, 1000}}});
  auto hw = seed_device();
  hw.units[0].dispatch_overhead_s = 20e-6;
  const auto t = time_of(b.done(), hw);
  EXPECT_DOUBLE_EQ(t.compute_s, 8000.0 * 40 / 2e12);
  EXPECT_DOUBLE_EQ(t.memory_s[0], 8000.0 / 50e9);
  EXPECT_DOUBLE_EQ(t.bound_s, 8000.0 / 50e9 + 20e-6);
  EXPECT_DOUBLE_EQ(t.no_overlap_s, 2 * 8000.0 / 50e9 + 20e-6);
  EXPECT_EQ(t.limit, LimitKind::overhead);  // 20 us of launch dwarfs 0.16 us of work
}

TEST(Cost, LittlesLawCapsBandwidth) {
  // 5 KB in flight at 100 ns = 50 GB/s; 4 KiB at 400 ns = 10.24 GB/s binds below the 50 GB/s bus.
  auto hw = seed_device();
  hw.units[0].outstanding_bytes = 4096;
  hw.memory[0].latency_s = 400e-9;
  EXPECT_DOUBLE_EQ(effective_bandwidths_Bps(hw, hw.units[0])[0], 4096 / 400e-9);
  hw.units[0].outstanding_bytes = 5e3;
  hw.memory[0].latency_s = 100e-9;
  EXPECT_DOUBLE_EQ(effective_bandwidths_Bps(hw, hw.units[0])[0], 50e9);
}

TEST(Cost, ComputeRoofScalesWithClockAndEfficiency) {
  auto hw = seed_device();
  hw.units[0].operating_points = {{"hi", 1.0e9, 0.9, std::nullopt}, {"lo", 0.5e9, 0.7, std::nullopt}};
  hw.units[0].efficiency[Precision::fp32] = 0.6;
  RunPoint lo;
  lo.operating_point = 1;
  EXPECT_DOUBLE_EQ(effective_compute_ops_per_s(hw.units[0], Precision::fp32, lo), 2e12 * 0.6 * 0.5);
  lo.core_fraction = 0.25;
  EXPECT_DOUBLE_EQ(effective_compute_ops_per_s(hw.units[0], Precision::fp32, lo), 2e12 * 0.6 * 0.5 * 0.25);
}

TEST(Cost, EnergyOfAKernel) {
  // 40 MB from DRAM at 160 pJ/B = 6.4 mJ; arithmetic at e_op scaled by (V/V_nom)^2; static over the time.
  NetBuilder b;
  int x = b.input("x", {1, 1});
  b.layer("custom", "stream", {x}, {{"weights", std::int64_t{10'000'000}}, {"ops", 1e6}});
  auto hw = seed_device();
  hw.units[0].energy_per_op_J[Precision::fp32] = 1e-12;
  hw.units[0].static_power_W = 0.5;
  hw.units[0].operating_points = {{"hi", 1e9, 1.0, std::nullopt}, {"lo", 0.5e9, 0.5, std::nullopt}};
  const auto plan = plan_network(b.done(), hw, 0);
  const auto e = kernel_energy(plan.kernels[0], hw, hw.units[0], 1, 0.01);
  EXPECT_DOUBLE_EQ(e.memory_J[0], (40e6 + 8) * 160e-12);  // 10 M fp32 weights + 4 B in + 4 B out
  EXPECT_DOUBLE_EQ(e.compute_J, 1e6 * 1e-12 * 0.25);
  EXPECT_DOUBLE_EQ(e.static_J, 0.5 * 0.5 * 0.01);
}

TEST(Plan, FusionOfAResidualTailEightTraversalsToTwo) {
  // conv -> batchnorm -> relu -> add(skip): unfused the tail is 8 traversals, fused 2 (seed).
  NetBuilder b;
  int x = b.input("x", {1, 64, 112, 112}, Precision::fp16);
  const LayerPrecision fp16{Precision::fp16, Precision::fp16, Precision::fp16};
  int c =
      b.layer("conv2d", "conv", {x},
              {{"out_channels", std::int64_t{64}}, {"kernel", std::int64_t{3}}, {"padding", std::int64_t{1}}}, fp16);
  int n = b.layer("batchnorm", "bn", {c}, {}, fp16);
  int r = b.layer("relu", "relu", {n}, {}, fp16);
  b.layer("add", "add", {r, x}, {}, fp16);
  const auto net = b.done();
  auto hw = seed_device(4e12, 50e9, Precision::fp16);
  const auto fused = plan_network(net, hw, 0);
  ASSERT_EQ(fused.kernels.size(), 1u);
  const Kernel& k = fused.kernels[0];
  EXPECT_EQ(k.folded, std::vector<int>{1});
  EXPECT_EQ(k.tail_traversals_unfused, 8);
  EXPECT_EQ(k.tail_traversals, 2);
  EXPECT_EQ(k.traversals_unfused, 9);
  EXPECT_EQ(k.traversals, 3);
  const double tensor = 64.0 * 112 * 112 * 2;  // 1,605,632 B of fp16 activations
  EXPECT_DOUBLE_EQ(k.activation_bytes_unfused - k.activation_bytes, 6 * tensor);

  // The time saved, from the two plans' kernel times: unfused, the four kernels move 9 traversals plus the
  // batchnorm's 64 scales and 64 shifts (256 B of fp16) that folding removes; fused, 3 traversals. At 50 GB/s:
  // (6 x 1,605,632 + 256) B / 50e9 B/s = 192.67584 us + 5.12 ns = 192.68096 us (the seed's 192.7 us).
  const auto unfused = plan_network(net, hw, 0, PlanOptions{false});
  ASSERT_EQ(unfused.kernels.size(), 4u);
  const auto bw = effective_bandwidths_Bps(hw, hw.units[0]);
  double unfused_memory_s = 0;
  for (const auto& kernel : unfused.kernels) unfused_memory_s += kernel_time(kernel, hw.units[0], bw).memory_s[0];
  const double fused_memory_s = kernel_time(k, hw.units[0], bw).memory_s[0];
  EXPECT_NEAR(unfused_memory_s - fused_memory_s, (6 * 1605632.0 + 256) / 50e9, 1e-15);
  EXPECT_NEAR(unfused_memory_s - fused_memory_s, 192.68096e-6, 1e-15);
}

TEST(Plan, IntermediatesThatFitStayOnChip) {
  // A unit with 1 MiB of SRAM before DRAM: a 256 KiB intermediate stays in SRAM; graph I/O is in DRAM.
  const auto hw = seed_device_with_sram(1024 * 1024);
  NetBuilder b;
  int x = b.input("x", {1, 65536});
  int h = b.layer("sigmoid", "a", {x});
  b.layer("tanh", "b", {h});
  const auto net = b.done(FusionMode::none);
  const auto plan = plan_network(net, hw, 0);
  EXPECT_EQ(plan.tensor_level[static_cast<std::size_t>(x)], 1);  // graph input in DRAM
  EXPECT_EQ(plan.tensor_level[static_cast<std::size_t>(h)], 0);  // intermediate in SRAM
  EXPECT_DOUBLE_EQ(plan.kernels[0].bytes[1], 65536.0 * 4);       // reads x from DRAM
  EXPECT_DOUBLE_EQ(plan.kernels[0].bytes[0], 65536.0 * 4);       // writes h to SRAM
}

TEST(Plan, SpillsWhenTheLiveSetDoesNotFit) {
  const auto hw = seed_device_with_sram(256 * 1024);  // less than input + intermediate
  NetBuilder b;
  int x = b.input("x", {1, 65536});
  int h = b.layer("sigmoid", "a", {x});
  b.layer("tanh", "b", {h});
  const auto plan = plan_network(b.done(FusionMode::none), hw, 0);
  EXPECT_EQ(plan.tensor_level[static_cast<std::size_t>(h)], 1);
  EXPECT_DOUBLE_EQ(plan.peak_activation_bytes, 2 * 65536.0 * 4);
}

TEST(Plan, WeightsOnChipWhenTheWholeSetFits) {
  const auto hw = seed_device_with_sram(8 * 1024 * 1024);
  NetBuilder b;
  int x = b.input("x", {1, 1024});
  b.layer("linear", "fc", {x}, {{"out_features", std::int64_t{1024}}});
  const auto plan = plan_network(b.done(), hw, 0);
  EXPECT_EQ(plan.weight_level, 0);
  EXPECT_TRUE(plan.fits());
}

TEST(Plan, ModelThatDoesNotFitIsReported) {
  auto hw = seed_device();
  hw.memory[0].capacity_bytes = 1e6;
  NetBuilder b;
  int x = b.input("x", {1, 1024});
  b.layer("linear", "fc", {x}, {{"out_features", std::int64_t{1024}}});
  EXPECT_FALSE(plan_network(b.done(), hw, 0).fits());
}

TEST(Budget, DiagnosisBands) {
  EXPECT_EQ(diagnose(0.8), Diagnosis::below_bound);
  // Between the bound and the estimate: measured / estimate 0.8, measured / bound 1.5.
  EXPECT_EQ(diagnose(0.8, 1.5), Diagnosis::faster_than_estimate);
  EXPECT_EQ(diagnose(1.5, 0.9), Diagnosis::below_bound);
  EXPECT_EQ(diagnose(1.2), Diagnosis::at_roof);
  EXPECT_EQ(diagnose(3.0), Diagnosis::uncounted_bytes);
  EXPECT_EQ(diagnose(20.0), Diagnosis::overhead);
}

TEST(Budget, VerdictAgainstTheSlice) {
  NetBuilder b;
  int x = b.input("x", {1, 1024});
  b.layer("linear", "fc", {x}, {{"out_features", std::int64_t{1024}}});
  const auto net = b.done();
  BudgetOptions options;
  options.slice_s = 100e-6;
  auto r = make_budget(seed_device(), net, options);
  EXPECT_TRUE(r.within_slice());
  options.slice_s = 50e-6;
  r = make_budget(seed_device(), net, options);
  EXPECT_FALSE(r.within_slice());
  EXPECT_DOUBLE_EQ(r.estimate_s, 4202496.0 / 50e9);
  EXPECT_DOUBLE_EQ(r.bound_s, 4202496.0 / 50e9);  // peak roofs, no overhead: the same on the seed device
  EXPECT_TRUE(r.impossible());
}

TEST(BoundAndEstimate, BoundIsAtPeakRoofsWithoutOverheadEstimateAtEffective) {
  // The seed's batch-1 linear (4,202,496 B, 2,097,152 ops) on the seed device derated to 0.6 compute, 0.7
  // bandwidth and 20 us per kernel. Bound: 4,202,496 / 50e9 = 84.05 us. Estimate: 4,202,496 / 35e9 + 20 us =
  // 140.07 us. A measurement of 100 us beats the estimate but not the bound; 80 us beats the bound.
  NetBuilder b;
  int x = b.input("x", {1, 1024});
  b.layer("linear", "fc", {x}, {{"out_features", std::int64_t{1024}}});
  const auto net = b.done();
  auto hw = seed_device();
  hw.units[0].efficiency[Precision::fp32] = 0.6;
  hw.memory[0].efficiency = 0.7;
  hw.units[0].dispatch_overhead_s = 20e-6;
  BudgetOptions options;
  options.measured = {{"fc", 100e-6}};
  auto r = make_budget(hw, net, options);
  EXPECT_DOUBLE_EQ(r.bound_s, 4202496.0 / 50e9);
  EXPECT_NEAR(r.estimate_s, 4202496.0 / 35e9 + 20e-6, 1e-15);
  ASSERT_TRUE(r.kernels[0].diagnosis);
  EXPECT_EQ(*r.kernels[0].diagnosis, Diagnosis::faster_than_estimate);
  options.measured = {{"fc", 80e-6}};
  r = make_budget(hw, net, options);
  EXPECT_EQ(*r.kernels[0].diagnosis, Diagnosis::below_bound);
  // A whole-network time, named "total", is read against both.
  options.measured = {{"total", 150e-6}};
  r = make_budget(hw, net, options);
  ASSERT_TRUE(r.measured_total_s);
  EXPECT_EQ(*r.total_diagnosis, Diagnosis::at_roof);
  // The verdict: a 120 us slice is beaten by the estimate but not by the bound: it does not fit, yet is possible.
  options.measured.clear();
  options.slice_s = 120e-6;
  r = make_budget(hw, net, options);
  EXPECT_FALSE(r.within_slice());
  EXPECT_FALSE(r.impossible());
}

TEST(OpClass, DepthwiseAndDenseConvolutionsRunAtTheirOwnEfficiency) {
  // 3x3 conv 256->256 on 56x56 fp32: F = 2 * 256*56*56 * 256*9 = 3.699e9 ops; at 2 TFLOP/s x 0.8 = 2.312 ms.
  // Its depthwise twin: F = 2 * 256*56*56 * 9 = 14.45e6 ops; at 2 TFLOP/s x 0.01 = 0.7225 ms (compute-bound at
  // that efficiency: its 6.4 MB at 50 GB/s take 128.5 us).
  NetBuilder b;
  int x = b.input("x", {1, 256, 56, 56});
  b.layer("conv2d", "conv", {x},
          {{"out_channels", std::int64_t{256}}, {"kernel", std::int64_t{3}}, {"padding", std::int64_t{1}}});
  EXPECT_EQ(b.last().op_class, OpClass::conv);
  b.layer("conv2d", "dw", {x}, {{"depthwise", true}, {"kernel", std::int64_t{3}}, {"padding", std::int64_t{1}}});
  EXPECT_EQ(b.last().op_class, OpClass::depthwise);
  const auto net = b.done(FusionMode::none);
  auto hw = seed_device();
  hw.units[0].efficiency[Precision::fp32] = 0.5;
  hw.units[0].efficiency_by_op[static_cast<std::size_t>(OpClass::conv)][Precision::fp32] = 0.8;
  hw.units[0].efficiency_by_op[static_cast<std::size_t>(OpClass::depthwise)][Precision::fp32] = 0.01;
  const double conv_ops = 2.0 * 256 * 56 * 56 * 256 * 9, dw_ops = 2.0 * 256 * 56 * 56 * 9;
  EXPECT_NEAR(time_of(net, hw, 0).compute_s, conv_ops / (2e12 * 0.8), 1e-12);
  EXPECT_NEAR(time_of(net, hw, 1).compute_s, dw_ops / (2e12 * 0.01), 1e-12);
  // A class without its own figure falls back to the precision's: matmul at 0.5.
  EXPECT_DOUBLE_EQ(hw.units[0].efficiency_for(Precision::fp32, OpClass::matmul), 0.5);
  // The bound ignores every efficiency.
  const auto plan = plan_network(net, hw, 0);
  EXPECT_NEAR(compute_time_s(plan.kernels[1], hw.units[0], {}, Roofs::peak), dw_ops / 2e12, 1e-15);
}
