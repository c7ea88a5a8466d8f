// The TFLite importer: MediaPipe's face detection (a real file from npm, fetched into a cache by
// traces/fetch_models.sh), small models written here with the flatbuffers builder over framesim's schema subset,
// and bad input (truncated, garbage, empty, dangling tensor indices, unknown ops).
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

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "config/hardware.hpp"
#include "core/error.hpp"
#include "model/budget.hpp"
#include "test_support.hpp"
#include "tflite_schema_generated.h"
#include "trace/import.hpp"

namespace fs = std::filesystem;
namespace tfl = framesim::tflite;
using namespace framesim;
using framesim::testing::source_path;
using model::Precision;
using model::Shape;

namespace {

// ---- writing TFLite models in tests ----

/// Collects tensors, buffers, operator codes and operators, then writes a TFLite flatbuffer (one subgraph).
class ModelWriter {
 public:
  ModelWriter() { buffers_.push_back({}); }  // buffer 0: the empty sentinel every TFLite model has

  /// An activation (no data).
  int tensor(const std::string& name, std::vector<int32_t> shape, tfl::TensorType type = tfl::TensorType_FLOAT32,
             std::vector<int32_t> signature = {}) {
    tensors_.push_back({name, std::move(shape), type, 0, std::move(signature)});
    return static_cast<int>(tensors_.size() - 1);
  }
  /// A constant: raw little-endian bytes (zeros of the right size unless given).
  int constant(const std::string& name, std::vector<int32_t> shape, tfl::TensorType type,
               std::vector<uint8_t> data = {}) {
    if (data.empty()) {
      std::size_t n = 1;
      for (auto d : shape) n *= static_cast<std::size_t>(d);
      data.assign(n * width(type), 0);
    }
    buffers_.push_back(std::move(data));
    tensors_.push_back({name, std::move(shape), type, static_cast<uint32_t>(buffers_.size() - 1), {}});
    return static_cast<int>(tensors_.size() - 1);
  }
  int ints(const std::string& name, const std::vector<int32_t>& values) {
    std::vector<uint8_t> data(values.size() * 4);
    std::memcpy(data.data(), values.data(), data.size());
    return constant(name, {static_cast<int32_t>(values.size())}, tfl::TensorType_INT32, data);
  }
  int ints2(const std::string& name, const std::vector<std::vector<int32_t>>& rows) {
    std::vector<int32_t> flat;
    for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
    std::vector<uint8_t> data(flat.size() * 4);
    std::memcpy(data.data(), flat.data(), data.size());
    return constant(name, {static_cast<int32_t>(rows.size()), static_cast<int32_t>(rows[0].size())},
                    tfl::TensorType_INT32, data);
  }

  /// Operator codes as current converters write them: the byte field holds min(code, 127), builtin_code the
  /// code; with `old_style`, only the byte field (as files older than the int32 field).
  void op(int code, std::vector<int32_t> op_inputs, std::vector<int32_t> op_outputs,
          tfl::BuiltinOptions options_type = tfl::BuiltinOptions_NONE, flatbuffers::Offset<void> options = 0,
          const std::string& custom = "", bool old_style = false) {
    const auto key = std::make_tuple(code, custom, old_style);
    auto it = code_index_.find(key);
    if (it == code_index_.end()) {
      it = code_index_.emplace(key, static_cast<uint32_t>(codes_.size())).first;
      codes_.push_back({code, custom, old_style});
    }
    ops_.push_back({it->second, std::move(op_inputs), std::move(op_outputs), options_type, options});
  }

  flatbuffers::FlatBufferBuilder fbb;  // options tables are built into it before finish()
  std::vector<int32_t> inputs, outputs;

  std::vector<uint8_t> finish() {
    std::vector<flatbuffers::Offset<tfl::Buffer>> buffers;
    for (const auto& b : buffers_) {
      if (b.empty()) {
        buffers.push_back(tfl::CreateBuffer(fbb));
        continue;
      }
      fbb.ForceVectorAlignment(b.size(), sizeof(uint8_t), 16);
      buffers.push_back(tfl::CreateBuffer(fbb, fbb.CreateVector(b)));
    }
    std::vector<flatbuffers::Offset<tfl::Tensor>> tensors;
    for (const auto& t : tensors_) {
      auto quant = t.type == tfl::TensorType_INT8
                       ? tfl::CreateQuantizationParameters(fbb, 0, 0, fbb.CreateVector(std::vector<float>{0.05f}),
                                                           fbb.CreateVector(std::vector<int64_t>{0}))
                       : 0;
      tensors.push_back(tfl::CreateTensor(fbb, fbb.CreateVector(t.shape), t.type, t.buffer, fbb.CreateString(t.name),
                                          quant, false, t.signature.empty() ? 0 : fbb.CreateVector(t.signature)));
    }
    std::vector<flatbuffers::Offset<tfl::Operator>> ops;
    for (const auto& o : ops_)
      ops.push_back(tfl::CreateOperator(fbb, o.code, fbb.CreateVector(o.inputs), fbb.CreateVector(o.outputs),
                                        o.options_type, o.options));
    std::vector<flatbuffers::Offset<tfl::OperatorCode>> codes;
    for (const auto& c : codes_) {
      const auto small = static_cast<int8_t>(std::min(c.code, 127));
      codes.push_back(
          tfl::CreateOperatorCode(fbb, small, c.custom.empty() ? 0 : fbb.CreateString(c.custom), 1,
                                  c.old_style ? tfl::BuiltinOperator_ADD : static_cast<tfl::BuiltinOperator>(c.code)));
    }
    auto graph = tfl::CreateSubGraph(fbb, fbb.CreateVector(tensors), fbb.CreateVector(inputs),
                                     fbb.CreateVector(outputs), fbb.CreateVector(ops), fbb.CreateString("main"));
    auto model = tfl::CreateModel(fbb, 3, fbb.CreateVector(codes),
                                  fbb.CreateVector(std::vector<flatbuffers::Offset<tfl::SubGraph>>{graph}),
                                  fbb.CreateString("written by framesim's tests"), fbb.CreateVector(buffers));
    tfl::FinishModelBuffer(fbb, model);
    return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
  }

 private:
  static std::size_t width(tfl::TensorType t) {
    switch (t) {
      case tfl::TensorType_FLOAT32:
      case tfl::TensorType_INT32: return 4;
      case tfl::TensorType_FLOAT16:
      case tfl::TensorType_INT16: return 2;
      case tfl::TensorType_INT64: return 8;
      default: return 1;
    }
  }
  struct T {
    std::string name;
    std::vector<int32_t> shape;
    tfl::TensorType type;
    uint32_t buffer;
    std::vector<int32_t> signature;
  };
  struct C {
    int code;
    std::string custom;
    bool old_style;
  };
  struct O {
    uint32_t code;
    std::vector<int32_t> inputs, outputs;
    tfl::BuiltinOptions options_type;
    flatbuffers::Offset<void> options;
  };
  std::vector<std::vector<uint8_t>> buffers_;
  std::vector<T> tensors_;
  std::vector<C> codes_;
  std::map<std::tuple<int, std::string, bool>, uint32_t> code_index_;
  std::vector<O> ops_;
};

class TfliteImport : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / fmt::format("framesim_tflite_{}_{}", info->name(), ::getpid());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::vector<uint8_t>& bytes) {
    const fs::path p = dir_ / name;
    std::ofstream out(p, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return p;
  }

  /// The UserError message of importing `p` ("" when it imports).
  static std::string error_of(const fs::path& p, const trace::ImportOptions& options = {}) {
    try {
      trace::import_tflite(p, options);
    } catch (const core::UserError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

const model::LayerSpec& layer(const model::NetworkSpec& net, const std::string& name) {
  auto i = net.find_layer(name);
  if (!i) throw std::runtime_error("no layer " + name);
  return net.layers[static_cast<std::size_t>(*i)];
}
const model::TensorSpec& output_of(const model::NetworkSpec& net, const std::string& name) {
  return net.tensors[static_cast<std::size_t>(layer(net, name).output)];
}
std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

/// An int8 model: conv 3x3 (SAME, fused RELU) -> reshape -> fully connected.
/// `dynamic_batch` marks the input's batch as dynamic (shape_signature -1).
std::vector<uint8_t> int8_conv_fc(bool dynamic_batch = false) {
  ModelWriter w;
  const int image = w.tensor("image", {1, 8, 8, 3}, tfl::TensorType_INT8,
                             dynamic_batch ? std::vector<int32_t>{-1, 8, 8, 3} : std::vector<int32_t>{});
  const int kernel = w.constant("conv/kernel", {4, 3, 3, 3}, tfl::TensorType_INT8);
  const int bias = w.constant("conv/bias", {4}, tfl::TensorType_INT32);
  const int conv = w.tensor("conv", {1, 8, 8, 4}, tfl::TensorType_INT8);
  w.op(tfl::BuiltinOperator_CONV_2D, {image, kernel, bias}, {conv}, tfl::BuiltinOptions_Conv2DOptions,
       tfl::CreateConv2DOptions(w.fbb, tfl::Padding_SAME, 1, 1, tfl::ActivationFunctionType_RELU).Union());
  const int shape = w.ints("flat/shape", {-1, 256});
  const int flat = w.tensor("flat", {1, 256}, tfl::TensorType_INT8);
  w.op(tfl::BuiltinOperator_RESHAPE, {conv, shape}, {flat}, tfl::BuiltinOptions_ReshapeOptions,
       tfl::CreateReshapeOptions(w.fbb, w.fbb.CreateVector(std::vector<int32_t>{-1, 256})).Union());
  const int fc_w = w.constant("fc/weights", {10, 256}, tfl::TensorType_INT8);
  const int fc_b = w.constant("fc/bias", {10}, tfl::TensorType_INT32);
  const int logits = w.tensor("logits", {1, 10}, tfl::TensorType_INT8);
  w.op(tfl::BuiltinOperator_FULLY_CONNECTED, {flat, fc_w, fc_b}, {logits}, tfl::BuiltinOptions_FullyConnectedOptions,
       tfl::CreateFullyConnectedOptions(w.fbb).Union());
  w.inputs = {image};
  w.outputs = {logits};
  return w.finish();
}

// ---- the real model ----

fs::path model_cache() {
  if (const char* dir = std::getenv("FRAMESIM_MODEL_CACHE"); dir && *dir) return dir;
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : ".") / ".cache/framesim/models";
}

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

/// Most mapped operators in one float model; shapes are stated in the file and checked by the importer (a
/// mismatch would be a warning), layers checked here.
TEST_F(TfliteImport, OperatorMappings) {
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
  const auto result = trace::import_tflite(write("zoo.tflite", w.finish()));
  const auto& net = result.network;

  // One warning: the folded DEQUANTIZE (the constant operand of the ADD is counted as weights). No shape differs
  // from the file's.
  ASSERT_EQ(result.warnings.size(), 1u) << join(result.warnings);
  EXPECT_EQ(result.warnings[0],
            "1 DEQUANTIZE operators of constant tensors (1 of FLOAT16) folded into the layers "
            "they feed: those layers hold their weights at the stored precision");

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
