// Helpers shared by tests: build small networks and hardware in code, paths to shipped files, scratch folders,
// the framesim binary run as a user would run it.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "model/hardware.hpp"
#include "model/network.hpp"
#include "test_paths.hpp"

namespace framesim::testing {

/// The message of the core::UserError `f` throws (all diagnostics, one per line), or "" when it throws none.
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const core::UserError& e) {
    return e.what();
  }
  return "";
}

inline std::string source_path(const std::string& relative) {
  return std::string(FRAMESIM_SOURCE_DIR) + "/" + relative;
}

/// The YAML files directly in `folder` of the source tree ("hardware", "scenarios/networks"), sorted.
inline std::vector<std::filesystem::path> shipped_yaml_files(const std::string& folder) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(source_path(folder)))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

/// A scratch folder per test, removed at the end.
class Scratch {
 public:
  Scratch() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name =
        std::string("framesim-") + info->test_suite_name() + "-" + info->name() + "-" + std::to_string(::getpid());
    std::replace(name.begin(), name.end(), '/', '_');  // parameterised tests are named Suite/Test/Param
    dir_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~Scratch() { std::filesystem::remove_all(dir_); }
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const auto p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

/// What one run of the framesim binary returned and printed.
struct CliRun {
  int exit_code = -1;  // -1: it did not exit normally
  std::string out, err;
};

/// Runs `framesim ARGS` (shell text: quote paths) in the source tree, in its own process, and captures it.
/// `wrapper` (shell text ending in a space, e.g. "timeout 1 ") runs framesim under another command.
inline CliRun run_cli(const std::string& args, const std::string& wrapper = "") {
  static int runs = 0;  // this process's runs so far: each captures into its own files
  const std::string capture = (std::filesystem::temp_directory_path() /
                               ("framesim-cli-" + std::to_string(::getpid()) + "-" + std::to_string(runs++)))
                                  .string();
  const std::string out = capture + ".out", err = capture + ".err";
  const std::string command = std::string("cd '") + FRAMESIM_SOURCE_DIR + "' && " + wrapper + "'" + FRAMESIM_BINARY +
                              "' " + args + " > '" + out + "' 2> '" + err + "'";
  CliRun r;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int status = std::system(command.c_str());
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = core::read_file(out);
    r.err = core::read_file(err);
    // In the ASan build, LeakSanitizer's own tracer (which stops the threads to scan them at exit) crashes now and
    // then ("Tracer caught signal 11 ... LeakSanitizer has encountered a fatal error"): a failure of the checker,
    // not a leak nor an error of framesim (a leak reads "detected memory leaks"). Such a run is run once more,
    // and the test says so; any other outcome stands.
    if (r.err.find("LeakSanitizer has encountered a fatal error") == std::string::npos) break;
    std::fprintf(stderr, "note: LeakSanitizer's tracer failed on `framesim %s`; run again\n", args.c_str());
  }
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

/// Builds networks layer by layer in code, failing the test on any build error.
class NetBuilder {
 public:
  explicit NetBuilder(std::string name = "test") { net_.name = std::move(name); }

  int input(const std::string& name, model::Shape shape, model::Precision p = model::Precision::fp32) {
    net_.tensors.push_back({name, std::move(shape), p, -1, -1});
    net_.inputs.push_back(static_cast<int>(net_.tensors.size() - 1));
    return static_cast<int>(net_.tensors.size() - 1);
  }

  int layer(const std::string& op, const std::string& name, std::vector<int> inputs, model::OpParams params = {},
            model::LayerPrecision precision = {}) {
    const model::OpSchema* schema = model::find_op(op);
    EXPECT_NE(schema, nullptr) << op;
    std::vector<const model::TensorSpec*> tensors;
    for (int t : inputs) tensors.push_back(&net_.tensors[static_cast<std::size_t>(t)]);
    auto result = model::build_layer(*schema, name, params, tensors, precision);
    if (auto* e = std::get_if<model::OpError>(&result)) {
      ADD_FAILURE() << name << ": " << e->key << ": " << e->message;
      return -1;
    }
    auto built = std::get<model::BuiltLayer>(result);
    built.layer.inputs = inputs;
    built.layer.output = static_cast<int>(net_.tensors.size());
    built.output.producer = static_cast<int>(net_.layers.size());
    if (built.layer.kind == model::OpKind::reshape) built.output.alias_of = net_.storage_of(inputs.front());
    net_.layers.push_back(built.layer);
    net_.tensors.push_back(built.output);
    return built.layer.output;
  }

  const model::LayerSpec& last() const { return net_.layers.back(); }

  /// Finishes with every unread layer output as a graph output.
  model::NetworkSpec done(model::FusionMode fusion = model::FusionMode::automatic) {
    net_.fusion = fusion;
    for (const auto& l : net_.layers)
      if (net_.consumers(l.output).empty()) net_.outputs.push_back(l.output);
    return net_;
  }

 private:
  model::NetworkSpec net_;
};

/// The seed's reference device in code: one unit, one DRAM level. Peak roofs, no derating.
inline model::HardwareSpec seed_device(double ops_per_s = 2e12, double bandwidth_Bps = 50e9,
                                       model::Precision p = model::Precision::fp32) {
  model::HardwareSpec hw;
  hw.name = "seed";
  model::MemoryLevelSpec dram;
  dram.name = "dram";
  dram.kind = model::MemoryKind::dram;
  dram.capacity_bytes = 8e9;
  dram.bandwidth_Bps = bandwidth_Bps;
  dram.latency_s = 100e-9;
  dram.energy_per_byte_J = 160e-12;
  dram.users = {"gpu"};
  hw.memory.push_back(dram);
  model::ComputeUnitSpec gpu;
  gpu.name = "gpu";
  gpu.peak_ops_per_s[p] = ops_per_s;
  gpu.memory_path = {0};
  gpu.operating_points.push_back({"nominal", 1e9, 0.8, std::nullopt});
  hw.units.push_back(gpu);
  return hw;
}

}  // namespace framesim::testing
