// Internal to trace/: the TFLite importer (import_tflite, import.hpp), one class built per file and run once. What
// becomes what is written at the top of tflite_import.cpp; the class's parts:
//   tflite_import.cpp   entry point; reading and verifying the flatbuffer; the end (outputs, accounting, warnings)
//   tflite_tensors.cpp  tensors as the schema states them, NHWC -> NCHW layout, graph inputs, emitting layers
//   tflite_ops.cpp      operators: folding, dispatch by operator code, one costing function per op family
//   tflite_fold.cpp     shape arithmetic computed at load time
//   tflite_sparse.cpp   sparse constants (SparsityParameters, DENSIFY): their stored bytes
#pragma once

#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/text.hpp"
#include "tflite_schema_generated.h"
#include "trace/import.hpp"

namespace framesim::trace::tflite_detail {

namespace fb = ::framesim::tflite;
using model::LayerPrecision;
using model::OpParams;
using model::Precision;
using model::Shape;

// Layout: rank-4 tensors are NHWC in TFLite and NCHW in framesim (tflite_tensors.cpp).
/// A TFLite shape in framesim's order (rank 4: [N, H, W, C] -> [N, C, H, W]; other ranks unchanged).
Shape to_framesim(const Shape& s);
/// A TFLite axis (may be negative) of a rank-`rank` tensor as framesim's axis, or -1 when out of range.
int framesim_axis(std::int64_t axis, std::size_t rank);
/// " (NHWC [1, 2, 3, 4])" for a rank-4 TFLite shape, else empty: for messages.
std::string nhwc_note(const Shape& tflite_shape);
/// The first `most` names, then how many there are in all.
std::string list_some(const std::vector<std::string>& names, std::size_t most = 5);

struct Slot {
  int framesim = -1;        // framesim tensor id when this is an activation
  bool constant = false;    // data known before inference (a buffer, or a folded operator's output)
  fb::TensorType stored{};  // for constants: the stored type (a folded DEQUANTIZE keeps its source's)
  int data = -1;            // for constants: the TFLite tensor whose buffer holds the values (-1: not at hand)
  int sparse = -1;          // for constants: the sparse TFLite tensor they are decoded from (-1: stored dense)
};

struct Op {
  std::size_t index = 0;
  int code = 0;
  std::string name;  // "CONV_2D", or the custom code
  const fb::Operator* op = nullptr;
  std::vector<int> in, out;  // TFLite tensor ids (-1: optional input left out)
};

/// Everything built while importing one file. Member functions are grouped by the file that defines them, and
/// explained there.
class Importer {
 public:
  Importer(const std::filesystem::path& path, const ImportOptions& options)
      : path_(path), file_(path.string()), options_(options) {}
  /// Imports the file: the network, with what could not be mapped in the warnings.
  ImportResult run();

 private:
  // ---- tflite_import.cpp
  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void fail_op(const Op& o, const std::string& message) const;
  void read_file();
  void verify();
  std::size_t tensor_count() const;
  const fb::Tensor* tensor(int t) const;
  std::string tensor_name(int t) const;
  Shape file_shape(int t) const;
  std::string op_code_name(int code) const;
  void check_references();
  int code_of(const fb::Operator& op) const;
  void finish();

  // ---- tflite_tensors.cpp
  bool has_data(int t) const;
  Precision precision_of(int t);
  Precision precision_of_type(fb::TensorType type, int t);
  std::optional<std::vector<std::int64_t>> const_ints(int t) const;
  bool is_const(int t) const;
  Precision stored_precision(int t);
  int act(const Op& o, int t) const;
  const model::TensorSpec& spec(int framesim_tensor) const;
  std::vector<int> activation_inputs(const Op& o) const;
  std::vector<int> constant_inputs(const Op& o) const;
  void make_inputs();
  std::string unique_name(const std::string& base);
  int emit(const Op& o, std::string_view op, const std::string& name, const OpParams& stated,
           const std::vector<int>& inputs, LayerPrecision precision);
  int reshape(const Op& o, int from, const Shape& shape, const std::string& name);
  static LayerPrecision same(Precision p);
  int fused(const Op& o, int from, fb::ActivationFunctionType f, const std::string& base);
  void bind(const Op& o, std::size_t pos, int t);
  Shape out_shape(const Op& o, std::size_t pos = 0) const;
  std::string out_name(const Op& o, std::size_t pos = 0) const;
  Precision out_precision(const Op& o, std::size_t pos = 0);
  int custom_layer(const Op& o, const std::vector<int>& inputs, std::size_t pos, double ops = 0,
                   bool constants_as_weights = false);

  // ---- tflite_fold.cpp
  std::optional<std::vector<std::int64_t>> fold_values(const Op& o) const;
  void shape_op(const Op& o);

  // ---- tflite_sparse.cpp
  double stored_values(int t) const;
  double index_bytes(int t) const;
  void check_sparse(int t);
  void sparse_storage(const Op& o, std::string_view op, const std::vector<int>& inputs, OpParams& params);
  void sparse_note();

  // ---- tflite_ops.cpp
  void import_operator(std::size_t k);
  void fold(const Op& o);
  void dispatch(const Op& o);
  int data_input(const Op& o) const;
  void conv(const Op& o, bool depthwise);
  void transpose_conv(const Op& o, std::size_t x, std::size_t w, std::size_t b);
  void weights_from_activation(const Op& o, int w);
  void fully_connected(const Op& o);
  int conform(const Op& o, int t, std::size_t pos);
  void pool(const Op& o, std::string_view op);
  void reduce(const Op& o, std::string_view global_op);
  int broadcast_ready(const Op& o, int t, std::size_t out_rank);
  void binary(const Op& o, std::string_view op);
  int weights_of(const std::vector<int>& constants) const;
  int weighted_elementwise(const Op& o, const std::vector<int>& inputs, double per_element, int stored);
  void unary(const Op& o, std::string_view op);
  void concatenation(const Op& o);
  void reshape_op(const Op& o);
  void transpose(const Op& o);
  void pad(const Op& o);
  void resize(const Op& o, std::string_view mode);
  void slice(const Op& o);
  void gather(const Op& o);
  void batch_matmul(const Op& o);
  void cast(const Op& o);
  void unknown(const Op& o);

  // ---- state
  std::filesystem::path path_;
  std::string file_;
  const ImportOptions& options_;
  std::vector<std::uint8_t> bytes_;
  const fb::Model* model_ = nullptr;
  const fb::SubGraph* graph_ = nullptr;
  std::vector<Slot> slots_;
  model::NetworkSpec net_;
  std::vector<std::string> warnings_;
  std::set<std::string> used_names_;
  std::set<std::size_t> sourced_ops_;                // operators that became at least one layer
  std::map<std::string, int> folded_dequantize_;     // by stored type
  std::map<std::string, int> folded_other_;          // by op name
  std::map<int, std::vector<std::int64_t>> values_;  // shape arithmetic: values computed here (SHAPE, its folds)
  std::map<std::string, std::vector<std::string>> unknown_;
  struct SparseTally {
    int tensors = 0, layers = 0, densify = 0;
    double values_bytes = 0, index_bytes = 0, dense_bytes = 0;  // of the sparse tensors: stored, and decoded
  } sparse_;
  std::map<std::string, std::set<std::string>> odd_types_;
  std::vector<std::string> other_pads_, other_reductions_, batched_constants_, computed_weights_, variables_,
      mismatches_;
};

}  // namespace framesim::trace::tflite_detail
