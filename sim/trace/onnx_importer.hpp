// Internal to trace/: the ONNX importer (import_onnx, import.hpp), one class built per file and run once. What
// becomes what is written at the top of onnx_import.cpp; the class's parts, one responsibility a file:
//   onnx_import.cpp           entry point; reading the file, Loop and Scan refused, initializers, graph inputs
//   onnx_control_flow.cpp     If: the branch a constant (or folded) condition picks, else the larger of the two
//   onnx_shape_inference.cpp  ONNX shape inference (in a child process) and the types it gives
//   onnx_fold.cpp             constant folding of shape arithmetic (small values known at load time)
//   onnx_graph.cpp            order, liveness, tensors and their shapes, graph inputs and outputs, warnings
//   onnx_nodes.cpp            one node: attributes, operands, precisions, emitting layers, dispatch by op type
//   onnx_ops_compute.cpp      costers: convolution, matrix products, pooling, reductions
//   onnx_ops_pointwise.cpp    costers: elementwise ops, normalisation
//   onnx_ops_movement.cpp     costers: reshapes, Gather, Resize, Concat, Pad, Slice, Split
//   onnx_tensor_data.cpp      values and element types of stored tensors
#pragma once

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/error.hpp"
#include "trace/import.hpp"

namespace framesim::trace::onnx_detail {

namespace fs = std::filesystem;
using model::LayerPrecision;
using model::OpParams;
using model::Precision;
using model::Shape;

inline std::string shape_text(const Shape& s) { return model::shape_to_string(s); }

inline std::string join_names(const std::vector<std::string>& names, std::size_t limit = 5) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < limit; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > limit) out += fmt::format(" and {} more", names.size() - limit);
  return out;
}

/// A constant value: an initializer, a Constant node, or the output of a folded node.
struct Const {
  std::optional<Shape> shape;  // unknown when shape inference could not give it
  Precision storage = Precision::fp32;
  std::optional<double> stored;  // elements actually stored (1 for a fill value); nullopt: unknown
  std::vector<double> values;    // small constants only (for Clip bounds and Pad amounts)
  bool has_values = false;
  std::string origin;  // "initializer", "Constant node 3", ...
  int onnx_type = 0;   // element type as stored (for the note on types framesim lacks)
  std::string name;
  bool sparse = false;     // a SparseTensorProto: `stored` is its non-zero values, `index_bytes` its indices
  double index_bytes = 0;  // bytes of a sparse tensor's indices (int64), stored with its values
};

/// What an input of a node is.
struct Operand {
  enum Kind { missing, activation, constant } kind = missing;
  int tensor = -1;
  const Const* c = nullptr;
  std::string name;
  bool act() const { return kind == activation; }
  bool cst() const { return kind == constant; }
  bool present() const { return kind != missing; }
};

/// Elements a constant stores, or 0 for an immediate (one element: folded into the instruction).
double weight_elements(const Const& c);
/// Bytes of a SparseTensorProto's indices as stored (int64: [nnz] linearised or [nnz, rank] coordinates).
double sparse_index_bytes(const onnx::SparseTensorProto& t);
/// Values of a small tensor, converted to double (raw_data little-endian, or the typed fields); false when they
/// cannot be read.
bool read_values(const onnx::TensorProto& t, std::vector<double>& out);
/// ONNX's name of an element type ("FLOAT", "INT64"), or "type N".
std::string elem_type_name(int t);
/// framesim's precision for an ONNX element type; `lossy` is set when the bytes per element differ.
Precision precision_of(int elem_type, bool& lossy);

/// Everything built while importing one file. Member functions are grouped by the file that defines them, and
/// explained there.
class OnnxImporter {
 public:
  OnnxImporter(const fs::path& path, const ImportOptions& options)
      : path_(path), file_(path.string()), options_(options) {}
  /// Imports the file: the network, with what could not be mapped in the warnings.
  ImportResult run();

 private:
  /// A small tensor whose values are known before run time.
  struct Value {
    Shape dims;
    std::vector<double> v;
    int type = 0;
  };

  static constexpr double kMaxFoldedElements = 64;  // shape-like tensors only: weights keep their own storage

  struct Ctx {
    const onnx::NodeProto& node;
    int index;
    std::string base;   // layer name
    std::string where;  // for messages: "node 12 (Conv \"name\")"
    std::string label;  // for warnings
  };

  /// A layer for the ONNX value `value`: built by framesim, its shape checked against ONNX's.
  struct Spec {
    std::string op;
    OpParams params;
    std::vector<int> inputs;
    LayerPrecision precision;
    std::string value;            // the ONNX value written
    std::string suffix;           // added to the layer name
    std::optional<Shape> expect;  // default: the value's static shape
  };

  struct ConvGeometry {
    Shape kernel, stride, dilation;
    std::int64_t groups = 1;
    std::vector<std::int64_t> pads;  // begin..., end...
    std::string auto_pad;
  };

  // ---- onnx_import.cpp
  [[noreturn]] void fail(const std::string& message) const;
  void reject_control_flow() const;
  void load();
  void collect_initializers();
  void prepare_inputs();

  // ---- onnx_control_flow.cpp
  void resolve_if_nodes();
  std::optional<bool> folded_condition(const std::string& name) const;

  // ---- onnx_shape_inference.cpp
  static void infer_in_process(onnx::ModelProto& m);
  void infer_shapes();
  void infer_here();
  static std::string first_line(const std::string& s);
  void collect_types();
  static std::string kind_of(const onnx::TypeProto& t);
  static std::string describe_type(const onnx::TypeProto& t);

  // ---- onnx_fold.cpp
  static bool integer_type(int t);
  const Value* value(const std::string& name);
  static std::optional<Value> broadcast_values(const std::vector<const Value*>& ins, int type,
                                               const std::function<double(const std::vector<double>&)>& fn);
  std::optional<Value> compute_value(const onnx::NodeProto& node);
  static double cast_to(double x, int type);
  std::optional<Value> constant_of_shape_value(const Ctx& c, const std::optional<Shape>& out_shape, int out_type);
  static std::optional<Value> range_value(const std::vector<const Value*>& in, int out_type);
  std::optional<Value> gather_value(const Ctx& c, const std::vector<const Value*>& in, int out_type);
  std::optional<Value> concat_value(const Ctx& c, const std::vector<const Value*>& in, int out_type);
  std::optional<Value> slice_value(const Ctx& c, const std::vector<const Value*>& in, int out_type);
  static std::optional<Value> reduce_value(const std::string& op, const std::vector<const Value*>& in,
                                           const std::optional<Shape>& out_shape, int out_type);
  bool split_values(const onnx::NodeProto& node);
  bool fold_small_values(const std::vector<int>& order);

  // ---- onnx_graph.cpp
  std::vector<int> topological_order();
  std::vector<bool> liveness(const std::vector<int>& order,
                             const std::function<std::vector<std::string>(int)>& inputs_of,
                             std::unordered_set<std::string>& needed) const;
  void mark_needed(const std::vector<int>& order);
  std::string node_label(int i) const;
  static void set_type(Const& c, int elem_type, const std::string& name);
  Precision stored(const Const& c);
  Precision tensor_precision(int elem_type, const std::string& name);
  const onnx::TypeProto* type_of(const std::string& name) const;
  int elem_type(const std::string& name) const;
  std::optional<Shape> known_shape(const std::string& name) const;
  Shape require_shape(const std::string& name, const std::string& where) const;
  void add_graph_inputs();
  model::NetworkSpec& net_();
  void add_graph_outputs();
  void finish_warnings();

  // ---- onnx_nodes.cpp
  const onnx::AttributeProto* attr(const Ctx& c, std::string_view name) const;
  std::int64_t attr_int(const Ctx& c, std::string_view name, std::int64_t fallback) const;
  double attr_float(const Ctx& c, std::string_view name, double fallback) const;
  std::string attr_string(const Ctx& c, std::string_view name, const std::string& fallback) const;
  std::optional<std::vector<std::int64_t>> attr_ints(const Ctx& c, std::string_view name) const;
  Operand operand(const Ctx& c, int i) const;
  std::vector<Operand> operands(const Ctx& c) const;
  const model::TensorSpec& tensor(int id);
  const Shape& shape_of(const Operand& o);
  Precision out_precision(const Ctx& c, int i, const std::vector<Operand>& ops);
  LayerPrecision precision_for(const std::vector<Operand>& ops, Precision out, std::optional<Precision> weights,
                               std::optional<Precision> compute = std::nullopt);
  std::optional<Precision> weights_precision(const std::vector<Operand>& ops);
  double constant_weights(const std::vector<Operand>& ops);
  static std::vector<int> activations(const std::vector<Operand>& ops);
  void note(const std::string& message, const Ctx& c);
  std::string layer_name(const Ctx& c, const std::string& suffix);
  int emit(const Ctx& c, Spec s, std::optional<double> fallback_ops = std::nullopt, double fallback_weights = 0);
  void sparse_storage(const Ctx& c, Spec& s) const;
  int emit_custom(const Ctx& c, const std::string& value, std::vector<int> inputs, double ops, double weights,
                  LayerPrecision precision, const std::string& suffix = "", std::optional<Shape> expect = std::nullopt,
                  std::string_view op_class = {});
  void unknown(const Ctx& c, const std::vector<Operand>& ops);
  void data_movement(const Ctx& c, const std::vector<Operand>& ops);
  void extra_outputs(const Ctx& c, const std::vector<Operand>& ops, int from = 1);
  void fold(const Ctx& c, const std::vector<Operand>& ops);
  void constant_node(const Ctx& c);
  void handle(int index);
  void map_node(const Ctx& c, const std::vector<Operand>& ops);
  const Operand& data(const Ctx& c, const std::vector<Operand>& ops) const;
  void single(const Ctx& c, const std::vector<Operand>& ops, const std::string& op, OpParams params);

  // ---- onnx_ops_compute.cpp
  ConvGeometry conv_geometry(const Ctx& c, const Shape& x, const std::optional<Shape>& w);
  std::optional<model::ParamValue> padding_2d(const ConvGeometry& g, const Shape& x) const;
  void conv(const Ctx& c, const std::vector<Operand>& ops);
  void conv_transpose(const Ctx& c, const std::vector<Operand>& ops);
  void gemm(const Ctx& c, const std::vector<Operand>& ops);
  void matmul(const Ctx& c, const std::vector<Operand>& ops);
  void pool(const Ctx& c, const std::vector<Operand>& ops);
  void reduce(const Ctx& c, const std::vector<Operand>& ops);

  // ---- onnx_ops_pointwise.cpp
  void elementwise(const Ctx& c, const std::vector<Operand>& ops, const std::string& op,
                   std::optional<double> per_element);
  void clip(const Ctx& c, const std::vector<Operand>& ops);
  void prelu(const Ctx& c, const std::vector<Operand>& ops);
  void batchnorm(const Ctx& c, const std::vector<Operand>& ops);
  void normalization(const Ctx& c, const std::vector<Operand>& ops, double per_element, const std::string& what);
  void layernorm(const Ctx& c, const std::vector<Operand>& ops);

  // ---- onnx_ops_movement.cpp
  void reshape_to(const Ctx& c, int from, const std::string& value);
  void gather(const Ctx& c, const std::vector<Operand>& ops);
  void resize(const Ctx& c, const std::vector<Operand>& ops);
  void concat(const Ctx& c, const std::vector<Operand>& ops);
  void pad(const Ctx& c, const std::vector<Operand>& ops);
  bool fits_inside(const Shape& part, const Shape& whole) const;
  void slice(const Ctx& c, const std::vector<Operand>& ops);
  void split(const Ctx& c, const std::vector<Operand>& ops);

  // ---- state
  fs::path path_;
  std::string file_;
  const ImportOptions& options_;
  onnx::ModelProto model_;
  ImportResult result_;
  std::unordered_map<std::string, Const> consts_;
  std::unordered_map<std::string, int> tensor_of_;
  std::unordered_map<std::string, const onnx::TypeProto*> types_;
  std::unordered_map<std::string, int> producer_;
  std::unordered_set<std::string> needed_;
  std::vector<bool> live_;
  std::vector<std::string> base_names_;
  std::set<std::string> used_names_;
  std::map<std::string, std::vector<std::string>> notes_;
  std::vector<std::string> note_order_;
  std::map<std::string, int> folded_;
  std::map<std::string, std::set<std::string>> lossy_;
  std::vector<std::string> unused_inputs_;
  std::vector<std::string> original_ops_;  // op types as in the file (folding rewrites nodes)
  std::vector<std::vector<std::string>> original_inputs_;
  std::unordered_map<std::string, Value> values_;  // small values known before run time
  std::unordered_map<std::string, int> init_index_;
  std::unordered_set<std::string> no_value_;
  std::unordered_set<std::string> computed_;  // values computed here (not the file's)
  bool preloaded_ = false;                    // model_ given (a variant of the file with an If resolved), not read
  bool first_branch_only_ = false;            // comparing two branches: further run-time Ifs at their then branch
  std::vector<std::string> control_notes_;    // how each If was resolved
};

}  // namespace framesim::trace::onnx_detail
