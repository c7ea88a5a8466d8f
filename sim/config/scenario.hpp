// Scenario YAML (scenarios/*.yaml) -> ScenarioSpec, with its hardware and networks resolved relative
// to the scenario file. See scenarios/README.md for the schema.
#pragma once

#include <filesystem>

#include "config/yaml.hpp"
#include "model/scenario.hpp"

namespace framesim::config {

/// Loads and validates a scenario and every file it refers to, after applying `overrides` (see Override for the
/// key paths). Throws core::UserError listing every problem.
model::ScenarioSpec load_scenario(const std::filesystem::path& path, const std::vector<Override>& overrides = {});

}  // namespace framesim::config
