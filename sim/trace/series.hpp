// Time series in: sensor timestamp logs, background traffic over time, ambient temperature over time.
// A CSV with a header. The time column is `time` (a unit in every cell: "12.5 ms"), or `time_s`, `time_ms`,
// `time_us`, `time_ns`, `timestamp_ns` (bare numbers); times are taken relative to the first row, so absolute
// clocks (a camera's epoch nanoseconds) replay from zero. A value column, when asked for, is named by the caller.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/units.hpp"

namespace framesim::trace {

struct SeriesPoint {
  double time_s = 0;
  double value = 0;  // in SI units (when the series has a value)
};

/// What a value column may be called: `name` with units in every cell, or `name_unit` with bare numbers.
struct ValueColumn {
  std::string name;                                  // e.g. "rate"
  core::Dimension dimension;                         // e.g. BytesPerSecond
  std::vector<std::pair<std::string, double>> bare;  // e.g. {"rate_Bps", 1}, {"rate_GBps", 1e9}
  bool non_negative = false;                         // a negative value is refused at its row (a rate)
};

/// Reads a series. Times must not decrease. Throws core::UserError (file:line:column) on any problem.
std::vector<SeriesPoint> read_series(const std::filesystem::path& path, const std::optional<ValueColumn>& value);

/// The same from text; `display_path` names it in messages.
std::vector<SeriesPoint> parse_series(const std::string& text, const std::string& display_path,
                                      const std::optional<ValueColumn>& value);

}  // namespace framesim::trace
