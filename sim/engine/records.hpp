// What the engine reports while it runs: one record per frame, per stage execution, per control
// tick, per governor tick and (in a window) per kernel. Plain data; analysis/ consumes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace framesim::engine {

enum class FrameOutcome {
  completed,   // reached every sink its lineage leads to
  dropped,     // lost on the way (see DropReason)
  side_input,  // consumed only as a side input of a `latest` stage: no end-to-end latency
  unfinished,  // still in flight when the run stopped
};
inline std::string_view frame_outcome_name(FrameOutcome o) {
  switch (o) {
    case FrameOutcome::completed: return "completed";
    case FrameOutcome::dropped: return "dropped";
    case FrameOutcome::side_input: return "side_input";
    case FrameOutcome::unfinished: return "unfinished";
  }
  return "?";
}

enum class DropReason {
  none,
  queue_full,  // a stage's input queue overflowed
  superseded,  // a `latest` stage took a newer frame instead
  unmatched,   // an `all` join lost this frame's partner on another branch
};
inline std::string_view drop_reason_name(DropReason r) {
  switch (r) {
    case DropReason::none: return "";
    case DropReason::queue_full: return "queue_full";
    case DropReason::superseded: return "superseded";
    case DropReason::unmatched: return "unmatched";
  }
  return "?";
}

struct FrameRecord {
  std::int64_t frame = 0;  // global id, in capture order
  std::size_t sensor = 0;
  double capture_s = 0;
  FrameOutcome outcome = FrameOutcome::completed;
  double done_s = 0;  // completion (completed) or the first drop (dropped)
  int drop_stage = -1;
  DropReason reason = DropReason::none;
  double energy_J = 0;                    // dynamic energy of the kernels run for this frame
  double temperature_C = 0;               // die temperature at capture
  std::vector<double> unit_frequency_Hz;  // clock of every unit at capture
};

/// One execution of a stage. Wait (enqueue -> start) covers the queue and the wait for the unit's cores;
/// service (start -> end) includes `blocked_s`, the time it lost its cores mid-way (preempted, a higher
/// priority at a kernel boundary, an expired quantum, switch costs). Response = end - enqueue.
struct StageRecord {
  std::int64_t frame = 0;
  std::size_t stage = 0;
  double capture_s = 0;
  double enqueue_s = 0;  // its trigger input arrived
  double start_s = 0;    // it first held the unit's cores
  double end_s = 0;
  double blocked_s = 0;
  double energy_J = 0;
  int kernels = 0;
};

struct ControlRecord {
  double time_s = 0;
  std::size_t task = 0;
  std::optional<double> staleness_s;  // none until the stage it reads has produced a result
  std::int64_t frame = -1;            // the frame whose result it used
};

/// One release of a periodic task that runs work: release (its nominal tick) -> completion is its response time.
struct TaskRecord {
  std::size_t task = 0;
  std::int64_t job = 0;  // release number
  double release_s = 0;
  double start_s = 0;  // it first held the unit's cores
  double end_s = 0;
  double blocked_s = 0;  // as in StageRecord
  double energy_J = 0;
  bool finished = true;  // false: still pending when the run ended (end_s is the run's end; start_s -1 if it
                         // never held cores)
};

/// An actuation at the end of a cause-effect chain and the capture time of the sensor sample behind it along
/// the chain (data age = actuation - capture).
struct ChainRecord {
  std::size_t chain = 0;
  double actuation_s = 0;
  double capture_s = 0;
};

struct TickRecord {
  double time_s = 0;
  double temperature_C = 0;
  double power_W = 0;    // average over the interval ending here
  double dynamic_J = 0;  // over the interval
  double static_J = 0;
  std::vector<double> unit_frequency_Hz;    // after this tick's governor decision
  std::vector<double> level_bandwidth_Bps;  // bytes served per second over the interval, per memory level
  bool throttled = false;                   // any unit or memory level below its top operating point
  std::vector<double> level_utilisation;    // per memory level: bytes served / what it could serve, over the interval
  std::vector<double> unit_busy;            // per unit: core-time held by jobs / core-time, over the interval
  std::vector<double> stage_queue_depth;    // per stage: time-average of its input queue over the interval
};

struct KernelRecord {
  std::size_t unit = 0;
  int stage = -1;  // -1 for a periodic task
  int task = -1;
  std::string name;
  std::int64_t frame = -1;
  double start_s = 0;  // after dispatch overhead
  double end_s = 0;
  double dispatch_s = 0;
};

/// A stage that still held queued items when a run ended without draining.
struct StuckStage {
  std::string stage;
  std::size_t queued = 0;                // items in its input queues
  std::vector<std::string> waiting_for;  // its inputs with nothing queued: what it waits for (empty: none)
};

/// Why a run ended without draining: the sensors had stopped, and frames were still in the pipeline when the
/// drain limit passed (a stage waiting for an input that never comes).
struct StuckReport {
  double drain_limit_s = 0;
  std::size_t unfinished_frames = 0;
  std::vector<StuckStage> stages;  // in the scenario's stage order
};

/// Totals over the whole run.
struct RunTotals {
  double end_s = 0;                // simulated time when everything drained
  double frames_energy_J = 0;      // dynamic energy attributed to frames
  double tasks_energy_J = 0;       // dynamic energy of periodic tasks
  double background_energy_J = 0;  // memory energy of background traffic
  double static_energy_J = 0;
  std::vector<double> compute_energy_J;  // per unit: arithmetic energy (frames + tasks)
  std::vector<double> memory_energy_J;   // per level: frames + tasks + background
  std::vector<double> unit_static_energy_J;
  std::vector<double> unit_throttled_s;  // time each unit spent below its top operating point
  double throttled_s = 0;                // time anything was throttled
  double in_system_integral = 0;         // integral over time of frames in the system (Little's law)
  std::int64_t frames_captured = 0;
  std::int64_t activities = 0;  // ptasks run
  std::int64_t kernels = 0;     // kernels executed
  bool fast_path = false;       // kernels ran in framesim's fluid system (not one SimGrid activity each)
  double wall_s = 0;
  std::vector<double> unit_busy_core_s;   // per unit: core-seconds held by jobs (running, launching, switching)
  std::vector<double> stage_busy_core_s;  // per stage: core-seconds its executions held
  std::vector<double> task_busy_core_s;   // per task
  std::vector<double> level_bytes;        // per memory level: bytes served (frames, tasks, background)
  std::vector<double> stage_queue_mean;   // per stage: time-average depth of its input queue
  std::vector<int> stage_queue_max;
  std::int64_t preemptions = 0;      // kernels stopped mid-way (preemptive) or switched out (time_slice)
  std::optional<StuckReport> stuck;  // set when the pipeline did not drain (also a warning)
  std::vector<std::string> warnings;
  std::vector<std::string> notes;  // what the run did that a reader should know (e.g. replayed measurements)
  double total_energy_J() const { return frames_energy_J + tasks_energy_J + background_energy_J + static_energy_J; }
};

/// Receives records as the simulation produces them. Frame records arrive in frame order.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void on_frame(const FrameRecord& r) = 0;
  virtual void on_stage(const StageRecord& r) = 0;
  virtual void on_control(const ControlRecord& r) = 0;
  virtual void on_tick(const TickRecord& r) = 0;
  virtual void on_kernel(const KernelRecord& r) = 0;
  virtual void on_task(const TaskRecord& r) = 0;
  virtual void on_chain(const ChainRecord& r) = 0;
};

}  // namespace framesim::engine
