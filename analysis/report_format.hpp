// Formatting shared by the text, HTML and compare reports: a percentile of a statistic block with its interval
// and a mark when it rests on too few samples.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_details.hpp"
#include "stat_block.hpp"

namespace framesim::analysis {

/// The number at `key` of the object `j` (a sweep point's metrics); NaN when absent or null.
double number_at(const nlohmann::json& j, const char* key);
/// The percentile `which` (&StatBlock::p99) of a statistic in seconds, with "*" when too few samples bound it; "-"
/// when empty.
std::string format_percentile_s(const StatBlock& s, std::optional<double> StatBlock::*which);
/// Its interval: "[30.1 ms, 33.4 ms]", an open end written "?"; "-" when the statistic has none.
std::string format_interval_s(const StatBlock& s, std::optional<double> StatBlock::*which);
/// A table row of a latency statistic: name, n, p50, p90, p99, its interval, p99.9, max, mean ("-" when empty).
std::vector<std::string> percentile_cells(const std::string& name, const StatBlock& s);
/// The header of those rows (the first column titled `first`).
std::vector<std::string> percentile_header(const std::string& first);
/// The simulation's time resolution: SimGrid's timing precision (its `precision/timing`, 1e-9 s by default).
/// Differences of simulated times below it are rounding, not time.
inline constexpr double kTimeResolution_s = 1e-9;
/// A time that is a difference of simulated times, rounded to kTimeResolution_s ("-47.29 fs" reads "0 s").
std::string format_resolved_s(double seconds);
/// The footnote explaining "*" and the intervals.
std::string percentile_footnote();
/// The verdict at the confidence as a sentence ("met at 95 % confidence: ..."), from a verdict's at_confidence, its
/// sustained p99 and the confidence (empty without them: no sample in the sustained window).
std::string confidence_sentence(const std::optional<std::string>& at_confidence,
                                const std::optional<QuantileDetails>& sustained_p99,
                                const std::optional<double>& confidence);

}  // namespace framesim::analysis
