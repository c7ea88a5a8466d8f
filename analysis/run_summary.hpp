// A run's summary.json as one typed record: its one writer and its one reader.
//
// `framesim run` writes summary.json through write_run_summary, and `compare`, `sweep`, `map` and their reports
// read a run's figures through read_run_summary: every key typed here is spelled once, in run_summary.cpp.
// The run's own report.html and terminal summary read the record as read back from what was written (read_back):
// these figures, and the detail parts only they show (`details`, run_details.hpp), never the document by a key.
// The parts of summary.json that no other command reads field by field (the per-stage wait and service
// statistics, utilisation, tasks, chains, why, provenance's command line...) are built by their own modules and
// kept whole in `rest`; the typed keys are written over it. Documented keys: scenarios/README.md, "summary.json's
// typed keys" (a test compares that list with what the writer writes).
//
// Older summaries: a part that a summary of any framesim version has (scenario.deadline_s, windows.all and
// windows.sustained with their frames, misses and latency counts, energy, thermal.throttled_fraction)
// is required, and its absence is refused with the file and the key path (exit 2). Parts added later, or absent
// when nothing was measured (a statistic of zero samples has only its count; staleness, why.sustained_tail,
// slowdown, run.wall_s and run.cpu_s, thermal.max_C, the scenario's name, seed and duration), are optional in
// the record.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_details.hpp"
#include "stat_block.hpp"
#include "stats.hpp"

namespace framesim::analysis {

/// summary.json's "scenario": what ran.
struct ScenarioSummary {
  std::optional<std::string> name, file, hardware;
  std::optional<std::uint64_t> seed;
  std::optional<double> duration_s, warmup_s;
  double deadline_s = 0;
};

/// One sensor-to-sink path of summary.json's "paths" (read; written by PathTracker).
struct PathSummary {
  std::string name;
  double miss_rate = 0;
  std::optional<double> sustained_p99_s;
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
  ScenarioSummary scenario;
  WindowSummary all, sustained;  // written again as "frames": all's counts and misses
  std::optional<WindowSummary> cold;
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
  // Read only (written whole by their own modules, in `rest`): the paths; each unit's busy fraction
  // (utilisation.units.<unit>.busy); the provenance's overrides ("path=value") and inputs (file -> SHA-256).
  std::vector<PathSummary> paths;
  std::map<std::string, double> unit_busy;
  std::vector<std::string> overrides;
  std::map<std::string, std::string> input_sha256;
  nlohmann::json rest = nlohmann::json::object();  // everything else, kept whole
  // What the run's report and terminal summary show beyond the above: written over `rest` when set; read by
  // read_back, not by read_run_summary.
  std::optional<RunDetails> details;
};

/// The summary.json document of `s`: `rest` with every typed key written over it.
nlohmann::json write_run_summary(const RunSummary& s);

/// Reads the record from a parsed summary.json; `file` names it in messages. A missing required key or a value of
/// the wrong type is a UserError naming the file and the key path (e.g. "windows/all/latency_s/p99").
/// `rest` is the whole document.
RunSummary read_run_summary(const nlohmann::json& summary, const std::string& file);
/// The record `s` as read back from what write_run_summary writes of it, with its details: what the run's report
/// and terminal summary show. A key either reads under a name the writer does not write is refused as
/// read_run_summary refuses it; so is a figure they show that an older summary may lack (the estimate and bound
/// end to end, the longest run of misses, the maximum temperature). `file` names the document in messages.
RunSummary read_back(const RunSummary& s, const std::string& file);
/// Reads and parses `file` (a JSON syntax error names its line and column).
RunSummary read_run_summary_file(const std::string& file);

/// The JSON document in `file`; a syntax error is a core::UserError at its line and column ("not valid JSON: ...").
nlohmann::json read_json_file(const std::string& file);

}  // namespace framesim::analysis
