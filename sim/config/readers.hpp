// Readers from a YAML node, for files that embed or refer to each other (a scenario reads its
// hardware and networks into the same diagnostics). Problems go to the node's document.
#pragma once

#include <cstdint>
#include <optional>

#include "config/yaml.hpp"
#include "model/hardware.hpp"
#include "model/network.hpp"

namespace framesim::config {

model::HardwareSpec read_hardware(const Node& root);
model::NetworkSpec read_network(const Node& root);

/// Shape dimensions and op parameters are at most 2^31 - 1: far beyond any real network, and small enough
/// that products of a few of them stay exact in 64-bit arithmetic.
inline constexpr std::int64_t kMaxParam = 2147483647;

/// The optional key `fusion` (auto, explicit or none) of a network file or of a scenario's network entry.
std::optional<model::FusionMode> read_fusion(const MapReader& m);

}  // namespace framesim::config
