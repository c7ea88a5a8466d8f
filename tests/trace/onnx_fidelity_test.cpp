// ONNX import fidelity on the patterns real exporters write (issue 9): activations written as subgraphs
// (hardswish, SiLU, GELU, scale/offset by constants) fused into the producing convolution as TensorRT and the
// TFLite delegates fuse them; a Split of a constant that feeds Concat -> Pad folded; If costed (its constant branch,
// the branch a condition folded from static shapes picks, or the larger of the two), Loop named. Oracles: byte counts
// by hand (a fused kernel reads its input and weights and writes its output once).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "model/budget.hpp"
#include "onnx_builder.hpp"
#include "test_support.hpp"
#include "trace/import.hpp"

namespace fs = std::filesystem;
using namespace framesim;
using framesim::testing::GraphBuilder;
using framesim::testing::seed_device;
using framesim::testing::set_int;

namespace {

fs::path save(const onnx::ModelProto& m, const std::string& name) {
  const fs::path p = fs::temp_directory_path() / fmt::format("framesim_onnx_fidelity_{}_{}", ::getpid(), name);
  std::ofstream out(p, std::ios::binary);
  m.SerializeToOstream(&out);
  return p;
}

/// x [1, 16, 8, 8] -> 1x1 conv 16 -> 16 (no bias) -> `tail` (which writes "y").
GraphBuilder conv_then(const std::function<void(GraphBuilder&)>& tail) {
  GraphBuilder g(13);
  g.input("x", {1, 16, 8, 8}).weight("w", {16, 16, 1, 1});
  g.node("Conv", {"x", "w"}, {"c"}, "conv");
  tail(g);
  g.output("y");
  return g;
}

struct Imported {
  model::NetworkSpec net;
  model::BudgetReport budget;
};

Imported import_and_budget(GraphBuilder& g, const std::string& name) {
  const fs::path p = save(g.model(), name);
  Imported out{trace::import_onnx(p).network, {}};
  fs::remove(p);
  out.budget = model::make_budget(seed_device(), out.net, {});
  return out;
}

// One kernel: the input (16 x 64 fp32 = 4,096 B) and the weights (16 x 16 fp32 = 1,024 B) read once, the
// output (4,096 B) written once: 9,216 B at DRAM, nothing in between.
constexpr double kFusedBytes = 4096 + 1024 + 4096;

}  // namespace

TEST(OnnxFidelity, HardswishWrittenAsAddClipMulDivFusesIntoTheConv) {
  auto g = conv_then([](GraphBuilder& b) {
    b.floats("three", {}, {3.0F}).floats("zero", {}, {0.0F}).floats("six", {}, {6.0F});
    b.node("Add", {"c", "three"}, {"a"}, "add3");
    b.node("Clip", {"a", "zero", "six"}, {"r"}, "clip");
    b.node("Mul", {"c", "r"}, {"m"}, "mul");
    b.node("Div", {"m", "six"}, {"y"}, "div6");
  });
  const auto r = import_and_budget(g, "hardswish.onnx");
  ASSERT_EQ(r.budget.plan.kernels.size(), 1u) << r.budget.plan.kernels[1].name;
  EXPECT_EQ(r.budget.plan.kernels[0].name, "conv+add3+clip+mul+div6");
  EXPECT_DOUBLE_EQ(r.budget.plan.kernels[0].total_bytes, kFusedBytes);
  ASSERT_EQ(r.budget.plan.kernels[0].fused_patterns.size(), 1u);
  EXPECT_EQ(r.budget.plan.kernels[0].fused_patterns[0], "hardswish x*clip(x+3,0,6)/6");
}

TEST(OnnxFidelity, HardsigmoidChainFusesIntoTheConv) {
  auto g = conv_then([](GraphBuilder& b) {
    b.floats("three", {}, {3.0F}).floats("zero", {}, {0.0F}).floats("six", {}, {6.0F});
    b.node("Add", {"c", "three"}, {"a"}, "add3");
    b.node("Clip", {"a", "zero", "six"}, {"r"}, "clip");
    b.node("Div", {"r", "six"}, {"y"}, "div6");
  });
  const auto r = import_and_budget(g, "hardsigmoid.onnx");
  ASSERT_EQ(r.budget.plan.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(r.budget.plan.kernels[0].total_bytes, kFusedBytes);
}

TEST(OnnxFidelity, SiluFusesIntoTheConv) {
  auto g = conv_then([](GraphBuilder& b) {
    b.node("Sigmoid", {"c"}, {"s"}, "sigmoid");
    b.node("Mul", {"c", "s"}, {"y"}, "mul");
  });
  const auto r = import_and_budget(g, "silu.onnx");
  ASSERT_EQ(r.budget.plan.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(r.budget.plan.kernels[0].total_bytes, kFusedBytes);
  EXPECT_EQ(r.budget.plan.kernels[0].fused_patterns.at(0), "SiLU x*sigmoid(x)");
  // Unfused, c is written once and read twice (sigmoid, mul) and s written and read once: 5 more traversals of
  // 4,096 B than the fused kernel's.
  EXPECT_DOUBLE_EQ(r.budget.fusion.bytes_before - r.budget.fusion.bytes_after, 5 * 4096.0);
}

TEST(OnnxFidelity, GeluWrittenWithErfFusesIntoTheConv) {
  auto g = conv_then([](GraphBuilder& b) {
    b.floats("sqrt2", {}, {1.4142135F}).floats("one", {}, {1.0F}).floats("half", {}, {0.5F});
    b.node("Div", {"c", "sqrt2"}, {"d"}, "div");
    b.node("Erf", {"d"}, {"e"}, "erf");
    b.node("Add", {"e", "one"}, {"a"}, "add1");
    b.node("Mul", {"c", "a"}, {"m"}, "mul");
    b.node("Mul", {"m", "half"}, {"y"}, "half");
  });
  const auto r = import_and_budget(g, "gelu.onnx");
  ASSERT_EQ(r.budget.plan.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(r.budget.plan.kernels[0].total_bytes, kFusedBytes);
  EXPECT_EQ(r.budget.plan.kernels[0].fused_patterns.at(0), "GELU");
}

TEST(OnnxFidelity, PerChannelScaleAndOffsetFuseIntoTheConv) {
  // Mul by scale[1, 16, 1, 1] then Add offset[1, 16, 1, 1]: an unfolded batchnorm as exporters write it. The
  // kernel also reads the 2 x 16 fp32 constants: 128 B.
  auto g = conv_then([](GraphBuilder& b) {
    b.weight("scale", {1, 16, 1, 1}).weight("offset", {1, 16, 1, 1});
    b.node("Mul", {"c", "scale"}, {"s"}, "scale");
    b.node("Add", {"s", "offset"}, {"y"}, "offset");
  });
  const auto r = import_and_budget(g, "scale_offset.onnx");
  ASSERT_EQ(r.budget.plan.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(r.budget.plan.kernels[0].total_bytes, kFusedBytes + 128);
  EXPECT_EQ(r.budget.plan.kernels[0].fused_patterns.size(), 2u);
}

TEST(OnnxFidelity, ASplitConstantFeedingConcatThenPadIsFolded) {
  // pads [0, 0, 1, 1, 0, 0, 1, 1] split in two and concatenated again (as M-LSD's exporter wrote it): a pad of
  // one pixel on every side of H and W, 1x3x8x8 -> 1x3x10x10.
  GraphBuilder g(13);
  g.input("x", {1, 3, 8, 8}).ints("pads_all", {0, 0, 1, 1, 0, 0, 1, 1});
  g.node("Split", {"pads_all"}, {"p1", "p2"}, "split_pads");
  g.node("Concat", {"p1", "p2"}, {"pads"}, "cat_pads").add_attribute()->set_name("axis");
  auto& cat = *g.model().mutable_graph()->mutable_node(1);
  cat.mutable_attribute(0)->set_type(onnx::AttributeProto::INT);
  cat.mutable_attribute(0)->set_i(0);
  g.node("Pad", {"x", "pads"}, {"y"}, "pad");
  g.output("y");
  const fs::path p = save(g.model(), "split_pad.onnx");
  const auto r = trace::import_onnx(p);
  fs::remove(p);
  ASSERT_EQ(r.network.layers.size(), 1u);
  EXPECT_EQ(r.network.layers[0].op, "pad");
  EXPECT_EQ(r.network.tensors[static_cast<std::size_t>(r.network.layers[0].output)].shape,
            (model::Shape{1, 3, 10, 10}));
}

/// x [1, 4] -> MatMul w1 [4, 8] -> r [1, 8] -> If(cond) -> y -> Sigmoid -> z. then_branch: MatMul of r by its own
/// initializer w2 [8, 16] -> [1, 16]; else_branch: Relu of r -> [1, 8]. `cond` is set by `condition` (a run-time
/// value, or a constant).
GraphBuilder if_graph(const std::function<void(GraphBuilder&)>& condition) {
  GraphBuilder g(13);
  g.input("x", {1, 4}).weight("w1", {4, 8});
  g.node("MatMul", {"x", "w1"}, {"r"}, "fc1");
  condition(g);
  auto& branch = g.node("If", {"cond"}, {"y"}, "branchy");
  auto* then_attr = branch.add_attribute();
  then_attr->set_name("then_branch");
  then_attr->set_type(onnx::AttributeProto::GRAPH);
  auto* then_g = then_attr->mutable_g();
  then_g->set_name("then");
  auto* w2 = then_g->add_initializer();
  w2->set_name("w2");  // a branch's own weights
  w2->set_data_type(onnx::TensorProto::FLOAT);
  w2->add_dims(8);
  w2->add_dims(16);
  w2->set_raw_data(std::string(8 * 16 * 4, '\0'));
  auto* mm = then_g->add_node();
  mm->set_op_type("MatMul");
  mm->set_name("fc2");
  mm->add_input("r");
  mm->add_input("w2");
  mm->add_output("t");
  then_g->add_output()->set_name("t");
  auto* else_attr = branch.add_attribute();
  else_attr->set_name("else_branch");
  else_attr->set_type(onnx::AttributeProto::GRAPH);
  auto* else_g = else_attr->mutable_g();
  else_g->set_name("else");
  auto* relu = else_g->add_node();
  relu->set_op_type("Relu");
  relu->set_name("act");
  relu->add_input("r");
  relu->add_output("e");
  else_g->add_output()->set_name("e");
  g.node("Sigmoid", {"y"}, {"z"}, "sig");
  g.output("z");
  return g;
}

std::string all_warnings(const trace::ImportResult& r) {
  std::string out;
  for (const auto& w : r.warnings) out += w + "\n";
  return out;
}

// A condition computed at run time (ReduceSum(x) > 0): both branches costed, the larger kept. By hand:
//   fc1 2 x 4 x 8 = 64 ops. then: fc2 2 x 8 x 16 = 256 ops, the sigmoid on [1, 16] 4 x 16 = 64 ops (neg, exp,
//   add, divide per element): 384 ops. else: relu on [1, 8] 8 ops, the sigmoid on [1, 8] 4 x 8 = 32 ops: 104 ops.
//   The larger is then: 384 ops, and the
//   weights w1 (4 x 8 x 4 B = 128 B) and w2 (8 x 16 x 4 B = 512 B): 640 B. The condition's nodes feed nothing
//   once the If is resolved, so they are dropped.
TEST(OnnxFidelity, IfWithARunTimeConditionCostsTheLargerBranch) {
  auto g = if_graph([](GraphBuilder& b) {
    b.floats("zero", {}, {0.0F});
    b.node("ReduceSum", {"x"}, {"s"}, "sum");
    b.node("Greater", {"s", "zero"}, {"cond"}, "gt");
  });
  const fs::path p = save(g.model(), "if_runtime.onnx");
  const auto r = trace::import_onnx(p);
  fs::remove(p);
  EXPECT_DOUBLE_EQ(r.network.total_ops(), 384) << all_warnings(r);
  EXPECT_DOUBLE_EQ(r.network.total_weight_bytes(), 640);
  EXPECT_TRUE(r.network.find_layer("branchy/then/fc2"));
  EXPECT_NE(all_warnings(r).find("If \"branchy\": the condition is computed at run time; both branches costed "
                                 "(then_branch 384 ops and"),
            std::string::npos)
      << all_warnings(r);
  EXPECT_NE(all_warnings(r).find("else_branch 104 ops and"), std::string::npos) << all_warnings(r);
  EXPECT_NE(all_warnings(r).find("the larger, then_branch, is the network (a bound for either)"), std::string::npos);
}

// A constant condition (false) picks its branch: 64 + 8 + 32 = 104 ops (see above), weights w1 only: 128 B.
TEST(OnnxFidelity, IfWithAConstantConditionCostsThatBranch) {
  auto g = if_graph([](GraphBuilder& b) {
    auto* t = b.model().mutable_graph()->add_initializer();
    t->set_name("cond");
    t->set_data_type(onnx::TensorProto::BOOL);
    t->add_int32_data(0);
  });
  const fs::path p = save(g.model(), "if_constant.onnx");
  const auto r = trace::import_onnx(p);
  fs::remove(p);
  EXPECT_DOUBLE_EQ(r.network.total_ops(), 104) << all_warnings(r);
  EXPECT_DOUBLE_EQ(r.network.total_weight_bytes(), 128);
  EXPECT_NE(all_warnings(r).find("If \"branchy\": the condition is the constant false: its else_branch is costed"),
            std::string::npos)
      << all_warnings(r);
}

/// The condition Silero-style exports compute from a static shape: Equal(Gather(Shape(x), [1]), [features]), with
/// x [1, 4]: Shape(x) = [1, 4], its element 1 is 4, so the condition is 4 == features.
void shape_condition(GraphBuilder& b, std::int64_t features) {
  b.ints("axis1", {1}).ints("features", {features});
  b.node("Shape", {"x"}, {"x_shape"}, "shape");
  set_int(b.node("Gather", {"x_shape", "axis1"}, {"x_width"}, "width"), "axis", 0);
  b.node("Equal", {"x_width", "features"}, {"cond"}, "is_wide");
}

// The condition folds from x's static shape: 4 == 4 is true, so only the then_branch is imported and costed:
// 64 (fc1) + 256 (fc2) + 64 (the sigmoid on [1, 16]) = 384 ops, weights w1 and w2, 128 + 512 = 640 B (see above);
// 4 == 5 is false: only the else_branch, 64 + 8 + 32 = 104 ops and 128 B. No bound is taken: the branch not
// chosen is not in the network at all.
TEST(OnnxFidelity, IfWithAConditionFoldedFromShapesCostsThatBranchOnly) {
  for (const bool wide : {true, false}) {
    SCOPED_TRACE(wide ? "4 == 4" : "4 == 5");
    auto g = if_graph([&](GraphBuilder& b) { shape_condition(b, wide ? 4 : 5); });
    const fs::path p = save(g.model(), wide ? "if_folds_true.onnx" : "if_folds_false.onnx");
    const auto r = trace::import_onnx(p);
    fs::remove(p);
    EXPECT_DOUBLE_EQ(r.network.total_ops(), wide ? 384 : 104) << all_warnings(r);
    EXPECT_DOUBLE_EQ(r.network.total_weight_bytes(), wide ? 640 : 128);
    EXPECT_EQ(r.network.find_layer("branchy/then/fc2").has_value(), wide);
    EXPECT_EQ(r.network.find_layer("branchy/else/act").has_value(), !wide);
    const std::string note = fmt::format(
        "If \"branchy\": the condition \"cond\" folds to {} from static shapes and constants: only its {} is costed",
        wide ? "true" : "false", wide ? "then_branch" : "else_branch");
    EXPECT_NE(all_warnings(r).find(note), std::string::npos) << all_warnings(r);
    EXPECT_EQ(all_warnings(r).find("both branches costed"), std::string::npos) << all_warnings(r);
  }
}

// A condition from a shape known only at run time (NonZero's output length depends on x's values) cannot fold:
// both branches are costed and the larger, then (384 ops, 640 B), is the bound, as for any run-time condition.
TEST(OnnxFidelity, IfWithAShapeKnownOnlyAtRunTimeKeepsTheLargerBranchBound) {
  auto g = if_graph([](GraphBuilder& b) {
    b.ints("axis1", {1}).ints("two", {2});
    b.node("NonZero", {"x"}, {"nz"}, "nonzero");
    b.node("Shape", {"nz"}, {"nz_shape"}, "shape");
    set_int(b.node("Gather", {"nz_shape", "axis1"}, {"count"}, "count"), "axis", 0);
    b.node("Equal", {"count", "two"}, {"cond"}, "two_set");
  });
  const fs::path p = save(g.model(), "if_runtime_shape.onnx");
  const auto r = trace::import_onnx(p);
  fs::remove(p);
  EXPECT_DOUBLE_EQ(r.network.total_ops(), 384) << all_warnings(r);
  EXPECT_DOUBLE_EQ(r.network.total_weight_bytes(), 640);
  EXPECT_NE(all_warnings(r).find("If \"branchy\": the condition is computed at run time; both branches costed "
                                 "(then_branch 384 ops and"),
            std::string::npos)
      << all_warnings(r);
  EXPECT_EQ(all_warnings(r).find("folds to"), std::string::npos) << all_warnings(r);
}

// A sparse constant (ONNX SparseTensorProto, a Constant's sparse_value) is counted as stored, like TFLite's sparse
// tensors: x [1, 8] -> MatMul by w [8, 4] kept as 5 non-zero fp32 values with 5 linearised int64 indices. By hand:
// 2 x 8 x 4 = 64 ops; stored weight bytes 5 x 4 B of values + 5 x 8 B of indices = 60 B; read per inference the
// dense 32 x 4 B = 128 B. (A sparse initializer goes through the same count; ONNX's shape inference gives the
// MatMul reading one no shape, so it is not the example here.)
TEST(OnnxFidelity, SparseConstantCountsItsValuesAndIndices) {
  GraphBuilder g(13);
  g.input("x", {1, 8});
  auto& constant = g.node("Constant", {}, {"w"}, "w_const");
  auto* a = constant.add_attribute();
  a->set_name("sparse_value");
  a->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  auto* sp = a->mutable_sparse_tensor();
  sp->add_dims(8);
  sp->add_dims(4);
  auto* values = sp->mutable_values();
  values->set_name("w_values");
  values->set_data_type(onnx::TensorProto::FLOAT);
  values->add_dims(5);
  for (int i = 0; i < 5; ++i) values->add_float_data(1.0F);
  auto* indices = sp->mutable_indices();
  indices->set_name("w_indices");
  indices->set_data_type(onnx::TensorProto::INT64);
  indices->add_dims(5);
  for (std::int64_t i : {0, 5, 10, 20, 31}) indices->add_int64_data(i);
  g.node("MatMul", {"x", "w"}, {"y"}, "fc");
  g.output("y");
  const fs::path p = save(g.model(), "sparse_constant.onnx");
  const auto r = trace::import_onnx(p);
  fs::remove(p);
  const auto fc = r.network.find_layer("fc");
  ASSERT_TRUE(fc) << all_warnings(r);
  const auto& l = r.network.layers[static_cast<std::size_t>(*fc)];
  EXPECT_DOUBLE_EQ(l.ops, 64);
  EXPECT_DOUBLE_EQ(l.params_count, 32);
  EXPECT_DOUBLE_EQ(l.weight_bytes, 60);
  EXPECT_DOUBLE_EQ(l.weight_access.bytes, 128);
}

// Loop repeats its body a number of times known at run time: still refused, by name.
TEST(OnnxFidelity, LoopIsAnErrorNamingIt) {
  GraphBuilder g(13);
  g.input("x", {1, 4});
  auto& loop = g.node("Loop", {"", ""}, {"y"}, "loopy");
  auto* a = loop.add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name("body");
  g.output("y");
  const fs::path p = save(g.model(), "loop.onnx");
  std::string message;
  try {
    trace::import_onnx(p);
  } catch (const core::UserError& e) {
    message = e.what();
  }
  fs::remove(p);
  EXPECT_NE(message.find("node 0 (Loop \"loopy\"): control flow"), std::string::npos) << message;
}

// The shape chain an fp16 export writes for an upsampling: Shape(x) -> Gather H, W -> Cast to float16 -> Mul by
// 2 -> Cast to int64 -> Concat with N, C -> Resize(x, sizes) -> Concat with a skip [1, 4, 16, 16] on channels.
// Every value is known from the static input, so the Resize is 1 x 8 x 16 x 16 and the Concat 1 x 12 x 16 x 16.
// By hand: the concat writes 12 x 256 fp16 elements = 6,144 B.
TEST(OnnxFidelity, ShapeChainThroughFp16CastsIsFolded) {
  GraphBuilder g(13);
  g.input("x", {1, 8, 8, 8}, onnx::TensorProto::FLOAT16).input("skip", {1, 4, 16, 16}, onnx::TensorProto::FLOAT16);
  g.ints("hw", {2, 3}).ints("nc", {1, 8});
  auto* two = g.model().mutable_graph()->add_initializer();
  two->set_name("two");
  two->set_data_type(onnx::TensorProto::FLOAT16);
  two->set_raw_data(std::string("\x00\x40", 2));  // 2.0 in IEEE half precision
  g.node("Shape", {"x"}, {"s"}, "shape");
  set_int(g.node("Gather", {"s", "hw"}, {"g"}, "gather"), "axis", 0);
  set_int(g.node("Cast", {"g"}, {"gf"}, "to_half"), "to", onnx::TensorProto::FLOAT16);
  g.node("Mul", {"gf", "two"}, {"m"}, "twice");
  set_int(g.node("Cast", {"m"}, {"mi"}, "to_int"), "to", onnx::TensorProto::INT64);
  set_int(g.node("Concat", {"nc", "mi"}, {"sizes"}, "sizes"), "axis", 0);
  g.node("Resize", {"x", "", "", "sizes"}, {"up"}, "up");
  set_int(g.node("Concat", {"up", "skip"}, {"y"}, "cat"), "axis", 1);
  g.output("y", onnx::TensorProto::FLOAT16);
  const fs::path p = save(g.model(), "fp16_shape_chain.onnx");
  const auto r = trace::import_onnx(p);
  fs::remove(p);
  const auto cat = r.network.find_layer("cat");
  ASSERT_TRUE(cat) << all_warnings(r);
  const auto& y = r.network.tensors[static_cast<std::size_t>(r.network.layers[static_cast<std::size_t>(*cat)].output)];
  EXPECT_EQ(y.shape, (model::Shape{1, 12, 16, 16})) << all_warnings(r);
  EXPECT_DOUBLE_EQ(y.bytes(), 6144);
}
