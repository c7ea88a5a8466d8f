// The fast path: jobs whose kernels share nothing but memory buses run in framesim's own fluid system
// (fluid.hpp, SimGrid's L07 sharing computed by framesim) instead of one SimGrid activity per kernel. SimGrid
// keeps the actors, the clock and the queues; a job's actor blocks once per job, and one driver actor wakes when
// the next job ends or something outside the fluid system changes (a new job, a tick, the governor, a port, a
// background step). Every kernel's energy and bytes are still booked by progress, and kernel records in the trace
// window are exact. Used when every unit runs the jobs of at most one stage or task (nobody waits at a kernel
// boundary, nothing is preempted) and `--exact` is not given.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <vector>

#include "engine/fluid.hpp"
#include "engine/ledger.hpp"
#include "engine/plans.hpp"
#include "engine/platform.hpp"
#include "engine/records.hpp"

namespace framesim::engine {

class FastPath : public PlatformListener {
 public:
  FastPath(const model::ScenarioSpec& spec, Platform& platform, Ledger& ledger, RecordSink& sink, RunTotals& totals);

  /// Whether a scenario can run on the fast path: every unit serves at most one stage or task with work.
  static bool eligible(const model::ScenarioSpec& spec);

  /// Runs `kernels` as one job on unit `unit` (`cores` cores); blocks the calling actor until its last kernel ends.
  void run_job(std::size_t unit, int cores, const std::vector<KernelPlan>& kernels, double cycle_scale,
               double byte_scale, int stage, int task, std::int64_t frame, double* bucket);
  /// Brings the fluid system to `now_s` and books the progress of everything in flight (before a tick).
  void sync(double now_s);
  /// A background master's rate from now on (0: silent).
  void set_background_rate(std::size_t background, double rate_Bps);
  /// The driver actor's body: returns once stop() was called.
  void drive();
  void stop();

  void unit_speed_changed(std::size_t unit) override;
  void level_bandwidth_changed(std::size_t level) override;
  void port_bandwidth_changed(std::size_t unit, std::size_t level, double bandwidth_Bps) override;

 private:
  struct Job {
    std::size_t unit = 0;
    int cores = 1;
    const std::vector<KernelPlan>* kernels = nullptr;
    std::size_t next = 0;  // the kernel to issue next
    double cycle_scale = 1, byte_scale = 1;
    int stage = -1, task = -1;
    std::int64_t frame = -1;
    std::size_t flow = 0;
    double dispatch_start_s = 0;
    double launch_s = 0;  // the kernel in flight's latency phase: dispatch overhead and stall
    Running booking;      // the kernel in flight, booked by progress
    bool done = false;
    sg4::SemaphorePtr finished;
  };

  /// The job's first kernel at or after `kernel` with anything to launch or run (kernels->size(): none left).
  std::size_t next_kernel(const Job& job, std::size_t kernel) const;
  /// The flow of kernel `k` of `job` (in a scratch reused from call to call).
  const FluidSystem::FlowSpec& flow_spec(const Job& job, const KernelPlan& k) const;
  Job& job(std::uint64_t id) { return jobs_[static_cast<std::size_t>(id - first_job_)]; }
  const Job& job(std::uint64_t id) const { return jobs_[static_cast<std::size_t>(id - first_job_)]; }
  /// Books the progress of every flow in flight up to the fluid system's present.
  void book_in_flight();
  /// Advances the fluid system to `t_s`, finishing kernels (booked, recorded) and jobs (their actors woken).
  void advance(double t_s);
  /// When the next job will end if nothing outside changes: from a dry run on a copy of the fluid system, which
  /// predicts every running job's end and stays valid until something outside changes.
  double next_job_end_s();
  /// Something outside changed the fluid system: the predictions are void and the driver must look again.
  void changed();

  const model::ScenarioSpec& spec_;
  Platform& platform_;
  Ledger& ledger_;
  RecordSink& sink_;
  RunTotals& totals_;
  FluidSystem fluid_;
  std::vector<std::size_t> unit_cpu_;                 // constraint of each unit's cores
  std::vector<std::size_t> level_bus_;                // constraint of each level's bus
  std::vector<std::vector<std::int64_t>> unit_port_;  // [unit][level]: its Little's-law port, or -1
  std::vector<std::size_t> background_port_;
  std::vector<std::size_t> background_flow_;
  std::vector<double> background_booked_;  // work of each background flow booked so far
  std::deque<Job> jobs_;                   // by id - first_job_
  std::uint64_t first_job_ = 0;
  mutable FluidSystem::FlowSpec scratch_;
  std::vector<double> predicted_ends_s_;  // ascending
  bool predicted_ = false;
  sg4::ConditionVariablePtr wake_;
  sg4::MutexPtr mutex_;
  bool stopping_ = false;
};

}  // namespace framesim::engine
