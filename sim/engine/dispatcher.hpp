// The engine's event loop: one SimGrid actor that owns every decision of a run. It keeps framesim's own timers
// (captures, task releases, ticks, launches, switches, quanta...), runs the kernels of every job through an
// executor (the fluid system, or one SimGrid activity per kernel with --exact), and processes time instant by
// instant: every event of an instant is applied first (kernel and job ends, timers), and only then does each
// unit's scheduler decide who runs from that instant on (README.md, "One instant, one decision").
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "engine/ledger.hpp"
#include "engine/plans.hpp"
#include "engine/platform.hpp"
#include "engine/records.hpp"
#include "engine/scheduler.hpp"

namespace framesim::engine {

/// Whoever releases jobs on a unit: a stage, one of a stage's side-work entries, or a periodic task. One record
/// for all three: the unit and cores its jobs use, their priority, their kernels, and its random stream.
struct Worker {
  std::size_t unit = 0;
  int cores = 1;
  CoreMask pinned = 0;
  int priority = 0;
  std::size_t owner = 0;       // busy time is kept per owner: stage index, or stages + task index
  std::uint64_t declared = 0;  // declaration order (ties of equal release times)
  int stage = -1, task = -1;   // for kernel records
  std::vector<KernelPlan> kernels;
  std::mt19937_64 rng;
};

/// One job as the dispatcher runs it: the scheduler's view, where it is in its kernels, and how it did.
struct RunJob : Job {
  std::uint64_t id = 0;
  const Worker* worker = nullptr;
  double cycle_scale = 1, byte_scale = 1;
  double* bucket = nullptr;  // where its energy is booked
  std::int64_t frame = -1;
  std::function<void(RunJob&)> done;  // called once its last kernel ended (the job then goes away)

  // Where it is.
  enum class Phase { idle, launching, switching, running };
  Phase phase = Phase::idle;
  std::size_t next = 0;      // the kernel in flight, or the next one
  bool in_kernel = false;    // kernel `next` has begun (its launch or its work)
  double launch_left_s = 0;  // of kernel `next`'s launch still to pass (the executor's, when it runs launches)
  double kernel_done = 0;    // fraction of kernel `next`'s work done
  double phase_start_s = 0;
  double dispatch_start_s = 0;         // kernel `next`'s launch began
  double work_start_s = -1;            // kernel `next`'s work began (-1: not yet)
  std::uint64_t generation = 0;        // launch and switch timers of an older generation are void
  std::uint64_t slice_generation = 0;  // quantum timers likewise
  bool had_cores = false;              // it held cores before the decision being applied
  Running booking;                     // the kernel in flight, booked by progress
  std::size_t flow = 0;                // fluid executor: its flow
  sg4::ExecPtr exec;                   // exact executor: its activity
  double exec_start_s = 0;             // exact executor: when its activity started

  // How it did.
  double start_s = -1;  // it first held cores
  double lost_s = 0;    // it last lost them
  double blocked_s = 0;
  double energy_J = 0;  // when `bucket` is its own
};

class Executor;

class Dispatcher {
 public:
  /// `fluid`: kernels run in framesim's fluid system (SimGrid sees one wait per instant with a timer); else each
  /// kernel is a SimGrid activity.
  Dispatcher(const model::ScenarioSpec& spec, Platform& platform, Ledger& ledger, RecordSink& sink, RunTotals& totals,
             bool fluid);
  ~Dispatcher();

  /// Timer kinds, in the order they are applied within one instant (after the kernel and job ends).
  enum class Kind { launch, switched, quantum, tick, contention, background, capture, release, check };
  /// Calls `fire` at `t_s` (within the instant containing it). `key` orders timers of one kind in an instant.
  void at(double t_s, Kind kind, std::uint64_t key, std::function<void()> fire);

  /// Releases a job of `worker` on its unit at the current instant, ranked as released at `release_s`;
  /// `done(job)` is called when its last kernel ended.
  void release(const Worker& worker, double release_s, double cycle_scale, double byte_scale, std::int64_t frame,
               double* bucket, std::function<void(RunJob&)> done);

  /// The instant being processed.
  double now() const { return now_; }
  /// Books the progress of every kernel in flight up to now (before a tick or a contention sample).
  void book_in_flight();
  /// A background master's rate from now on (fluid executor; SimGrid's own actors step theirs).
  void set_background_rate(std::size_t background, double rate_Bps);
  /// Called after every instant (the end-of-run checks); may call stop().
  void after_each_instant(std::function<void()> check) { after_instant_ = std::move(check); }
  /// Runs until stop(); the body of the dispatcher actor.
  void run();
  void stop() { stopped_ = true; }
  /// Whether kernels run in the fluid system.
  bool fluid() const { return fluid_; }
  PlatformListener* listener();
  /// Kernel `j.next` of `j` ended at `t_s`, the only event of its instant (no other kernel end, no timer): the
  /// executor asks whether `j` goes straight on to its next kernel. It does when the decision at that boundary is
  /// known without deciding: `j` has another kernel, its unit's executor runs launches itself, and nobody waits on
  /// the unit (a holder alone keeps its cores under `fifo` and `priority`, and no other event of the instant can
  /// change that). Then the kernel is recorded and the next one started as the instant would (README.md, "One
  /// instant, one decision"); else (false) nothing was done and the instant is the dispatcher's.
  bool go_on(RunJob& j, double t_s);

 private:
  /// A timer: `fire`, or for a job's own timers (launch, switched, quantum) the job and the generation it was set
  /// in (void once the job moved on), handled without a function object.
  /// A timer in the heap: plain data, moved as a few words (its function, if any, waits in functions_).
  struct Timer {
    double t_s;
    Kind kind;
    std::uint64_t key;
    std::uint64_t seq;
    std::size_t function = 0;  // functions_[function] for a timer set with at(); unused for a job's own
    RunJob* job = nullptr;
    std::uint64_t generation = 0;
  };
  struct Later {
    bool operator()(const Timer& a, const Timer& b) const {
      if (a.t_s != b.t_s) return a.t_s > b.t_s;
      return a.seq > b.seq;
    }
  };

  /// Sets a job's own timer (launch, switched, quantum) at `t_s`, for its current generation `gen`.
  void at_job(double t_s, Kind kind, RunJob& j, std::uint64_t gen);
  void fire(Timer& timer);
  void instant();
  void settle();
  void apply(UnitScheduler::Decision& d);
  void proceed(RunJob& j);
  /// Kernel `j.next` begins now: its launch (the dispatch overhead and the stall its compute will not hide).
  void begin_kernel(RunJob& j);
  void start_kernel(RunJob& j);
  void kernel_ended(RunJob& j);
  /// Writes kernel `j.next`'s record (when inside the kernel trace window), ended now.
  void record_kernel(const RunJob& j);
  void finish(RunJob& j);
  void stop_job(RunJob& j);
  std::size_t next_kernel(const RunJob& j, std::size_t from) const;
  UnitScheduler& scheduler(const RunJob& j) { return *platform_.units[j.worker->unit].scheduler; }

  const model::ScenarioSpec& spec_;
  Platform& platform_;
  RecordSink& sink_;
  RunTotals& totals_;
  bool fluid_;
  std::unique_ptr<Executor> executor_;
  std::priority_queue<Timer, std::vector<Timer>, Later> timers_;
  std::uint64_t timer_seq_ = 0;
  std::vector<std::function<void()>> functions_;  // what the timers set with at() do, by slot
  std::vector<std::size_t> free_functions_;       // slots of functions_ already fired
  std::deque<RunJob> pool_;                       // every job record ever made; reused once done
  std::vector<RunJob*> free_;
  std::uint64_t next_job_ = 0;
  std::vector<RunJob*> completed_;    // scratch: kernel ends of the instant
  std::vector<RunJob*> ready_;        // jobs that hold cores and go on once the instant is settled
  std::vector<RunJob*> go_;           // scratch: the ready jobs of one round of settle()
  std::vector<Timer> batch_;          // scratch: timers of the instant
  UnitScheduler::Decision decision_;  // scratch: one unit's decision
  std::function<void()> after_instant_;
  double now_ = 0;
  bool stopped_ = false;
  std::uint64_t stamp_ = 0;  // generations of timers: unique over the run (job records are reused)
};

}  // namespace framesim::engine
