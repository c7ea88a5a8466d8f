// The figures other commands take from a run's summary.json, as one typed record, and its one reader.
//
// `framesim run` writes summary.json (run_analysis.cpp); `sweep`, `map` and their reports read a run's figures
// through read_run_summary and nothing else.
// The keys are still spelled twice: here and in run_analysis.cpp, which writes summary.json itself; compare, the
// HTML report and output_guard read summary.json by their own keys.
//
// Older summaries: a part that a summary of any framesim version has (scenario.deadline_s, windows.all and
// windows.sustained with their frames, misses and latency counts, energy, thermal.throttled_fraction)
// is required, and its absence is refused with the file and the key path (exit 2). Parts added later, or absent
// when nothing was measured (a statistic of zero samples has only its count; staleness, why.sustained_tail,
// slowdown, run.wall_s and
// run.cpu_s, thermal.max_C), are optional in the record.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "stats.hpp"

namespace framesim::analysis {

/// One statistic block of summary.json (see summary_json): only `count` when it holds no samples.
struct StatBlock {
  std::int64_t count = 0;
  std::optional<double> mean, p50, p90, p99, p99_9, max;
  std::optional<double> p99_ci_lo, p99_ci_hi;  // the p99's confidence interval ends, when bounded
  std::vector<std::string> few_samples;        // statistics with too few samples to bound from above
  bool p99_few_samples() const { return std::find(few_samples.begin(), few_samples.end(), "p99") != few_samples.end(); }
};

/// A measurement window (windows.all, windows.sustained): its frames, misses and latencies.
struct WindowSummary {
  std::int64_t frames = 0;
  Misses misses;
  double miss_rate = 0;
  StatBlock latency_s;
  std::map<std::string, StatBlock> stage_latency_s;  // per stage ("stages"/<name>/"latency_s"), when given
};

struct RunSummary {
  std::string file;  // where it was read from, for messages
  double deadline_s = 0;
  WindowSummary all, sustained;
  // The verdict on the worst path (absent on runs without one).
  std::optional<std::string> at_confidence;
  std::optional<double> sustained_p99_s, estimate_end_to_end_s, bound_end_to_end_s;
  std::optional<std::int64_t> longest_miss_run;
  std::map<std::string, StatBlock> staleness_time_s;  // per control task
  StatBlock energy_per_frame_J;
  double mean_power_W = 0;
  double throttled_fraction = 0;
  bool has_thermal_model = false;
  std::optional<double> max_temperature_C;
  // "run": how long the run took; only in what `framesim run --json` prints (a sweep point's stdout), not in the
  // run folder's summary.json.
  std::optional<double> wall_s, cpu_s;
  std::optional<nlohmann::json> sustained_tail;  // why.sustained_tail, kept whole (the map report shows it)
  std::optional<nlohmann::json> slowdown;        // per stage, kept whole
};

/// Reads the record from a parsed summary.json; `file` names it in messages. A missing required key or a value of
/// the wrong type is a UserError naming the file and the key path (e.g. "windows/all/latency_s/p99").
RunSummary read_run_summary(const nlohmann::json& summary, const std::string& file);
/// Reads and parses `file` (a JSON syntax error names its line and column).
RunSummary read_run_summary_file(const std::string& file);

/// The JSON document in `file`; a syntax error is a core::UserError at its line and column ("not valid JSON: ...").
nlohmann::json read_json_file(const std::string& file);

}  // namespace framesim::analysis
