// Operations and bytes of each op, computed from shapes, against hand counts.
#include <gtest/gtest.h>

#include "model/network.hpp"
#include "test_support.hpp"

using namespace framesim::model;
using framesim::testing::NetBuilder;

TEST(Ops, LinearBatchOne) {
  // 1 x 1024 -> 1024, fp32: 2*1024*1024 ops; weights 1024^2*4 B; in 4 KiB; out 4 KiB.
  NetBuilder b;
  int x = b.input("x", {1, 1024});
  b.layer("linear", "fc", {x}, {{"out_features", std::int64_t{1024}}});
  const auto& l = b.last();
  EXPECT_DOUBLE_EQ(l.ops, 2.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(l.params_count, 1024.0 * 1024);
  EXPECT_DOUBLE_EQ(l.weight_access.bytes, 4.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(l.input_access[0].bytes, 4096);
}

TEST(Ops, LinearWithBias) {
  NetBuilder b;
  int x = b.input("x", {8, 100});
  b.layer("linear", "fc", {x}, {{"out_features", std::int64_t{10}}, {"bias", true}});
  EXPECT_DOUBLE_EQ(b.last().ops, 2.0 * 8 * 100 * 10 + 8 * 10);
  EXPECT_DOUBLE_EQ(b.last().params_count, 100.0 * 10 + 10);
}

TEST(Ops, MatmulOfTwoActivations) {
  // Q K^T for 8 heads, 128 tokens, head dim 64: 2 * 8 * 128 * 64 * 128.
  NetBuilder b;
  int q = b.input("q", {8, 128, 64});
  int k = b.input("k", {8, 128, 64});
  b.layer("matmul", "qk", {q, k}, {{"transpose_b", true}});
  EXPECT_DOUBLE_EQ(b.last().ops, 2.0 * 8 * 128 * 64 * 128);
  EXPECT_DOUBLE_EQ(b.last().params_count, 0);
}

TEST(Ops, Conv3x3SameShape) {
  // The seed's conv: 256 -> 256, 3x3, pad 1, 56x56: 2 * 56*56*256 * 256*9 ops.
  NetBuilder b;
  int x = b.input("x", {1, 256, 56, 56});
  int y = b.layer("conv2d", "conv", {x},
                  {{"out_channels", std::int64_t{256}}, {"kernel", std::int64_t{3}}, {"padding", std::int64_t{1}}});
  (void)y;
  EXPECT_DOUBLE_EQ(b.last().ops, 2.0 * 56 * 56 * 256 * 256 * 9);
  EXPECT_DOUBLE_EQ(b.last().weight_access.bytes, 4.0 * 256 * 256 * 9);
}

TEST(Ops, DepthwiseConv) {
  NetBuilder b;
  int x = b.input("x", {1, 256, 56, 56});
  b.layer("conv2d", "dw", {x}, {{"depthwise", true}, {"kernel", std::int64_t{3}}, {"padding", std::int64_t{1}}});
  EXPECT_DOUBLE_EQ(b.last().ops, 2.0 * 56 * 56 * 256 * 9);
  EXPECT_DOUBLE_EQ(b.last().params_count, 256.0 * 9);
}

TEST(Ops, StridedConvSamePadding) {
  // 224 -> 112 with a 7x7 stride-2 kernel and "same" padding (ResNet stem).
  NetBuilder b;
  int x = b.input("x", {1, 3, 224, 224});
  int y = b.layer("conv2d", "stem", {x},
                  {{"out_channels", std::int64_t{64}},
                   {"kernel", std::int64_t{7}},
                   {"stride", std::int64_t{2}},
                   {"padding", std::string("same")}});
  (void)y;
  EXPECT_DOUBLE_EQ(b.last().ops, 2.0 * 112 * 112 * 64 * 3 * 49);
}

TEST(Ops, GroupedAndDilated) {
  NetBuilder b;
  int x = b.input("x", {1, 32, 20, 20});
  b.layer("conv2d", "g", {x},
          {{"out_channels", std::int64_t{64}},
           {"kernel", std::int64_t{3}},
           {"groups", std::int64_t{4}},
           {"dilation", std::int64_t{2}}});
  // Output 20 - 2*2 = 16; each output reads 32/4 channels x 9.
  EXPECT_DOUBLE_EQ(b.last().ops, 2.0 * 64 * 16 * 16 * 8 * 9);
}

TEST(Ops, ElementwiseAndActivations) {
  NetBuilder b;
  int a = b.input("a", {1, 1000});
  int c = b.input("c", {1, 1000});
  b.layer("add", "add", {a, c});
  EXPECT_DOUBLE_EQ(b.last().ops, 1000);  // one addition per element: intensity 1/12 in fp32
  b.layer("relu", "relu", {a});
  EXPECT_DOUBLE_EQ(b.last().ops, 1000);
  b.layer("layernorm", "ln", {a});
  EXPECT_DOUBLE_EQ(b.last().ops, 8000);  // intensity 1 in fp32
  b.layer("softmax", "sm", {a});
  EXPECT_DOUBLE_EQ(b.last().ops, 5000);
}

TEST(Ops, Broadcasting) {
  NetBuilder b;
  int a = b.input("a", {1, 64, 8, 8});
  int s = b.input("s", {1, 64, 1, 1});
  int y = b.layer("mul", "scale", {a, s});
  (void)y;
  EXPECT_DOUBLE_EQ(b.last().ops, 64.0 * 64);
  EXPECT_DOUBLE_EQ(b.last().input_access[1].bytes, 64.0 * 4);
}

TEST(Ops, EmbeddingReadsWholeLinesPerRow) {
  NetBuilder b;
  int t = b.input("tokens", {1, 10}, Precision::int32);
  b.layer("embedding", "emb", {t}, {{"num_embeddings", std::int64_t{1000}}, {"embedding_dim", std::int64_t{1}}});
  const auto& l = b.last();
  EXPECT_DOUBLE_EQ(l.weight_access.bytes, 40);  // 10 rows of 4 bytes
  EXPECT_DOUBLE_EQ(l.weight_access.rows, 10);
  EXPECT_DOUBLE_EQ(effective_bytes(l.weight_access, 64), 640);  // a 64-byte line per 4-byte row: 16x
}

TEST(Ops, AttentionDecodeWithKvCache) {
  // One token, 32 heads of 128, 8 kv heads, 4095 cached tokens (4096 attended), fp16 cache.
  NetBuilder b;
  int q = b.input("q", {1, 4096}, Precision::fp16);
  int k = b.input("k", {1, 1024}, Precision::fp16);
  int v = b.input("v", {1, 1024}, Precision::fp16);
  b.layer(
      "attention", "attn", {q, k, v},
      {{"heads", std::int64_t{32}}, {"kv_heads", std::int64_t{8}}, {"kv_cache", true}, {"context", std::int64_t{4095}}},
      {Precision::fp16, Precision::fp16, Precision::fp16});
  const auto& l = b.last();
  EXPECT_DOUBLE_EQ(l.ops, 32.0 * 4096 * (2 * 128 + 5 + 2 * 128));
  EXPECT_DOUBLE_EQ(l.state_read.bytes, 4095.0 * 2 * 1024 * 2);
  EXPECT_DOUBLE_EQ(l.state_write_bytes, 1.0 * 2 * 1024 * 2);
  EXPECT_DOUBLE_EQ(l.state_bytes, 4096.0 * 2 * 1024 * 2);
  EXPECT_DOUBLE_EQ(l.scratch_bytes, 0);
}

TEST(Ops, MaterialisedAttentionWritesTheScores) {
  NetBuilder b;
  int q = b.input("q", {1, 16, 64});
  b.layer("attention", "attn", {q, q, q}, {{"heads", std::int64_t{2}}, {"fused", false}});
  EXPECT_DOUBLE_EQ(b.last().scratch_bytes, 4.0 * 4 * 2 * 16 * 16);
}

TEST(Ops, ReshapeIsFree) {
  NetBuilder b;
  int x = b.input("x", {1, 64, 7, 7});
  int y = b.layer("flatten", "flat", {x});
  (void)y;
  EXPECT_DOUBLE_EQ(b.last().input_access[0].bytes, 0);
  EXPECT_FALSE(b.last().writes_output());
}

TEST(Ops, Int4WeightsPackTwoPerByte) {
  NetBuilder b;
  int x = b.input("x", {1, 4096}, Precision::fp16);
  b.layer("linear", "fc", {x}, {{"out_features", std::int64_t{4096}}}, *parse_layer_precision("w4a16"));
  EXPECT_DOUBLE_EQ(b.last().weight_access.bytes, 4096.0 * 4096 / 2);
  EXPECT_EQ(b.last().precision.compute, Precision::fp16);
}

TEST(Ops, ShapeErrorsNameTheParameter) {
  const OpSchema* conv = find_op("conv2d");
  TensorSpec x{"x", {1, 30, 8, 8}, Precision::fp32, -1, -1};
  auto r = build_layer(*conv, "c",
                       {{"out_channels", std::int64_t{64}}, {"kernel", std::int64_t{3}}, {"groups", std::int64_t{4}}},
                       {&x}, {});
  ASSERT_TRUE(std::holds_alternative<OpError>(r));
  EXPECT_EQ(std::get<OpError>(r).key, "groups");
  EXPECT_EQ(std::get<OpError>(r).message, "must divide the input channels (30), got 4");
}

TEST(Ops, LayerPrecisionNames) {
  auto p = parse_layer_precision("w4a16");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->weights, Precision::int4);
  EXPECT_EQ(p->activations, Precision::fp16);
  EXPECT_EQ(layer_precision_name(*p), "w4a16");
  EXPECT_EQ(parse_layer_precision("w8a8")->compute, Precision::int8);
  EXPECT_FALSE(parse_layer_precision("w3a7"));
}

TEST(Ops, SparseWeightsStoreTheirKeptValuesAndIndexArrays) {
  // linear 64 -> 16 with a bias at fp16: 64 x 16 + 16 = 1,040 weight elements, 2,080 B dense. A sparse kernel
  // keeping 100 of its 1,024 values (sparse_zeros 924) with 140 B of index arrays stores (1,040 - 924) x 2 B
  // + 140 B = 372 B; the layer still reads its 2,080 dense bytes, and its operations stay the dense count,
  // 2 x 64 x 16 + 16 = 2,064.
  NetBuilder b;
  int x = b.input("x", {1, 64});
  const OpParams params{{"out_features", std::int64_t{16}},
                        {"bias", true},
                        {"sparse_zeros", std::int64_t{924}},
                        {"index_bytes", std::int64_t{140}}};
  b.layer("linear", "fc", {x}, params, {Precision::fp16, Precision::fp16, Precision::fp16});
  EXPECT_DOUBLE_EQ(b.last().params_count, 1'040);
  EXPECT_DOUBLE_EQ(b.last().weight_bytes, 372);
  EXPECT_DOUBLE_EQ(b.last().weight_access.bytes, 2'080);
  EXPECT_DOUBLE_EQ(b.last().ops, 2'064);
  // At int8 the kept values are 1 B each and the index arrays keep their size: 116 + 140 = 256 B stored, 1,040 read.
  const auto int8 = with_precision(b.done(), {Precision::int8, Precision::int8, Precision::int8});
  EXPECT_DOUBLE_EQ(int8.layers[0].weight_bytes, 256);
  EXPECT_DOUBLE_EQ(int8.layers[0].weight_access.bytes, 1'040);
}

TEST(Ops, SparseParametersNeedWeightsAndStayInRange) {
  auto error_of = [](const std::string& op, const OpParams& params, const Shape& shape) {
    const TensorSpec x{"x", shape, Precision::fp32, -1, -1};
    const auto r = build_layer(*find_op(op), "l", params, {&x}, {});
    const auto* e = std::get_if<OpError>(&r);
    return e ? e->key + ": " + e->message : std::string();
  };
  // A custom layer without weights has nothing stored sparse; more zeros than weights, or negative index bytes,
  // are refused naming the key.
  EXPECT_EQ(error_of("custom", {{"sparse_zeros", std::int64_t{1}}}, {1, 8}),
            "sparse_zeros: the layer has no weights of its own to store sparse");
  EXPECT_EQ(error_of("linear", {{"out_features", std::int64_t{2}}, {"sparse_zeros", std::int64_t{17}}}, {1, 8}),
            "sparse_zeros: must be between 0 and the layer's 16 weight elements, got 17");
  EXPECT_EQ(
      error_of("conv2d",
               {{"kernel", std::int64_t{1}}, {"out_channels", std::int64_t{4}}, {"index_bytes", std::int64_t{-1}}},
               {1, 4, 2, 2}),
      "index_bytes: must not be negative, got -1");
  EXPECT_EQ(error_of("linear", {{"out_features", std::int64_t{2}}, {"sparse_zeros", std::int64_t{16}}}, {1, 8}), "");
}
