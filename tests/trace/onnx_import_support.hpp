// What the ONNX importer tests share: hand-count helpers over an imported network and the OnnxImport fixture
// (a scratch folder, models written with the ONNX protobuf classes, libonnx-testdata models with their weights
// stored as initializers).
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>
#include "config/hardware.hpp"
#include "config/network.hpp"
#include "config/network_writer.hpp"
#include "core/error.hpp"
#include "model/budget.hpp"
#include "onnx_builder.hpp"
#include "test_support.hpp"
#include "trace/import.hpp"

namespace framesim::testing::onnx_import {

namespace fs = std::filesystem;
using namespace framesim;
using framesim::testing::source_path;
using model::Precision;
using model::Shape;

inline const fs::path kTestData = "/usr/share/libonnx-testdata/data/node";

inline fs::path model_cache() {
  if (const char* env = std::getenv("FRAMESIM_MODEL_CACHE"); env && *env) return env;
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : ".") / ".cache/framesim/models";
}

inline fs::path blazeface_path() {
  return model_cache() / "blazeface/ONNX/face_detection_front_128x128_barracuda.onnx";
}

/// The message of the UserError `f` throws (fails the test when it throws nothing or something else).
template <class F>
inline std::string user_error(F&& f) {
  try {
    f();
  } catch (const core::UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-UserError: " << e.what();
    return {};
  }
  ADD_FAILURE() << "threw nothing";
  return {};
}

inline const model::LayerSpec* find(const model::NetworkSpec& net, const std::string& name) {
  auto i = net.find_layer(name);
  return i ? &net.layers[static_cast<std::size_t>(*i)] : nullptr;
}

inline const model::TensorSpec& input_of(const model::NetworkSpec& net, const model::LayerSpec& l, std::size_t i = 0) {
  return net.tensors[static_cast<std::size_t>(l.inputs.at(i))];
}
inline const model::TensorSpec& output_of(const model::NetworkSpec& net, const model::LayerSpec& l) {
  return net.tensors[static_cast<std::size_t>(l.output)];
}

/// Bytes a layer reads from its inputs, writes, and reads from its weights.
inline double read_bytes(const model::LayerSpec& l) {
  double b = 0;
  for (const auto& a : l.input_access) b += a.bytes;
  return b;
}
inline double written_bytes(const model::NetworkSpec& net, const model::LayerSpec& l) {
  return l.writes_output() ? output_of(net, l).bytes() : 0.0;
}

inline bool has_warning(const trace::ImportResult& r, const std::string& text) {
  return std::any_of(r.warnings.begin(), r.warnings.end(),
                     [&](const auto& w) { return w.find(text) != std::string::npos; });
}

inline std::string all_warnings(const trace::ImportResult& r) {
  std::string out;
  for (const auto& w : r.warnings) out += "  " + w + "\n";
  return out;
}

// ---- writing ONNX models in tests ----

/// A per-test scratch folder.
class OnnxImport : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = fmt::format("framesim_onnx_{}_{}_{}", info->test_suite_name(), info->name(), ::getpid());
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = fs::temp_directory_path() / name;
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  fs::path save(const onnx::ModelProto& m, const std::string& name) {
    const fs::path p = dir_ / name;
    std::ofstream out(p, std::ios::binary);
    m.SerializeToOstream(&out);
    return p;
  }

  fs::path write_bytes(const std::string& name, const std::string& bytes) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

  /// A libonnx-testdata model with the listed graph inputs turned into initializers (their values from
  /// test_data_set_0): the data set feeds weights as inputs, a deployed model stores them.
  fs::path testdata(const std::string& test, const std::vector<int>& weights = {}) {
    const fs::path dir = kTestData / test;
    onnx::ModelProto m;
    {
      std::ifstream in(dir / "model.onnx", std::ios::binary);
      EXPECT_TRUE(m.ParseFromIstream(&in)) << dir;
    }
    std::vector<std::string> names;
    for (int k : weights) {
      onnx::TensorProto t;
      std::ifstream in(dir / "test_data_set_0" / fmt::format("input_{}.pb", k), std::ios::binary);
      EXPECT_TRUE(t.ParseFromIstream(&in)) << test << " input " << k;
      t.set_name(m.graph().input(k).name());
      names.push_back(t.name());
      *m.mutable_graph()->add_initializer() = t;
    }
    if (m.ir_version() >= 4) {  // IR 4+: initializers need not be inputs (before, they must be)
      auto* inputs = m.mutable_graph()->mutable_input();
      for (int i = inputs->size() - 1; i >= 0; --i)
        if (std::find(names.begin(), names.end(), inputs->Get(i).name()) != names.end()) inputs->DeleteSubrange(i, 1);
    }
    return save(m, test + ".onnx");
  }

  fs::path dir_;
};

}  // namespace framesim::testing::onnx_import
