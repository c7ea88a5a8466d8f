// The parts of a run's summary.json that the run's own report.html and terminal summary show beyond RunSummary's
// figures, as typed records: each record names its keys once (its `fields`, see summary_fields.hpp), and the same
// declaration writes them (write_run_summary, when RunSummary::details is set) and reads them (read_run_details).
//
// The run reads its summary back before showing it (read_back): the report and the terminal summary read the
// document through these declarations and RunSummary's, never by a key of their own, so a key its module writes
// under another name is refused (exit 2, the file and the key's path) instead of shown as missing.
// Not read by read_run_summary (compare, sweep and map need none of it, and read summaries of older versions).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "stat_block.hpp"

namespace framesim::analysis {

/// "run": what the simulation did.
struct RunTotalsDetails {
  double simulated_s = 0;
  std::int64_t kernels = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("simulated_s", s.simulated_s);
    io("kernels", s.kernels);
  }
};

/// A stage's times in a window (windows.<window>.stages.<stage>; its latency_s is WindowSummary's).
struct StageTimes {
  StatBlock wait_s, service_s, blocked_s, response_s;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("wait_s", s.wait_s);
    io("service_s", s.service_s);
    io("blocked_s", s.blocked_s);
    io("response_s", s.response_s);
  }
};

/// A window's bounds, stages, temperature and clocks (its frames, misses and latency: WindowSummary).
struct WindowDetails {
  double from_s = 0, to_s = 0;
  std::map<std::string, StageTimes> stages;
  std::optional<double> mean_temperature_C;  // null without a thermal sample
  std::map<std::string, double> mean_frequency_Hz;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("from_s", s.from_s);
    io("to_s", s.to_s);
    io("stages", s.stages);
    io.nullable("mean_temperature_C", s.mean_temperature_C);
    io("mean_frequency_Hz", s.mean_frequency_Hz);
  }
};

struct WindowsDetails {
  WindowDetails all, cold, sustained;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("all", s.all);
    io("cold", s.cold);
    io("sustained", s.sustained);
  }
};

/// A quantile with its interval (verdict.sustained_p99, paths[].verdict.sustained_p99).
struct QuantileDetails {
  double p = 0, value = 0;
  std::uint64_t count = 0;
  StatBlock::Interval ci;
  bool few_samples = false;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("p", s.p);
    io("value", s.value);
    io("count", s.count);
    io("ci", s.ci);
    io("few_samples", s.few_samples);
  }
};

/// A path's verdict: empty without a sample in the sustained window (its sustained p99: PathSummary).
struct PathVerdictDetails {
  std::optional<QuantileDetails> sustained_p99;
  std::optional<bool> meets_deadline_at_p99;
  std::optional<std::string> at_confidence;
  std::optional<double> confidence;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("sustained_p99", s.sustained_p99);
    io("meets_deadline_at_p99", s.meets_deadline_at_p99);
    io("at_confidence", s.at_confidence);
    io("confidence", s.confidence);
  }
};

/// One path of "paths", in the order of RunSummary::paths (its name, miss rate and sustained p99 are there).
struct PathDetails {
  bool via_side_input = false;
  double deadline_s = 0;
  std::int64_t samples = 0, late = 0, dropped = 0, missed = 0;
  StatBlock latency_s, data_age_s;
  PathVerdictDetails verdict;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("via_side_input", s.via_side_input);
    io("deadline_s", s.deadline_s);
    io("samples", s.samples);
    io("late", s.late);
    io("dropped", s.dropped);
    io("missed", s.missed);
    io("latency_s", s.latency_s);
    io("data_age_s", s.data_age_s);
    io("verdict", s.verdict);
  }
};

/// A control task's staleness beyond its time (RunSummary::staleness_time_s).
struct StalenessDetails {
  std::string reads;
  double rate_Hz = 0;
  std::optional<double> speed_mps;
  std::optional<StatBlock> distance_m;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("reads", s.reads);
    io("rate_Hz", s.rate_Hz);
    io("speed_mps", s.speed_mps);
    io("distance_m", s.distance_m);
  }
};

struct EnergyBreakdown {
  std::map<std::string, double> compute, memory;  // per unit, per memory level
  double static_J = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("compute", s.compute);
    io("memory", s.memory);
    io("static", s.static_J);
  }
};

/// "energy" beyond the energy per frame and the mean power (RunSummary).
struct EnergyDetails {
  EnergyBreakdown breakdown_per_frame_J;
  double frames_J = 0, tasks_J = 0, background_J = 0, static_J = 0, total_J = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("breakdown_per_frame_J", s.breakdown_per_frame_J);
    io("frames_J", s.frames_J);
    io("tasks_J", s.tasks_J);
    io("background_J", s.background_J);
    io("static_J", s.static_J);
    io("total_J", s.total_J);
  }
};

/// "thermal" beyond the throttled fraction and the maximum (RunSummary).
struct ThermalDetails {
  double initial_C = 0;
  std::optional<double> trip_C;   // with a thermal model
  std::optional<double> final_C;  // null without a governor tick
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("initial_C", s.initial_C);
    io("trip_C", s.trip_C);
    io.nullable("final_C", s.final_C);
  }
};

/// Little's law over the run.
struct LittleDetails {
  double L_frames = 0, lambda_per_s = 0, W_s = 0, relative_error = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("L_frames", s.L_frames);
    io("lambda_per_s", s.lambda_per_s);
    io("W_s", s.W_s);
    io("relative_error", s.relative_error);
  }
};

/// A stage with a slice, in the sustained window against its slice.
struct StageSlice {
  double slice_s = 0, estimate_alone_s = 0, bound_alone_s = 0, cold_mean_s = 0, sustained_mean_s = 0,
         sustained_p99_s = 0;
  bool fits = false;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("slice_s", s.slice_s);
    io("estimate_alone_s", s.estimate_alone_s);
    io("bound_alone_s", s.bound_alone_s);
    io("cold_mean_s", s.cold_mean_s);
    io("sustained_mean_s", s.sustained_mean_s);
    io("sustained_p99_s", s.sustained_p99_s);
    io("fits", s.fits);
  }
};

/// The worst path (verdict.worst_path).
struct WorstPath {
  std::string name, at_confidence;
  double sustained_p99_s = 0, deadline_s = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("name", s.name);
    io("sustained_p99_s", s.sustained_p99_s);
    io("deadline_s", s.deadline_s);
    io("at_confidence", s.at_confidence);
  }
};

/// "verdict" beyond RunSummary's (at_confidence, sustained_p99_s, the estimate and the bound).
struct VerdictDetails {
  std::optional<QuantileDetails> sustained_p99;
  std::optional<double> confidence;
  std::map<std::string, StageSlice> stage_slices;
  std::optional<WorstPath> worst_path;  // null without a path with a sustained sample
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("sustained_p99", s.sustained_p99);
    io("confidence", s.confidence);
    io("stage_slices", s.stage_slices);
    io.nullable("worst_path", s.worst_path);
  }
};

/// "utilisation": each unit's busy fraction by stage or task (its own: RunSummary::unit_busy), each memory level's
/// utilisation, each stage's queue.
struct UnitUse {
  std::map<std::string, double> by;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("by", s.by);
  }
};
struct LevelUse {
  double utilisation = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("utilisation", s.utilisation);
  }
};
struct QueueUse {
  double mean = 0;
  int max = 0, capacity = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("mean", s.mean);
    io("max", s.max);
    io("capacity", s.capacity);
  }
};
struct UtilisationDetails {
  std::map<std::string, UnitUse> units;
  std::map<std::string, LevelUse> memory;
  std::map<std::string, QueueUse> queues;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("units", s.units);
    io("memory", s.memory);
    io("queues", s.queues);
  }
};

/// A stage's mean slowdown against running alone (analysis/slowdown.hpp).
struct StageSlowdown {
  double slowdown = 0, bus = 0, handoff = 0, wait = 0, alone_s = 0, item_s = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("slowdown", s.slowdown);
    io("bus", s.bus);
    io("handoff", s.handoff);
    io("wait", s.wait);
    io("alone_s", s.alone_s);
    io("item_s", s.item_s);
  }
};

/// The parts of a latency (analysis/breakdown.hpp), as a worst frame and each step of its path write them.
struct LatencyParts {
  double queue_s = 0, blocked_s = 0, floor_s = 0, throttling_s = 0, bus_s = 0, variability_s = 0, gap_s = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("queue_s", s.queue_s);
    io("blocked_s", s.blocked_s);
    io("floor_s", s.floor_s);
    io("throttling_s", s.throttling_s);
    io("bus_s", s.bus_s);
    io("variability_s", s.variability_s);
    io("gap_s", s.gap_s);
  }
};

/// A stage on a worst frame's critical path: its parts beside its name, unit and times.
struct CriticalStep {
  std::string stage, unit;
  double start_s = 0, end_s = 0;
  LatencyParts parts;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("stage", s.stage);
    io("unit", s.unit);
    io("start_s", s.start_s);
    io("end_s", s.end_s);
    LatencyParts::fields(io, s.parts);  // in the step's own object
  }
};

struct WorstFrame {
  std::int64_t frame = 0;
  double capture_s = 0, latency_s = 0;
  LatencyParts parts;
  std::vector<CriticalStep> path;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("frame", s.frame);
    io("capture_s", s.capture_s);
    io("latency_s", s.latency_s);
    io("parts", s.parts);
    io("path", s.path);
  }
};

struct TailStage {
  double mean_on_path_s = 0;
  std::int64_t dominant_in_frames = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("mean_on_path_s", s.mean_on_path_s);
    io("dominant_in_frames", s.dominant_in_frames);
  }
};

/// The frames at or above p99: their mean parts (by part name, "queue_s"...), each stage on their critical path.
struct TailDetails {
  std::int64_t frames = 0;
  double p99_s = 0, critical_share = 0;
  std::string critical_stage;
  std::map<std::string, double> mean_parts;
  std::map<std::string, TailStage> stages;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("frames", s.frames);
    io("p99_s", s.p99_s);
    io("critical_stage", s.critical_stage);
    io("critical_share", s.critical_share);
    io("mean_parts", s.mean_parts);
    io("stages", s.stages);
  }
};

/// "why" (its sustained tail: RunSummary::sustained_tail, kept whole).
struct WhyDetails {
  std::string method;
  std::optional<TailDetails> tail;
  std::vector<WorstFrame> worst_frames;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("method", s.method);
    io("tail", s.tail);
    io("worst_frames", s.worst_frames);
  }
};

/// A periodic task; the unit, jobs, misses and response times only for one that runs on a unit.
struct TaskDetails {
  double deadline_s = 0;
  std::optional<std::string> unit;
  std::optional<std::int64_t> jobs, missed;
  std::optional<StatBlock> response_s;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("deadline_s", s.deadline_s);
    io("unit", s.unit);
    io("jobs", s.jobs);
    io("missed", s.missed);
    io("response_s", s.response_s);
  }
};

struct ChainDetails {
  std::vector<std::string> path;
  StatBlock data_age_s, reaction_s;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("path", s.path);
    io("data_age_s", s.data_age_s);
    io("reaction_s", s.reaction_s);
  }
};

/// A stage's measured frames against its simulated service times.
struct MeasuredFramesDetails {
  std::string file;
  std::uint64_t frames = 0;
  StatBlock measured_s, simulated_service_s;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("file", s.file);
    io("frames", s.frames);
    io("measured_s", s.measured_s);
    io("simulated_service_s", s.simulated_service_s);
  }
};

struct InputFile {
  std::string file, sha256;
  std::uint64_t bytes = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("file", s.file);
    io("bytes", s.bytes);
    io("sha256", s.sha256);
  }
};

struct ProvenanceDetails {
  std::string framesim_version;
  std::vector<std::string> command_line;
  std::vector<InputFile> inputs;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("framesim_version", s.framesim_version);
    io("command_line", s.command_line);
    io("inputs", s.inputs);
  }
};

/// "frames" beyond its counts (RunSummary's all window and longest miss run).
struct FramesDetails {
  std::map<std::string, std::int64_t> drops_by;  // "stage: reason" -> frames
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("drops_by", s.drops_by);
  }
};

/// The whole document's detail parts, by their top-level keys.
struct RunDetails {
  RunTotalsDetails run;
  FramesDetails frames;
  WindowsDetails windows;
  std::vector<PathDetails> paths;
  std::map<std::string, StalenessDetails> staleness;  // per control task, as RunSummary::staleness_time_s
  EnergyDetails energy;
  ThermalDetails thermal;
  LittleDetails little;
  VerdictDetails verdict;
  UtilisationDetails utilisation;
  std::optional<std::map<std::string, StageSlowdown>> slowdown;
  WhyDetails why;
  std::map<std::string, TaskDetails> tasks;
  std::map<std::string, ChainDetails> chains;
  std::map<std::string, MeasuredFramesDetails> measured_frames;
  std::optional<ProvenanceDetails> provenance;  // null when the run was given none
  std::vector<std::string> warnings, notes;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("run", s.run);
    io("frames", s.frames);
    io("windows", s.windows);
    io("paths", s.paths);
    io("staleness", s.staleness);
    io("energy", s.energy);
    io("thermal", s.thermal);
    io("little", s.little);
    io("verdict", s.verdict);
    io("utilisation", s.utilisation);
    io("slowdown", s.slowdown);
    io("why", s.why);
    io("tasks", s.tasks);
    io("chains", s.chains);
    io("measured_frames", s.measured_frames);
    io.nullable("provenance", s.provenance);
    io("warnings", s.warnings);
    io("notes", s.notes);
  }
};

/// The detail parts of a summary.json document (the document itself, e.g. write_run_summary's).
RunDetails read_run_details(const nlohmann::json& summary, const std::string& file);
/// Writes `d` into `summary` (merging: keys no record types are kept).
void write_run_details(nlohmann::json& summary, const RunDetails& d);

}  // namespace framesim::analysis
