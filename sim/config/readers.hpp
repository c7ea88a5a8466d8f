// Readers from a YAML node, for files that embed or refer to each other (a scenario reads its
// hardware and networks into the same diagnostics). Problems go to the node's document.
#pragma once

#include "config/yaml.hpp"
#include "model/hardware.hpp"
#include "model/network.hpp"

namespace framesim::config {

model::HardwareSpec read_hardware(const Node& root);
model::NetworkSpec read_network(const Node& root);

}  // namespace framesim::config
