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
#include "stats.hpp"

namespace framesim::analysis {

/// "run": what the simulation did.
struct RunTotalsDetails {
  double simulated_s = 0;
  std::int64_t kernels = 0;
  std::int64_t frames_captured = 0, activities = 0, preemptions = 0;
  bool fast_path = false;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("simulated_s", s.simulated_s);
    io("frames_captured", s.frames_captured);
    io("kernels", s.kernels);
    io("activities", s.activities);
    io("fast_path", s.fast_path);
    io("preemptions", s.preemptions);
  }
};

/// A stage's times in a window (windows.<window>.stages.<stage>; its latency_s is WindowSummary's).
struct StageTimes {
  StatBlock wait_s, service_s, blocked_s, response_s;
  std::optional<std::int64_t> slice_missed;  // a stage with a slice: responses beyond it
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("wait_s", s.wait_s);
    io("service_s", s.service_s);
    io("blocked_s", s.blocked_s);
    io("response_s", s.response_s);
    io("slice_missed", s.slice_missed);
  }
};

/// A window's bounds, stages, temperature and clocks (its frames, misses and latency: WindowSummary).
struct WindowDetails {
  double from_s = 0, to_s = 0;
  std::map<std::string, StageTimes> stages;
  std::optional<double> mean_temperature_C;  // null without a thermal sample
  std::map<std::string, double> mean_frequency_Hz;
  std::int64_t completed = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("from_s", s.from_s);
    io("to_s", s.to_s);
    io("completed", s.completed);
    io("stages", s.stages);
    io.nullable("mean_temperature_C", s.mean_temperature_C);
    io("mean_frequency_Hz", s.mean_frequency_Hz);
  }
};

/// Windows a shortened run (--duration) scaled to fit (the scenario's lengths, 0 for automatic).
struct ScaledWindows {
  double scenario_cold_s = 0, scenario_sustained_s = 0;
  double factor = 1;
  std::string note;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("scenario_cold_s", s.scenario_cold_s);
    io("scenario_sustained_s", s.scenario_sustained_s);
    io("factor", s.factor);
    io("note", s.note);
  }
};

struct WindowsDetails {
  WindowDetails all, cold, sustained;
  std::optional<ScaledWindows> scaled;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("all", s.all);
    io("cold", s.cold);
    io("sustained", s.sustained);
    io("scaled", s.scaled);
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
  std::optional<double> deadline_s, speedup_needed;
  std::optional<std::int64_t> sustained_samples, sustained_missed;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("sustained_p99", s.sustained_p99);
    io("deadline_s", s.deadline_s);
    io("meets_deadline_at_p99", s.meets_deadline_at_p99);
    io("speedup_needed", s.speedup_needed);
    io("confidence", s.confidence);
    io("at_confidence", s.at_confidence);
    io("sustained_samples", s.sustained_samples);
    io("sustained_missed", s.sustained_missed);
  }
};

/// One path of "paths", in the order of RunSummary::paths (its name, miss rate and sustained p99 are there).
struct PathDetails {
  bool via_side_input = false;
  double deadline_s = 0;
  std::int64_t samples = 0, late = 0, dropped = 0, missed = 0;
  StatBlock latency_s, data_age_s;
  PathVerdictDetails verdict;
  std::string sensor, sink;
  std::vector<std::string> stages;
  std::int64_t delivered = 0, undelivered_at_end = 0;
  StatBlock sustained_latency_s;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("sensor", s.sensor);
    io("sink", s.sink);
    io("stages", s.stages);
    io("delivered", s.delivered);
    io("undelivered_at_end", s.undelivered_at_end);
    io("sustained_latency_s", s.sustained_latency_s);
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
  std::int64_t primary_frames = 0;  // the primary sensor's over the whole run, counted or not (at least 1)
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("primary_frames", s.primary_frames);
    io("breakdown_per_frame_J", s.breakdown_per_frame_J);
    io("frames_J", s.frames_J);
    io("tasks_J", s.tasks_J);
    io("background_J", s.background_J);
    io("static_J", s.static_J);
    io("total_J", s.total_J);
  }
};

/// "thermal" beyond the throttled fraction and the maximum (RunSummary).
/// Seconds a unit spent at one frequency.
struct FrequencyTime {
  double frequency_Hz = 0, seconds = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("frequency_Hz", s.frequency_Hz);
    io("seconds", s.seconds);
  }
};

struct ThermalDetails {
  double initial_C = 0;
  std::optional<double> trip_C;                // with a thermal model
  std::optional<double> final_C;               // null without a governor tick
  std::optional<double> ambient_C, release_C;  // with a thermal model
  double max_power_W = 0, throttled_s = 0;
  std::map<std::string, double> unit_throttled_s;
  std::map<std::string, std::vector<FrequencyTime>> time_at_frequency;  // per unit, fastest first
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("ambient_C", s.ambient_C);
    io("trip_C", s.trip_C);
    io("release_C", s.release_C);
    io("initial_C", s.initial_C);
    io.nullable("final_C", s.final_C);
    io("max_power_W", s.max_power_W);
    io("throttled_s", s.throttled_s);
    io("unit_throttled_s", s.unit_throttled_s);
    io("time_at_frequency", s.time_at_frequency);
  }
};

/// Little's law over the run.
struct LittleDetails {
  double L_frames = 0, lambda_per_s = 0, W_s = 0, relative_error = 0;
  double lambda_W = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("L_frames", s.L_frames);
    io("lambda_per_s", s.lambda_per_s);
    io("W_s", s.W_s);
    io("lambda_W", s.lambda_W);
    io("relative_error", s.relative_error);
  }
};

/// A stage with a slice, in the sustained window against its slice.
struct StageSlice {
  double slice_s = 0, estimate_alone_s = 0, bound_alone_s = 0, cold_mean_s = 0, sustained_mean_s = 0,
         sustained_p99_s = 0;
  bool fits = false;
  double cold_p99_s = 0, speedup_needed = 1;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("cold_p99_s", s.cold_p99_s);
    io("speedup_needed", s.speedup_needed);
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
  bool meets_deadline_at_p99 = false;
  double speedup_needed = 1;
  std::int64_t missed = 0, samples = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("meets_deadline_at_p99", s.meets_deadline_at_p99);
    io("speedup_needed", s.speedup_needed);
    io("missed", s.missed);
    io("samples", s.samples);
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
  std::string uses;
  std::optional<double> deadline_s, speedup_needed;  // with a sustained sample
  std::optional<bool> meets_deadline_at_p99;         // with a sustained sample
  std::optional<bool> all_paths_meet_at_p99;         // null without a worst path
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("uses", s.uses);
    io("deadline_s", s.deadline_s);
    io("meets_deadline_at_p99", s.meets_deadline_at_p99);
    io("speedup_needed", s.speedup_needed);
    io.nullable("all_paths_meet_at_p99", s.all_paths_meet_at_p99);
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
  double bytes = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("utilisation", s.utilisation);
    io("bytes", s.bytes);
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

/// A stage's mean slowdown against running alone (analysis/slowdown.hpp; RunSummary::slowdown).
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
  /// Each part by its key ("queue_s"...).
  std::map<std::string, double> by_key() const;
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

/// The frames at or above p99: their mean parts, each stage on their critical path.
struct TailDetails {
  std::int64_t frames = 0;
  double p99_s = 0, critical_share = 0;
  std::string critical_stage;
  LatencyParts mean_parts;
  std::map<std::string, TailStage> stages;
  std::optional<std::vector<double>> window_s;  // the sustained tail's window: [from, to)
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("window_s", s.window_s);
    io("frames", s.frames);
    io("p99_s", s.p99_s);
    io("critical_stage", s.critical_stage);
    io("critical_share", s.critical_share);
    io("mean_parts", s.mean_parts);
    io("stages", s.stages);
  }
};

/// "why" (its sustained tail: RunSummary::sustained_tail).
struct WhyDetails {
  std::string method;
  std::optional<TailDetails> tail;
  std::vector<WorstFrame> worst_frames;
  std::vector<std::string> parts;  // the parts' names, in their order
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("method", s.method);
    io("parts", s.parts);
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
  double rate_Hz = 0;
  int priority = 0;
  std::optional<std::int64_t> unfinished;
  std::optional<double> busy_fraction;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("rate_Hz", s.rate_Hz);
    io("priority", s.priority);
    io("unfinished", s.unfinished);
    io("busy_fraction", s.busy_fraction);
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
  std::uint64_t actuations = 0, samples_without_reaction = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("path", s.path);
    io("actuations", s.actuations);
    io("samples_without_reaction", s.samples_without_reaction);
    io("data_age_s", s.data_age_s);
    io("reaction_s", s.reaction_s);
  }
};

/// A stage's measured frames against its simulated service times.
struct MeasuredFramesDetails {
  std::string file;
  std::uint64_t frames = 0;
  StatBlock measured_s, simulated_service_s;
  std::optional<double> simulated_over_measured_p50;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("simulated_over_measured_p50", s.simulated_over_measured_p50);
    io("file", s.file);
    io("frames", s.frames);
    io("measured_s", s.measured_s);
    io("simulated_service_s", s.simulated_service_s);
  }
};

struct InputFile {
  std::string file, sha256;
  std::uint64_t bytes = 0;
  bool operator==(const InputFile&) const = default;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("file", s.file);
    io.defaulted("bytes", s.bytes);
    io("sha256", s.sha256);
  }
};

/// A --set override the run was given.
struct OverrideUsed {
  std::string path, value;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("path", s.path);
    io("value", s.value);
  }
};

/// Where a run came from (RunSummary::provenance; a sweep's and a map's results carry one too). An older summary
/// may lack any part.
struct Provenance {
  std::string framesim_version;
  std::vector<std::string> command_line;
  std::vector<OverrideUsed> overrides;
  std::vector<InputFile> inputs;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io.defaulted("framesim_version", s.framesim_version);
    io.defaulted("command_line", s.command_line);
    io.defaulted("overrides", s.overrides);
    io.defaulted("inputs", s.inputs);
  }
};

/// "frames" beyond its counts (RunSummary's all window and longest miss run).
/// A sensor's frames that reached a sink only as a side input, and those still in the pipeline at the end.
struct SensorFrames {
  std::int64_t side_input = 0, unfinished = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("side_input", s.side_input);
    io("unfinished", s.unfinished);
  }
};

struct FramesDetails {
  std::map<std::string, std::int64_t> drops_by;  // "stage: reason" -> frames
  std::int64_t completed = 0;
  std::map<std::string, SensorFrames> sensors;
  std::string definition;  // of a miss
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("drops_by", s.drops_by);
    io("completed", s.completed);
    io("sensors", s.sensors);
    io("definition", s.definition);
  }
};

/// How summary.json's statistics are defined.
struct StatisticsDetails {
  std::string quantile_method, interval, counted;
  double confidence = 0;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("quantile_method", s.quantile_method);
    io("interval", s.interval);
    io("confidence", s.confidence);
    io("counted", s.counted);
  }
};

/// A stage of a pipeline that did not drain: its queued items and the inputs it waits for.
struct StuckStageDetails {
  std::string stage;
  std::uint64_t queued = 0;
  std::vector<std::string> waiting_for;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("stage", s.stage);
    io("queued", s.queued);
    io("waiting_for", s.waiting_for);
  }
};

struct StuckDetails {
  double drain_limit_s = 0;
  std::uint64_t unfinished_frames = 0;
  std::vector<StuckStageDetails> stages;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("drain_limit_s", s.drain_limit_s);
    io("unfinished_frames", s.unfinished_frames);
    io("stages", s.stages);
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
  WhyDetails why;
  std::map<std::string, TaskDetails> tasks;
  std::map<std::string, ChainDetails> chains;
  std::map<std::string, MeasuredFramesDetails> measured_frames;
  std::vector<std::string> warnings, notes;
  StatisticsDetails statistics;
  std::optional<StuckDetails> stuck;  // null when the pipeline drained
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("statistics", s.statistics);
    io.nullable("stuck", s.stuck);
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
    io("why", s.why);
    io("tasks", s.tasks);
    io("chains", s.chains);
    io("measured_frames", s.measured_frames);
    io("warnings", s.warnings);
    io("notes", s.notes);
  }
};

/// A quantile with its interval, as summary.json writes one.
QuantileDetails quantile_details(const Quantile& q);

/// The detail parts of a summary.json document (the document itself, e.g. write_run_summary's).
RunDetails read_run_details(const nlohmann::json& summary, const std::string& file);
/// Writes `d` into `summary` (merging: keys no record types are kept).
void write_run_details(nlohmann::json& summary, const RunDetails& d);

}  // namespace framesim::analysis
