// Formatting shared by the text, HTML and compare reports: a percentile from a summary_json() object with its
// interval and a mark when it rests on too few samples.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace framesim::analysis {

/// The number at `key` of the object `j` (a sweep point's metrics); NaN when absent or null.
double number_at(const nlohmann::json& j, const char* key);
/// The percentile `key` ("p99") of a summary in seconds, with "*" when too few samples bound it; "-" when empty.
std::string format_percentile_s(const nlohmann::json& summary, const std::string& key);
/// Its interval: "[30.1 ms, 33.4 ms]", an open end written "?"; "-" when empty.
std::string format_interval_s(const nlohmann::json& summary, const std::string& key);
/// A table row of a latency summary: name, n, p50, p90, p99, its interval, p99.9, max, mean ("-" when empty).
std::vector<std::string> percentile_cells(const std::string& name, const nlohmann::json& summary);
/// The header of those rows (the first column titled `first`).
std::vector<std::string> percentile_header(const std::string& first);
/// The simulation's time resolution: SimGrid's timing precision (its `precision/timing`, 1e-9 s by default).
/// Differences of simulated times below it are rounding, not time.
inline constexpr double kTimeResolution_s = 1e-9;
/// A time that is a difference of simulated times, rounded to kTimeResolution_s ("-47.29 fs" reads "0 s").
std::string format_resolved_s(double seconds);
/// The footnote explaining "*" and the intervals.
std::string percentile_footnote();
/// The verdict at the confidence as a sentence ("met at 95 % confidence: ..."), from summary.json's verdict.
std::string confidence_sentence(const nlohmann::json& verdict);

}  // namespace framesim::analysis
