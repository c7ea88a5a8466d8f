// Network YAML (scenarios/networks/*.yaml) -> NetworkSpec. See scenarios/networks/README.md.
#pragma once

#include <filesystem>
#include <string>

#include "model/network.hpp"

namespace framesim::config {

/// Loads and validates a network file. Throws core::UserError listing every problem found.
model::NetworkSpec load_network(const std::filesystem::path& path);
/// The same from text (tests); `display_path` names it in messages.
model::NetworkSpec parse_network(const std::string& text, const std::string& display_path);

}  // namespace framesim::config
