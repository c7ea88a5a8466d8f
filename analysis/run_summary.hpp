// A run's summary.json as one typed record: its one writer and its one reader.
//
// `framesim run` writes summary.json through write_run_summary, and `compare`, `sweep`, `map` and their reports
// read a run's figures through read_run_summary: every key typed here is spelled once, in its record's `fields`.
// The run's own report.html and terminal summary read the record as read back from what was written (read_back):
// these figures, and the detail parts only they show (`details`, run_details.hpp), never the document by a key.
// RunSummary names its keys once, in its `fields` (summary_fields.hpp), for writing and for reading them; the
// parts no other command reads (the per-stage wait and service statistics, utilisation, tasks, chains, why...)
// are RunDetails' records, filled by their own modules. Documented keys: scenarios/README.md, "summary.json's
// typed keys" (a test compares that list with what the writer writes).
//
// Older summaries: a part that a summary of any framesim version has (scenario.deadline_s, windows.all and
// windows.sustained with their frames, misses and latency counts, energy, thermal.throttled_fraction)
// is required, and its absence is refused with the file and the key path (exit 2). Parts added later, or absent
// when nothing was measured (a statistic of zero samples has only its count; staleness, why.sustained_tail,
// slowdown, run.wall_s and run.cpu_s, thermal.max_C, the scenario's name, seed and duration), are optional in
// the record. why.sustained_tail and slowdown are read through their records (TailDetails, StageSlowdown:
// run_details.hpp), whose keys every summary that has those parts has.
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
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("name", s.name);
    io("file", s.file);
    io("hardware", s.hardware);
    io("seed", s.seed);
    io("duration_s", s.duration_s);
    io("warmup_s", s.warmup_s);
    io("deadline_s", s.deadline_s);
  }
};

/// One sensor-to-sink path of summary.json's "paths" (filled by PathTracker; its other keys: PathDetails).
struct PathSummary {
  std::string name;
  double miss_rate = 0;
  std::optional<double> sustained_p99_s;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("name", s.name);
    io("miss_rate", s.miss_rate);
    io.object_if_present("verdict", [&](auto& v) { v("sustained_p99_s", s.sustained_p99_s); });
  }
};

/// A measurement window (windows.all, windows.sustained): its frames, misses and latencies.
struct WindowSummary {
  std::int64_t frames = 0;
  Misses misses;
  double miss_rate = 0;
  StatBlock latency_s;
  std::map<std::string, StatBlock> stage_latency_s;  // per stage ("stages"/<name>/"latency_s"), when given
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("frames", s.frames);
    io("late", s.misses.late);
    io("dropped", s.misses.dropped);
    io.derived("missed", s.misses.missed(), "is not late + dropped");
    io("miss_rate", s.miss_rate);
    io("latency_s", s.latency_s);
    io.each("stages", s.stage_latency_s, "latency_s", false);
  }
};

/// How long simulating a run took: "run" in what `framesim run --json` and `--point-metrics` print, never in a run
/// folder's summary.json (which stays the same for the same inputs and seed). Empty when not measured.
struct RunTimes {
  std::optional<double> wall_s, cpu_s;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("wall_s", s.wall_s);
    io("cpu_s", s.cpu_s);
  }
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
  RunTimes times;  // "run" beside the run's totals: only in what `framesim run --json` prints
  std::optional<TailDetails> sustained_tail;  // why.sustained_tail (the map explains a mapping by it)
  std::optional<std::map<std::string, StageSlowdown>> slowdown;  // per stage (slowdown.hpp)
  std::vector<PathSummary> paths;                                // in the order of RunDetails::paths
  std::map<std::string, double> unit_busy;                       // utilisation.units.<unit>.busy
  std::optional<Provenance> provenance;                          // null when the run was given none
  nlohmann::json rest = nlohmann::json::object();                // what was read, whole; written under the typed keys
  // What the run's report and terminal summary show beyond the above: written over `rest` when set; read by
  // read_back, not by read_run_summary.
  std::optional<RunDetails> details;

  /// Each --set override as "path=value".
  std::vector<std::string> override_texts() const;
  /// Each input file's SHA-256, by file.
  std::map<std::string, std::string> input_sha256() const;

  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("scenario", s.scenario);
    io.object("windows", [&](auto& w) {
      w("all", s.all);
      w("sustained", s.sustained);
      w("cold", s.cold);
    });
    // "frames": the whole counted run, the all window's counts again.
    io.object_if_present("frames", [&](auto& f) {
      f.copy("counted", s.all.frames);
      f.copy("late", s.all.misses.late);
      f.copy("dropped", s.all.misses.dropped);
      f.copy("missed", s.all.misses.missed());
      f.copy("miss_rate", s.all.miss_rate);
      f.shown("longest_miss_run", s.longest_miss_run);
    });
    io.object_if_present("verdict", [&](auto& v) {
      v("at_confidence", s.at_confidence);
      v("sustained_p99_s", s.sustained_p99_s);
      v.shown("estimate_end_to_end_s", s.estimate_end_to_end_s);
      v.shown("bound_end_to_end_s", s.bound_end_to_end_s);
    });
    io.each("staleness", s.staleness_time_s, "time_s");
    io.object("energy", [&](auto& e) {
      e("per_frame_J", s.energy_per_frame_J);
      e("mean_power_W", s.mean_power_W);
    });
    io.object("thermal", [&](auto& t) {
      t("throttled_fraction", s.throttled_fraction);
      t.defaulted("has_thermal_model", s.has_thermal_model);
      t.shown("max_C", s.max_temperature_C);
    });
    io.object_if_present("run", [&](auto& r) { RunTimes::fields(r, s.times); });
    io.object_if_present("why", [&](auto& w) { w("sustained_tail", s.sustained_tail); });
    io("slowdown", s.slowdown);
    io.defaulted("paths", s.paths);
    io.object_if_present("utilisation", [&](auto& u) { u.each("units", s.unit_busy, "busy"); });
    io.maybe_null("provenance", s.provenance);
  }
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
/// The same, from `written`: the document write_run_summary already wrote of the record.
RunSummary read_back(const nlohmann::json& written, const std::string& file);
/// The record alone as read back from `written` (without its details or the rest of the document): the figures a
/// sweep keeps of a point, and what they are read from.
RunSummary read_back_record(const nlohmann::json& written, const std::string& file);
/// Reads and parses `file` (a JSON syntax error names its line and column).
RunSummary read_run_summary_file(const std::string& file);

/// The JSON document in `file`; a syntax error is a core::UserError at its line and column ("not valid JSON: ...").
nlohmann::json read_json_file(const std::string& file);

}  // namespace framesim::analysis
