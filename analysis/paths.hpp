// Every sensor's path to every sink, judged on its own. A frame's end-to-end latency follows only the
// lineage that triggers each stage, so a sensor whose samples reach a sink as the side input of a `latest`
// stage (a rear camera joined into fusion) has no frame latency at all; its path is judged here, from the
// records the engine already emits (stage executions and frames), with the engine's own take rule rebuilt:
//
// - a stage takes its inputs when its trigger has arrived and its previous execution has ended
//   (max(enqueue, previous end), or the first arrival on a side input that had none yet);
// - along a trigger edge (the first input of a `latest` stage, every input of an `all` join) an execution
//   carries the sample its frame carried at the stage before;
// - along a side edge it carries the sample behind the newest item queued there at the take (the item the
//   queue kept: with drop_newest, the first `depth` since the last take), or the one it took last time.
//
// A sample's path latency is capture -> the end of the first sink execution that used it; a sample that a
// newer one overtook (it never reached the sink) is dropped on the path; one still undelivered when the run
// ended is neither. Data age is measured at every sink execution: its end - the capture of the sample behind
// it, as a cause-effect chain reports it (the engine's chain records are the test oracle). A push at the very
// instant of a take counts as before it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/records.hpp"
#include "model/scenario.hpp"
#include "run_summary.hpp"
#include "stats.hpp"

namespace framesim::analysis {

/// One route from a sensor to a sink through the stage DAG.
struct PathSpec {
  std::string name;        // "cam -> isp -> detector -> fusion"
  std::string short_name;  // "cam -> fusion", or the name when another route joins the same sensor and sink
  std::size_t sensor = 0;
  std::vector<std::size_t> stages;  // in data-flow order; stages.back() is the sink
  std::vector<std::size_t> edges;   // per stage: the input edge it reads the element before from
  double deadline_s = 0;            // the smaller of the sensor's and the sink's, else the scenario's
  bool via_side_input = false;      // some hop is a side input of a `latest` stage
};

/// Every route from every sensor to every sink, sensors in order, routes in depth-first order of the stages.
std::vector<PathSpec> enumerate_paths(const model::ScenarioSpec& spec);

class PathTracker {
 public:
  /// `sustained_from_s`: the start of the sustained window (captures at or after it count for the verdict).
  PathTracker(const model::ScenarioSpec& spec, double sustained_from_s);

  void on_frame(const engine::FrameRecord& r);
  void on_stage(const engine::StageRecord& r);
  /// A path of summary.json's "paths": its figures other commands read, and the rest.
  struct Result {
    PathSummary summary;
    PathDetails details;
  };
  /// Processes what is left; one entry per path, in enumerate_paths order.
  std::vector<Result> finish();

  const std::vector<PathSpec>& paths() const { return paths_; }
  /// Path latency of the counted samples delivered (every window), for the plots.
  const Samples& latency_s(std::size_t path) const { return state_[path].latency_s; }

 private:
  struct Sample {
    double capture_s = 0;
    std::int64_t frame = -1;
  };
  struct Push {
    double time_s = 0;
    std::optional<Sample> sample;
  };
  /// One hop of one path: what arrives at its stage along its edge.
  struct Hop {
    std::map<std::int64_t, std::optional<Sample>> carried;  // trigger edge: frame -> sample behind it
    std::deque<Push> queued;                                // side edge: pushed since the last take
    std::optional<Sample> slot;                             // side edge: what the last take kept
    bool slot_filled = false;
  };
  struct PathState {
    std::vector<Hop> hops;
    std::int64_t last_delivered = -1;
    std::set<std::int64_t> delivered_early;  // delivered before its frame record arrived
    std::deque<Sample> undecided;            // frame records of the sensor neither delivered nor overtaken yet
    Samples latency_s, sustained_latency_s, data_age_s;
    std::int64_t samples = 0, delivered = 0, sustained_samples = 0;
    Misses misses, sustained_misses;  // among samples, among sustained_samples
  };
  struct Event {
    bool frame = false;
    engine::StageRecord stage;
    std::int64_t id = 0;
    std::size_t sensor = 0;
    double capture_s = 0;
  };

  void drain(double watermark_s);
  void process_stage(const engine::StageRecord& r);
  void process_frame(std::int64_t id, std::size_t sensor, double capture_s);
  void deliver(std::size_t p, const std::optional<Sample>& sample, double end_s);
  void dropped_on(std::size_t p, const Sample& s);
  bool counted(double capture_s) const { return capture_s >= spec_.warmup_s; }

  const model::ScenarioSpec& spec_;
  double sustained_from_s_;
  std::vector<PathSpec> paths_;
  std::vector<PathState> state_;
  std::vector<bool> waits_for_captures_;           // per stage: a path reads a sensor through one of its side edges
  std::vector<double> previous_end_s_;             // per stage
  std::vector<std::vector<double>> first_push_s_;  // per stage, per edge: first arrival (-1: none yet)
  std::deque<Event> pending_;                      // in arrival order
  double watermark_s_ = -1;                        // every capture up to here is known
};

}  // namespace framesim::analysis
