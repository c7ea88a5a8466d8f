// Why a frame is late: its critical path (from the stage that finished last back, through the input that
// arrived last, to the sensor) and where its time went on that path. Per stage on the path:
//   queue      enqueue -> start: its input queue and the wait for the unit's cores
//   blocked    the time it lost the unit mid-way to a higher priority (or a quantum, a switch cost)
//   floor      the stage alone on an idle SoC at the nominal clocks (the budget's estimate, effective roofs)
//   throttling the floor at the clocks in force at capture minus the nominal floor
//   bus        service - blocked - floor at the clocks in force, for a stage that moves bytes: memory
//              contention (and its work variability, when it has a `variability` distribution)
//   variability the same excess for a stage given as a compute time (it moves no bytes: no bus to wait for)
//   gap        the previous stage's end (or the capture) -> this stage's enqueue
// The parts add up to the end-to-end latency. Kept for every counted, completed frame in a compact form:
// the worst frames in full, and the tail (frames at or above p99) as means and the stage that dominates it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/records.hpp"
#include "model/scenario.hpp"
#include "run_details.hpp"
#include "spill.hpp"

namespace framesim::analysis {

/// The parts of a frame's latency, in this order.
enum class Part { queue, blocked, floor, throttling, bus, variability, gap };
inline constexpr std::size_t kParts = 7;
/// "queue", "blocked", ...: the JSON keys (with "_s") and column names of the parts.
const char* part_name(Part p);

struct PathStep {
  std::size_t stage = 0;
  double start_s = 0, end_s = 0;
  std::array<double, kParts> parts_s{};
};

struct FramePath {
  std::int64_t frame = 0;
  double capture_s = 0, latency_s = 0;
  std::vector<PathStep> steps;  // from the sensor to the last stage
  std::array<double, kParts> totals_s() const;
};

class Breakdown {
 public:
  /// `floors`: the stages' floors (of `spec`) at each operating point of their units.
  Breakdown(const model::ScenarioSpec& spec, const model::StageFloors& floors, std::size_t worst = 10);

  /// A stage execution: kept until its frame's record.
  void on_stage(const engine::StageRecord& r);
  /// The execution of a stage feeding `r` in the same frame (the input that arrived last), if still kept.
  const engine::StageRecord* predecessor(const engine::StageRecord& r) const;
  /// The frame's record: its path is taken apart when `counted` (a counted, completed frame).
  void on_frame(const engine::FrameRecord& r, bool counted);

  /// A window of capture times and the p99 of its frames' latencies (the verdict's sustained window).
  struct Window {
    double from_s = 0, to_s = 0;  // captures in [from_s, to_s)
    double p99_s = 0;
  };
  /// summary.json's "why" and its sustained tail.
  struct Result {
    WhyDetails why;
    std::optional<TailDetails> sustained_tail;
  };
  /// The method, the parts, the worst frames and the tail: `p99_s` sets the tail (every counted frame at or above
  /// it), `sustained` the sustained tail (the frames captured in the window at or above the window's p99: the
  /// frames the verdict's sustained p99 judges).
  Result finish(std::optional<double> p99_s, std::optional<Window> sustained = std::nullopt) const;
  /// The path of a frame from its kept stage executions (empty when none are kept).
  FramePath path_of(const engine::FrameRecord& r) const;

 private:
  double floor_s(std::size_t stage, double frequency_Hz) const;

  const model::ScenarioSpec& spec_;
  std::size_t worst_count_;
  std::vector<std::vector<double>> floors_s_;                         // per stage, per operating point of its unit
  std::vector<bool> moves_bytes_;                                     // per stage
  std::map<std::int64_t, std::vector<engine::StageRecord>> pending_;  // per frame not yet recorded
  std::int64_t last_frame_ = -1;                                      // frame records arrive in frame order
  std::vector<FramePath> worst_;                                      // by decreasing latency, then frame
  /// The tail's means over the counted frames `take(latency, capture)` keeps; empty when it keeps none.
  template <class Take>
  std::optional<TailDetails> tail(double p99_s, Take take) const;

  /// Per counted frame, on disk (memory flat in the run length): its latency, its parts, per stage its time on
  /// the critical path (gap excluded), and its capture time.
  RecordSpill frames_;
};

}  // namespace framesim::analysis
