// The TFLite importer: MediaPipe's face detection (a real file from npm, fetched into a cache by
// traces/fetch_models.sh), small models written here with the flatbuffers builder over framesim's schema subset,
// and bad input (truncated, garbage, empty, dangling tensor indices, unknown ops).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>
#include "config/hardware.hpp"
#include "core/error.hpp"
#include "model/budget.hpp"
#include "test_support.hpp"
#include "tflite_import_support.hpp"
#include "tflite_schema_generated.h"
#include "trace/import.hpp"

namespace fs = std::filesystem;
namespace tfl = framesim::tflite;
using namespace framesim;
using framesim::testing::source_path;
using model::Precision;
using model::Shape;
using namespace framesim::testing::tflite_import;

namespace {

TEST_F(TfliteImport, MediapipeFaceDetectionShortRange) {
  const fs::path path = model_cache() / "face_detection/face_detection_short_range.tflite";
  if (!fs::exists(path))
    GTEST_SKIP() << path
                 << " is missing: run traces/fetch_models.sh (npm pack @mediapipe/face_detection@0.4.1657300184)";
  const auto result = trace::import_tflite(path);
  const auto& net = result.network;

  // The file: 164 operators = 74 DEQUANTIZE (fp16 constant -> fp32, one per kernel and per bias of the 37
  // convolutions) + 21 CONV_2D + 16 DEPTHWISE_CONV_2D + 16 ADD + 17 RELU + 11 PAD + 3 MAX_POOL_2D + 4 RESHAPE
  // + 2 CONCATENATION. The 74 DEQUANTIZEs of constants are folded into the convolutions they feed; each of the
  // other 90 operators becomes exactly one layer (no fused activations in this file: RELU is its own op).
  // Accounting: every layer's `source` names its operator ("file:op K NAME"); the distinct K plus the folded
  // operators must be all 164.
  std::set<int> sourced;
  for (const auto& l : net.layers) {
    const auto at = l.source.rfind(":op ");
    ASSERT_NE(at, std::string::npos) << l.source;
    sourced.insert(std::stoi(l.source.substr(at + 4)));
  }
  EXPECT_EQ(sourced.size(), 90u);
  EXPECT_EQ(net.layers.size(), 90u);
  EXPECT_NE(net.description.find("164 operators -> 90 layers from 90 operators, 74 folded"), std::string::npos)
      << net.description;
  std::map<std::string, int> by_op;
  for (const auto& l : net.layers) by_op[l.op]++;
  EXPECT_EQ(by_op, (std::map<std::string, int>{{"conv2d", 37},  // 21 CONV_2D + 16 DEPTHWISE_CONV_2D
                                               {"relu", 17},
                                               {"add", 16},
                                               {"custom", 11},  // PAD of channels (framesim pads H, W only)
                                               {"maxpool", 3},
                                               {"reshape", 4},
                                               {"concat", 2}}));
  ASSERT_EQ(result.warnings.size(), 2u) << join(result.warnings);
  EXPECT_EQ(result.warnings[0],
            "74 DEQUANTIZE operators of constant tensors (74 of FLOAT16) folded into the layers they feed: those "
            "layers hold their weights at the stored precision");
  EXPECT_NE(result.warnings[1].find("11 PAD operators pad axes other than height and width"), std::string::npos);

  // Input: NHWC 1x128x128x3 in the file, NCHW for framesim's layers.
  ASSERT_EQ(net.inputs.size(), 1u);
  EXPECT_EQ(net.tensors[static_cast<std::size_t>(net.inputs[0])].name, "input");
  EXPECT_EQ(net.tensors[static_cast<std::size_t>(net.inputs[0])].shape, (Shape{1, 3, 128, 128}));
  EXPECT_EQ(net.tensors[static_cast<std::size_t>(net.inputs[0])].precision, Precision::fp32);
  // Outputs as the file lists them (rank 3: no layout change).
  ASSERT_EQ(net.outputs.size(), 2u);
  EXPECT_EQ(net.tensors[static_cast<std::size_t>(net.outputs[0])].name, "regressors");
  EXPECT_EQ(net.tensors[static_cast<std::size_t>(net.outputs[0])].shape, (Shape{1, 896, 16}));
  EXPECT_EQ(net.tensors[static_cast<std::size_t>(net.outputs[1])].name, "classificators");
  EXPECT_EQ(net.tensors[static_cast<std::size_t>(net.outputs[1])].shape, (Shape{1, 896, 1}));

  // Hand counts (MAC = 2 operations; the bias adds one per output):
  // conv2d: 5x5 stride 2 SAME, 3 -> 24 channels, 128x128 -> 64x64.
  //   outputs 24 x 64 x 64 = 98,304; ops = 2 x 98,304 x (3 x 5 x 5) + 98,304 = 14,843,904;
  //   weights 24 x 75 + 24 = 1,824 fp16 values = 3,648 bytes.
  const auto& first = layer(net, "conv2d");
  EXPECT_EQ(first.op, "conv2d");
  EXPECT_EQ(output_of(net, "conv2d").shape, (Shape{1, 24, 64, 64}));
  EXPECT_DOUBLE_EQ(first.ops, 14'843'904);
  EXPECT_DOUBLE_EQ(first.params_count, 1'824);
  EXPECT_DOUBLE_EQ(first.weight_bytes, 3'648);
  EXPECT_EQ(first.precision.weights, Precision::fp16);
  EXPECT_EQ(first.precision.activations, Precision::fp32);
  EXPECT_EQ(first.precision.compute, Precision::fp32);
  // depthwise_conv2d_2: 3x3 stride 2 depthwise over 28 channels, 64x64 -> 32x32.
  //   outputs 28 x 32 x 32 = 28,672; ops = 2 x 28,672 x 9 + 28,672 = 544,768; weights 28 x 9 + 28 = 280.
  const auto& dw = layer(net, "depthwise_conv2d_2");
  EXPECT_EQ(output_of(net, "depthwise_conv2d_2").shape, (Shape{1, 28, 32, 32}));
  EXPECT_DOUBLE_EQ(dw.ops, 544'768);
  EXPECT_DOUBLE_EQ(dw.params_count, 280);
  // regressor_16: 1x1, 96 -> 96 channels on 8x8: 2 x 6,144 x 96 + 6,144 = 1,185,792 ops; 96 x 96 + 96 = 9,312 weights.
  EXPECT_DOUBLE_EQ(layer(net, "regressor_16").ops, 1'185'792);
  EXPECT_DOUBLE_EQ(layer(net, "regressor_16").params_count, 9'312);
  // max_pooling2d: 2x2 stride 2 over 1x28x64x64 -> 1x28x32x32, 4 compares per output: 114,688 ops.
  EXPECT_EQ(output_of(net, "max_pooling2d").shape, (Shape{1, 28, 32, 32}));
  EXPECT_DOUBLE_EQ(layer(net, "max_pooling2d").ops, 114'688);
  // channel_padding: PAD [[0,0],[0,0],[0,0],[0,4]] of 1x64x64x24: 24 -> 28 channels, a copy (0 ops).
  EXPECT_EQ(layer(net, "channel_padding").op, "custom");
  EXPECT_EQ(output_of(net, "channel_padding").shape, (Shape{1, 28, 64, 64}));
  EXPECT_DOUBLE_EQ(layer(net, "channel_padding").ops, 0);
  // reshape: regressor_8 NHWC 1x16x16x32 -> 1x512x16, free (aliases its input).
  EXPECT_EQ(layer(net, "reshape_1").kind, model::OpKind::reshape);
  EXPECT_EQ(output_of(net, "reshape_1").shape, (Shape{1, 512, 16}));

  // Totals: every FLOAT16 tensor of the file is a kernel or a bias: 101,390 values, all at fp16.
  // Operations summed per layer by the formulas above (convs, + one per element for ADD and RELU, 4 per
  // max-pool output) over the file's shapes: 63,714,176.
  EXPECT_DOUBLE_EQ(net.total_params(), 101'390);
  EXPECT_DOUBLE_EQ(net.total_weight_bytes(), 202'780);
  EXPECT_DOUBLE_EQ(net.total_ops(), 63'714'176);
  for (const auto& l : net.layers) {
    if (l.params_count > 0) {
      EXPECT_EQ(l.precision.weights, Precision::fp16) << l.name;
    }
  }

  // The budget on the Orin Nano's GPU.
  const auto hw = config::load_hardware(source_path("hardware/jetson_orin_nano_8gb.yaml"));
  const auto gpu = hw.find_unit("gpu");
  ASSERT_TRUE(gpu.has_value());
  EXPECT_TRUE(model::missing_roofs(net, hw.units[*gpu]).empty());
  model::BudgetOptions options;
  options.unit = *gpu;
  const auto report = model::make_budget(hw, net, options);
  EXPECT_DOUBLE_EQ(report.ops, 63'714'176);
  EXPECT_DOUBLE_EQ(report.weight_bytes, 202'780);
  EXPECT_EQ(report.layers, 90);
  EXPECT_GT(report.estimate_s, 0);
  EXPECT_TRUE(report.fits);
  // Automatic fusion folds RELUs (and ADD + RELU epilogues) into their producers: fewer kernels than layers.
  EXPECT_LT(report.plan.kernels.size(), net.layers.size());
}

TEST_F(TfliteImport, MediapipeFaceDetectionTruncatedIsAClearError) {
  const fs::path path = model_cache() / "face_detection/face_detection_short_range.tflite";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is missing: run traces/fetch_models.sh";
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes.resize(bytes.size() / 2);
  const auto p = write("half.tflite", bytes);
  EXPECT_EQ(error_of(p), p.string() +
                             ": not a valid TFLite model: the flatbuffer does not verify (114516 bytes; "
                             "truncated or corrupt?)");
}

// ---- small models written here ----

TEST_F(TfliteImport, Int8ConvAndFullyConnectedCountExactly) {
  const auto result = trace::import_tflite(write("int8.tflite", int8_conv_fc()));
  const auto& net = result.network;
  EXPECT_TRUE(result.warnings.empty()) << join(result.warnings);
  ASSERT_EQ(net.layers.size(), 4u);  // conv, its fused RELU, the reshape, the fully connected layer
  EXPECT_EQ(net.tensors[static_cast<std::size_t>(net.inputs[0])].shape, (Shape{1, 3, 8, 8}));
  EXPECT_EQ(net.tensors[static_cast<std::size_t>(net.inputs[0])].precision, Precision::int8);

  // conv: 3x3 SAME stride 1, 3 -> 4 channels on 8x8: outputs 4 x 8 x 8 = 256;
  //   ops = 2 x 256 x (3 x 3 x 3) + 256 (bias) = 14,080; weights 4 x 27 + 4 = 112 int8 bytes (TFLite stores the
  //   4 biases as int32, 12 bytes more; framesim counts biases at the weights' precision);
  //   reads the 3 x 8 x 8 = 192-byte input, writes 256 bytes.
  const auto& conv = layer(net, "conv");
  EXPECT_EQ(conv.op, "conv2d");
  EXPECT_DOUBLE_EQ(conv.ops, 14'080);
  EXPECT_DOUBLE_EQ(conv.params_count, 112);
  EXPECT_DOUBLE_EQ(conv.weight_bytes, 112);
  EXPECT_DOUBLE_EQ(conv.input_access[0].bytes, 192);
  EXPECT_DOUBLE_EQ(output_of(net, "conv").bytes(), 256);
  EXPECT_EQ(output_of(net, "conv").shape, (Shape{1, 4, 8, 8}));
  EXPECT_EQ(conv.precision.weights, Precision::int8);
  EXPECT_EQ(conv.precision.activations, Precision::int8);
  EXPECT_EQ(conv.precision.compute, Precision::int8);
  // The fused RELU: one compare per element, 256 ops, a layer of its own that automatic fusion folds back.
  const auto& relu = layer(net, "conv/relu");
  EXPECT_EQ(relu.op, "relu");
  EXPECT_DOUBLE_EQ(relu.ops, 256);
  EXPECT_EQ(net.tensors[static_cast<std::size_t>(relu.inputs[0])].name, "conv");
  // reshape 1x4x8x8 -> 1x256: free.
  EXPECT_EQ(layer(net, "flat").kind, model::OpKind::reshape);
  EXPECT_EQ(output_of(net, "flat").shape, (Shape{1, 256}));
  // fully connected 256 -> 10: ops = 2 x 256 x 10 + 10 = 5,130; weights 2,560 + 10 = 2,570 int8 bytes.
  const auto& fc = layer(net, "logits");
  EXPECT_EQ(fc.op, "linear");
  EXPECT_DOUBLE_EQ(fc.ops, 5'130);
  EXPECT_DOUBLE_EQ(fc.weight_bytes, 2'570);
  EXPECT_DOUBLE_EQ(fc.weight_access.bytes, 2'570);
  EXPECT_DOUBLE_EQ(fc.input_access[0].bytes, 256);
  EXPECT_EQ(output_of(net, "logits").shape, (Shape{1, 10}));
  // Totals: 14,080 + 256 + 5,130 = 19,466 ops; 112 + 2,570 = 2,682 weight bytes.
  EXPECT_DOUBLE_EQ(net.total_ops(), 19'466);
  EXPECT_DOUBLE_EQ(net.total_weight_bytes(), 2'682);
  ASSERT_EQ(net.outputs.size(), 1u);
  EXPECT_EQ(net.tensors[static_cast<std::size_t>(net.outputs[0])].name, "logits");
  EXPECT_EQ(net.layers[0].source, dir_.string() + "/int8.tflite:op 0 CONV_2D");
}

TEST_F(TfliteImport, DynamicBatchNeedsAnInputShape) {
  const auto p = write("dynamic.tflite", int8_conv_fc(true));
  EXPECT_EQ(error_of(p), p.string() +
                             ": input 'image' has a dynamic shape (-1x8x8x3); give it with --input "
                             "image=DIMS (in the model's own layout, NHWC for images)");
  trace::ImportOptions options;
  options.input_shapes["image"] = {2, 8, 8, 3};  // NHWC, as the model states it
  const auto result = trace::import_tflite(p, options);
  const auto& net = result.network;
  EXPECT_EQ(net.tensors[static_cast<std::size_t>(net.inputs[0])].shape, (Shape{2, 3, 8, 8}));
  EXPECT_EQ(output_of(net, "flat").shape, (Shape{2, 256}));  // the requested shape [-1, 256]
  EXPECT_EQ(output_of(net, "logits").shape, (Shape{2, 10}));
  EXPECT_DOUBLE_EQ(net.total_ops(), 2 * 19'466);  // twice the work, bias adds included
  options.input_shapes = {{"images", {1, 8, 8, 3}}};
  EXPECT_EQ(error_of(p, options),
            p.string() + ": --input names 'images', which is not an input of the model (inputs: image)");
}

/// A model stored with placeholder shapes (x is [1, 1], its signature [1, -1]) whose reshape target is computed
/// from the input's shape: SHAPE(x) -> STRIDED_SLICE [0] (shrunk to a scalar) -> PACK(n, 5, 256) -> RESHAPE ->
/// SOFTMAX. With --input x=1x1280 the target folds to [1, 5, 256] and the softmax runs on it.
/// By hand: softmax 5 ops per element x 1,280 elements = 6,400 ops; its input and output 1,280 x 4 B = 5,120 B each.
TEST_F(TfliteImport, InputShapeIsCarriedThroughComputedReshapeTargets) {
  ModelWriter w;
  const int x = w.tensor("x", {1, 1}, tfl::TensorType_FLOAT32, {1, -1});
  const int s = w.tensor("x_shape", {2}, tfl::TensorType_INT32);
  w.op(tfl::BuiltinOperator_SHAPE, {x}, {s});
  const int begin = w.ints("begin", {0}), end = w.ints("end", {1}), stride = w.ints("stride", {1});
  const int n = w.tensor("n", {}, tfl::TensorType_INT32);
  w.op(tfl::BuiltinOperator_STRIDED_SLICE, {s, begin, end, stride}, {n}, tfl::BuiltinOptions_StridedSliceOptions,
       tfl::CreateStridedSliceOptions(w.fbb, 0, 0, 0, 0, 1).Union());
  auto scalar = [&](const std::string& name, int32_t v) {
    std::vector<uint8_t> data(4);
    std::memcpy(data.data(), &v, 4);
    return w.constant(name, {}, tfl::TensorType_INT32, data);
  };
  const int five = scalar("five", 5), width = scalar("width", 256);
  const int target = w.tensor("target", {3}, tfl::TensorType_INT32);
  w.op(tfl::BuiltinOperator_PACK, {n, five, width}, {target}, tfl::BuiltinOptions_PackOptions,
       tfl::CreatePackOptions(w.fbb, 3, 0).Union());
  const int y = w.tensor("y", {1, 1, 1}, tfl::TensorType_FLOAT32);
  w.op(tfl::BuiltinOperator_RESHAPE, {x, target}, {y});
  const int z = w.tensor("z", {1, 1, 1}, tfl::TensorType_FLOAT32);
  w.op(tfl::BuiltinOperator_SOFTMAX, {y}, {z});
  w.inputs = {x};
  w.outputs = {z};
  const auto p = write("placeholder_shapes.tflite", w.finish());
  trace::ImportOptions options;
  options.input_shapes["x"] = {1, 1280};
  const auto r = trace::import_tflite(p, options);
  EXPECT_EQ(output_of(r.network, "y").shape, (Shape{1, 5, 256})) << join(r.warnings);
  EXPECT_EQ(output_of(r.network, "z").shape, (Shape{1, 5, 256}));
  EXPECT_DOUBLE_EQ(r.network.total_ops(), 6400);
  EXPECT_DOUBLE_EQ(output_of(r.network, "z").bytes(), 5120);
}

}  // namespace
