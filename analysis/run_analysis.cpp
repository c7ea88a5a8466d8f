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
json window_json(const WindowStats& w, const model::ScenarioSpec& spec) {
  json stages = json::object();
  for (std::size_t s = 0; s < spec.stages.size(); ++s) {
    json st = {{"wait_s", summary_json(w.stage_wait_s[s].summary())},
               {"service_s", summary_json(w.stage_service_s[s].summary())},
               {"blocked_s", summary_json(w.stage_blocked_s[s].summary())},
               {"response_s", summary_json(w.stage_response_s[s].summary())}};
    if (spec.stages[s].slice_s) st["slice_missed"] = w.stage_slice_missed[s];
    stages[spec.stages[s].name] = st;
  }
  json freq = json::object();
  for (std::size_t u = 0; u < spec.hardware.units.size(); ++u)
    if (!w.unit_frequency_Hz[u].empty()) freq[spec.hardware.units[u].name] = w.unit_frequency_Hz[u].summary().mean;
  return {{"from_s", w.from_s},
          {"to_s", w.to_s},
          {"completed", w.completed},
          {"stages", stages},
          {"mean_temperature_C", w.temperature_C.empty() ? json(nullptr) : json(w.temperature_C.summary().mean)},
          {"mean_frequency_Hz", freq}};
}

/// Where a pipeline that did not drain stuck (null when it drained).
json stuck_json(const engine::RunTotals& totals) {
  if (totals.stuck) {
    json stages = json::array();
    for (const auto& st : totals.stuck->stages)
      stages.push_back({{"stage", st.stage}, {"queued", st.queued}, {"waiting_for", st.waiting_for}});
    return {{"drain_limit_s", totals.stuck->drain_limit_s},
            {"unfinished_frames", totals.stuck->unfinished_frames},
            {"stages", stages}};
  } else {
    return nullptr;
  }
}

/// How summary.json's statistics are defined.
json statistics_json() {
  return {{"quantile_method",
           "nearest rank: the smallest sample with at least p of the sample at or below "
           "it, x_(ceil(p n)) (numpy method=\"inverted_cdf\")"},
          {"interval",
           "distribution-free, from order statistics: [x_(l), x_(u)] with the number of "
           "samples below the quantile Binomial(n, p); independent samples assumed"},
          {"confidence", kConfidence},
          {"counted", "frames.csv rows with counted = 1; latency statistics over those completed"}};
}

/// The worst path of `paths` (summary.json's paths) into `verdict`: the largest sustained p99 for its deadline, and
/// whether every path meets its deadline at p99 (null without any sustained sample).
void add_worst_path(json& verdict, const json& paths) {
  json worst = nullptr;
  double worst_ratio = -1;
  bool all_meet = true;
  for (const auto& p : paths) {
    const auto& pv = p["verdict"];
    if (!pv.contains("sustained_p99_s")) continue;
    const double ratio = pv["sustained_p99_s"].get<double>() / p["deadline_s"].get<double>();
    all_meet = all_meet && pv["meets_deadline_at_p99"].get<bool>();
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = {{"name", p["name"]},
               {"sustained_p99_s", pv["sustained_p99_s"]},
               {"deadline_s", p["deadline_s"]},
               {"meets_deadline_at_p99", pv["meets_deadline_at_p99"]},
               {"at_confidence", pv["at_confidence"]},
               {"speedup_needed", pv["speedup_needed"]},
               {"missed", p["missed"]},
               {"samples", p["samples"]}};
    }
  }
  verdict["worst_path"] = worst;
  verdict["all_paths_meet_at_p99"] = worst.is_null() ? json(nullptr) : json(all_meet);
}

}  // namespace

RunAnalysis::RunAnalysis(const model::ScenarioSpec& spec, std::filesystem::path folder)
    : spec_(spec),
      folder_(std::move(folder)),
      breakdown_(spec),
      slowdown_(spec),
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

RunSummary RunAnalysis::finish(const engine::RunTotals& totals) {
  if (files()) close_streams();
  RunSummary s;
  s.scenario = {spec_.name,       spec_.source_file, spec_.hardware.name, spec_.seed,
                spec_.duration_s, spec_.warmup_s,    spec_.deadline_s};
  json& j = s.rest;
  wall_s_ = totals.wall_s;  // not in the run folder: outputs must be byte-identical for the same inputs and seed
  j["run"] = {{"simulated_s", totals.end_s},   {"frames_captured", totals.frames_captured},
              {"kernels", totals.kernels},     {"activities", totals.activities},
              {"fast_path", totals.fast_path}, {"preemptions", totals.preemptions}};

  // Frames and latency
  json drops = json::object();
  for (const auto& [k, v] : drops_by_) drops[k] = v;
  json per_sensor = json::object();
  for (std::size_t sensor = 0; sensor < spec_.sensors.size(); ++sensor)
    per_sensor[spec_.sensors[sensor].name] = {{"side_input", side_inputs_[sensor]},
                                              {"unfinished", unfinished_[sensor]}};
  // One definition everywhere: a counted frame misses the deadline when it completes late or is dropped.
  j["frames"] = {
      {"completed", all_.completed},
      {"drops_by", drops},
      {"sensors", per_sensor},
      {"definition", "missed = late (completed after the deadline) + dropped; miss_rate = missed / counted"}};
  s.longest_miss_run = longest_miss_run_;
  s.all = window_summary(all_, spec_);
  s.cold = window_summary(cold_, spec_);
  s.sustained = window_summary(sustained_, spec_);
  j["windows"] = {{"all", window_json(all_, spec_)},
                  {"cold", window_json(cold_, spec_)},
                  {"sustained", window_json(sustained_, spec_)}};
  if (scaled_windows_)
    j["windows"]["scaled"] = {{"scenario_cold_s", scaled_windows_->scenario_cold_s},
                              {"scenario_sustained_s", scaled_windows_->scenario_sustained_s},
                              {"factor", scaled_windows_->factor},
                              {"note", scaled_windows_->note}};
  j["paths"] = paths_.finish();

  j["staleness"] = staleness_json(s);
  j["energy"] = energy_json(totals, s);
  j["thermal"] = thermal_json(totals, s);
  j["little"] = little_json(totals);
  j["verdict"] = verdict_json(j["paths"], s);
  j["utilisation"] = utilisation_json(totals);
  const json responses = responses_.finish(totals.task_busy_core_s, totals.end_s);
  j["tasks"] = responses["tasks"];
  j["chains"] = responses["chains"];
  {
    std::vector<Summary> service;
    for (std::size_t st = 0; st < spec_.stages.size(); ++st) service.push_back(all_.stage_service_s[st].summary());
    j["measured_frames"] = write_measured_frames(spec_, folder_, service);
  }
  s.slowdown = slowdown_.finish();
  std::optional<Breakdown::Window> hot;
  if (!sustained_.latency_s.empty())
    hot = Breakdown::Window{sustained_.from_s, sustained_.to_s, sustained_.latency_s.quantile(0.99)};
  j["why"] =
      breakdown_.finish(all_.latency_s.empty() ? std::nullopt : std::optional(all_.latency_s.quantile(0.99)), hot);
  if (j["why"].contains("sustained_tail")) {
    s.sustained_tail = j["why"]["sustained_tail"];
    j["why"].erase("sustained_tail");
  }
  j["statistics"] = statistics_json();
  j["provenance"] = provenance_;
  j["stuck"] = stuck_json(totals);
  j["warnings"] = totals.warnings;
  j["notes"] = totals.notes;

  // What the terminal summary and report.html show: the summary as read back from what is written.
  RunSummary back = read_back(s, "the run's summary.json");
  if (!files()) return back;
  core::write_file_atomic(folder_ / "summary.json", json_text(write_run_summary(s)) + "\n");
  core::write_file_atomic(folder_ / "latency_cdf.svg", svg_latency_cdf());
  core::write_file_atomic(folder_ / "latency_over_time.svg", svg_latency_over_time());
  core::write_file_atomic(folder_ / "thermal.svg", svg_thermal());
  core::write_file_atomic(folder_ / "report.html", html_report(back));
  return back;
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
json RunAnalysis::staleness_json(RunSummary& record) const {
  json staleness = json::object();
  for (std::size_t t = 0; t < spec_.tasks.size(); ++t) {
    if (!spec_.tasks[t].reads_stage) continue;
    const Summary time_s = staleness_s_[t].summary();
    record.staleness_time_s[spec_.tasks[t].name] = stat_block(time_s);
    json entry{{"reads", spec_.stages[*spec_.tasks[t].reads_stage].name}, {"rate_Hz", spec_.tasks[t].rate_Hz}};
    if (spec_.speed_mps && !staleness_s_[t].empty()) {
      entry["speed_mps"] = *spec_.speed_mps;
      entry["distance_m"] = summary_json(scaled(time_s, *spec_.speed_mps));
    }
    staleness[spec_.tasks[t].name] = entry;
  }
  return staleness;
}

/// Energy: per primary-sensor frame. Its mean is the whole run's energy per frame; a frame's own
/// dynamic energy varies, everything else (static, tasks, background, other sensors) is shared evenly.
/// Frames of the primary sensor over the whole run (counted or not) share everything not their own.
json RunAnalysis::energy_json(const engine::RunTotals& totals, RunSummary& record) const {
  const auto& hw = spec_.hardware;
  const std::int64_t primary_captured = std::max<std::int64_t>(1, primary_all_frames_);
  const double total_J = totals.total_energy_J();
  const double shared_J = total_J - primary_dynamic_J_;
  const double share = shared_J / static_cast<double>(primary_captured);
  Samples per_frame;
  for (double e : energy_J_.values()) per_frame.add(e + share);
  json compute = json::object();
  for (std::size_t u = 0; u < hw.units.size(); ++u)
    compute[hw.units[u].name] = totals.compute_energy_J[u] / static_cast<double>(primary_captured);
  json memory = json::object();
  for (std::size_t lv = 0; lv < hw.memory.size(); ++lv)
    memory[hw.memory[lv].name] = totals.memory_energy_J[lv] / static_cast<double>(primary_captured);
  record.energy_per_frame_J = stat_block(per_frame.summary());
  record.mean_power_W = totals.end_s > 0 ? total_J / totals.end_s : 0.0;
  return {{"breakdown_per_frame_J",
           {{"compute", compute},
            {"memory", memory},
            {"static", totals.static_energy_J / static_cast<double>(primary_captured)}}},
          {"total_J", total_J},
          {"frames_J", totals.frames_energy_J},
          {"tasks_J", totals.tasks_energy_J},
          {"background_J", totals.background_energy_J},
          {"static_J", totals.static_energy_J},
          {"primary_frames", primary_captured}};
}

/// Thermal and clocks: temperatures, throttling, time at each unit frequency.
json RunAnalysis::thermal_json(const engine::RunTotals& totals, RunSummary& record) const {
  const auto& hw = spec_.hardware;
  json thermal = json::object();
  double max_temperature = ticks_.empty() ? 0.0 : ticks_.front().temperature_C;
  double max_power = 0;
  for (std::size_t i = 0; i < ticks_.size(); ++i) {
    max_temperature = std::max(max_temperature, ticks_[i].temperature_C);
    if (full_period(i)) max_power = std::max(max_power, ticks_[i].power_W);  // over full governor periods
  }
  json residency = json::object();
  json unit_throttled = json::object();
  for (std::size_t u = 0; u < hw.units.size(); ++u) {
    json r = json::array();
    for (auto it = time_at_frequency_s_[u].rbegin(); it != time_at_frequency_s_[u].rend(); ++it)
      r.push_back({{"frequency_Hz", it->first}, {"seconds", it->second}});
    residency[hw.units[u].name] = r;
    unit_throttled[hw.units[u].name] = totals.unit_throttled_s[u];
  }
  record.has_thermal_model = hw.thermal.has_value();
  if (hw.thermal) {
    thermal["ambient_C"] = spec_.ambient_C.value_or(hw.thermal->ambient_C);
    thermal["trip_C"] = hw.thermal->trip_C;
    thermal["release_C"] = hw.thermal->release_C;
  }
  thermal["initial_C"] =
      spec_.initial_temperature_C.value_or(hw.thermal ? spec_.ambient_C.value_or(hw.thermal->ambient_C) : 25.0);
  record.max_temperature_C = max_temperature;
  thermal["final_C"] = ticks_.empty() ? json(nullptr) : json(ticks_.back().temperature_C);
  thermal["max_power_W"] = max_power;
  thermal["throttled_s"] = totals.throttled_s;
  record.throttled_fraction = totals.end_s > 0 ? totals.throttled_s / totals.end_s : 0.0;
  thermal["unit_throttled_s"] = unit_throttled;
  thermal["time_at_frequency"] = residency;
  return thermal;
}

/// Little's law over the whole run: L (time-average in the system) = lambda x W.
json RunAnalysis::little_json(const engine::RunTotals& totals) const {
  const double lambda = totals.end_s > 0 ? static_cast<double>(frames_total_) / totals.end_s : 0.0;
  const double w = frames_total_ > 0 ? sojourn_sum_s_ / static_cast<double>(frames_total_) : 0.0;
  const double l = totals.end_s > 0 ? totals.in_system_integral / totals.end_s : 0.0;
  return {{"L_frames", l},
          {"lambda_per_s", lambda},
          {"W_s", w},
          {"lambda_W", lambda * w},
          {"relative_error", l > 0 ? std::fabs(l - lambda * w) / l : 0.0}};
}

/// Verdict: end to end against the deadline, and each stage with a slice, in the sustained window; the worst of
/// `paths` (summary.json's paths).
json RunAnalysis::verdict_json(const json& paths, RunSummary& record) const {
  json verdict = json::object();
  // Two numbers named apart: the estimate (effective roofs, what the simulation runs at) and the bound (peak
  // roofs, no overhead: no correct run can beat it). The verdict's comparisons use the simulated times; the
  // estimate is the model's expectation of them.
  const std::vector<double> floors_s = spec_.stage_floors_s(model::Roofs::effective);
  const std::vector<double> bounds_s = spec_.stage_floors_s(model::Roofs::peak);
  record.estimate_end_to_end_s = spec_.floor_end_to_end_s(floors_s);
  record.bound_end_to_end_s = spec_.floor_end_to_end_s(bounds_s);
  verdict["uses"] =
      "simulated sustained p99 against the deadline; estimate = effective roofs (the simulation's), "
      "bound = peak roofs without overhead";
  const Summary sustained = sustained_.latency_s.summary();
  if (sustained.count > 0) {
    record.sustained_p99_s = sustained.p99;
    verdict["sustained_p99"] = quantile_json(sustained.q99);
    verdict["deadline_s"] = spec_.deadline_s;
    verdict["meets_deadline_at_p99"] = sustained.p99 <= spec_.deadline_s;
    verdict["speedup_needed"] = std::max(1.0, sustained.p99 / spec_.deadline_s);
    // At the confidence: met when the whole interval is below the deadline, missed when it is all above.
    const auto& q = sustained.q99;
    verdict["confidence"] = kConfidence;
    record.at_confidence = q.hi && *q.hi <= spec_.deadline_s  ? "met"
                           : q.lo && *q.lo > spec_.deadline_s ? "missed"
                                                              : "undecided";
  }
  json slices = json::object();
  for (std::size_t s = 0; s < spec_.stages.size(); ++s) {
    if (!spec_.stages[s].slice_s) continue;
    const Summary cold = cold_.stage_service_s[s].summary();
    const Summary hot = sustained_.stage_service_s[s].summary();
    if (hot.count == 0) continue;
    const double slice = *spec_.stages[s].slice_s;
    slices[spec_.stages[s].name] = {{"slice_s", slice},
                                    {"estimate_alone_s", floors_s[s]},
                                    {"bound_alone_s", bounds_s[s]},
                                    {"cold_mean_s", cold.mean},
                                    {"cold_p99_s", cold.p99},
                                    {"sustained_mean_s", hot.mean},
                                    {"sustained_p99_s", hot.p99},
                                    {"fits", hot.p99 <= slice},
                                    {"speedup_needed", std::max(1.0, hot.p99 / slice)}};
  }
  verdict["stage_slices"] = slices;
  // The overall verdict is the worst path's: the largest sustained p99 for its deadline.
  add_worst_path(verdict, paths);
  return verdict;
}

json RunAnalysis::utilisation_json(const engine::RunTotals& totals) const {
  const auto& hw = spec_.hardware;
  const double end = totals.end_s;
  json units = json::object();
  for (std::size_t u = 0; u < hw.units.size(); ++u) {
    json per_stage = json::object();
    for (std::size_t s = 0; s < spec_.stages.size(); ++s)
      if (spec_.stages[s].unit == u)
        per_stage[spec_.stages[s].name] = end > 0 ? totals.stage_busy_core_s[s] / (hw.units[u].cores * end) : 0.0;
    for (std::size_t t = 0; t < spec_.tasks.size(); ++t)
      if (spec_.tasks[t].unit == u)
        per_stage[spec_.tasks[t].name] = end > 0 ? totals.task_busy_core_s[t] / (hw.units[u].cores * end) : 0.0;
    units[hw.units[u].name] = {{"busy", end > 0 ? totals.unit_busy_core_s[u] / (hw.units[u].cores * end) : 0.0},
                               {"by", per_stage}};
  }
  // A level's utilisation: the time-average over the ticks of bytes served / what it could serve at its clock.
  json memory = json::object();
  for (std::size_t lv = 0; lv < hw.memory.size(); ++lv) {
    double area = 0, previous = 0;
    for (const auto& t : ticks_) {
      if (lv < t.level_utilisation.size()) area += t.level_utilisation[lv] * (t.time_s - previous);
      previous = t.time_s;
    }
    memory[hw.memory[lv].name] = {{"utilisation", previous > 0 ? area / previous : 0.0},
                                  {"bytes", totals.level_bytes[lv]}};
  }
  json queues = json::object();
  for (std::size_t s = 0; s < spec_.stages.size(); ++s)
    queues[spec_.stages[s].name] = {{"mean", totals.stage_queue_mean[s]},
                                    {"max", totals.stage_queue_max[s]},
                                    {"capacity", spec_.stages[s].queue_depth}};
  return {{"units", units}, {"memory", memory}, {"queues", queues}};
}

}  // namespace framesim::analysis
