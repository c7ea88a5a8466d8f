// The queues and joins between sensors and stages: what travels (items), each stage's input queues with their
// depth and overflow policy, the `all` join (the same frame from every input) and the `latest` policy (the newest
// trigger, the last side input), the copies of frames they hold, and what a stage still waits for when a run
// ends without draining. No SimGrid and no jobs: the engine pushes items and takes a stage's inputs when the stage
// is free; the times it passes are the instant it is processing. Tested alone (tests/unit/pipeline_test.cpp).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "engine/frames.hpp"
#include "model/scenario.hpp"

namespace framesim::engine {

/// What travels through queues: a frame, and for each cause-effect chain the capture time of the chain's sensor
/// sample behind it along the chain's path (NaN where the item is not on that path).
struct Item {
  std::int64_t frame = 0;
  double capture_s = 0;
  double enqueue_s = 0;
  std::vector<double> chain_capture_s;
};

/// The time-average and the maximum of a queue's depth.
struct QueueGauge {
  std::size_t depth = 0;
  std::size_t max = 0;
  double since_s = 0;
  double integral = 0;         // depth x seconds, whole run
  double window_integral = 0;  // since the last tick
  void set(double now_s, std::size_t new_depth) {
    const double area = static_cast<double>(depth) * (now_s - since_s);
    integral += area;
    window_integral += area;
    since_s = now_s;
    depth = new_depth;
    max = std::max(max, depth);
  }
};

/// One execution's inputs, as taken from a stage's queues.
struct Taken {
  Item trigger;        // its frame is the one processed; chain captures are those of the inputs it took
  double ready_s = 0;  // when the last input it took was enqueued: the job's release time
};

class Pipeline {
 public:
  Pipeline(const model::ScenarioSpec& spec, FrameBook& frames);

  /// A sensor's capture at `capture_s`, processed in the instant `now_s` (within 1 ps of it): a new frame, copied
  /// into every queue the sensor feeds (one hold of the frame is released afterwards). Returns the frame's id.
  std::int64_t capture(std::size_t sensor, double capture_s, double now_s, double temperature_C,
                       std::vector<double> frequency_Hz);
  /// Stage `stage` finished `item` at `now_s`: it is its latest result, and a copy goes to every consumer (or
  /// it reached a sink). The processing copy is released.
  void finished(std::size_t stage, const Item& item, double now_s);
  /// Whether stage `stage` can take a set of inputs now; discards what can never be used (unmatched `all` heads).
  bool ready(std::size_t stage, double now_s);
  /// Takes the inputs of one execution (ready() must be true).
  Taken take(std::size_t stage, double now_s);

  /// The newest result of stage `stage` (what a control loop reads), if any.
  const std::optional<Item>& latest_result(std::size_t stage) const { return stages_[stage].latest_result; }
  /// Stages fed by `stage` (consumers, in declaration order of their inputs).
  std::size_t stages() const { return stages_.size(); }
  QueueGauge& gauge(std::size_t stage) { return stages_[stage].queue; }
  const QueueGauge& gauge(std::size_t stage) const { return stages_[stage].queue; }

  /// After the sensors stopped: when every copy still in the pipeline waits as a side input of a `latest` stage,
  /// no trigger can come to use it: those lineages end as passed-over side inputs. Returns whether it did.
  bool release_unusable_side_inputs(double now_s);
  /// Each stage still holding queued items and the inputs it waits for (in stage order).
  std::vector<StuckStage> stuck() const;
  /// `latest` stages that never received a side input (a warning each).
  std::vector<std::pair<std::size_t, std::size_t>> never_received() const;

 private:
  struct StageQueues {
    std::vector<std::deque<Item>> queues;                      // one per input edge
    std::vector<std::optional<Item>> last_side;                // `latest`: the side input last used
    std::vector<std::pair<std::size_t, std::size_t>> outputs;  // (consumer stage, its input edge)
    std::optional<Item> latest_result;
    QueueGauge queue;
  };

  void push(std::size_t stage, std::size_t edge, Item item, double now_s);
  void drop(std::int64_t id, std::size_t stage, DropReason reason, double now_s);
  std::size_t depth(const StageQueues& st) const;

  const model::ScenarioSpec& spec_;
  FrameBook& frames_;
  std::vector<StageQueues> stages_;
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> sensor_outputs_;
};

}  // namespace framesim::engine
