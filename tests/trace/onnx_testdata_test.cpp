// The ONNX importer op by op on Debian's libonnx-testdata single-operator models, each number from the test's
// shapes by hand, and every model of that data set imported without a crash.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>
#include "config/hardware.hpp"
#include "config/network.hpp"
#include "config/network_writer.hpp"
#include "core/error.hpp"
#include "model/budget.hpp"
#include "onnx_builder.hpp"
#include "onnx_import_support.hpp"
#include "test_support.hpp"
#include "trace/import.hpp"

namespace fs = std::filesystem;
using namespace framesim;
using framesim::testing::GraphBuilder;
using framesim::testing::set_int;
using framesim::testing::set_ints;
using framesim::testing::source_path;
using model::LayerPrecision;
using model::Precision;
using model::Shape;
using namespace framesim::testing::onnx_import;

namespace {

// =====================================================================================================
// Op by op on libonnx-testdata: every number from the test's shapes, by hand
// =====================================================================================================

class OnnxTestData : public OnnxImport {
 protected:
  void SetUp() override {
    if (!fs::exists(kTestData)) GTEST_SKIP() << kTestData << " is missing: apt-get install libonnx-testdata";
    OnnxImport::SetUp();
  }
  /// Imports test `name`, its graph inputs numbered in `weights` stored as initializers (see testdata()).
  trace::ImportResult import(const std::string& name, const std::vector<int>& weights = {}) {
    return trace::import_onnx(testdata(name, weights));
  }
};

struct Expect {
  std::string op;
  double ops;
  double read;     // bytes read from the inputs
  double written;  // bytes of the output
  double weights;  // stored weight bytes
};

void check(const trace::ImportResult& r, std::size_t layer, const Expect& e) {
  const auto& net = r.network;
  ASSERT_GT(net.layers.size(), layer) << all_warnings(r);
  const auto& l = net.layers[layer];
  SCOPED_TRACE(l.name + " (" + l.op + ")");
  EXPECT_EQ(l.op, e.op);
  EXPECT_DOUBLE_EQ(l.ops, e.ops);
  EXPECT_DOUBLE_EQ(read_bytes(l), e.read);
  EXPECT_DOUBLE_EQ(written_bytes(net, l), e.written);
  EXPECT_DOUBLE_EQ(l.weight_bytes, e.weights);
}

constexpr double F = 4;  // bytes of an fp32 element

TEST_F(OnnxTestData, ConvWithStridesAndPadding) {
  // x 1x1x7x5, W 1x1x3x3, pads 1, stride 2 -> 1x1x4x3 ((7+2-3)/2+1 = 4, (5+2-3)/2+1 = 3).
  // ops = 2 x Cout 1 x 4 x 3 x Cin 1 x 3 x 3 = 216.
  auto r = import("test_conv_with_strides_padding", {1});
  check(r, 0, {"conv2d", 216, 35 * F, 12 * F, 9 * F});
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(r.network.layers[0].params.at("stride")),
            (std::vector<std::int64_t>{2, 2}));
  // As shipped, W is a graph input: the same formula as custom, W read as an activation (and said so).
  auto as_is = import("test_conv_with_strides_padding");
  check(as_is, 0, {"custom", 216, (35 + 9) * F, 12 * F, 0});
  EXPECT_TRUE(has_warning(as_is, "the weights are not an initializer")) << all_warnings(as_is);
}

TEST_F(OnnxTestData, ConvWithAsymmetricPaddingAndAutoPad) {
  // pads [t,l,b,r] = [1,0,1,0], stride 2: 1x1x7x5 -> 1x1x4x2; ops = 2 x 4 x 2 x 9 = 144.
  auto r = import("test_conv_with_strides_and_asymmetric_padding", {1});
  check(r, 0, {"conv2d", 144, 35 * F, 8 * F, 9 * F});
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(r.network.layers[0].params.at("padding")),
            (std::vector<std::int64_t>{1, 0, 1, 0}));
  // SAME_LOWER, stride 2, 5x5, k3: out 3x3, total pad (3-1) x 2 + 3 - 5 = 2 per axis -> [1,1,1,1]; 2 x 9 x 9 = 162.
  auto same = import("test_conv_with_autopad_same", {1});
  check(same, 0, {"conv2d", 162, 25 * F, 9 * F, 9 * F});
  // pads 1, stride 1: 5x5 -> 5x5; 2 x 25 x 9 = 450.
  check(import("test_basic_conv_with_padding", {1}), 0, {"conv2d", 450, 25 * F, 25 * F, 9 * F});
}

TEST_F(OnnxTestData, Gemm) {
  // a 2x10, b 10x3 (weights): linear, 2 x M 2 x K 10 x N 3 = 120.
  check(import("test_gemm_default_no_bias", {1}), 0, {"linear", 120, 20 * F, 6 * F, 30 * F});
  // Both activations: matmul of two inputs, the same 120 ops, reading a and b.
  check(import("test_gemm_default_no_bias"), 0, {"matmul", 120, (20 + 30) * F, 6 * F, 0});
  // a 3x6, b 4x6 with transB (n = 4), c 1x4 bias: 2 x 3 x 6 x 4 + 3 x 4 = 156; weights (24 + 4) fp32.
  auto tb = import("test_gemm_transposeB", {1, 2});
  check(tb, 0, {"linear", 156, 18 * F, 12 * F, 28 * F});
  EXPECT_EQ(std::get<std::int64_t>(tb.network.layers[0].params.at("out_features")), 4);
  // transA: a 4x3 read as 3x4, b 5x4 transposed (n = 5), c 1x5: custom, 2 x 3 x 4 x 5 + 3 x 5 = 135.
  check(import("test_gemm_all_attributes", {1, 2}), 0, {"custom", 135, 12 * F, 15 * F, 25 * F});
}

TEST_F(OnnxTestData, MatMul) {
  // 3x4 x 4x3: 2 x 3 x 4 x 3 = 72; with b stored: matmul with n = 3 and 48 bytes of weights.
  check(import("test_matmul_2d"), 0, {"matmul", 72, (12 + 12) * F, 9 * F, 0});
  auto w = import("test_matmul_2d", {1});
  check(w, 0, {"matmul", 72, 12 * F, 9 * F, 12 * F});
  EXPECT_EQ(std::get<std::int64_t>(w.network.layers[0].params.at("n")), 3);
  // batched 2x3x4 x 2x4x3: 2 x 2 x 3 x 4 x 3 = 144.
  check(import("test_matmul_3d"), 0, {"matmul", 144, (24 + 24) * F, 18 * F, 0});
}

TEST_F(OnnxTestData, Pooling) {
  // MaxPool 3x3, pads 2, stride 1: 1x3x28x28 -> 1x3x30x30; 9 compares per output: 3 x 900 x 9 = 24,300.
  auto mp = import("test_maxpool_2d_pads");
  check(mp, 0, {"maxpool", 24'300, 3 * 784 * F, 2'700 * F, 0});
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(mp.network.layers[0].params.at("stride")),
            (std::vector<std::int64_t>{1, 1}))
      << "ONNX's default stride is 1, not the window";
  // ceil_mode: 1x1x4x4, 3x3, stride 2 -> 2x2 (the partial window becomes bottom/right padding): 4 x 9 = 36.
  auto ceil = import("test_maxpool_2d_ceil");
  check(ceil, 0, {"maxpool", 36, 16 * F, 4 * F, 0});
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(ceil.network.layers[0].params.at("padding")),
            (std::vector<std::int64_t>{0, 0, 1, 1}));
  // AveragePool 5x5 stride 3: 1x3x32x32 -> 1x3x10x10; 3 x 100 x 25 = 7,500.
  check(import("test_averagepool_2d_strides"), 0, {"avgpool", 7'500, 3 * 1024 * F, 300 * F, 0});
  // SAME_LOWER 2x2, stride 1: 32x32 -> 32x32, pads [1,1,0,0]; 3 x 1024 x 4 = 12,288.
  auto lower = import("test_averagepool_2d_same_lower");
  check(lower, 0, {"avgpool", 12'288, 3 * 1024 * F, 3 * 1024 * F, 0});
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(lower.network.layers[0].params.at("padding")),
            (std::vector<std::int64_t>{1, 1, 0, 0}));
  // GlobalAveragePool 1x3x5x5 -> 1x3x1x1: one add per input element = 75.
  check(import("test_globalaveragepool"), 0, {"global_avgpool", 75, 75 * F, 3 * F, 0});
}

TEST_F(OnnxTestData, ElementwiseWithBroadcasting) {
  // 3x4x5 + 5: 60 adds; reads 60 + 5 elements.
  check(import("test_add_bcast"), 0, {"add", 60, 65 * F, 60 * F, 0});
  // With the 5 stored: custom with 60 ops and the 5 as weights, reading only x.
  check(import("test_add_bcast", {1}), 0, {"custom", 60, 60 * F, 60 * F, 5 * F});
  // PRelu, slope 5 stored: max and multiply per element = 120 ops, slopes as weights.
  check(import("test_prelu_broadcast", {1}), 0, {"custom", 120, 60 * F, 60 * F, 5 * F});
}

TEST_F(OnnxTestData, Activations) {
  // 3x4x5 = 60 elements; ops per element as ops.cpp counts them.
  check(import("test_relu"), 0, {"relu", 60, 60 * F, 60 * F, 0});
  check(import("test_sigmoid"), 0, {"sigmoid", 4 * 60, 60 * F, 60 * F, 0});
  check(import("test_tanh"), 0, {"tanh", 60, 60 * F, 60 * F, 0});
  check(import("test_exp"), 0, {"exp", 60, 60 * F, 60 * F, 0});
  check(import("test_hardsigmoid"), 0, {"hardsigmoid", 4 * 60, 60 * F, 60 * F, 0});
  check(import("test_hardswish"), 0, {"hardswish", 5 * 60, 60 * F, 60 * F, 0});
  check(import("test_leakyrelu"), 0, {"leaky_relu", 2 * 60, 60 * F, 60 * F, 0});
  check(import("test_erf"), 0, {"erf", 3072, 3072 * F, 3072 * F, 0});  // 1x3x32x32
  check(import("test_clip", {1, 2}), 0, {"clip", 2 * 60, 60 * F, 60 * F, 0});
  check(import("test_softmax_axis_1"), 0, {"softmax", 5 * 60, 60 * F, 60 * F, 0});
}

TEST_F(OnnxTestData, Normalisation) {
  // BatchNormalization 2x3x4x5 with stored statistics: scale and shift per channel, 2 x 120 = 240 ops,
  // 2 x 3 weights (mean and variance folded in).
  check(import("test_batchnorm_example", {1, 2, 3, 4}), 0, {"batchnorm", 240, 120 * F, 120 * F, 6 * F});
  // As shipped the statistics are inputs: custom, 240 ops, reading them too (4 x 3).
  check(import("test_batchnorm_example"), 0, {"custom", 240, (120 + 12) * F, 120 * F, 0});
  // LayerNormalization over the last axis of 2x3x4x5 with W, B of 5: 8 ops per element = 960; 10 weights.
  // Its Mean and InvStdDev outputs (2x3x4x1) are graph outputs: 0-op layers writing 24 elements each.
  auto ln = import("test_layer_normalization_4d_axis_negative_1", {1, 2});
  check(ln, 0, {"layernorm", 960, 120 * F, 120 * F, 10 * F});
  check(ln, 1, {"custom", 0, 0, 24 * F, 0});
  EXPECT_EQ(ln.network.outputs.size(), 3u);
  // Over both axes of 3x4 (axis 0), W and B 3x4: custom, 8 x 12 = 96 ops, 24 weights.
  check(import("test_layer_normalization_2d_axis0", {1, 2}), 0, {"custom", 96, 12 * F, 12 * F, 24 * F});
}

TEST_F(OnnxTestData, Gather) {
  // A stored table 5x4x3x2 gathered by 3 int64 indices on axis 0: an embedding of 5 rows of 24, then a free
  // reshape from 3x24 to 3x4x3x2. Reads 3 rows of 24 fp32 = 288 bytes of weights (scattered: 3 rows); the
  // indices are int64, counted as int32 (3 x 4 bytes).
  auto emb = import("test_gather_0", {0});
  ASSERT_EQ(emb.network.layers.size(), 2u);
  check(emb, 0, {"embedding", 0, 3 * 4, 72 * F, 120 * F});
  EXPECT_DOUBLE_EQ(emb.network.layers[0].weight_access.bytes, 288);
  EXPECT_DOUBLE_EQ(emb.network.layers[0].weight_access.rows, 3);
  check(emb, 1, {"reshape", 0, 0, 0, 0});
  EXPECT_EQ(output_of(emb.network, emb.network.layers[1]).shape, (Shape{3, 4, 3, 2}));
  EXPECT_TRUE(has_warning(emb, "of type INT64 (indices) counted as int32")) << all_warnings(emb);
  // An activation gathered by 3 stored indices: a slice of the 3 x 4 x 3 x 2 gathered elements (reads only them).
  check(import("test_gather_0", {1}), 0, {"slice", 0, 72 * F, 72 * F, 0});
  // Both inputs at run time: custom reading both in full.
  check(import("test_gather_1"), 0, {"custom", 0, 120 * F + 3 * 4, 90 * F, 0});
}

TEST_F(OnnxTestData, Resize) {
  // Nearest, scales [1,1,2,3] stored: 1x1x2x2 -> 1x1x4x6, integer scale [2,3], no arithmetic.
  auto up = import("test_resize_upsample_scales_nearest", {1});
  check(up, 0, {"resize", 0, 4 * F, 24 * F, 0});
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(up.network.layers[0].params.at("scale")),
            (std::vector<std::int64_t>{2, 3}));
  // Linear to sizes 1x1x3x1 from 1x1x4x4: size [3, 1], 7 ops per output (4 multiplies, 3 adds) = 21.
  auto down = import("test_resize_downsample_sizes_linear_pytorch_half_pixel", {1});
  check(down, 0, {"resize", 21, 16 * F, 3 * F, 0});
  // Upsample (opset 9), scales stored.
  check(import("test_upsample_nearest", {1}), 0, {"resize", 0, 4 * F, 24 * F, 0});
}

TEST_F(OnnxTestData, DataMovement) {
  // Concat 2x2 and 2x2 on axis 0: a copy of 8 elements.
  check(import("test_concat_2d_axis_0"), 0, {"concat", 0, 8 * F, 8 * F, 0});
  // Transpose 2x3x4: a copy.
  check(import("test_transpose_all_permutations_0"), 0, {"transpose", 0, 24 * F, 24 * F, 0});
  // Reshape (shape stored), Flatten, Squeeze, Unsqueeze, Identity, Dropout: free, nothing moved.
  for (const auto& [test, weights, shape] : std::vector<std::tuple<std::string, std::vector<int>, Shape>>{
           {"test_reshape_reordered_all_dims", {1}, {4, 2, 3}},
           {"test_flatten_axis1", {}, {2, 60}},
           {"test_squeeze", {1}, {3, 4, 5}},
           {"test_unsqueeze_axis_0", {1}, {1, 3, 4, 5}},
           {"test_identity", {}, {1, 1, 2, 2}},
           {"test_dropout_default", {}, {3, 4, 5}}}) {
    SCOPED_TRACE(test);
    auto r = import(test, weights);
    check(r, 0, {"reshape", 0, 0, 0, 0});
    EXPECT_EQ(output_of(r.network, r.network.layers[0]).shape, shape);
    EXPECT_GE(output_of(r.network, r.network.layers[0]).alias_of, 0);
  }
  // Slice of 20x10x5 with stored starts/ends/axes/steps -> 3x10x5: reads only the 150 elements it keeps.
  check(import("test_slice", {1, 2, 3, 4}), 0, {"slice", 0, 150 * F, 150 * F, 0});
  // Split 2x6 into two 2x3: two slices.
  auto split = import("test_split_equal_parts_2d");
  ASSERT_EQ(split.network.layers.size(), 2u);
  check(split, 0, {"slice", 0, 6 * F, 6 * F, 0});
  check(split, 1, {"slice", 0, 6 * F, 6 * F, 0});
  // Pad 1x3x4x5 by pads [0,0,1,3, 0,0,2,4] -> 1x3x7x12: framesim pads [t,l,b,r] = [1,3,2,4].
  auto pad = import("test_constant_pad", {1, 2});
  check(pad, 0, {"pad", 0, 60 * F, 252 * F, 0});
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(pad.network.layers[0].params.at("pads")),
            (std::vector<std::int64_t>{1, 3, 2, 4}));
}

TEST_F(OnnxTestData, CastsAndQuantization) {
  // Cast fp32 -> fp16 of 3x4: reads 48 bytes, writes 24.
  auto cast = import("test_cast_FLOAT_to_FLOAT16");
  check(cast, 0, {"cast", 0, 12 * F, 12 * 2, 0});
  EXPECT_EQ(output_of(cast.network, cast.network.layers[0]).precision, Precision::fp16);
  // QuantizeLinear fp32 [6] -> uint8 (int8): a cast, 24 bytes in, 6 out. DequantizeLinear int8 [4] -> fp32.
  check(import("test_quantizelinear", {1, 2}), 0, {"cast", 0, 6 * F, 6, 0});
  check(import("test_dequantizelinear", {1, 2}), 0, {"cast", 0, 4, 4 * F, 0});
  // QLinearConv, uint8 1x1x7x7 by a stored 1x1x1x1 weight: 2 x 49 x 1 x 1 = 98 ops, all int8.
  auto qc = import("test_qlinearconv", {1, 2, 3, 4, 5, 6, 7});
  check(qc, 0, {"conv2d", 98, 49, 49, 1});
  EXPECT_EQ(qc.network.layers[0].precision.compute, Precision::int8);
  EXPECT_EQ(qc.network.layers[0].precision.weights, Precision::int8);
  EXPECT_EQ(qc.network.layers[0].precision.activations, Precision::int8);
  // As shipped (w and the scales are inputs): the conv formula as custom, int8 arithmetic, reading all 8 inputs:
  // x 49 + x_scale fp32 4 + x_zp 1 + w 1 + w_scale 4 + w_zp 1 + y_scale 4 + y_zp 1 = 65 bytes.
  auto qc_as_is = import("test_qlinearconv");
  check(qc_as_is, 0, {"custom", 98, 65, 49, 0});
  EXPECT_EQ(qc_as_is.network.layers[0].precision.compute, Precision::int8);
  // QLinearMatMul 2x4 x stored 4x3, uint8: 2 x 2 x 4 x 3 = 48 ops, 12 bytes of int8 weights, 6 bytes out.
  auto qm = import("test_qlinearmatmul_2D", {1, 2, 3, 4, 5, 6, 7});
  check(qm, 0, {"matmul", 48, 8, 6, 12});
  EXPECT_EQ(qm.network.layers[0].precision.compute, Precision::int8);
  // MatMulInteger 4x3 x stored 3x2 (uint8) -> int32 4x2: 2 x 4 x 3 x 2 = 48, int8 weights, int32 output (w8a32
  // with int8 arithmetic).
  auto mi = import("test_matmulinteger", {1, 2, 3});
  check(mi, 0, {"matmul", 48, 12, 8 * 4, 6});
  EXPECT_EQ(mi.network.layers[0].precision.weights, Precision::int8);
  EXPECT_EQ(mi.network.layers[0].precision.activations, Precision::int32);
  EXPECT_EQ(mi.network.layers[0].precision.compute, Precision::int8);
  // ConvInteger 1x1x3x3 by a stored 1x1x2x2, pads 1 -> int32 1x1x4x4: 2 x 16 x 4 = 128.
  check(import("test_convinteger_with_padding", {1, 2}), 0, {"conv2d", 128, 9, 16 * 4, 4});
}

// =====================================================================================================
// Every model of the data set: imports cleanly, with warnings, or is refused with a UserError naming it.
// =====================================================================================================

TEST_F(OnnxTestData, EveryModelImportsOrIsAClearError) {
  int clean = 0, warned = 0, rejected = 0;
  std::map<std::string, int> reasons;
  std::vector<std::string> bad;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kTestData))
    if (e.path().filename().string().rfind("test_", 0) == 0 && fs::exists(e.path() / "model.onnx"))
      dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  const bool log = std::getenv("FRAMESIM_ONNX_TESTDATA_LOG") != nullptr;  // one line per model, for debugging
  for (const auto& d : dirs) {
    const fs::path model = d / "model.onnx";
    try {
      const auto r = trace::import_onnx(model);
      (r.warnings.empty() ? clean : warned) += 1;
      if (log) std::cout << d.filename().string() << ": " << r.network.layers.size() << " layers\n" << all_warnings(r);
      if (r.network.layers.empty() && r.network.outputs.empty())
        bad.push_back(d.filename().string() + ": no layers, no outputs");
    } catch (const core::UserError& e) {
      ++rejected;
      const std::string m = e.what();
      if (log) std::cout << d.filename().string() << ": REJECTED " << m << "\n";
      if (m.rfind(model.string() + ": ", 0) != 0)
        bad.push_back(d.filename().string() + ": does not name the file: " + m);
      // A refusal by framesim's builder or a shape disagreement would be a mapping bug, not the model's fault.
      if (m.find("refuses it") != std::string::npos || m.find("but ONNX shape inference gives") != std::string::npos)
        bad.push_back(d.filename().string() + ": " + m);
      std::string reason = m.substr(model.string().size() + 2);
      for (const char* key : {"no static shape", "is a sequence", "is a optional", "is a map", "zero-sized",
                              "dynamic shape", "not a tensor", "shape inference failed", "no outputs", "has a cycle"})
        if (reason.find(key) != std::string::npos) reason = key;
      ++reasons[reason.substr(0, 80)];
    } catch (const std::exception& e) {
      bad.push_back(d.filename().string() + ": threw a non-UserError: " + e.what());
    }
  }
  std::cout << fmt::format("libonnx-testdata: {} models: {} imported cleanly, {} imported with warnings, {} rejected\n",
                           dirs.size(), clean, warned, rejected);
  for (const auto& [reason, n] : reasons) std::cout << fmt::format("  rejected x{}: {}\n", n, reason);
  std::string listed;
  for (const auto& b : bad) listed += "  " + b + "\n";
  EXPECT_TRUE(bad.empty()) << listed;
  EXPECT_GT(dirs.size(), 900u);
  EXPECT_GT(clean + warned, 600) << "most single-operator models import";
}

}  // namespace
