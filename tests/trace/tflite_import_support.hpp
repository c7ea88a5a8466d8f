// What the TFLite importer tests share: a writer of small TFLite flatbuffers over framesim's schema subset, the
// TfliteImport fixture (a scratch folder) and lookups into an imported network.
#pragma once

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
#include "tflite_schema_generated.h"
#include "trace/import.hpp"

namespace framesim::testing::tflite_import {

namespace fs = std::filesystem;
namespace tfl = framesim::tflite;
using namespace framesim;
using framesim::testing::source_path;
using model::Precision;
using model::Shape;

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
  /// One dimension of a sparse tensor's traversal order: DENSE of `dense_size`, or SPARSE_CSR with its
  /// array_segments and array_indices, each stored as an Int32Vector, Uint16Vector or Uint8Vector.
  struct SparseDim {
    tfl::DimensionType format = tfl::DimensionType_DENSE;
    int32_t dense_size = 0;
    std::vector<int32_t> segments, indices;
    tfl::SparseIndexVector segments_type = tfl::SparseIndexVector_Uint8Vector;
    tfl::SparseIndexVector indices_type = tfl::SparseIndexVector_Uint8Vector;
  };
  static SparseDim dense_dim(int32_t size) {
    SparseDim d;
    d.dense_size = size;
    return d;
  }
  static SparseDim csr_dim(std::vector<int32_t> segments, std::vector<int32_t> indices,
                           tfl::SparseIndexVector segments_type = tfl::SparseIndexVector_Uint8Vector,
                           tfl::SparseIndexVector indices_type = tfl::SparseIndexVector_Uint8Vector) {
    SparseDim d;
    d.format = tfl::DimensionType_SPARSE_CSR;
    d.segments = std::move(segments);
    d.indices = std::move(indices);
    d.segments_type = segments_type;
    d.indices_type = indices_type;
    return d;
  }
  /// A sparse constant (TFLite SparsityParameters): `data` holds the stored values only, in traversal order.
  int sparse_constant(const std::string& name, std::vector<int32_t> shape, tfl::TensorType type,
                      std::vector<uint8_t> data, std::vector<int32_t> traversal_order, std::vector<int32_t> block_map,
                      std::vector<SparseDim> dims) {
    const int t = constant(name, std::move(shape), type, std::move(data));
    sparsity_[t] = {std::move(traversal_order), std::move(block_map), std::move(dims)};
    return t;
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
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
      const auto& t = tensors_[i];
      auto quant = t.type == tfl::TensorType_INT8
                       ? tfl::CreateQuantizationParameters(fbb, 0, 0, fbb.CreateVector(std::vector<float>{0.05f}),
                                                           fbb.CreateVector(std::vector<int64_t>{0}))
                       : 0;
      const auto sp = sparsity_.find(static_cast<int>(i));
      tensors.push_back(tfl::CreateTensor(fbb, fbb.CreateVector(t.shape), t.type, t.buffer, fbb.CreateString(t.name),
                                          quant, false, sp == sparsity_.end() ? 0 : sparsity(sp->second),
                                          t.signature.empty() ? 0 : fbb.CreateVector(t.signature)));
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
  struct Sparsity {
    std::vector<int32_t> order, block_map;
    std::vector<SparseDim> dims;
  };
  flatbuffers::Offset<void> index_vector(tfl::SparseIndexVector type, const std::vector<int32_t>& v) {
    if (type == tfl::SparseIndexVector_Int32Vector) return tfl::CreateInt32Vector(fbb, fbb.CreateVector(v)).Union();
    if (type == tfl::SparseIndexVector_Uint16Vector)
      return tfl::CreateUint16Vector(fbb, fbb.CreateVector(std::vector<uint16_t>(v.begin(), v.end()))).Union();
    return tfl::CreateUint8Vector(fbb, fbb.CreateVector(std::vector<uint8_t>(v.begin(), v.end()))).Union();
  }
  flatbuffers::Offset<tfl::SparsityParameters> sparsity(const Sparsity& s) {
    std::vector<flatbuffers::Offset<tfl::DimensionMetadata>> dims;
    for (const auto& d : s.dims) {
      const bool csr = d.format == tfl::DimensionType_SPARSE_CSR;
      const auto st = csr ? d.segments_type : tfl::SparseIndexVector_NONE;
      const auto it = csr ? d.indices_type : tfl::SparseIndexVector_NONE;
      dims.push_back(tfl::CreateDimensionMetadata(fbb, d.format, d.dense_size, st,
                                                  csr ? index_vector(st, d.segments) : 0, it,
                                                  csr ? index_vector(it, d.indices) : 0));
    }
    return tfl::CreateSparsityParameters(fbb, fbb.CreateVector(s.order),
                                         s.block_map.empty() ? 0 : fbb.CreateVector(s.block_map),
                                         fbb.CreateVector(dims));
  }
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
  std::map<int, Sparsity> sparsity_;  // by tensor
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

inline const model::LayerSpec& layer(const model::NetworkSpec& net, const std::string& name) {
  auto i = net.find_layer(name);
  if (!i) throw std::runtime_error("no layer " + name);
  return net.layers[static_cast<std::size_t>(*i)];
}
inline const model::TensorSpec& output_of(const model::NetworkSpec& net, const std::string& name) {
  return net.tensors[static_cast<std::size_t>(layer(net, name).output)];
}
inline std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

/// An int8 model: conv 3x3 (SAME, fused RELU) -> reshape -> fully connected.
/// `dynamic_batch` marks the input's batch as dynamic (shape_signature -1).
inline std::vector<uint8_t> int8_conv_fc(bool dynamic_batch = false) {
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

inline fs::path model_cache() {
  if (const char* dir = std::getenv("FRAMESIM_MODEL_CACHE"); dir && *dir) return dir;
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : ".") / ".cache/framesim/models";
}

}  // namespace framesim::testing::tflite_import
