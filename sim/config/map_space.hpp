// The search space of `framesim map`: for each stage of a scenario the units, split points, precisions and
// priorities it may take, and for each unit the clock caps it may run under (a map file, or the same given as options),
// and the scenario a mapping stands for, written out as a file of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/override.hpp"

namespace framesim::config {

/// One stage's choices. Empty lists keep what the scenario says.
struct MapStageChoices {
  std::string stage;
  std::vector<std::string> units;
  std::vector<std::string> splits;                  // layer index or name
  std::vector<core::SourceLocation> split_origins;  // each split's place in the map file (empty: an option)
  std::vector<std::string> precisions;
  std::vector<int> priorities;
  core::SourceLocation origin;
};

/// One unit's clock caps to try (map file `clock_caps.<unit>`): operating points by name or frequency, as the
/// scenario's `clock_caps.<unit>` takes them; each mapping runs the unit capped at one of them.
struct MapClockCaps {
  std::string unit;
  std::vector<std::string> points;
  std::vector<core::SourceLocation> point_origins;  // each point's place in the map file (empty: an option)
  core::SourceLocation origin;
};

struct MapSpace {
  std::string name;
  std::string source_file;  // empty: given as options
  std::string objective = "energy";
  std::size_t budget = 50;
  std::string strategy = "auto";
  std::uint64_t seed = 1;  // the genetic search's draws
  std::optional<std::string> duration;
  std::vector<MapStageChoices> stages;
  std::vector<MapClockCaps> clock_caps;
};

/// Reads a map file (problems with file, line, column and key; throws core::UserError).
MapSpace load_map_space(const std::filesystem::path& path);

/// A scenario written out: its text and, when overrides changed its hardware, the hardware file's text too.
struct WrittenScenario {
  std::string scenario;
  std::optional<std::string> hardware;  // to be written as `hardware_name` beside the scenario
};

/// The scenario at `scenario` with `overrides` applied, as YAML text for a file in `folder`: every path it
/// names (hardware, networks, traces) rewritten relative to `folder`, so the file runs where it is written.
/// Overrides of "hardware.PATH" go into a copy of its hardware file, named `hardware_name` in `folder`.
/// `header` lines are written first as comments. "network.NAME.PATH" overrides are not supported (an error).
WrittenScenario scenario_with_overrides(const std::filesystem::path& scenario, const std::vector<Override>& overrides,
                                        const std::filesystem::path& folder, const std::vector<std::string>& header,
                                        const std::string& hardware_name);

}  // namespace framesim::config
