// Sparse TFLite constants (SparsityParameters, decoded by DENSIFY): a layer's weight bytes are what the file stores
// (the values plus the index arrays of the sparse dimensions), its weight reads per inference the dense tensor
// DENSIFY decodes once. The oracle is a small model written here whose stored bytes are counted by hand; the real
// sparse MediaPipe model is checked against an independent count in import_round_trip_test.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "config/network.hpp"
#include "config/network_writer.hpp"
#include "model/budget.hpp"
#include "test_support.hpp"
#include "tflite_import_support.hpp"

namespace tfl = framesim::tflite;
using namespace framesim;
using model::Shape;
using namespace framesim::testing::tflite_import;

namespace {

std::vector<uint8_t> fp16_ones(std::size_t n) {
  std::vector<uint8_t> out;
  for (std::size_t i = 0; i < n; ++i) out.insert(out.end(), {0x00, 0x3C});  // 1.0 in IEEE half, little-endian
  return out;
}

std::vector<uint8_t> fp32_ones(std::size_t n) {
  std::vector<uint8_t> out(n * 4);
  const float one = 1.0f;
  for (std::size_t i = 0; i < n; ++i) std::memcpy(out.data() + i * 4, &one, 4);
  return out;
}

/// x [1, 4, 4, 8] fp32 -> CONV_2D 1x1 (kernel [4, 1, 1, 8] fp16, sparse, -> DENSIFY -> DEQUANTIZE; bias [4] fp16
/// dense -> DEQUANTIZE) -> conv [1, 4, 4, 4] -> RESHAPE [1, 64] -> FULLY_CONNECTED (weights [3, 64] fp32, block
/// sparse with 1x4 blocks, -> DENSIFY; no bias) -> logits [1, 3].
///   kernel: traversal (0, 1, 2, 3), dimensions DENSE 4, DENSE 1, DENSE 1, SPARSE_CSR over the 8 input channels:
///     rows (output channels) keep input channels {1, 5}, {0}, {}, {2, 3, 7}: 6 values;
///     array_segments [0, 2, 3, 3, 6] and array_indices [1, 5, 0, 2, 3, 7], both uint8.
///   fc weights: traversal (0, 1, 2), block_map (1): dimensions DENSE 3 (rows), SPARSE_CSR over the 16 blocks of 4
///     columns, DENSE 4 (within a block); rows keep blocks {5}, {}, {0, 15}: 3 blocks of 4 = 12 values;
///     array_segments [0, 1, 1, 3] as uint16, array_indices [5, 0, 15] as int32.
std::vector<uint8_t> sparse_conv_fc() {
  ModelWriter w;
  const int x = w.tensor("x", {1, 4, 4, 8});
  const auto rows = ModelWriter::dense_dim(4), one = ModelWriter::dense_dim(1);
  const auto channels = ModelWriter::csr_dim({0, 2, 3, 3, 6}, {1, 5, 0, 2, 3, 7});
  const int ks = w.sparse_constant("conv/kernel_sparse", {4, 1, 1, 8}, tfl::TensorType_FLOAT16, fp16_ones(6),
                                   {0, 1, 2, 3}, {}, {rows, one, one, channels});
  const int k16 = w.tensor("conv/kernel_fp16", {4, 1, 1, 8}, tfl::TensorType_FLOAT16);
  w.op(tfl::BuiltinOperator_DENSIFY, {ks}, {k16});
  const int k = w.tensor("conv/kernel", {4, 1, 1, 8});
  w.op(tfl::BuiltinOperator_DEQUANTIZE, {k16}, {k});
  const int b16 = w.constant("conv/bias_fp16", {4}, tfl::TensorType_FLOAT16, fp16_ones(4));
  const int b = w.tensor("conv/bias", {4});
  w.op(tfl::BuiltinOperator_DEQUANTIZE, {b16}, {b});
  const int conv = w.tensor("conv", {1, 4, 4, 4});
  w.op(tfl::BuiltinOperator_CONV_2D, {x, k, b}, {conv}, tfl::BuiltinOptions_Conv2DOptions,
       tfl::CreateConv2DOptions(w.fbb, tfl::Padding_VALID, 1, 1).Union());
  const int shape = w.ints("flat/shape", {1, 64});
  const int flat = w.tensor("flat", {1, 64});
  w.op(tfl::BuiltinOperator_RESHAPE, {conv, shape}, {flat});
  const auto fc_rows = ModelWriter::dense_dim(3), block = ModelWriter::dense_dim(4);
  const auto blocks = ModelWriter::csr_dim({0, 1, 1, 3}, {5, 0, 15}, tfl::SparseIndexVector_Uint16Vector,
                                           tfl::SparseIndexVector_Int32Vector);
  const int ws = w.sparse_constant("fc/weights_sparse", {3, 64}, tfl::TensorType_FLOAT32, fp32_ones(12), {0, 1, 2}, {1},
                                   {fc_rows, blocks, block});
  const int wd = w.tensor("fc/weights", {3, 64});
  w.op(tfl::BuiltinOperator_DENSIFY, {ws}, {wd});
  const int logits = w.tensor("logits", {1, 3});
  w.op(tfl::BuiltinOperator_FULLY_CONNECTED, {flat, wd, -1}, {logits}, tfl::BuiltinOptions_FullyConnectedOptions,
       tfl::CreateFullyConnectedOptions(w.fbb).Union());
  w.inputs = {x};
  w.outputs = {logits};
  return w.finish();
}

// By hand:
//   conv: 4 x 4 x 4 = 64 outputs, each 8 MACs and a bias add: 2 x 64 x 8 + 64 = 1,088 ops; 32 + 4 = 36 weight
//     elements. Stored: 6 values x 2 B = 12 B, array_segments 5 x 1 B, array_indices 6 x 1 B (the three dense
//     dimensions cost nothing), the dense bias 4 x 2 B = 8 B: 12 + 5 + 6 + 8 = 31 B. Read per inference: the dense
//     fp16 kernel and bias, 36 x 2 B = 72 B.
//   fc: 2 x 64 x 3 = 384 ops; 192 weight elements. Stored: 12 values x 4 B = 48 B, array_segments 4 x 2 B = 8 B,
//     array_indices 3 x 4 B = 12 B: 68 B. Read per inference: 192 x 4 B = 768 B.
//   Network: 1,472 ops; 99 weight bytes stored (counted dense they would be 72 + 768 = 840 B); 840 B read.
TEST_F(TfliteImport, SparseWeightsCountTheirStoredBytes) {
  const auto p = write("sparse.tflite", sparse_conv_fc());
  const auto r = trace::import_tflite(p);
  const auto& net = r.network;
  const auto& conv = layer(net, "conv");
  EXPECT_EQ(conv.op, "conv2d");
  EXPECT_EQ(conv.precision.weights, model::Precision::fp16);
  EXPECT_DOUBLE_EQ(conv.ops, 1'088);
  EXPECT_DOUBLE_EQ(conv.params_count, 36);
  EXPECT_DOUBLE_EQ(conv.weight_bytes, 31);
  EXPECT_DOUBLE_EQ(conv.weight_access.bytes, 72);
  const auto& fc = layer(net, "logits");
  EXPECT_EQ(fc.op, "linear");
  EXPECT_DOUBLE_EQ(fc.ops, 384);
  EXPECT_DOUBLE_EQ(fc.params_count, 192);
  EXPECT_DOUBLE_EQ(fc.weight_bytes, 68);
  EXPECT_DOUBLE_EQ(fc.weight_access.bytes, 768);
  EXPECT_DOUBLE_EQ(net.total_ops(), 1'472);
  EXPECT_DOUBLE_EQ(net.total_weight_bytes(), 99);

  // The note says what was counted: 2 sparse tensors, 12 + 48 = 60 B of values, 5 + 6 + 8 + 12 = 31 B of index
  // arrays, dense 32 x 2 + 192 x 4 = 832 B; every operator accounted for (2 DENSIFY and 2 DEQUANTIZE folded).
  const std::string all = join(r.warnings);
  EXPECT_NE(all.find("2 sparse constant tensors (decoded by 2 DENSIFY operators) give 2 layers their weights: their "
                     "weight bytes are as stored, 60 B of values and 31 B of index arrays, where the dense tensors "
                     "are 832 B; the layers still read their dense weights every inference"),
            std::string::npos)
      << all;
  EXPECT_NE(net.description.find("7 operators -> 3 layers from 3 operators, 4 folded"), std::string::npos)
      << net.description;

  // The budget: 99 B of weights held, 840 B of weights read per inference (the dense tensors).
  auto hw = framesim::testing::seed_device();
  const auto budget = model::make_budget(hw, net, {});
  EXPECT_DOUBLE_EQ(budget.weight_bytes, 99);
  EXPECT_DOUBLE_EQ(budget.weight_read_bytes, 840);

  // The YAML keeps it: sparse_zeros (32 - 6 = 26 and 192 - 12 = 180) and index_bytes (11 and 20) load back to the
  // same stored and read bytes.
  const std::string yaml = config::network_to_yaml(net, {});
  EXPECT_NE(yaml.find("index_bytes: 11"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("sparse_zeros: 26"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("index_bytes: 20"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("sparse_zeros: 180"), std::string::npos) << yaml;
  const auto loaded = config::parse_network(yaml, "sparse.yaml");
  EXPECT_DOUBLE_EQ(layer(loaded, "conv").weight_bytes, 31);
  EXPECT_DOUBLE_EQ(layer(loaded, "conv").weight_access.bytes, 72);
  EXPECT_DOUBLE_EQ(layer(loaded, "logits").weight_bytes, 68);
  EXPECT_DOUBLE_EQ(loaded.total_weight_bytes(), 99);
}

// The real sparse model (MediaPipe's full-range face detection, 46 sparse 1x1 kernels behind DENSIFY): stored, its
// weights are 368,984 B of buffers (the kept fp16 values, 277,552 B of them, and the dense tensors) plus 191,818 B of
// index arrays = 560,802 B (import_round_trip_test checks that against a count read from the flatbuffer without the
// importer); read per inference they are dense, 1,016,616 B.
TEST_F(TfliteImport, MediapipeSparseFullRangeCountsItsStoredBytes) {
  const fs::path path = model_cache() / "face_detection/face_detection_full_range_sparse.tflite";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is missing: run traces/fetch_models.sh";
  const auto r = trace::import_tflite(path);
  EXPECT_DOUBLE_EQ(r.network.total_weight_bytes(), 560'802);
  double read = 0;
  for (const auto& l : r.network.layers) read += l.weight_access.bytes;
  EXPECT_DOUBLE_EQ(read, 1'016'616);
  EXPECT_NE(join(r.warnings)
                .find("46 sparse constant tensors (decoded by 46 DENSIFY operators) give 46 layers their "
                      "weights: their weight bytes are as stored, 277552 B of values and 191818 B of index "
                      "arrays, where the dense tensors are 925184 B"),
            std::string::npos)
      << join(r.warnings);
}

// A sparse tensor whose buffer holds more values than its dense shape has elements, or whose sparsity does not
// describe each traversed dimension, is refused, naming the tensor.
TEST_F(TfliteImport, MalformedSparseTensorsAreClearErrors) {
  auto model = [](std::size_t values, std::vector<ModelWriter::SparseDim> dims) {
    ModelWriter w;
    const int x = w.tensor("x", {1, 4});
    const int ws =
        w.sparse_constant("w_sparse", {2, 4}, tfl::TensorType_FLOAT32, fp32_ones(values), {0, 1}, {}, std::move(dims));
    const int wd = w.tensor("w", {2, 4});
    w.op(tfl::BuiltinOperator_DENSIFY, {ws}, {wd});
    const int y = w.tensor("y", {1, 2});
    w.op(tfl::BuiltinOperator_FULLY_CONNECTED, {x, wd, -1}, {y});
    w.inputs = {x};
    w.outputs = {y};
    return w.finish();
  };
  const auto rows = ModelWriter::dense_dim(2), cols = ModelWriter::csr_dim({0, 1, 2}, {0, 3});
  const auto many = write("too_many.tflite", model(9, {rows, cols}));
  EXPECT_EQ(error_of(many), many.string() +
                                ": tensor 1 ('w_sparse') is sparse but its buffer stores 9 values, more than the 8 "
                                "elements of its dense shape 2x4");
  const auto short_meta = write("one_dimension.tflite", model(2, {rows}));
  EXPECT_EQ(error_of(short_meta), short_meta.string() +
                                      ": tensor 1 ('w_sparse') is sparse but its sparsity has 2 traversed dimensions "
                                      "and 1 dimension metadata entries (one per traversed dimension, at least one)");
  EXPECT_EQ(error_of(write("fine.tflite", model(2, {rows, cols}))), "");
}

}  // namespace
