// How one compute unit shares its cores between jobs (a stage's execution of one item, a side-work entry, a
// periodic task's release): the decisions of fifo, priority, preemptive and time_slice scheduling
// (model::SchedulingPolicy), with no SimGrid in sight. The engine tells the scheduler what happened at an instant
// (releases, kernel boundaries, expired quanta, ends) and then asks it once, with decide(), who holds which cores
// from that instant on. Nothing is decided while an instant's events are still coming in, so no result depends on
// the order in which they were told (see README.md, "One instant, one decision").
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
  std::size_t owner = 0;       // who the job is for (an index the caller chose): busy time is kept per owner
  int priority = 0;            // higher first (priority, preemptive)
  int cores = 1;               // how many cores it runs on
  CoreMask pinned = 0;         // the cores it may use (0: any of the unit's)
  double release_s = 0;        // when it was released: ranks equal priorities, and fifo
  std::uint64_t declared = 0;  // the declaration order of whom it is for: breaks ties of equal release times

  enum class State { outside, waiting, holding };
  // Written by the scheduler only.
  State state = State::outside;
  CoreMask held = 0;             // the cores it holds
  bool contested = false;        // a holder whose cores are up for the next decision (boundary, expired quantum)
  bool expired = false;          // time_slice: its quantum ran out at this instant
  bool owes_switch = false;      // a forced switch happened: it idles switch_cost_s before running on
  double round_s = 0;            // time_slice: its place in the round (when it joined the back of it) ...
  std::uint64_t round_late = 0;  // ... and 1 when it joined after the releases of that instant
  double slice_end_s = std::numeric_limits<double>::infinity();  // time_slice: when its quantum ends
};

/// Whether a holder can lose its cores between its kernel boundaries: under `preemptive` at any decision, under
/// `time_slice` when its quantum expires. Under `fifo` and `priority` its cores are contested only at a boundary,
/// so nothing stops a kernel or a launch in progress.
inline bool interrupts_holders(const model::SchedulerSpec& s) {
  return s.policy == model::SchedulingPolicy::preemptive || s.policy == model::SchedulingPolicy::time_slice;
}

class UnitScheduler {
 public:
  /// `owners`: how many owner indices jobs may use (for busy time per owner).
  UnitScheduler(const model::SchedulerSpec& spec, int cores, std::size_t owners);

  /// A new job wants its cores from `now_s` on (it waits until the next decision).
  void release(Job& job, double now_s);
  /// `job`, a holder, ended a kernel and has more to run: under priority and fifo its cores are up for the next
  /// decision (under preemptive and time_slice a boundary changes nothing).
  void boundary(Job& job);
  /// time_slice: `job`'s quantum ended at `now_s`: at the next decision it goes to the back of the round,
  /// behind the jobs released at this instant, and yields if another job can use its cores.
  void expire(Job& job, double now_s);
  /// `job` is done (holding or waiting): it leaves, and its cores are free at the next decision.
  void finish(Job& job, double now_s);

  /// Whether something was told since the last decision.
  bool pending() const { return pending_; }
  struct Decision {
    std::vector<Job*> granted;  // got cores (new holders, and holders that keep theirs after a contest)
    std::vector<Job*> stopped;  // lost their cores (now waiting)
  };
  /// Who holds which cores from `now_s` on, after everything told at this instant. Holders whose cores were not
  /// contested keep them untouched and appear in neither list.
  void decide(double now_s, Decision& out);

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
  void unhold(Job& job);
  void account(double now_s);
  // The parts of decide(), in order: keep_all when nobody waits; else gather and rank the candidates, grant in
  // rank order, apply (stop the losers, confirm the keepers, start the granted).
  void keep_all(double now_s, Decision& out);
  void gather_candidates(double now_s);
  void grant_in_rank_order();
  void apply(double now_s, Decision& out);
  /// The cores `w` takes out of `free`, added to `take`.
  CoreMask pick(const Job& w, CoreMask free, CoreMask take) const;

  model::SchedulerSpec spec_;
  int cores_;
  CoreMask all_;
  CoreMask busy_ = 0;
  std::vector<Job*> holders_;
  std::vector<Job*> waiting_;
  bool pending_ = false;
  double accounted_s_ = 0;
  double busy_core_s_ = 0;
  std::vector<double> owner_core_s_;
  std::vector<Job*> candidates_;  // scratch of decide(): in rank order
  struct Round {                  // scratch of decide(): what one decision found, reused
    CoreMask taken = 0;           // cores already given (uncontested holders first)
    CoreMask contested = 0;       // cores of contested holders
    struct Place {                // an expired holder's place in the round before it went to the back
      Job* job;
      double round_s;
      std::uint64_t late;
    };
    std::vector<Place> places;
    std::vector<Job*> keeps, gets, loses;
    std::vector<CoreMask> new_cores;  // by candidate
  } round_;
};

}  // namespace framesim::engine
