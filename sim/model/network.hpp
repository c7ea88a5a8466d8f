// Networks layer by layer: tensors with shapes, and layers whose operation and byte counts are computed once from
// those shapes (ops.cpp and the builders it dispatches to, op_build.hpp). A multiply-accumulate counts as two
// operations.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "core/enum_table.hpp"
#include "model/op_class.hpp"
#include "model/precision.hpp"

namespace framesim::model {

using Shape = std::vector<std::int64_t>;
std::string shape_to_string(const Shape& s);  // "1x64x112x112"
double shape_elements(const Shape& s);

/// An activation tensor. Graph inputs have no producer; a reshape output aliases its input's storage.
struct TensorSpec {
  std::string name;
  Shape shape;
  Precision precision = Precision::fp32;
  int producer = -1;  // layer index, -1 for a graph input
  int alias_of = -1;  // tensor whose storage this is (free reshape), -1 if it owns its storage

  double elements() const { return shape_elements(shape); }
  double bytes() const { return tensor_bytes(elements(), precision); }
};

/// A read of memory: `bytes` streamed, or, when rows > 0, `rows` scattered rows of bytes/rows each.
/// A scattered row costs whole lines of the level that serves it (see effective_bytes).
struct Access {
  double bytes = 0;
  double rows = 0;
};
/// Bytes that actually cross a level with line size `line_bytes` for this access.
double effective_bytes(const Access& a, double line_bytes);

enum class OpKind {
  linear,  // activation x weights (matmul with a weight operand)
  matmul,  // activation x activation
  conv2d,
  pool,
  global_pool,
  elementwise,  // n-ary, broadcasting (add, mul, ...)
  activation,   // unary (relu, sigmoid, ...), also cast
  batchnorm,
  norm,  // layernorm / rmsnorm
  softmax,
  embedding,  // gather of weight rows
  attention,
  reshape,  // free: aliases its input
  copy,     // transpose, pad, concat (unless in place), slice, explicit copies
  resize,
  custom,  // stated ops and output shape; also unknown imported ops (data movement only)
};

/// The op class of a kind (a conv2d with one input channel per group is built as depthwise instead).
OpClass default_op_class(OpKind kind);

enum class ParamType { integer, integers, boolean, text, number, precision };
std::string_view param_type_name(ParamType t);

using ParamValue = std::variant<std::int64_t, std::vector<std::int64_t>, bool, std::string, double, Precision>;
using OpParams = std::map<std::string, ParamValue, std::less<>>;

struct LayerSpec {
  std::string name;
  std::string op;  // as written: "conv2d", "relu", "add", ...
  OpKind kind = OpKind::custom;
  OpClass op_class = OpClass::data_movement;  // which efficiency its arithmetic runs at (op_class.hpp)
  OpParams params;                            // as given, so the layer can be rebuilt (e.g. at another precision)
  LayerPrecision precision;
  std::vector<int> inputs;           // tensor ids read
  std::vector<Access> input_access;  // how each input is read (parallel to inputs)
  int output = -1;                   // tensor id written
  double ops = 0;                    // arithmetic operations (MAC = 2)
  double params_count = 0;           // weight elements
  double weight_bytes = 0;           // stored size of the weights
  Access weight_access;              // weight bytes read per inference
  double state_bytes = 0;            // persistent state (KV cache) kept between inferences
  Access state_read;                 // state read per inference
  double state_write_bytes = 0;      // state appended per inference
  double scratch_bytes = 0;          // a materialised intermediate, written once and read back once
  std::string summary;               // short human description of the shape parameters
  std::string source;                // where it was defined ("file:line"), for messages

  bool writes_output() const { return kind != OpKind::reshape; }
  /// Elementwise-like layers that can join their producer's epilogue in automatic fusion (custom layers of class
  /// elementwise too: a scale or offset by constants).
  bool epilogue_fusable() const;
};

/// The largest network framesim reads (README "Limits"): layers after repeat blocks are expanded, or nodes of an
/// imported model. Past it, a clear error.
inline constexpr std::size_t kMaxLayers = 100'000;

enum class FusionMode { automatic, explicit_only, none };
/// The names of fusion modes (a network's or a scenario network entry's `fusion`).
inline constexpr auto kFusionModes = core::enum_table<FusionMode>(
    {{FusionMode::automatic, "auto"}, {FusionMode::explicit_only, "explicit"}, {FusionMode::none, "none"}});
std::string_view fusion_mode_name(FusionMode m);

struct NetworkSpec {
  std::string name;
  std::string description;
  std::string source_file;
  std::vector<TensorSpec> tensors;
  std::vector<LayerSpec> layers;         // topological order
  std::vector<int> inputs;               // graph input tensor ids
  std::vector<int> outputs;              // graph output tensor ids
  std::vector<std::vector<int>> groups;  // explicit fusion groups (layer indices)
  FusionMode fusion = FusionMode::automatic;

  double total_params() const;
  double total_weight_bytes() const;
  double total_ops() const;
  double total_state_bytes() const;
  /// Layers reading tensor `t` directly. Scans every layer: for many tensors build a ConsumerIndex once.
  std::vector<int> consumers(int tensor) const;
  /// The tensor owning the storage of `t` (follows aliases).
  int storage_of(int tensor) const;
  std::optional<int> find_layer(std::string_view layer_name) const;
};

/// Every tensor's consumers at once, built in one pass over the layers (O(layers + tensors)): what planning and
/// readers use instead of NetworkSpec::consumers per tensor, which would make a 16,000-layer network quadratic.
class ConsumerIndex {
 public:
  explicit ConsumerIndex(const NetworkSpec& net);
  /// Layers reading tensor `t` directly, in layer order (each layer once).
  const std::vector<int>& of(int tensor) const { return consumers_[static_cast<std::size_t>(tensor)]; }
  /// True when `t` is read by a layer, or when a tensor aliasing its storage directly is read or is in `outputs`.
  bool used(int tensor, const std::vector<int>& outputs) const;

 private:
  std::vector<std::vector<int>> consumers_;
  std::vector<std::vector<int>> aliases_;  // tensors whose alias_of is this one
};

// ---- the operation catalogue: op names a network may use, their parameters, and the builder ----

struct ParamSchema {
  std::string_view key;
  ParamType type;
  std::string_view description;
  bool required = false;
  bool empty_allowed = false;  // integers: an empty list is a value (the shape of a scalar)
};

struct OpSchema {
  std::string_view name;
  OpKind kind;
  std::string_view description;
  std::vector<ParamSchema> params;
  int min_inputs = 1;
  int max_inputs = 1;  // -1: any number
};

/// Every op framesim knows, in a fixed order (for --list-ops and did-you-mean).
const std::vector<OpSchema>& op_catalogue();
const OpSchema* find_op(std::string_view name);
std::vector<std::string> op_names();

/// A problem building a layer: `key` names the parameter at fault (empty: the layer as a whole).
struct OpError {
  std::string key;
  std::string message;
};

struct BuiltLayer {
  LayerSpec layer;
  TensorSpec output;
};

/// Computes a layer's output shape, operations and bytes from its inputs and parameters.
/// `inputs` are the tensors it reads, in order. The output tensor is named after the layer.
std::variant<BuiltLayer, OpError> build_layer(const OpSchema& schema, const std::string& name, const OpParams& params,
                                              const std::vector<const TensorSpec*>& inputs, LayerPrecision precision);

/// The same network with one precision for every layer and graph input (the budget's --precision).
NetworkSpec with_precision(const NetworkSpec& net, const LayerPrecision& precision);

}  // namespace framesim::model
