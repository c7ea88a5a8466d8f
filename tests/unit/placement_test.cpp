// Placement (model/placement.hpp): what a unit's capabilities refuse, where refused layers go, how a network is
// cut into parts and what crosses each cut, and how a stage is compiled into chained stages. Every expected
// value is worked by hand from the tiny networks below (fp32: 4 B per value).
#include <gtest/gtest.h>

#include "model/placement.hpp"
#include "test_support.hpp"

namespace model = framesim::model;
using framesim::testing::NetBuilder;

namespace {

/// Units a (no capabilities) and b (conv only, falls back to a), both on one DRAM.
model::HardwareSpec two_units() {
  model::HardwareSpec hw;
  model::MemoryLevelSpec dram;
  dram.name = "dram";
  dram.capacity_bytes = 8e9;
  dram.bandwidth_Bps = 10e9;
  dram.users = {"a", "b"};
  hw.memory.push_back(dram);
  for (const char* name : {"a", "b"}) {
    model::ComputeUnitSpec u;
    u.name = name;
    u.peak_ops_per_s[model::Precision::fp32] = 1e12;
    u.memory_path = {0};
    u.operating_points.push_back({"nominal", 1e9, 1.0, std::nullopt});
    hw.units.push_back(u);
  }
  model::UnitCapabilities caps;
  caps.op_classes = {model::OpClass::conv};
  caps.fallback = 0;
  hw.units[1].capabilities = caps;
  return hw;
}

/// x [1,16,8,8] -> c0 (conv 16->16, 3x3 same) -> r1 (relu) -> c2 (conv): every tensor 16 x 8 x 8 x 4 = 4096 B.
model::NetworkSpec conv_relu_conv(bool skip = false) {
  NetBuilder b;
  const int x = b.input("x", {1, 16, 8, 8});
  const model::OpParams conv{
      {"out_channels", std::int64_t{16}}, {"kernel", std::vector<std::int64_t>{3}}, {"padding", std::string("same")}};
  const int c0 = b.layer("conv2d", "c0", {x}, conv);
  const int r1 = b.layer("relu", "r1", {c0});
  if (skip) b.layer("add", "a2", {c0, r1});  // reads c0's output (part 0) and r1's (part 1)
  else b.layer("conv2d", "c2", {r1}, conv);
  return b.done(model::FusionMode::none);
}

}  // namespace

TEST(Placement, CapabilitiesRefuseByClassOpPrecisionAndSize) {
  auto hw = two_units();
  const auto net = conv_relu_conv();
  EXPECT_FALSE(model::refusal(hw.units[0], net, net.layers[1]));  // no capabilities: runs everything
  EXPECT_FALSE(model::refusal(hw.units[1], net, net.layers[0]));  // a conv on a conv-only unit
  EXPECT_EQ(model::refusal(hw.units[1], net, net.layers[1]).value_or(""),
            "b does not run op class elementwise (op relu)");
  hw.units[1].capabilities->ops = {"sigmoid"};  // by name, in addition to the classes
  EXPECT_EQ(model::refusal(hw.units[1], net, net.layers[1]).value_or(""),
            "b runs neither op relu nor op class elementwise");
  hw.units[1].capabilities->op_classes.clear();
  EXPECT_EQ(model::refusal(hw.units[1], net, net.layers[1]).value_or(""), "b does not run op relu");
  hw.units[1].capabilities->ops = {"conv2d", "relu"};
  EXPECT_FALSE(model::refusal(hw.units[1], net, net.layers[1]));
  hw.units[1].capabilities->precisions = {model::Precision::int8};
  EXPECT_EQ(model::refusal(hw.units[1], net, net.layers[0]).value_or(""), "b does not compute in fp32");
  hw.units[1].capabilities->precisions.clear();
  hw.units[1].capabilities->max_tensor_bytes = 4095;  // one byte short of every tensor here
  EXPECT_NE(model::refusal(hw.units[1], net, net.layers[0]).value_or("").find("is larger than b's max_tensor"),
            std::string::npos);
  hw.units[1].capabilities->max_tensor_bytes = 4096;  // exactly the size: allowed
  EXPECT_FALSE(model::refusal(hw.units[1], net, net.layers[0]));
}

TEST(Placement, RefusedLayersFallBackAndCutsCarryTheirTensors) {
  const auto hw = two_units();
  const auto net = conv_relu_conv();
  const auto placed = model::place_layers(hw, net, 1, {});
  ASSERT_TRUE(placed.problems.empty());
  EXPECT_EQ(placed.unit_of_layer, (std::vector<std::size_t>{1, 0, 1}));
  EXPECT_EQ(placed.fell_back, (std::vector<bool>{false, true, false}));
  const auto parts = model::cut_network(net, placed.unit_of_layer);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].handover_in_bytes, 0);     // reads the graph input only
  EXPECT_EQ(parts[1].handover_in_bytes, 4096);  // c0's output, from b
  EXPECT_EQ(parts[2].handover_in_bytes, 4096);  // r1's output, from a
  // Each part alone: what it reads from elsewhere is a graph input, what others read a graph output.
  EXPECT_EQ(parts[1].network.layers.size(), 1u);
  EXPECT_EQ(parts[1].network.inputs, (std::vector<int>{1}));   // tensor 1: c0's output
  EXPECT_EQ(parts[1].network.outputs, (std::vector<int>{2}));  // tensor 2: r1's output
  EXPECT_EQ(parts[2].network.outputs, (std::vector<int>{3}));  // the network's own output
}

TEST(Placement, ASkipConnectionFromTheSameUnitIsNoHandOver) {
  const auto hw = two_units();
  const auto net = conv_relu_conv(true);
  // a2 (add, elementwise) also falls back: c0 on b, then r1 and a2 on a.
  auto hw2 = hw;
  hw2.units[1].capabilities->ops = {"add"};  // b runs the add: c0 on b, r1 on a, a2 on b
  const auto placed = model::place_layers(hw2, net, 1, {});
  EXPECT_EQ(placed.unit_of_layer, (std::vector<std::size_t>{1, 0, 1}));
  const auto parts = model::cut_network(net, placed.unit_of_layer);
  ASSERT_EQ(parts.size(), 3u);
  // a2 reads c0's output (produced on b, its own unit: no hand-over) and r1's (from a): 4096 B, not 8192.
  EXPECT_EQ(parts[2].handover_in_bytes, 4096);
  // Part 0's c0 output is read by both later parts: one graph output.
  EXPECT_EQ(parts[0].network.outputs, (std::vector<int>{1}));
}

TEST(Placement, ASplitOverridesTheStageUnitFromItsLayerOn) {
  auto hw = two_units();
  hw.units[1].capabilities.reset();
  const auto net = conv_relu_conv();
  const auto placed = model::place_layers(hw, net, 0, {{2, 1}});
  EXPECT_EQ(placed.unit_of_layer, (std::vector<std::size_t>{0, 0, 1}));
  EXPECT_EQ(model::cut_network(net, placed.unit_of_layer).size(), 2u);
}

TEST(Placement, NoFallbackIsAProblemNamingTheLayer) {
  auto hw = two_units();
  hw.units[1].capabilities->fallback.reset();
  const auto placed = model::place_layers(hw, conv_relu_conv(), 1, {});
  ASSERT_EQ(placed.problems.size(), 1u);
  EXPECT_EQ(placed.problems[0],
            "layer r1 (relu) cannot run on b: b does not run op class elementwise (op relu), and b names no "
            "fallback (capabilities.fallback)");
}

TEST(Placement, CompiledStagesChainAndEverythingThatReadTheStageFollows) {
  model::ScenarioSpec spec;
  spec.hardware = two_units();
  spec.networks.push_back({"net", conv_relu_conv()});
  spec.sensors.push_back({"camera", 30, 0, {}, {}, std::nullopt});
  model::StageSpec s0;
  s0.name = "s0";
  s0.unit = 1;
  s0.inputs = {{true, 0}};
  s0.work.kind = model::WorkSpec::Kind::network;
  s0.work.network = 0;
  model::StageSpec s1;
  s1.name = "s1";
  s1.declared = 1;
  s1.unit = 0;
  s1.inputs = {{false, 0}};
  s1.work.kind = model::WorkSpec::Kind::time;
  spec.stages = {s0, s1};
  model::TaskSpec control;
  control.name = "control";
  control.reads_stage = 0;
  spec.tasks.push_back(control);
  spec.chains.push_back({"path", 0, {0, 1}, {0, 0}, std::nullopt});
  model::HandoffSpec handoff;  // b's runtime is hosted by a: each part on b reformats its input and output on a
  handoff.unit = 0;
  spec.hardware.units[1].handoff = handoff;
  model::SideWorkSpec written;  // the stage's own side work: before its first part only
  written.unit = 0;
  written.work.kind = model::WorkSpec::Kind::time;
  spec.stages[0].side_work.push_back(written);
  ASSERT_TRUE(model::compile_placements(spec).empty());
  std::vector<std::string> names;
  for (const auto& s : spec.stages) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"s0.part0", "s0.part1", "s0", "s1"}));
  // The parts on b carry b's hand-off for their own graph inputs and outputs, on a: part 0 reformats x before
  // and c0's output after; the last part r1's output before and c2's after. Each reformat reads and writes a
  // 1024-value fp32 tensor: 1024 x (32 + 32) / 8 = 8192 B. The part on a has none.
  auto reformats = [&](std::size_t stage) {
    std::vector<std::pair<bool, double>> out;
    for (const auto& side : spec.stages[stage].side_work)
      if (side.derived) out.emplace_back(side.after, side.work.bytes_per_level[0]);
    return out;
  };
  const std::vector<std::pair<bool, double>> both{{false, 8192.0}, {true, 8192.0}};
  EXPECT_EQ(reformats(0), both);
  EXPECT_TRUE(spec.stages[1].side_work.empty());
  EXPECT_EQ(reformats(2), both);
  EXPECT_EQ(spec.stages[0].side_work.size(), 3u);  // the written one, then the two reformats
  EXPECT_FALSE(spec.stages[0].side_work[0].derived);
  EXPECT_EQ(spec.stages[2].side_work.size(), 2u);
  EXPECT_EQ(spec.stages[2].inputs[0].index, 1u);  // each part reads the one before
  EXPECT_EQ(spec.stages[3].inputs[0].index, 2u);  // s1 reads the last part, named s0
  EXPECT_EQ(*spec.tasks[0].reads_stage, 2u);
  EXPECT_EQ(spec.chains[0].stages, (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ((std::vector<std::size_t>{spec.stages[0].declared, spec.stages[1].declared, spec.stages[2].declared,
                                      spec.stages[3].declared}),
            (std::vector<std::size_t>{0, 1, 2, 3}));  // s1 was declared after s0: after all its parts
  EXPECT_EQ(spec.stages[0].part_of, "s0");
  EXPECT_EQ(spec.networks.size(), 4u);  // the original and three parts
}
