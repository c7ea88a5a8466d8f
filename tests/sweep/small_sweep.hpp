// A small sweep for tests (sweeps and their reports): 12 points, about half a second each, on the seed device.
#pragma once

#include <string>

#include <fmt/format.h>

#include "test_support.hpp"

namespace framesim::testing {

/// Writes scenario.yaml and sweep.yaml (3 bandwidths x 2 precisions x 2 camera rates) into the scratch folder.
inline void write_small_sweep(const Scratch& s, const std::string& mode = "grid") {
  s.write("scenario.yaml", fmt::format(R"(name: tiny
hardware: {}
networks: {{net: {}}}
duration: "0.6 s"
warmup: "0.1 s"
deadline: "10 ms"
sensors:
  camera: {{rate: "30 Hz"}}
stages:
  model: {{unit: gpu, inputs: [camera], network: net}}
)",
                                       source_path("hardware/seed_reference.yaml"),
                                       source_path("scenarios/networks/mobilenet_v2.yaml")));
  s.write("sweep.yaml", fmt::format(R"(name: tiny-sweep
scenario: scenario.yaml
mode: {}
axes:
  hardware.memory.dram.bandwidth: ["25 GB/s", "50 GB/s", "100 GB/s"]
  networks.net.precision: [fp32, fp16]
  sensors.camera.rate: ["30 Hz", "60 Hz"]
)",
                                    mode));
}

}  // namespace framesim::testing
