// Sweep files (scenarios/sweeps/*.yaml): a base scenario and axes over key paths of the scenario, its
// hardware or its networks, combined as a grid, zipped, or sampled (Latin hypercube). See scenarios/README.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/override.hpp"
#include "core/enum_table.hpp"
#include "core/units.hpp"

namespace framesim::config {

/// Most points a sweep may have (README "Limits"); every point is loaded and validated before any runs.
inline constexpr std::size_t kMaxSweepPoints = 10'000;

/// One axis: a key path and its values as YAML text, each with where it was written.
struct SweepAxis {
  std::string path;
  std::vector<std::string> values;            // YAML text of each value (a list axis)
  std::vector<std::string> labels;            // each value as tables show it
  std::vector<core::SourceLocation> origins;  // where each value was written
  core::SourceLocation origin;                // the axis' key in the sweep file
  // A range axis (Latin hypercube only): sampled between low and high, in SI units of `dimension`.
  bool range = false;
  double low = 0, high = 0;
  bool log_scale = false;
  bool integer = false;
  std::optional<core::Dimension> dimension;  // none: a plain number
};

enum class SweepMode { grid, zip, latin_hypercube };
/// The names of sweep modes (`mode`) and of SweepAxis::log_scale (`axes.<key_path>.scale`).
inline constexpr auto kSweepModes = core::enum_table<SweepMode>(
    {{SweepMode::grid, "grid"}, {SweepMode::zip, "zip"}, {SweepMode::latin_hypercube, "latin_hypercube"}});
inline constexpr auto kAxisScales = core::enum_table<bool>({{false, "linear"}, {true, "log"}});

struct SweepSpec {
  std::string name;
  std::string source_file;
  std::filesystem::path scenario;       // resolved against the sweep file's folder
  std::optional<std::string> duration;  // "--duration" for every point
  SweepMode mode = SweepMode::grid;
  int samples = 0;         // Latin hypercube
  std::uint64_t seed = 1;  // Latin hypercube sampling
  std::vector<SweepAxis> axes;
};

/// One point of a sweep: its index and the overrides it applies.
struct SweepPoint {
  std::size_t index = 0;
  std::vector<Override> overrides;
  std::vector<std::string> labels;  // the value of each axis as shown in tables
};

/// Loads a sweep file (not the scenario: the points are validated when expanded). Throws core::UserError.
SweepSpec load_sweep(const std::filesystem::path& path);

/// Every point of the sweep, in a fixed order (grid: the last axis varies fastest).
std::vector<SweepPoint> expand_sweep(const SweepSpec& sweep);

}  // namespace framesim::config
