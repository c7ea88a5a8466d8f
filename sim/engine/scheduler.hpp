// How one compute unit shares its cores between jobs (a stage's execution of one item, a periodic task's
// release): the decisions of fifo, priority, preemptive and time_slice scheduling (model::SchedulingPolicy),
// with no SimGrid in sight. The engine asks at a job's release, at each of its kernel boundaries, when its
// quantum runs out and when it ends; the scheduler answers who holds which cores and whom to wake or stop.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "model/hardware.hpp"

namespace framesim::engine {

/// A set of a unit's cores, bit i for core i.
using CoreMask = std::uint64_t;
inline constexpr int kMaxCores = 64;

/// One job's claim on a unit's cores. The caller owns it (it lives as long as the job); the scheduler keeps a
/// pointer while the job waits or holds cores.
struct Job {
  std::size_t owner = 0;  // who the job is for (an index the caller chose): busy time is kept per owner
  int priority = 0;       // higher first (priority, preemptive)
  int cores = 1;          // how many cores it runs on
  CoreMask pinned = 0;    // the cores it may use (0: any of the unit's)

  enum class State { outside, waiting, holding };
  // Written by the scheduler only.
  State state = State::outside;
  CoreMask held = 0;         // the cores it holds
  std::uint64_t order = 0;   // release order; time_slice: its place in the round
  bool owes_switch = false;  // a forced switch happened: it idles switch_cost_s before running on
  double slice_end_s = std::numeric_limits<double>::infinity();  // time_slice: when its quantum ends
};

class UnitScheduler {
 public:
  /// `owners`: how many owner indices jobs may use (for busy time per owner).
  UnitScheduler(const model::SchedulerSpec& spec, int cores, std::size_t owners);

  /// A new job wants its cores at `now_s`. True when it holds them at once. Under `preemptive`, holders of lower
  /// priority whose cores it needs lose them: they are appended to `preempted` (now waiting, owing a switch).
  bool release(Job& job, double now_s, std::vector<Job*>& preempted);
  /// `job` ended a kernel and has more to run. True: it keeps its cores. False: it waits, because a job that
  /// ranks above it wants them (priority, fifo) or its quantum is over and another job waits (time_slice).
  /// Jobs that got cores are appended to `granted`.
  bool boundary(Job& job, double now_s, std::vector<Job*>& granted);
  /// time_slice: `job`'s quantum ended mid-kernel. True: it yields (now waiting at the back of the round, owing a
  /// switch; `granted` as above). False: nobody else can use its cores, and a new quantum starts.
  bool quantum_expired(Job& job, double now_s, std::vector<Job*>& granted);
  /// `job` is done (holding or waiting): its cores go to the waiting jobs that can use them (`granted`).
  void finish(Job& job, double now_s, std::vector<Job*>& granted);

  const model::SchedulerSpec& spec() const { return spec_; }
  int cores() const { return cores_; }
  /// Cores held now.
  int busy_cores() const;
  /// Jobs waiting now.
  std::size_t waiting() const { return waiting_.size(); }
  /// Core-seconds held until `now_s`, in all and per owner (booked at every change and by this call).
  double busy_core_s(double now_s);
  const std::vector<double>& owner_core_s() const { return owner_core_s_; }

 private:
  bool ranks_before(const Job& a, const Job& b) const;
  CoreMask allowed(const Job& job) const { return job.pinned ? job.pinned & all_ : all_; }
  /// Grants cores to waiting jobs in rank order; a job that cannot get its cores reserves the ones it may use,
  /// so nobody ranked below it overtakes it there.
  void dispatch(double now_s, std::vector<Job*>& granted);
  void enqueue(Job& job);
  void unhold(Job& job);
  void account(double now_s);

  model::SchedulerSpec spec_;
  int cores_;
  CoreMask all_;
  CoreMask busy_ = 0;
  std::vector<Job*> holders_;
  std::vector<Job*> waiting_;
  std::uint64_t next_order_ = 0;
  double accounted_s_ = 0;
  double busy_core_s_ = 0;
  std::vector<double> owner_core_s_;
};

}  // namespace framesim::engine
