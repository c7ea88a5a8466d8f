// Scenario YAML (scenarios/*.yaml) -> ScenarioSpec, with its hardware and networks resolved relative
// to the scenario file. See scenarios/README.md for the schema.
#pragma once

#include <filesystem>

#include "model/scenario.hpp"

namespace framesim::config {

/// Loads and validates a scenario and every file it refers to. Throws core::UserError listing every problem.
model::ScenarioSpec load_scenario(const std::filesystem::path& path);

}  // namespace framesim::config
