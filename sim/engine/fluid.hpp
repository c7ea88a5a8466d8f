// The sharing of SimGrid's ptask_L07 model, computed by framesim itself: a fluid system of flows (kernels,
// background streams) over constraints (a unit's cores, a memory level's bus, a Little's-law port), each flow
// progressing at one rate, the rates set by the "fair bottleneck" solver SimGrid's L07 uses. It lets the
// engine run a whole job's kernels between two SimGrid events without issuing an activity per kernel; the
// results agree with SimGrid's own to rounding (tests/engine/fluid_test.cpp compares them flow by flow).
//
// What it replicates (SimGrid 3.32, src/surf/ptask_L07.cpp and src/kernel/lmm/fair_bottleneck.cpp):
//   - a flow is one variable x (progress per second, work 1); each element adds weight * x to its constraint;
//   - its bound: speed / cycles per core entry (one core per entry), applied once its latency has elapsed;
//   - while its latency lasts it consumes nothing and makes no progress;
//   - fair bottleneck: repeatedly, every constraint offers remaining / (number of unfixed flows on it) to each,
//     every unfixed flow takes the least of (offer / weight) over its constraints and of what its bound leaves,
//     constraints are charged weight * increment for every flow on them (flows fixed by their bound in an earlier
//     round are charged again, as SimGrid does), and a constraint left with less than 1e-5 fixes its flows.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace framesim::engine {

class FluidSystem {
 public:
  struct Element {
    std::size_t constraint = 0;
    double weight = 0;
  };
  struct FlowSpec {
    std::vector<Element> elements;  // one per ptask entry (core entries separately; a link once with its bytes)
    std::size_t speed_of = 0;       // the constraint whose speed bounds it (a unit's cores)
    double cycles_per_entry = 0;    // 0: no compute, no bound
    double latency_s = 0;
    bool endless = false;  // never finishes (a background stream): progress() is the work done
  };

  /// A constraint of `capacity` (units per second). `speed` and `cores`, for a unit's cores: capacity =
  /// speed x cores, and flows computing on it are bounded by speed / cycles per entry.
  std::size_t add_constraint(double capacity, double speed = 0, int cores = 1);
  double capacity(std::size_t constraint) const { return constraints_[constraint].capacity; }
  /// A new capacity (a link's bandwidth) from now on.
  void set_capacity(std::size_t constraint, double capacity);
  /// A new speed of a unit (a pstate): its capacity and the bounds of the flows computing on it.
  void set_speed(std::size_t constraint, double speed);

  /// Starts a flow at the current time; `owner` comes back when it finishes.
  std::size_t start(const FlowSpec& spec, std::uint64_t owner);
  /// Removes a flow before it finishes (what it did stays done).
  void stop(std::size_t flow);

  double now_s() const { return now_s_; }
  /// When the next flow finishes or ends its latency (infinity: nothing is running).
  double next_event_s() { return now_s_ + next_delta_s(); }
  /// How long until then (as SimGrid, the engine steps by this delta: a step too small to move the clock
  /// still moves the work).
  double next_delta_s();
  /// Advances to `t_s`, calling `on_finished(flow, owner)` for every flow that finishes on the way, at its finish
  /// time (now_s() then), in time order; the callback may start flows at that time.
  template <class OnFinished>
  void advance(double t_s, OnFinished&& on_finished);
  /// The fraction of a running flow's work done, in [0, 1] (for an endless flow: the work done, unbounded).
  double progress(std::size_t flow) const {
    const Flow& f = flows_[flow];
    return f.endless ? f.done : 1.0 - f.remains;
  }
  double rate(std::size_t flow) {
    solve();
    return flows_[flow].value;
  }
  bool running(std::size_t flow) const { return flow < flows_.size() && flows_[flow].alive; }

 private:
  struct Flow {
    std::vector<Element> elements;
    std::size_t speed_of = 0;
    double cycles_per_entry = 0;
    double latency_s = 0;
    double remains = 1;
    double done = 0;  // endless flows: work done
    bool endless = false;
    double value = 0;  // rate
    double bound = -1;
    double mu = 0;  // the solver's increment of the current round
    bool alive = false;
    bool fixed = false;  // solver: no longer in the list of flows to raise
    std::uint64_t owner = 0;
  };
  struct Constraint {
    double capacity = 0;
    double speed = 0;
    int cores = 1;
    double remaining = 0;                      // solver
    double usage = 0;                          // solver
    bool listed = false;                       // solver
    std::size_t uses_begin = 0, uses_end = 0;  // solver: its range of uses_
  };
  struct Use {
    std::size_t flow;
    double weight;
  };

  void update_bound(Flow& f) const;
  void solve();
  /// Moves every flow `dt` forward; those that finish are appended to `finished`.
  void step(double dt, std::vector<std::size_t>& finished);

  std::vector<Flow> flows_;
  std::vector<std::size_t> free_;
  std::vector<Constraint> constraints_;
  double now_s_ = 0;
  bool dirty_ = true;
  std::vector<std::size_t> finished_;      // scratch
  std::vector<std::size_t> list_, cnsts_;  // solver scratch
  std::vector<Use> uses_;
};

template <class OnFinished>
void FluidSystem::advance(double t_s, OnFinished&& on_finished) {
  while (true) {
    const double delta = next_delta_s();
    if (now_s_ + delta > t_s) break;
    finished_.clear();
    step(delta, finished_);
    now_s_ += delta;
    const auto done = finished_;
    for (std::size_t f : done) {
      flows_[f].alive = false;
      free_.push_back(f);
      dirty_ = true;
      on_finished(f, flows_[f].owner);
    }
  }
  if (t_s > now_s_) {
    finished_.clear();
    step(t_s - now_s_, finished_);
    now_s_ = t_s;
    const auto done = finished_;  // within rounding of its end
    for (std::size_t f : done) {
      flows_[f].alive = false;
      free_.push_back(f);
      dirty_ = true;
      on_finished(f, flows_[f].owner);
    }
  }
}

}  // namespace framesim::engine
