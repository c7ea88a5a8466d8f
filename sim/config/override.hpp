// A change to a key path of a scenario, the one config type that commands and sweeps hold without reading YAML
// (config/yaml.hpp, which exposes yaml-cpp, stays inside config/).
#pragma once

#include <string>

#include "core/error.hpp"

namespace framesim::config {

/// A change to a key path of a scenario or a file it refers to, written somewhere (a sweep axis, --set).
/// Paths: scenario keys as they are ("stages.detector.unit", "thermal.ambient", "networks.detector.precision");
/// "hardware.<path>" inside the hardware file; "network.<name>.<path>" inside the network file named <name>.
struct Override {
  std::string path;
  std::string value_yaml;
  core::SourceLocation origin;
};

}  // namespace framesim::config
