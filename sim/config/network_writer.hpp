// NetworkSpec -> network YAML (the format of scenarios/networks/): what `framesim import -o` writes.
#pragma once

#include <string>
#include <vector>

#include "model/network.hpp"

namespace framesim::config {

/// The network as YAML that load_network() reads back into the same layers, shapes, ops and bytes.
/// `header` lines become comments at the top (provenance, warnings).
std::string network_to_yaml(const model::NetworkSpec& net, const std::vector<std::string>& header = {});

}  // namespace framesim::config
