// The run folder: receives the engine's records, streams frames.csv, stages.csv, timeseries.csv and
// trace.json as they come, keeps the samples statistics need, and at the end writes summary.json,
// the SVG plots and the terminal summary. Counted frames are those captured after the warm-up; the
// cold window is the first part of the counted time, the sustained window the last part.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "breakdown.hpp"
#include "engine/records.hpp"
#include "model/scenario.hpp"
#include "paths.hpp"
#include "responses.hpp"
#include "run_summary.hpp"
#include "slowdown.hpp"
#include "stats.hpp"
#include "trace_writer.hpp"

namespace framesim::analysis {

/// Statistics of one window of the run.
struct WindowStats {
  double from_s = 0, to_s = 0;
  Samples latency_s;                                                    // end to end, completed frames
  std::int64_t frames = 0, completed = 0;                               // counted, completed
  Misses misses;                                                        // among the counted frames
  std::vector<Samples> stage_wait_s, stage_service_s, stage_latency_s;  // per stage
  std::vector<Samples> stage_response_s, stage_blocked_s;               // per stage
  std::vector<std::int64_t> stage_slice_missed;                         // per stage with a slice: response > slice
  Samples temperature_C;
  std::vector<Samples> unit_frequency_Hz;
};

class RunAnalysis : public engine::RecordSink {
 public:
  /// Files are written into `folder` (which must exist and be empty: a temporary folder renamed at the end). An
  /// empty `folder`: no file at all, the same summary (a sweep's point whose run folder is not kept).
  RunAnalysis(const model::ScenarioSpec& spec, std::filesystem::path folder);

  void on_frame(const engine::FrameRecord& r) override;
  void on_stage(const engine::StageRecord& r) override;
  void on_control(const engine::ControlRecord& r) override;
  void on_tick(const engine::TickRecord& r) override;
  void on_kernel(const engine::KernelRecord& r) override;
  void on_task(const engine::TaskRecord& r) override;
  void on_chain(const engine::ChainRecord& r) override { responses_.on_chain(r); }

  /// Where the run came from (version, command line, overrides, input hashes), written into summary.json.
  void set_provenance(Provenance provenance) { provenance_ = std::move(provenance); }
  /// The run's windows were scaled (summary.json: windows.scaled).
  void set_scaled_windows(ScaledWindows w) { scaled_windows_ = std::move(w); }
  /// What finish returns: the summary with its details, as summary.json holds it (the terminal summary and
  /// report.html show it), or its record alone (the figures a sweep keeps of a point; no folder is written).
  enum class Finish { whole, record };
  /// Closes the streams and writes summary.json (through write_run_summary), the plots and report.html. Returns
  /// the summary as read back from what is written (read_back; read_back_record for Finish::record).
  RunSummary finish(const engine::RunTotals& totals, Finish what = Finish::whole);
  /// The terminal summary of a finished run, from its summary as read back (read_back: with its details).
  std::string text(const RunSummary& s) const;

 private:
  /// A run folder is written (the folder given is not empty): its trace, CSVs and summary files.
  bool files() const { return !folder_.empty(); }
  bool counted(double capture_s) const { return capture_s >= spec_.warmup_s; }
  void close_streams();
  void write_frame(const engine::FrameRecord& r, bool completed, double latency, bool met, bool in_stats);
  void write_tick(const engine::TickRecord& r);
  // Each part of summary.json: into the record `s` and its details `d`.
  void fill_frames(RunSummary& s, RunDetails& d) const;
  void fill_staleness(RunSummary& s, RunDetails& d) const;
  void fill_energy(const engine::RunTotals& totals, RunSummary& s, RunDetails& d) const;
  void fill_thermal(const engine::RunTotals& totals, RunSummary& s, RunDetails& d) const;
  LittleDetails little(const engine::RunTotals& totals) const;
  void fill_verdict(RunSummary& s, RunDetails& d) const;
  void fill_utilisation(const engine::RunTotals& totals, RunSummary& s, RunDetails& d) const;
  std::string svg_latency_cdf() const;
  std::string svg_latency_over_time() const;
  std::string svg_thermal() const;
  std::string svg_path_tails() const;
  std::string svg_staleness_cdf() const;
  std::string svg_queue_depth() const;
  std::string html_report(const RunSummary& s) const;
  /// Whether governor tick `tick` closes a full period (the last one, cut short by the end of the run, does not).
  bool full_period(std::size_t tick) const;

  const model::ScenarioSpec& spec_;
  std::filesystem::path folder_;
  std::ofstream frames_csv_, stages_csv_, timeseries_csv_, kernels_csv_;
  std::optional<TraceWriter> trace_;  // when a run folder is written (folder_ not empty)
  model::StageFloors floors_;         // each stage's network planned once, for the breakdown, slowdown and verdict
  Breakdown breakdown_;
  Slowdown slowdown_;
  std::optional<Provenance> provenance_;
  std::optional<ScaledWindows> scaled_windows_;

  WindowStats all_, cold_, sustained_;
  std::vector<Samples> staleness_s_;     // per task
  Samples energy_J_;                     // dynamic energy of primary-sensor frames
  std::int64_t primary_frames_ = 0;      // counted
  std::int64_t primary_all_frames_ = 0;  // over the whole run
  double primary_dynamic_J_ = 0;
  std::map<std::string, std::int64_t> drops_by_;        // "stage: reason"
  std::vector<std::int64_t> side_inputs_, unfinished_;  // per sensor
  std::vector<int> miss_run_;                           // per sensor, current run of misses or drops
  int longest_miss_run_ = 0;
  double sojourn_sum_s_ = 0;
  std::int64_t frames_total_ = 0;

  /// Latency over time, in a fixed number of bins of capture time (memory flat in the run length): per bin, the
  /// first capture and the largest latency of its counted, completed frames.
  struct LatencyBin {
    double first_capture_s = 0, max_latency_s = 0;
    std::size_t frames = 0;
  };
  static constexpr std::size_t kLatencyBins = 3000;
  std::vector<LatencyBin> latency_bins_ = std::vector<LatencyBin>(kLatencyBins);
  std::vector<engine::TickRecord> ticks_;
  std::vector<std::map<double, double>> time_at_frequency_s_;  // per unit: frequency -> seconds
  double previous_tick_s_ = 0;
  double wall_s_ = 0;
  std::vector<double> previous_frequency_Hz_;
  Responses responses_;
  PathTracker paths_;
};

}  // namespace framesim::analysis
