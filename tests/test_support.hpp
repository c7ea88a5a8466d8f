// Helpers shared by tests: build small networks and hardware in code, paths to shipped files.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include "model/hardware.hpp"
#include "model/network.hpp"

namespace framesim::testing {

inline std::string source_path(const std::string& relative) { return std::string(FRAMESIM_SOURCE_DIR) + "/" + relative; }

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
