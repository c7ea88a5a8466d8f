// trace.json, Chrome Trace Event JSON for Perfetto and chrome://tracing, written as the records come.
// Process 1 is the pipeline: a track per stage (its executions, drops as instants), a "frames" track
// (deadline misses as instants), and the SoC-wide counters (temperature, power, bandwidth and utilisation
// of each memory level, queue depth of each stage). Each unit is a process of its own (pid 2 + unit index):
// a track per stage or task with its kernels, its clock and busy-fraction counters, and an instant at every
// clock step. Flow arrows link each stage execution of a frame to the execution that fed it. Counters of
// interval averages (power, bandwidth, utilisation, busy, queue) are placed at the start of their interval,
// instantaneous ones (temperature, clocks) at their tick, and every counter has a sample at t = 0.
#pragma once

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "engine/records.hpp"
#include "model/scenario.hpp"

namespace framesim::analysis {

class TraceWriter {
 public:
  /// Opens `file` and writes the metadata and the counters at t = 0. Throws UserError if it cannot.
  TraceWriter(const model::ScenarioSpec& spec, const std::filesystem::path& file);

  /// A stage execution's slice, and a flow arrow from `fed_by` (the execution of the same frame it consumed).
  void stage(const engine::StageRecord& r, const engine::StageRecord* fed_by);
  /// A drop (on the stage that dropped it) or a deadline miss (on the frames track) as an instant.
  void frame(const engine::FrameRecord& r, bool missed);
  /// The counters of a governor tick; an instant for each unit whose clock changed.
  void tick(const engine::TickRecord& r);
  void kernel(const engine::KernelRecord& r);
  /// A periodic task's release, start to end, on the task's track of its unit (wait and response in its args).
  void task(const engine::TaskRecord& r);
  /// Ends the JSON. Returns false if the file could not be written.
  bool close();

 private:
  void event(const std::string& json);
  /// The track of a stage's or task's work on a unit, named on first use.
  int owner_track(std::size_t unit, int stage, int task);
  void counter(int pid, const std::string& name, double ts_us, const std::string& key, double value);

  const model::ScenarioSpec& spec_;
  std::ofstream out_;
  bool first_ = true;
  std::set<std::pair<std::size_t, int>> kernel_tracks_;  // (unit, owner)
  double previous_tick_s_ = 0;
  std::vector<double> frequency_Hz_;  // per unit, in force
  std::int64_t flows_ = 0;
};

}  // namespace framesim::analysis
