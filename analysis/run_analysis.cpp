#include "run_analysis.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/units.hpp"
#include "json_text.hpp"
#include "measured_frames.hpp"
#include "summary_fields.hpp"
#include "svg.hpp"
#include "table.hpp"

namespace framesim::analysis {

using core::format_number;
using core::format_seconds;
using nlohmann::json;

namespace {

/// Default window: a quarter of the counted time, at most 60 s.
double window_length(double requested, double counted_s) {
  if (requested > 0) return std::min(requested, counted_s);
  return std::min(60.0, counted_s / 4);
}

void init_window(WindowStats& w, double from, double to, std::size_t stages, std::size_t units) {
  w.from_s = from;
  w.to_s = to;
  w.stage_wait_s.resize(stages);
  w.stage_service_s.resize(stages);
  w.stage_latency_s.resize(stages);
  w.stage_response_s.resize(stages);
  w.stage_blocked_s.resize(stages);
  w.stage_slice_missed.assign(stages, 0);
  w.unit_frequency_Hz.resize(units);
}

bool in(const WindowStats& w, double t) { return t >= w.from_s && t < w.to_s; }

/// Shortest text that reads back as the same double: exact, deterministic and compact.
std::string num(double v) { return fmt::format("{}", v); }

/// A window's typed figures (its frames, misses, latency end to end and per stage), as write_run_summary writes them.
WindowSummary window_summary(const WindowStats& w, const model::ScenarioSpec& spec) {
  WindowSummary out;
  out.frames = w.frames;
  out.misses = w.misses;
  out.miss_rate = w.misses.rate(w.frames);
  out.latency_s = stat_block(w.latency_s.summary());
  for (std::size_t s = 0; s < spec.stages.size(); ++s)
    out.stage_latency_s[spec.stages[s].name] = stat_block(w.stage_latency_s[s].summary());
  return out;
}

/// The rest of a window: its bounds, completions, per-stage wait, service, blocking and response, temperature and
/// clocks.
WindowDetails window_details(const WindowStats& w, const model::ScenarioSpec& spec) {
  WindowDetails out;
  for (std::size_t s = 0; s < spec.stages.size(); ++s) {
    StageTimes& st = out.stages[spec.stages[s].name];
    st.wait_s = stat_block(w.stage_wait_s[s].summary());
    st.service_s = stat_block(w.stage_service_s[s].summary());
    st.blocked_s = stat_block(w.stage_blocked_s[s].summary());
    st.response_s = stat_block(w.stage_response_s[s].summary());
    if (spec.stages[s].slice_s) st.slice_missed = w.stage_slice_missed[s];
  }
  for (std::size_t u = 0; u < spec.hardware.units.size(); ++u)
    if (!w.unit_frequency_Hz[u].empty())
      out.mean_frequency_Hz[spec.hardware.units[u].name] = w.unit_frequency_Hz[u].summary().mean;
  out.from_s = w.from_s;
  out.to_s = w.to_s;
  out.completed = w.completed;
  if (!w.temperature_C.empty()) out.mean_temperature_C = w.temperature_C.summary().mean;
  return out;
}

/// Where a pipeline that did not drain stuck (empty when it drained).
std::optional<StuckDetails> stuck_details(const engine::RunTotals& totals) {
  if (!totals.stuck) return std::nullopt;
  StuckDetails out{totals.stuck->drain_limit_s, totals.stuck->unfinished_frames, {}};
  for (const auto& st : totals.stuck->stages) out.stages.push_back({st.stage, st.queued, st.waiting_for});
  return out;
}

/// How summary.json's statistics are defined.
StatisticsDetails statistics_details() {
  StatisticsDetails out;
  out.quantile_method =
      "nearest rank: the smallest sample with at least p of the sample at or below "
      "it, x_(ceil(p n)) (numpy method=\"inverted_cdf\")";
  out.interval =
      "distribution-free, from order statistics: [x_(l), x_(u)] with the number of "
      "samples below the quantile Binomial(n, p); independent samples assumed";
  out.confidence = kConfidence;
  out.counted = "frames.csv rows with counted = 1; latency statistics over those completed";
  return out;
}

/// The worst of the paths into `verdict`: the largest sustained p99 for its deadline, and whether every path meets
/// its deadline at p99 (empty without any sustained sample).
void add_worst_path(VerdictDetails& verdict, const std::vector<PathSummary>& paths,
                    const std::vector<PathDetails>& details) {
  std::optional<WorstPath> worst;
  double worst_ratio = -1;
  bool all_meet = true;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const PathSummary& p = paths[i];
    const PathDetails& d = details[i];
    if (!p.sustained_p99_s) continue;
    const double ratio = *p.sustained_p99_s / d.deadline_s;
    all_meet = all_meet && d.verdict.meets_deadline_at_p99.value();
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = WorstPath{p.name,
                        d.verdict.at_confidence.value(),
                        *p.sustained_p99_s,
                        d.deadline_s,
                        d.verdict.meets_deadline_at_p99.value(),
                        d.verdict.speedup_needed.value(),
                        d.missed,
                        d.samples};
    }
  }
  verdict.worst_path = worst;
  if (worst) verdict.all_paths_meet_at_p99 = all_meet;
}

}  // namespace

RunAnalysis::RunAnalysis(const model::ScenarioSpec& spec, std::filesystem::path folder)
    : spec_(spec),
      folder_(std::move(folder)),
      floors_(spec),
      breakdown_(spec, floors_),
      slowdown_(spec, floors_),
      responses_(spec, folder_),
      paths_(spec, spec.duration_s - window_length(spec.sustained_window_s, spec.duration_s - spec.warmup_s)) {
  const std::size_t stages = spec.stages.size();
  const std::size_t units = spec.hardware.units.size();
  const double counted_s = spec.duration_s - spec.warmup_s;
  init_window(all_, spec.warmup_s, spec.duration_s, stages, units);
  init_window(cold_, spec.warmup_s, spec.warmup_s + window_length(spec.cold_window_s, counted_s), stages, units);
  init_window(sustained_, spec.duration_s - window_length(spec.sustained_window_s, counted_s), spec.duration_s, stages,
              units);
  staleness_s_.resize(spec.tasks.size());
  side_inputs_.assign(spec.sensors.size(), 0);
  unfinished_.assign(spec.sensors.size(), 0);
  miss_run_.assign(spec.sensors.size(), 0);
  time_at_frequency_s_.resize(units);
  for (const auto& u : spec.hardware.units) previous_frequency_Hz_.push_back(u.fastest_allowed().frequency_Hz);
  if (!files()) return;

  trace_.emplace(spec, folder_ / "trace.json");
  auto open = [&](std::ofstream& f, const char* name) {
    f.open(folder_ / name, std::ios::binary | std::ios::trunc);
    if (!f)
      throw core::UserError(
          fmt::format("{}: cannot write: {}", (folder_ / name).string(), core::write_failure_reason(folder_, errno)));
  };
  open(frames_csv_, "frames.csv");
  open(stages_csv_, "stages.csv");
  open(timeseries_csv_, "timeseries.csv");
  open(kernels_csv_, "kernels.csv");
  kernels_csv_ << "unit,owner,kernel,frame,dispatch_start_s,start_s,end_s,time_s\n";

  frames_csv_ << "frame,sensor,capture_s,outcome,counted,done_s,latency_s,deadline_met,drop_stage,drop_reason,energy_J,"
                 "temperature_C";
  for (const auto& u : spec.hardware.units) frames_csv_ << ",freq_" << u.name << "_Hz";
  frames_csv_ << "\n";
  stages_csv_
      << "frame,stage,counted,capture_s,enqueue_s,start_s,end_s,wait_s,service_s,blocked_s,response_s,latency_s,"
         "energy_J,kernels\n";
  timeseries_csv_ << "time_s,temperature_C,power_W,dynamic_J,static_J,throttled";
  for (const auto& u : spec.hardware.units) timeseries_csv_ << ",freq_" << u.name << "_Hz";
  for (const auto& l : spec.hardware.memory) timeseries_csv_ << ",bw_" << l.name << "_Bps";
  for (const auto& u : spec.hardware.units) timeseries_csv_ << ",busy_" << u.name;
  for (const auto& l : spec.hardware.memory) timeseries_csv_ << ",util_" << l.name;
  for (const auto& st : spec.stages) timeseries_csv_ << ",queue_" << st.name;
  timeseries_csv_ << "\n";
}

/// A frame's line of frames.csv and its instant in trace.json.
void RunAnalysis::write_frame(const engine::FrameRecord& r, bool completed, double latency, bool met, bool in_stats) {
  trace_->frame(r, completed && !met && in_stats);
  frames_csv_ << r.frame << "," << spec_.sensors[r.sensor].name << "," << num(r.capture_s) << ","
              << engine::frame_outcome_name(r.outcome) << "," << (in_stats ? 1 : 0) << "," << num(r.done_s) << ","
              << (completed ? num(latency) : "") << "," << (completed ? (met ? "1" : "0") : "") << ","
              << (r.drop_stage >= 0 ? spec_.stages[static_cast<std::size_t>(r.drop_stage)].name : "") << ","
              << engine::drop_reason_name(r.reason) << "," << num(r.energy_J) << "," << num(r.temperature_C);
  for (double f : r.unit_frequency_Hz) frames_csv_ << "," << num(f);
  frames_csv_ << "\n";
}

void RunAnalysis::on_frame(const engine::FrameRecord& r) {
  ++frames_total_;
  responses_.on_capture(r.sensor, r.capture_s);
  paths_.on_frame(r);
  const bool completed = r.outcome == engine::FrameOutcome::completed;
  const double latency = r.done_s - r.capture_s;
  const bool met = completed && latency <= spec_.deadline_s;
  sojourn_sum_s_ += latency;
  // Counted: in the statistics (after the warm-up, completed or dropped; side inputs and frames still in
  // flight at the end have no end-to-end latency).
  const bool in_stats = counted(r.capture_s) && (completed || r.outcome == engine::FrameOutcome::dropped);
  breakdown_.on_frame(r, in_stats && completed);
  if (files()) write_frame(r, completed, latency, met, in_stats);

  if (r.sensor == 0) {
    ++primary_all_frames_;
    primary_dynamic_J_ += r.energy_J;
  }
  if (r.outcome == engine::FrameOutcome::side_input) ++side_inputs_[r.sensor];
  if (r.outcome == engine::FrameOutcome::unfinished) ++unfinished_[r.sensor];
  if (!counted(r.capture_s)) return;
  if (r.sensor == 0) {
    ++primary_frames_;
    energy_J_.add(r.energy_J);
  }
  if (r.outcome == engine::FrameOutcome::side_input || r.outcome == engine::FrameOutcome::unfinished) return;
  for (WindowStats* w : {&all_, &cold_, &sustained_}) {
    if (!in(*w, r.capture_s)) continue;
    ++w->frames;
    if (completed) {
      ++w->completed;
      w->latency_s.add(latency);
      if (!met) ++w->misses.late;
    } else {
      ++w->misses.dropped;
    }
  }
  if (completed) {
    const double span = std::max(1e-12, spec_.duration_s - spec_.warmup_s);
    const auto bin =
        std::min(kLatencyBins - 1,
                 static_cast<std::size_t>(std::max(0.0, (r.capture_s - spec_.warmup_s) / span * kLatencyBins)));
    LatencyBin& b = latency_bins_[bin];
    if (b.frames++ == 0) b.first_capture_s = r.capture_s;
    b.max_latency_s = std::max(b.max_latency_s, latency);
  }
  if (r.outcome == engine::FrameOutcome::dropped)
    ++drops_by_[fmt::format("{}: {}", spec_.stages[static_cast<std::size_t>(r.drop_stage)].name,
                            engine::drop_reason_name(r.reason))];
  int& run = miss_run_[r.sensor];
  run = met ? 0 : run + 1;
  longest_miss_run_ = std::max(longest_miss_run_, run);
}

void RunAnalysis::on_stage(const engine::StageRecord& r) {
  const double wait = r.start_s - r.enqueue_s;
  const double service = r.end_s - r.start_s;
  const double latency = r.end_s - r.capture_s;
  const double response = r.end_s - r.enqueue_s;
  if (files()) {
    stages_csv_ << r.frame << "," << spec_.stages[r.stage].name << "," << (counted(r.capture_s) ? 1 : 0) << ","
                << num(r.capture_s) << "," << num(r.enqueue_s) << "," << num(r.start_s) << "," << num(r.end_s) << ","
                << num(wait) << "," << num(service) << "," << num(r.blocked_s) << "," << num(response) << ","
                << num(latency) << "," << num(r.energy_J) << "," << r.kernels << "\n";
    trace_->stage(r, breakdown_.predecessor(r));
  }
  paths_.on_stage(r);
  breakdown_.on_stage(r);
  if (!counted(r.capture_s)) return;
  slowdown_.on_stage(r);
  for (WindowStats* w : {&all_, &cold_, &sustained_}) {
    if (!in(*w, r.capture_s)) continue;
    w->stage_wait_s[r.stage].add(wait);
    w->stage_service_s[r.stage].add(service);
    w->stage_latency_s[r.stage].add(latency);
    w->stage_response_s[r.stage].add(response);
    w->stage_blocked_s[r.stage].add(r.blocked_s);
    if (spec_.stages[r.stage].slice_s && response > *spec_.stages[r.stage].slice_s) ++w->stage_slice_missed[r.stage];
  }
}

void RunAnalysis::on_task(const engine::TaskRecord& r) {
  responses_.on_task(r);
  if (files()) trace_->task(r);
}

void RunAnalysis::on_control(const engine::ControlRecord& r) {
  if (r.time_s < spec_.warmup_s || !r.staleness_s) return;
  staleness_s_[r.task].add(*r.staleness_s);
}

/// A tick's line of timeseries.csv and its counters in trace.json.
void RunAnalysis::write_tick(const engine::TickRecord& r) {
  timeseries_csv_ << num(r.time_s) << "," << num(r.temperature_C) << "," << num(r.power_W) << "," << num(r.dynamic_J)
                  << "," << num(r.static_J) << "," << (r.throttled ? 1 : 0);
  for (double f : r.unit_frequency_Hz) timeseries_csv_ << "," << num(f);
  for (double b : r.level_bandwidth_Bps) timeseries_csv_ << "," << num(b);
  for (double b : r.unit_busy) timeseries_csv_ << "," << num(b);
  for (double u : r.level_utilisation) timeseries_csv_ << "," << num(u);
  for (double q : r.stage_queue_depth) timeseries_csv_ << "," << num(q);
  timeseries_csv_ << "\n";
  trace_->tick(r);
}

void RunAnalysis::on_tick(const engine::TickRecord& r) {
  if (files()) write_tick(r);
  // Residency: the interval ending now ran at the clocks set at the previous tick.
  const double dt = r.time_s - previous_tick_s_;
  for (std::size_t u = 0; u < previous_frequency_Hz_.size(); ++u)
    time_at_frequency_s_[u][previous_frequency_Hz_[u]] += dt;
  previous_frequency_Hz_ = r.unit_frequency_Hz;
  previous_tick_s_ = r.time_s;
  for (WindowStats* w : {&all_, &cold_, &sustained_}) {
    if (!in(*w, r.time_s)) continue;
    w->temperature_C.add(r.temperature_C);
    for (std::size_t u = 0; u < r.unit_frequency_Hz.size(); ++u) w->unit_frequency_Hz[u].add(r.unit_frequency_Hz[u]);
  }
  ticks_.push_back(r);
}

void RunAnalysis::on_kernel(const engine::KernelRecord& r) {
  if (!files()) return;
  const std::string owner_name = r.stage >= 0 ? spec_.stages[static_cast<std::size_t>(r.stage)].name
                                              : spec_.tasks[static_cast<std::size_t>(r.task)].name;
  kernels_csv_ << spec_.hardware.units[r.unit].name << "," << owner_name << "," << r.name << "," << r.frame << ","
               << num(r.start_s - r.dispatch_s) << "," << num(r.start_s) << "," << num(r.end_s) << ","
               << num(r.end_s - r.start_s + r.dispatch_s) << "\n";
  trace_->kernel(r);
}

RunSummary RunAnalysis::finish(const engine::RunTotals& totals, Finish what) {
  if (files()) close_streams();
  RunSummary s;
  RunDetails& d = s.details.emplace();
  s.scenario = {spec_.name,       spec_.source_file, spec_.hardware.name, spec_.seed,
                spec_.duration_s, spec_.warmup_s,    spec_.deadline_s};
  wall_s_ = totals.wall_s;  // not in the run folder: outputs must be byte-identical for the same inputs and seed
  d.run = {totals.end_s,      totals.kernels,     totals.frames_captured,
           totals.activities, totals.preemptions, totals.fast_path};
  fill_frames(s, d);
  for (const auto& p : paths_.finish()) {
    s.paths.push_back(p.summary);
    d.paths.push_back(p.details);
  }
  fill_staleness(s, d);
  fill_energy(totals, s, d);
  fill_thermal(totals, s, d);
  d.little = little(totals);
  fill_verdict(s, d);
  fill_utilisation(totals, s, d);
  auto responses = responses_.finish(totals.task_busy_core_s, totals.end_s);
  d.tasks = std::move(responses.tasks);
  d.chains = std::move(responses.chains);
  {
    std::vector<Summary> service;
    for (std::size_t st = 0; st < spec_.stages.size(); ++st) service.push_back(all_.stage_service_s[st].summary());
    d.measured_frames = write_measured_frames(spec_, folder_, service);
  }
  s.slowdown = slowdown_.finish();
  std::optional<Breakdown::Window> hot;
  if (!sustained_.latency_s.empty())
    hot = Breakdown::Window{sustained_.from_s, sustained_.to_s, sustained_.latency_s.quantile(0.99)};
  auto why =
      breakdown_.finish(all_.latency_s.empty() ? std::nullopt : std::optional(all_.latency_s.quantile(0.99)), hot);
  d.why = std::move(why.why);
  s.sustained_tail = std::move(why.sustained_tail);
  d.statistics = statistics_details();
  s.provenance = provenance_;
  d.stuck = stuck_details(totals);
  d.warnings = totals.warnings;
  d.notes = totals.notes;

  if (what == Finish::record) {
    FRAMESIM_ASSERT(!files(), "a run folder holds the whole summary");
    s.details.reset();
    return read_back_record(write_run_summary(s), "the run's summary.json");
  }
  // What the terminal summary and report.html show: the summary as read back from what is written.
  const nlohmann::json written = write_run_summary(s);
  RunSummary back = read_back(written, "the run's summary.json");
  if (!files()) return back;
  core::write_file_atomic(folder_ / "summary.json", json_text(written) + "\n");
  core::write_file_atomic(folder_ / "latency_cdf.svg", svg_latency_cdf());
  core::write_file_atomic(folder_ / "latency_over_time.svg", svg_latency_over_time());
  core::write_file_atomic(folder_ / "thermal.svg", svg_thermal());
  core::write_file_atomic(folder_ / "report.html", html_report(back));
  return back;
}

/// Frames and latency: the counted frames' windows, their drops, each sensor's side inputs and unfinished frames.
void RunAnalysis::fill_frames(RunSummary& s, RunDetails& d) const {
  d.frames.drops_by = drops_by_;
  for (std::size_t sensor = 0; sensor < spec_.sensors.size(); ++sensor)
    d.frames.sensors[spec_.sensors[sensor].name] = {side_inputs_[sensor], unfinished_[sensor]};
  // One definition everywhere: a counted frame misses the deadline when it completes late or is dropped.
  d.frames.completed = all_.completed;
  d.frames.definition = "missed = late (completed after the deadline) + dropped; miss_rate = missed / counted";
  s.longest_miss_run = longest_miss_run_;
  s.all = window_summary(all_, spec_);
  s.cold = window_summary(cold_, spec_);
  s.sustained = window_summary(sustained_, spec_);
  d.windows = {window_details(all_, spec_), window_details(cold_, spec_), window_details(sustained_, spec_),
               scaled_windows_};
}

/// Closes every stream; throws with the first file that could not be written, and the system's reason (a full
/// disk, a file-size limit).
void RunAnalysis::close_streams() {
  errno = 0;
  std::string failed = trace_->close() ? "" : "trace.json";
  int saved_errno = errno;
  for (auto [f, name] : {std::pair{&frames_csv_, "frames.csv"}, std::pair{&stages_csv_, "stages.csv"},
                         std::pair{&timeseries_csv_, "timeseries.csv"}, std::pair{&kernels_csv_, "kernels.csv"}}) {
    errno = 0;
    f->close();
    if (f->fail() && failed.empty()) {
      failed = name;
      saved_errno = errno;
    }
  }
  if (!failed.empty())
    throw core::UserError(fmt::format("{}: cannot write: {}", (folder_ / failed).string(),
                                      core::write_failure_reason(folder_, saved_errno)));
}

/// Per control task that reads a stage: how old the result it reads is (and how far the vehicle moved meanwhile).
void RunAnalysis::fill_staleness(RunSummary& s, RunDetails& d) const {
  for (std::size_t t = 0; t < spec_.tasks.size(); ++t) {
    if (!spec_.tasks[t].reads_stage) continue;
    const Summary time_s = staleness_s_[t].summary();
    s.staleness_time_s[spec_.tasks[t].name] = stat_block(time_s);
    StalenessDetails& entry = d.staleness[spec_.tasks[t].name];
    entry.reads = spec_.stages[*spec_.tasks[t].reads_stage].name;
    entry.rate_Hz = spec_.tasks[t].rate_Hz;
    if (spec_.speed_mps && !staleness_s_[t].empty()) {
      entry.speed_mps = *spec_.speed_mps;
      entry.distance_m = stat_block(scaled(time_s, *spec_.speed_mps));
    }
  }
}

/// Energy: per primary-sensor frame. Its mean is the whole run's energy per frame; a frame's own
/// dynamic energy varies, everything else (static, tasks, background, other sensors) is shared evenly.
/// Frames of the primary sensor over the whole run (counted or not) share everything not their own.
void RunAnalysis::fill_energy(const engine::RunTotals& totals, RunSummary& s, RunDetails& d) const {
  const auto& hw = spec_.hardware;
  const std::int64_t primary_captured = std::max<std::int64_t>(1, primary_all_frames_);
  const double total_J = totals.total_energy_J();
  const double shared_J = total_J - primary_dynamic_J_;
  const double share = shared_J / static_cast<double>(primary_captured);
  Samples per_frame;
  for (double e : energy_J_.values()) per_frame.add(e + share);
  EnergyDetails& e = d.energy;
  for (std::size_t u = 0; u < hw.units.size(); ++u)
    e.breakdown_per_frame_J.compute[hw.units[u].name] =
        totals.compute_energy_J[u] / static_cast<double>(primary_captured);
  for (std::size_t lv = 0; lv < hw.memory.size(); ++lv)
    e.breakdown_per_frame_J.memory[hw.memory[lv].name] =
        totals.memory_energy_J[lv] / static_cast<double>(primary_captured);
  e.breakdown_per_frame_J.static_J = totals.static_energy_J / static_cast<double>(primary_captured);
  s.energy_per_frame_J = stat_block(per_frame.summary());
  s.mean_power_W = totals.end_s > 0 ? total_J / totals.end_s : 0.0;
  e.total_J = total_J;
  e.frames_J = totals.frames_energy_J;
  e.tasks_J = totals.tasks_energy_J;
  e.background_J = totals.background_energy_J;
  e.static_J = totals.static_energy_J;
  e.primary_frames = primary_captured;
}

/// Thermal and clocks: temperatures, throttling, time at each unit frequency.
void RunAnalysis::fill_thermal(const engine::RunTotals& totals, RunSummary& s, RunDetails& d) const {
  const auto& hw = spec_.hardware;
  ThermalDetails& thermal = d.thermal;
  double max_temperature = ticks_.empty() ? 0.0 : ticks_.front().temperature_C;
  double max_power = 0;
  for (std::size_t i = 0; i < ticks_.size(); ++i) {
    max_temperature = std::max(max_temperature, ticks_[i].temperature_C);
    if (full_period(i)) max_power = std::max(max_power, ticks_[i].power_W);  // over full governor periods
  }
  for (std::size_t u = 0; u < hw.units.size(); ++u) {
    auto& r = thermal.time_at_frequency[hw.units[u].name];
    for (auto it = time_at_frequency_s_[u].rbegin(); it != time_at_frequency_s_[u].rend(); ++it)
      r.push_back({it->first, it->second});
    thermal.unit_throttled_s[hw.units[u].name] = totals.unit_throttled_s[u];
  }
  s.has_thermal_model = hw.thermal.has_value();
  if (hw.thermal) {
    thermal.ambient_C = spec_.ambient_C.value_or(hw.thermal->ambient_C);
    thermal.trip_C = hw.thermal->trip_C;
    thermal.release_C = hw.thermal->release_C;
  }
  thermal.initial_C =
      spec_.initial_temperature_C.value_or(hw.thermal ? spec_.ambient_C.value_or(hw.thermal->ambient_C) : 25.0);
  s.max_temperature_C = max_temperature;
  if (!ticks_.empty()) thermal.final_C = ticks_.back().temperature_C;
  thermal.max_power_W = max_power;
  thermal.throttled_s = totals.throttled_s;
  s.throttled_fraction = totals.end_s > 0 ? totals.throttled_s / totals.end_s : 0.0;
}

/// Little's law over the whole run: L (time-average in the system) = lambda x W.
LittleDetails RunAnalysis::little(const engine::RunTotals& totals) const {
  const double lambda = totals.end_s > 0 ? static_cast<double>(frames_total_) / totals.end_s : 0.0;
  const double w = frames_total_ > 0 ? sojourn_sum_s_ / static_cast<double>(frames_total_) : 0.0;
  const double l = totals.end_s > 0 ? totals.in_system_integral / totals.end_s : 0.0;
  return {l, lambda, w, l > 0 ? std::fabs(l - lambda * w) / l : 0.0, lambda * w};
}

/// Verdict: end to end against the deadline, and each stage with a slice, in the sustained window; the worst of
/// the paths.
void RunAnalysis::fill_verdict(RunSummary& s, RunDetails& d) const {
  VerdictDetails& verdict = d.verdict;
  // Two numbers named apart: the estimate (effective roofs, what the simulation runs at) and the bound (peak
  // roofs, no overhead: no correct run can beat it). The verdict's comparisons use the simulated times; the
  // estimate is the model's expectation of them.
  const std::vector<double> floors_s = floors_.floors_s(model::Roofs::effective);
  const std::vector<double> bounds_s = floors_.floors_s(model::Roofs::peak);
  s.estimate_end_to_end_s = spec_.floor_end_to_end_s(floors_s);
  s.bound_end_to_end_s = spec_.floor_end_to_end_s(bounds_s);
  verdict.uses =
      "simulated sustained p99 against the deadline; estimate = effective roofs (the simulation's), "
      "bound = peak roofs without overhead";
  const Summary sustained = sustained_.latency_s.summary();
  if (sustained.count > 0) {
    s.sustained_p99_s = sustained.p99;
    verdict.sustained_p99 = quantile_details(sustained.q99);
    verdict.deadline_s = spec_.deadline_s;
    verdict.meets_deadline_at_p99 = sustained.p99 <= spec_.deadline_s;
    verdict.speedup_needed = std::max(1.0, sustained.p99 / spec_.deadline_s);
    // At the confidence: met when the whole interval is below the deadline, missed when it is all above.
    const auto& q = sustained.q99;
    verdict.confidence = kConfidence;
    s.at_confidence = q.hi && *q.hi <= spec_.deadline_s  ? "met"
                      : q.lo && *q.lo > spec_.deadline_s ? "missed"
                                                         : "undecided";
  }
  for (std::size_t st = 0; st < spec_.stages.size(); ++st) {
    if (!spec_.stages[st].slice_s) continue;
    const Summary cold = cold_.stage_service_s[st].summary();
    const Summary hot = sustained_.stage_service_s[st].summary();
    if (hot.count == 0) continue;
    const double slice = *spec_.stages[st].slice_s;
    verdict.stage_slices[spec_.stages[st].name] = {slice,
                                                   floors_s[st],
                                                   bounds_s[st],
                                                   cold.mean,
                                                   hot.mean,
                                                   hot.p99,
                                                   hot.p99 <= slice,
                                                   cold.p99,
                                                   std::max(1.0, hot.p99 / slice)};
  }
  // The overall verdict is the worst path's: the largest sustained p99 for its deadline.
  add_worst_path(verdict, s.paths, d.paths);
}

void RunAnalysis::fill_utilisation(const engine::RunTotals& totals, RunSummary& s, RunDetails& d) const {
  const auto& hw = spec_.hardware;
  const double end = totals.end_s;
  UtilisationDetails& use = d.utilisation;
  for (std::size_t u = 0; u < hw.units.size(); ++u) {
    auto& by = use.units[hw.units[u].name].by;
    for (std::size_t st = 0; st < spec_.stages.size(); ++st)
      if (spec_.stages[st].unit == u)
        by[spec_.stages[st].name] = end > 0 ? totals.stage_busy_core_s[st] / (hw.units[u].cores * end) : 0.0;
    for (std::size_t t = 0; t < spec_.tasks.size(); ++t)
      if (spec_.tasks[t].unit == u)
        by[spec_.tasks[t].name] = end > 0 ? totals.task_busy_core_s[t] / (hw.units[u].cores * end) : 0.0;
    s.unit_busy[hw.units[u].name] = end > 0 ? totals.unit_busy_core_s[u] / (hw.units[u].cores * end) : 0.0;
  }
  // A level's utilisation: the time-average over the ticks of bytes served / what it could serve at its clock.
  for (std::size_t lv = 0; lv < hw.memory.size(); ++lv) {
    double area = 0, previous = 0;
    for (const auto& t : ticks_) {
      if (lv < t.level_utilisation.size()) area += t.level_utilisation[lv] * (t.time_s - previous);
      previous = t.time_s;
    }
    use.memory[hw.memory[lv].name] = {previous > 0 ? area / previous : 0.0, totals.level_bytes[lv]};
  }
  for (std::size_t st = 0; st < spec_.stages.size(); ++st)
    use.queues[spec_.stages[st].name] = {totals.stage_queue_mean[st], totals.stage_queue_max[st],
                                         spec_.stages[st].queue_depth};
}

}  // namespace framesim::analysis
