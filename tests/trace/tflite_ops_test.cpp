// The TFLite importer op by op (every mapped operator's counts by hand, unknown ops, transposed convolutions) and
// bad input (empty, missing, garbage, truncated, corrupt files, dangling references).
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

/// Most mapped operators in one float model; shapes are stated in the file and checked by the importer (a
/// mismatch would be a warning): the model's file.
std::vector<uint8_t> operator_zoo() {
  ModelWriter w;
  using O = tfl::BuiltinOperator;
  const int x = w.tensor("x", {1, 8, 8, 4});
  // DEPTHWISE_CONV_2D with depth_multiplier 2 (4 -> 8 channels), fused RELU6; old-style operator code.
  const int dw_k = w.constant("dw/k", {1, 3, 3, 8}, tfl::TensorType_FLOAT32);
  const int dw_b = w.constant("dw/b", {8}, tfl::TensorType_FLOAT32);
  const int dw = w.tensor("dw", {1, 8, 8, 8});
  w.op(O::BuiltinOperator_DEPTHWISE_CONV_2D, {x, dw_k, dw_b}, {dw}, tfl::BuiltinOptions_DepthwiseConv2DOptions,
       tfl::CreateDepthwiseConv2DOptions(w.fbb, tfl::Padding_SAME, 1, 1, 2, tfl::ActivationFunctionType_RELU6).Union(),
       "", true);
  // AVERAGE_POOL_2D 2x2 stride 2 VALID.
  const int pool = w.tensor("pool", {1, 4, 4, 8});
  w.op(O::BuiltinOperator_AVERAGE_POOL_2D, {dw}, {pool}, tfl::BuiltinOptions_Pool2DOptions,
       tfl::CreatePool2DOptions(w.fbb, tfl::Padding_VALID, 2, 2, 2, 2).Union());
  // PAD of H by (1, 1) and W by (2, 2).
  const int pads = w.ints2("pad/p", {{0, 0}, {1, 1}, {2, 2}, {0, 0}});
  const int padded = w.tensor("padded", {1, 6, 8, 8});
  w.op(O::BuiltinOperator_PAD, {pool, pads}, {padded});
  // RESIZE_BILINEAR to 12x16.
  const int size = w.ints("resize/size", {12, 16});
  const int resized = w.tensor("resized", {1, 12, 16, 8});
  w.op(O::BuiltinOperator_RESIZE_BILINEAR, {padded, size}, {resized}, tfl::BuiltinOptions_ResizeBilinearOptions,
       tfl::CreateResizeBilinearOptions(w.fbb).Union());
  // CONCATENATION on the channel axis (3 in NHWC, 1 in NCHW).
  const int cat = w.tensor("cat", {1, 12, 16, 16});
  w.op(O::BuiltinOperator_CONCATENATION, {resized, resized}, {cat}, tfl::BuiltinOptions_ConcatenationOptions,
       tfl::CreateConcatenationOptions(w.fbb, 3).Union());
  // TRANSPOSE NHWC -> NCHW inside TFLite: [1,12,16,8] perm [0,3,1,2] -> [1,8,12,16].
  const int perm = w.ints("t/perm", {0, 3, 1, 2});
  const int transposed = w.tensor("transposed", {1, 8, 12, 16});
  w.op(O::BuiltinOperator_TRANSPOSE, {resized, perm}, {transposed});
  // MEAN over H, W without keep_dims: a global average pool, then a free reshape to [1, 16].
  const int axes = w.ints("mean/axes", {1, 2});
  const int mean = w.tensor("mean", {1, 16});
  w.op(O::BuiltinOperator_MEAN, {cat, axes}, {mean}, tfl::BuiltinOptions_ReducerOptions,
       tfl::CreateReducerOptions(w.fbb, false).Union());
  // ADD of a constant vector: elementwise over the activation, the constant as weights.
  const int shift = w.constant("shift", {16}, tfl::TensorType_FLOAT32);
  const int shifted = w.tensor("shifted", {1, 16});
  w.op(O::BuiltinOperator_ADD, {mean, shift}, {shifted}, tfl::BuiltinOptions_AddOptions,
       tfl::CreateAddOptions(w.fbb).Union());
  // HARD_SWISH, then GELU (code 150: the byte field holds 127, builtin_code 150).
  const int hs = w.tensor("hs", {1, 16});
  w.op(O::BuiltinOperator_HARD_SWISH, {shifted}, {hs});
  const int gelu = w.tensor("gelu", {1, 16});
  w.op(O::BuiltinOperator_GELU, {hs}, {gelu});
  // RESHAPE to [1, 4, 4], BATCH_MATMUL by a constant [4, 6] (weights), TRANSPOSE, SOFTMAX.
  const int r_shape = w.ints("r/shape", {1, 4, 4});
  const int r = w.tensor("r", {1, 4, 4});
  w.op(O::BuiltinOperator_RESHAPE, {gelu, r_shape}, {r});
  const int mm_w = w.constant("mm/w", {4, 6}, tfl::TensorType_FLOAT16);
  const int mm_wq = w.tensor("mm/w_dequantize", {4, 6});
  w.op(O::BuiltinOperator_DEQUANTIZE, {mm_w}, {mm_wq});
  const int mm = w.tensor("mm", {1, 4, 6});
  w.op(O::BuiltinOperator_BATCH_MATMUL, {r, mm_wq}, {mm}, tfl::BuiltinOptions_BatchMatMulOptions,
       tfl::CreateBatchMatMulOptions(w.fbb).Union());
  const int perm3 = w.ints("mt/perm", {0, 2, 1});
  const int mt = w.tensor("mt", {1, 6, 4});
  w.op(O::BuiltinOperator_TRANSPOSE, {mm, perm3}, {mt});
  const int sm = w.tensor("sm", {1, 6, 4});
  w.op(O::BuiltinOperator_SOFTMAX, {mt}, {sm}, tfl::BuiltinOptions_SoftmaxOptions,
       tfl::CreateSoftmaxOptions(w.fbb, 1.0f).Union());
  // STRIDED_SLICE [:, :, 0] (shrink_axis_mask 4): a slice to [1, 6, 1] and a free reshape to [1, 6].
  const int begin = w.ints("ss/begin", {0, 0, 0});
  const int end = w.ints("ss/end", {1, 6, 1});
  const int strides = w.ints("ss/strides", {1, 1, 1});
  const int ss = w.tensor("ss", {1, 6});
  w.op(O::BuiltinOperator_STRIDED_SLICE, {sm, begin, end, strides}, {ss}, tfl::BuiltinOptions_StridedSliceOptions,
       tfl::CreateStridedSliceOptions(w.fbb, 0, 0, 0, 0, 4).Union());
  // QUANTIZE to int8: a cast.
  const int q = w.tensor("q", {1, 6}, tfl::TensorType_INT8);
  w.op(O::BuiltinOperator_QUANTIZE, {ss}, {q});
  // GATHER of rows of a constant table by a second input: an embedding.
  const int ids = w.tensor("ids", {1, 5}, tfl::TensorType_INT32);
  const int table = w.constant("table", {100, 32}, tfl::TensorType_FLOAT32);
  const int rows = w.tensor("rows", {1, 5, 32});
  w.op(O::BuiltinOperator_GATHER, {table, ids}, {rows}, tfl::BuiltinOptions_GatherOptions,
       tfl::CreateGatherOptions(w.fbb, 0).Union());
  // MUL of the 4-D cat by the per-channel gelu [1, 16] (an SE-style scale): the vector is given rank 4 first.
  const int scaled = w.tensor("scaled", {1, 12, 16, 16});
  w.op(O::BuiltinOperator_MUL, {cat, gelu}, {scaled}, tfl::BuiltinOptions_MulOptions,
       tfl::CreateMulOptions(w.fbb, tfl::ActivationFunctionType_NONE).Union());
  // CONV_2D, grouped (the kernel has 2 of the 4 input channels: 2 groups), dilation 2, stride 1, VALID.
  const int gk = w.constant("g/k", {6, 3, 3, 2}, tfl::TensorType_FLOAT32);
  const int grouped = w.tensor("grouped", {1, 4, 4, 6});
  w.op(O::BuiltinOperator_CONV_2D, {x, gk, -1}, {grouped}, tfl::BuiltinOptions_Conv2DOptions,
       tfl::CreateConv2DOptions(w.fbb, tfl::Padding_VALID, 1, 1, tfl::ActivationFunctionType_NONE, 2, 2).Union());
  w.inputs = {x, ids};
  w.outputs = {q, transposed, rows, scaled, grouped};
  return w.finish();
}

/// The checks of the image operators' mappings: the depthwise convolution and its RELU6, the pools, the pad,
/// the resize, the concatenation, the transpose and the mean.
void check_image_mappings(const model::NetworkSpec& net) {
  // depthwise, multiplier 2: 8 outputs channels x 64 positions x 9 taps x 2 + 512 bias = 9,728 ops; 72 + 8 weights.
  const auto& d = layer(net, "dw");
  EXPECT_EQ(d.op, "conv2d");
  EXPECT_EQ(std::get<std::int64_t>(d.params.at("groups")), 4);
  EXPECT_EQ(output_of(net, "dw").shape, (Shape{1, 8, 8, 8}));
  EXPECT_DOUBLE_EQ(d.ops, 9'728);
  EXPECT_DOUBLE_EQ(d.params_count, 80);
  EXPECT_EQ(layer(net, "dw/relu6").op, "relu6");
  EXPECT_EQ(layer(net, "pool").op, "avgpool");
  EXPECT_EQ(output_of(net, "pool").shape, (Shape{1, 8, 4, 4}));
  EXPECT_EQ(layer(net, "padded").op, "pad");
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(layer(net, "padded").params.at("pads")),
            (std::vector<std::int64_t>{1, 2, 1, 2}));  // [top, left, bottom, right]
  EXPECT_EQ(output_of(net, "padded").shape, (Shape{1, 8, 6, 8}));
  EXPECT_EQ(layer(net, "resized").op, "resize");
  EXPECT_DOUBLE_EQ(layer(net, "resized").ops, 7.0 * 8 * 12 * 16);
  EXPECT_EQ(layer(net, "cat").op, "concat");
  EXPECT_EQ(std::get<std::int64_t>(layer(net, "cat").params.at("axis")), 1);
  EXPECT_EQ(output_of(net, "cat").shape, (Shape{1, 16, 12, 16}));
  EXPECT_EQ(layer(net, "transposed").op, "transpose");
  EXPECT_EQ(output_of(net, "transposed").shape, (Shape{1, 16, 8, 12}));  // NHWC [1,8,12,16] seen as NCHW
  EXPECT_EQ(layer(net, "mean").op, "global_avgpool");
  EXPECT_EQ(output_of(net, "mean/shape").shape, (Shape{1, 16}));
}

/// The checks of the vector operators' mappings: the ADD of a constant, the activations, the matrix product by
/// dequantized weights and what follows it (transpose, softmax, strided slice, quantize).
void check_vector_mappings(const model::NetworkSpec& net) {
  // The ADD of a stored 16-element fp32 vector: 16 adds, the vector 16 x 4 B = 64 B of weights.
  EXPECT_EQ(layer(net, "shifted").op, "custom");
  EXPECT_EQ(layer(net, "shifted").op_class, model::OpClass::elementwise);
  EXPECT_DOUBLE_EQ(layer(net, "shifted").ops, 16);
  EXPECT_DOUBLE_EQ(layer(net, "shifted").weight_bytes, 64);
  EXPECT_EQ(layer(net, "hs").op, "hardswish");
  EXPECT_EQ(layer(net, "gelu").op, "gelu");
  // BATCH_MATMUL by constant fp16 weights [4, 6] behind a DEQUANTIZE: 2 x 4 x 4 x 6 = 192 ops, 24 fp16 weights.
  const auto& m = layer(net, "mm");
  EXPECT_EQ(m.op, "matmul");
  EXPECT_DOUBLE_EQ(m.ops, 192);
  EXPECT_DOUBLE_EQ(m.weight_bytes, 48);
  EXPECT_EQ(m.precision.weights, Precision::fp16);
  EXPECT_EQ(output_of(net, "mt").shape, (Shape{1, 6, 4}));
  EXPECT_DOUBLE_EQ(layer(net, "sm").ops, 5 * 24);
  EXPECT_EQ(layer(net, "ss").op, "slice");
  EXPECT_EQ(output_of(net, "ss").shape, (Shape{1, 6, 1}));
  EXPECT_EQ(output_of(net, "ss/shrink").shape, (Shape{1, 6}));
  EXPECT_EQ(layer(net, "q").op, "cast");
  EXPECT_EQ(output_of(net, "q").precision, Precision::int8);
}

/// The checks of the gather (an embedding), the per-channel MUL and the grouped, dilated CONV_2D.
void check_gather_mul_and_grouped_conv_mappings(const model::NetworkSpec& net) {
  const auto& g = layer(net, "rows");
  EXPECT_EQ(g.op, "embedding");
  EXPECT_DOUBLE_EQ(g.params_count, 3'200);
  EXPECT_EQ(output_of(net, "rows").shape, (Shape{1, 5, 32}));
  EXPECT_EQ(layer(net, "gelu/nchw").op, "reshape");
  EXPECT_EQ(output_of(net, "gelu/nchw").shape, (Shape{1, 16, 1, 1}));
  EXPECT_EQ(layer(net, "scaled").op, "mul");
  EXPECT_EQ(output_of(net, "scaled").shape, (Shape{1, 16, 12, 16}));
  // grouped: 8 - 2 x (3 - 1) = 4 rows and columns; 2 x (6 x 4 x 4 outputs) x (2 channels x 9 taps) = 3,456 ops,
  // no bias (the optional input is -1): 6 x 18 = 108 weights.
  const auto& gc = layer(net, "grouped");
  EXPECT_EQ(std::get<std::int64_t>(gc.params.at("groups")), 2);
  EXPECT_EQ(output_of(net, "grouped").shape, (Shape{1, 6, 4, 4}));
  EXPECT_DOUBLE_EQ(gc.ops, 3'456);
  EXPECT_DOUBLE_EQ(gc.params_count, 108);
}

/// The operator zoo imported: its one warning, then the layers of every mapping.
TEST_F(TfliteImport, OperatorMappings) {
  const auto result = trace::import_tflite(write("zoo.tflite", operator_zoo()));
  const auto& net = result.network;

  // One warning: the folded DEQUANTIZE (the constant operand of the ADD is counted as weights). No shape differs
  // from the file's.
  ASSERT_EQ(result.warnings.size(), 1u) << join(result.warnings);
  EXPECT_EQ(result.warnings[0],
            "1 DEQUANTIZE operators of constant tensors (1 of FLOAT16) folded into the layers "
            "they feed: those layers hold their weights at the stored precision");

  check_image_mappings(net);
  check_vector_mappings(net);
  check_gather_mul_and_grouped_conv_mappings(net);
  ASSERT_EQ(net.outputs.size(), 5u);
  EXPECT_EQ(net.tensors[static_cast<std::size_t>(net.outputs[0])].name, "q");
}

TEST_F(TfliteImport, UnknownOpsBecomeCustomLayersWithAWarning) {
  ModelWriter w;
  const int x = w.tensor("x", {1, 16, 4});
  const int anchors = w.constant("anchors", {16, 4}, tfl::TensorType_FLOAT32);
  const int boxes = w.tensor("boxes", {1, 10, 4});
  const int scores = w.tensor("scores", {1, 10});
  w.op(tfl::BuiltinOperator_CUSTOM, {x, anchors}, {boxes, scores}, tfl::BuiltinOptions_NONE, 0,
       "TFLite_Detection_PostProcess");
  const int y = w.tensor("y", {1, 10});
  w.op(205, {scores}, {y});  // REDUCE_WINDOW (deprecated), a code this schema does not name
  w.inputs = {x};
  w.outputs = {boxes, y};
  const auto result = trace::import_tflite(write("unknown.tflite", w.finish()));
  const auto& net = result.network;
  ASSERT_EQ(result.warnings.size(), 2u) << join(result.warnings);
  EXPECT_EQ(result.warnings[0],
            "unknown op BUILTIN_205 (1x): imported as custom layers (0 operations; reading their inputs, writing their "
            "outputs, constant inputs as weights): y");
  EXPECT_EQ(result.warnings[1],
            "unknown op CUSTOM TFLite_Detection_PostProcess (1x): imported as custom layers (0 operations; reading "
            "their inputs, writing their outputs, constant inputs as weights): boxes");
  ASSERT_EQ(net.layers.size(), 3u);  // boxes (reads x, anchors as weights), scores (written only), y
  EXPECT_EQ(layer(net, "boxes").op, "custom");
  EXPECT_DOUBLE_EQ(layer(net, "boxes").ops, 0);
  EXPECT_DOUBLE_EQ(layer(net, "boxes").params_count, 64);
  EXPECT_EQ(output_of(net, "boxes").shape, (Shape{1, 10, 4}));
  EXPECT_TRUE(layer(net, "scores").inputs.empty());
  EXPECT_EQ(output_of(net, "scores").shape, (Shape{1, 10}));
  EXPECT_EQ(layer(net, "y").source, dir_.string() + "/unknown.tflite:op 1 BUILTIN_205");
}

TEST_F(TfliteImport, TransposedConvolutionsCountTheirMultiplyAdds) {
  // A stride-2 3x3 transposed convolution 4 -> 8 channels, 8x8 -> 16x16, with a bias, written both ways: TFLite's
  // TRANSPOSE_CONV (inputs output_shape, kernel [O, kh, kw, I], input, bias) and MediaPipe's CUSTOM
  // Convolution2DTransposeBias (input, kernel, bias). Each of the 8 x 8 x 4 = 256 input elements is multiplied
  // into 8 x 3 x 3 = 72 outputs: 2 x 256 x 72 = 36,864 ops, + 16 x 16 x 8 = 2,048 bias adds = 38,912. Weights:
  // 8 x 3 x 3 x 4 + 8 = 296 (the 4 int32 of output_shape are not weights).
  for (const bool mediapipe : {false, true}) {
    SCOPED_TRACE(mediapipe ? "Convolution2DTransposeBias" : "TRANSPOSE_CONV");
    ModelWriter w;
    const int x = w.tensor("x", {1, 8, 8, 4});
    const int shape = w.ints("output_shape", {1, 16, 16, 8});
    const int kernel = w.constant("kernel", {8, 3, 3, 4}, tfl::TensorType_FLOAT32);
    const int bias = w.constant("bias", {8}, tfl::TensorType_FLOAT32);
    const int y = w.tensor("y", {1, 16, 16, 8});
    if (mediapipe)
      w.op(tfl::BuiltinOperator_CUSTOM, {x, kernel, bias}, {y}, tfl::BuiltinOptions_NONE, 0,
           "Convolution2DTransposeBias");
    else w.op(tfl::BuiltinOperator_TRANSPOSE_CONV, {shape, kernel, x, bias}, {y});
    w.inputs = {x};
    w.outputs = {y};
    const auto result = trace::import_tflite(write("deconv.tflite", w.finish()));
    const auto& l = layer(result.network, "y");
    EXPECT_DOUBLE_EQ(l.ops, 38912);
    EXPECT_DOUBLE_EQ(l.params_count, 296);
    EXPECT_DOUBLE_EQ(l.weight_bytes, 296 * 4);
    EXPECT_EQ(l.op_class, model::OpClass::conv);
    EXPECT_EQ(output_of(result.network, "y").shape, (Shape{1, 8, 16, 16}));
    for (const auto& warning : result.warnings) EXPECT_EQ(warning.find("unknown op"), std::string::npos) << warning;
  }
}

// ---- bad input ----

TEST_F(TfliteImport, EmptyMissingAndGarbageFiles) {
  const auto empty = write("empty.tflite", {});
  EXPECT_EQ(error_of(empty), empty.string() + ": the file is empty, not a TFLite model");
  const auto missing = dir_ / "missing.tflite";
  EXPECT_EQ(error_of(missing), missing.string() + ": no such file (or not a regular file)");
  const auto tiny = write("tiny.tflite", {1, 2, 3});
  EXPECT_EQ(error_of(tiny),
            tiny.string() + ": 3 bytes, too short for a TFLite model (a flatbuffer with identifier \"TFL3\")");

  std::mt19937 rng(7);
  std::vector<uint8_t> noise(4096);
  for (auto& b : noise) b = static_cast<uint8_t>(rng());
  const auto random = write("random.tflite", noise);
  const std::string message = error_of(random);
  EXPECT_EQ(message.rfind(random.string() + ": not a TFLite model: the file identifier is \"", 0), 0u) << message;
  EXPECT_NE(message.find("expected \"TFL3\""), std::string::npos) << message;
  // Garbage behind a valid identifier: the verifier catches it.
  std::memcpy(noise.data() + 4, "TFL3", 4);
  const auto disguised = write("disguised.tflite", noise);
  EXPECT_EQ(error_of(disguised), disguised.string() +
                                     ": not a valid TFLite model: the flatbuffer does not verify (4096 bytes; "
                                     "truncated or corrupt?)");
  // An ONNX file renamed: not a flatbuffer.
  const auto onnx = write("model.tflite", {0x08, 0x07, 0x12, 0x07, 'p', 'y', 't', 'o', 'r', 'c', 'h'});
  EXPECT_NE(error_of(onnx).find("not a TFLite model"), std::string::npos);
}

TEST_F(TfliteImport, EveryTruncationIsAClearError) {
  const auto bytes = int8_conv_fc();
  ASSERT_TRUE(error_of(write("whole.tflite", bytes)).empty());
  for (std::size_t n = 0; n < bytes.size(); n += 13) {
    const auto p = write("cut.tflite", {bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n)});
    const std::string message = error_of(p);
    EXPECT_EQ(message.rfind(p.string() + ": ", 0), 0u) << n << " bytes: " << message;
  }
}

TEST_F(TfliteImport, CorruptBytesNeverCrash) {
  // Single-byte corruptions: each file either imports or gives a UserError naming it (never a crash).
  const auto bytes = int8_conv_fc();
  std::mt19937 rng(11);
  int errors = 0;
  for (int i = 0; i < 400; ++i) {
    auto copy = bytes;
    copy[rng() % copy.size()] = static_cast<uint8_t>(rng());
    const auto p = write("flip.tflite", copy);
    const std::string message = error_of(p);
    if (message.empty()) continue;
    ++errors;
    EXPECT_EQ(message.rfind(p.string() + ": ", 0), 0u) << message;
  }
  EXPECT_GT(errors, 0);
}

TEST_F(TfliteImport, DanglingReferencesNameTheOperator) {
  {
    ModelWriter w;
    const int x = w.tensor("x", {1, 8, 8, 3});
    const int k = w.constant("k", {4, 1, 1, 3}, tfl::TensorType_FLOAT32);
    const int y = w.tensor("y", {1, 8, 8, 4});
    w.op(tfl::BuiltinOperator_CONV_2D, {x, k, 99}, {y}, tfl::BuiltinOptions_Conv2DOptions,
         tfl::CreateConv2DOptions(w.fbb).Union());
    w.inputs = {x};
    w.outputs = {y};
    const auto p = write("dangling.tflite", w.finish());
    EXPECT_EQ(error_of(p),
              p.string() + ": operator 0 (CONV_2D): input 2 refers to tensor 99, but subgraph 0 has 3 tensors");
  }
  {
    ModelWriter w;
    const int x = w.tensor("x", {1, 4});
    const int y = w.tensor("y", {1, 4});
    w.op(tfl::BuiltinOperator_RELU, {x}, {y});
    w.inputs = {x};
    w.outputs = {y, 7};
    const auto p = write("bad_output.tflite", w.finish());
    EXPECT_EQ(error_of(p), p.string() + ": graph output 1 refers to tensor 7, but subgraph 0 has 2 tensors");
  }
  {
    // An operator reading a tensor nothing writes (and that is neither an input nor a constant).
    ModelWriter w;
    const int x = w.tensor("x", {1, 4});
    const int orphan = w.tensor("orphan", {1, 4});
    const int y = w.tensor("y", {1, 4});
    w.op(tfl::BuiltinOperator_ADD, {x, orphan}, {y});
    w.inputs = {x};
    w.outputs = {y};
    const auto p = write("orphan.tflite", w.finish());
    EXPECT_EQ(error_of(p), p.string() +
                               ": operator 0 (ADD -> y): reads tensor 1 ('orphan'), which is not a graph "
                               "input, a constant, or the output of an earlier operator");
  }
  {
    // A shape framesim cannot build: the op is named with the reason.
    ModelWriter w;
    const int x = w.tensor("x", {1, 2, 2, 3});
    const int k = w.constant("k", {4, 5, 5, 3}, tfl::TensorType_FLOAT32);
    const int y = w.tensor("y", {1, 1, 1, 4});
    w.op(tfl::BuiltinOperator_CONV_2D, {x, k}, {y}, tfl::BuiltinOptions_Conv2DOptions,
         tfl::CreateConv2DOptions(w.fbb, tfl::Padding_VALID, 1, 1).Union());
    w.inputs = {x};
    w.outputs = {y};
    const auto p = write("too_small.tflite", w.finish());
    EXPECT_EQ(error_of(p), p.string() +
                               ": operator 0 (CONV_2D -> y): cannot be imported as framesim conv2d (kernel: "
                               "a 5x5 kernel does not fit the 2x2 input with this padding; inputs x 1x3x2x2)");
  }
}

}  // namespace
