// The operation catalogue: every op name a network may use, its parameters and how many inputs it takes
// (network.hpp), grouped by family; ops.cpp builds a layer from an entry.
#include <string_view>
#include <vector>

#include "model/network.hpp"

namespace framesim::model {

namespace {

const ParamSchema kBias{"bias", ParamType::boolean, "add a bias per output (default false)"};
const ParamSchema kWeightsFrom{"weights_from", ParamType::text,
                               "use the weights of this earlier layer (tied weights: read here, stored once)"};
const ParamSchema kOpsPerElement{"ops_per_element", ParamType::number, "override the operations per output element"};
// Sparse weights (an imported TFLite tensor with sparsity metadata): the file stores fewer bytes than the layer reads.
const ParamSchema kSparseZeros{"sparse_zeros", ParamType::integer,
                               "weight elements a sparse tensor leaves out of the file (its zeros): not in the stored "
                               "weight bytes; still read every inference, dense"};
const ParamSchema kIndexBytes{"index_bytes", ParamType::integer,
                              "bytes of a sparse tensor's index arrays, stored with the weights (default 0)"};

/// linear and matmul: a weight operand, or two activations.
void add_matmul_ops(std::vector<OpSchema>& ops) {
  ops.push_back({"linear",
                 OpKind::linear,
                 "fully connected: input [..., k] x weights [k, n]",
                 {{"out_features", ParamType::integer, "n, the output features", true},
                  kBias,
                  {"m", ParamType::integer, "check: rows of the input"},
                  {"k", ParamType::integer, "check: input features"},
                  kWeightsFrom,
                  kSparseZeros,
                  kIndexBytes},
                 1,
                 1});
  ops.push_back({"matmul",
                 OpKind::matmul,
                 "matrix multiply: with n, input [..., m, k] x weights [k, n]; with two inputs, A x B of activations",
                 {{"n", ParamType::integer, "output columns of the weight operand (one input)"},
                  {"m", ParamType::integer, "check: rows of the input"},
                  {"k", ParamType::integer, "check: inner dimension"},
                  {"transpose_b", ParamType::boolean, "second input is [..., n, k] (two inputs)"},
                  kBias,
                  kWeightsFrom,
                  kSparseZeros,
                  kIndexBytes},
                 1,
                 2});
}

/// conv2d (grouped, depthwise), windowed and global pooling over NCHW.
void add_conv_and_pool_ops(std::vector<OpSchema>& ops) {
  ops.push_back({"conv2d",
                 OpKind::conv2d,
                 "2-D convolution over NCHW, incl. grouped and depthwise",
                 {{"out_channels", ParamType::integer, "output channels (default: input channels when depthwise)"},
                  {"kernel", ParamType::integers, "kernel size, k or [kh, kw]", true},
                  {"stride", ParamType::integers, "stride (default 1)"},
                  {"padding", ParamType::integers, "padding: p, [ph, pw], [t, l, b, r], \"same\" or \"valid\""},
                  {"dilation", ParamType::integers, "dilation (default 1)"},
                  {"groups", ParamType::integer, "channel groups (default 1)"},
                  {"depthwise", ParamType::boolean, "groups = input channels"},
                  kBias,
                  kSparseZeros,
                  kIndexBytes},
                 1,
                 1});
  for (std::string_view name : {"maxpool", "avgpool"}) {
    ops.push_back({name,
                   OpKind::pool,
                   "pooling window over NCHW",
                   {{"kernel", ParamType::integers, "window, k or [kh, kw]", true},
                    {"stride", ParamType::integers, "stride (default: the window)"},
                    {"padding", ParamType::integers, "padding: p, [ph, pw], [t, l, b, r], \"same\" or \"valid\""}},
                   1,
                   1});
  }
  for (std::string_view name : {"global_avgpool", "global_maxpool"})
    ops.push_back({name, OpKind::global_pool, "pool every spatial position to 1x1", {}, 1, 1});
}

/// elementwise over broadcast inputs, unary activations and cast.
void add_pointwise_ops(std::vector<OpSchema>& ops) {
  for (std::string_view name : {"add", "sub", "mul", "div", "max", "min", "pow"})
    ops.push_back({name,
                   OpKind::elementwise,
                   "elementwise over broadcast inputs: inputs-1 ops per element",
                   {kOpsPerElement},
                   2,
                   -1});
  ops.push_back({"elementwise",
                 OpKind::elementwise,
                 "generic elementwise op over broadcast inputs",
                 {{"ops_per_element", ParamType::number, "operations per output element", true}},
                 1,
                 -1});
  for (std::string_view name : {"relu", "relu6", "leaky_relu", "clip", "sigmoid", "hardsigmoid", "tanh", "gelu", "silu",
                                "hardswish", "exp", "log", "sqrt", "abs", "neg", "reciprocal", "erf"})
    ops.push_back({name, OpKind::activation, "unary activation", {kOpsPerElement}, 1, 1});
  ops.push_back({"activation",
                 OpKind::activation,
                 "generic unary op",
                 {{"ops_per_element", ParamType::number, "operations per element", true}},
                 1,
                 1});
  ops.push_back({"cast",
                 OpKind::activation,
                 "convert precision (no arithmetic)",
                 {{"to", ParamType::precision, "output precision", true}},
                 1,
                 1});
}

/// batchnorm, layernorm, rmsnorm and softmax.
void add_normalisation_ops(std::vector<OpSchema>& ops) {
  ops.push_back(
      {"batchnorm", OpKind::batchnorm, "inference batch normalisation (scale and shift per channel)", {}, 1, 1});
  ops.push_back({"layernorm", OpKind::norm, "layer normalisation over the last axis", {}, 1, 1});
  ops.push_back({"rmsnorm", OpKind::norm, "RMS normalisation over the last axis", {}, 1, 1});
  ops.push_back({"softmax", OpKind::softmax, "softmax over the last axis", {}, 1, 1});
}

/// embedding gathers and scaled dot-product attention (fused or materialised, KV cache).
void add_embedding_and_attention_ops(std::vector<OpSchema>& ops) {
  ops.push_back({"embedding",
                 OpKind::embedding,
                 "gather rows of a weight table (random access: whole lines)",
                 {{"num_embeddings", ParamType::integer, "rows of the table", true},
                  {"embedding_dim", ParamType::integer, "row length", true},
                  kSparseZeros,
                  kIndexBytes},
                 1,
                 1});
  ops.push_back({"attention",
                 OpKind::attention,
                 "scaled dot-product attention over q, k, v",
                 {{"heads", ParamType::integer, "query heads", true},
                  {"kv_heads", ParamType::integer, "key/value heads (grouped-query attention; default heads)"},
                  {"head_dim", ParamType::integer, "per-head dimension (default q features / heads)"},
                  {"fused", ParamType::boolean, "never materialise the score matrix (default true)"},
                  {"causal", ParamType::boolean, "each query attends only to earlier keys (default false)"},
                  {"kv_cache", ParamType::boolean, "k, v are appended to a cache read every step (decode)"},
                  {"context", ParamType::integer, "tokens already in the KV cache"},
                  {"kv_precision", ParamType::precision, "precision of the KV cache (default activations)"}},
                 3,
                 3});
}

/// reshape and flatten (free), the copies (transpose, concat, pad, slice, copy), resize and custom work.
void add_data_movement_ops(std::vector<OpSchema>& ops) {
  ops.push_back({"reshape",
                 OpKind::reshape,
                 "change the shape, no data moved",
                 {{"shape", ParamType::integers,
                   "new shape; -1 once for the rest, 0 keeps a dimension; [] for a scalar", true, true}},
                 1,
                 1});
  ops.push_back({"flatten",
                 OpKind::reshape,
                 "flatten to 2-D at an axis, no data moved",
                 {{"axis", ParamType::integer, "first flattened axis (default 1)"}},
                 1,
                 1});
  ops.push_back({"transpose",
                 OpKind::copy,
                 "permute axes (a copy)",
                 {{"perm", ParamType::integers, "permutation (default reverse)"}},
                 1,
                 1});
  ops.push_back({"concat",
                 OpKind::copy,
                 "concatenate along an axis (a copy)",
                 {{"axis", ParamType::integer, "axis (default 1)"}},
                 2,
                 -1});
  ops.push_back({"pad",
                 OpKind::copy,
                 "pad the spatial dimensions of NCHW (a copy)",
                 {{"pads", ParamType::integers, "p, [ph, pw] or [t, l, b, r]", true}},
                 1,
                 1});
  ops.push_back({"slice",
                 OpKind::copy,
                 "take a part of the input (reads only that part)",
                 {{"shape", ParamType::integers, "output shape", true}},
                 1,
                 1});
  ops.push_back({"copy", OpKind::copy, "an explicit copy", {}, 1, 1});
  ops.push_back({"resize",
                 OpKind::resize,
                 "spatial resize of NCHW",
                 {{"scale", ParamType::integers, "integer scale, s or [sh, sw]"},
                  {"size", ParamType::integers, "output [height, width]"},
                  {"mode", ParamType::text, "nearest (default) or linear"}},
                 1,
                 1});
  ops.push_back(
      {"custom",
       OpKind::custom,
       "stated work: reads its inputs, writes its output",
       {{"ops", ParamType::number, "operations"},
        {"output_shape", ParamType::integers, "output shape (default: first input's; [] for a scalar)", false, true},
        {"weights", ParamType::integer, "weight elements"},
        {"class", ParamType::text, "op class its arithmetic runs at (default data_movement)"},
        kSparseZeros,
        kIndexBytes},
       0,
       -1});
}

std::vector<OpSchema> make_catalogue() {
  std::vector<OpSchema> ops;
  add_matmul_ops(ops);
  add_conv_and_pool_ops(ops);
  add_pointwise_ops(ops);
  add_normalisation_ops(ops);
  add_embedding_and_attention_ops(ops);
  add_data_movement_ops(ops);
  return ops;
}

}  // namespace

const std::vector<OpSchema>& op_catalogue() {
  static const std::vector<OpSchema> catalogue = make_catalogue();
  return catalogue;
}

const OpSchema* find_op(std::string_view name) {
  for (const auto& s : op_catalogue())
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<std::string> op_names() {
  std::vector<std::string> out;
  for (const auto& s : op_catalogue()) out.emplace_back(s.name);
  return out;
}

}  // namespace framesim::model
