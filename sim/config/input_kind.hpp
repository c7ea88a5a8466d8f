// Which kind of framesim input a YAML file is, from its top-level keys (for `framesim validate FILE`).
#pragma once

#include <filesystem>
#include <string>

namespace framesim::config {

/// "runtime" (runtime at the top level), "hardware" (units or memory), "network" (layers), "sweep" (axes) or "scenario"
/// (stages or sensors). Throws core::UserError naming the file when none of those keys is there, or when it is not
/// YAML.
std::string input_kind(const std::filesystem::path& path);

}  // namespace framesim::config
