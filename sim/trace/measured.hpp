// Measured per-layer times in: a plain CSV of layer,time (see traces/README.md for the formats).
#pragma once

#include <filesystem>
#include <vector>

#include "model/budget.hpp"

namespace framesim::trace {

/// Reads measured layer times. Plain CSV: a header naming a layer column (layer, name or kernel)
/// and one time column: `time` with units in each cell ("84 us"), or time_s / time_ms / time_us / time_ns
/// with bare numbers. Throws core::UserError (file:line:column) on any problem.
std::vector<model::Measurement> read_measurements(const std::filesystem::path& path);

/// The same from text; `display_path` names it in messages.
std::vector<model::Measurement> parse_measurements_csv(const std::string& text, const std::string& display_path);

}  // namespace framesim::trace
