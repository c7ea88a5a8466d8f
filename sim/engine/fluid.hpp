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
//
// Solved once per change, and only where it changed. The rates are kept between events; a change (a flow
// leaving its latency, starting without one, finishing or stopped; a capacity or speed) marks the constraints it
// touches, and the next query re-solves only the flows connected to them through shared constraints (their
// connected component). Every step of the solver above involves one constraint and its flows, or one flow and its
// constraints, so a component solved alone takes exactly the values it takes in a solve of everything: the rates
// are the same to the last bit (the flows of a constraint are charged in flow order in both). A flow starting
// in its latency changes no rate, so it costs no solve at all. And a component is solved from what it depends on
// alone (its flows' elements and bounds, in flow order, and its constraints' capacities): when exactly that was
// solved before (the same kernels meeting again next frame, or a dry run's solve the advance repeats), its rates
// are taken from a small table of past solves (direct-mapped by hash, compared word for word), not solved again.
//
// Snapshots and predictions. The rates in force are kept, so next_event_s() / next_finish() answer from them
// without solving when nothing changed. A FluidSystem is a value: copying it (a dry run on the copy predicts
// when flows will end) copies a few flat arrays, its rates included, so the copy starts solved; assigning to a
// copy kept for the purpose (`dry = fluid;`) reuses its buffers and allocates nothing once they are large enough.
// A copy shares the table of past solves with its original, so the solves of a dry run serve the advance that
// follows it (the table only ever returns what solving would, so sharing it changes no result).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace framesim::engine {

class FluidSystem {
 public:
  struct Element {
    std::size_t constraint = 0;
    double weight = 0;
    std::uint32_t times = 1;  // this many equal elements in a row (a kernel's core entries, one per core)
  };
  struct FlowSpec {
    std::vector<Element> elements;  // one per ptask entry (core entries separately; a link once with its bytes)
    std::size_t speed_of = 0;       // the constraint whose speed bounds it (a unit's cores)
    double cycles_per_entry = 0;    // 0: no compute, no bound
    double latency_s = 0;
    bool endless = false;  // never finishes (a background stream): progress() is the work done
  };
  /// The next thing to happen if nothing changes: a flow finishing or ending its latency.
  struct Next {
    double delta_s = std::numeric_limits<double>::infinity();  // from now_s(); infinity: nothing is running
    std::size_t flow = 0;                                      // the first in flow order among those at delta_s
    bool finishes = false;                                     // false: its latency ends (or nothing)
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
  std::size_t start(const FlowSpec& spec, std::uint64_t owner) {
    return start(spec.elements.data(), spec.elements.size(), spec, owner);
  }
  /// The same with the elements given apart (`spec.elements` is not read): the engine's kernels, whose elements
  /// are written into a buffer kept for the purpose.
  std::size_t start(const Element* elements, std::size_t count, const FlowSpec& spec, std::uint64_t owner);
  /// Removes a flow before it finishes (what it did stays done).
  void stop(std::size_t flow);

  double now_s() const { return now_s_; }
  /// When the next flow finishes or ends its latency (infinity: nothing is running).
  double next_event_s() { return now_s_ + next_delta_s(); }
  /// How long until then (as SimGrid, the engine steps by this delta: a step too small to move the clock
  /// still moves the work).
  double next_delta_s() { return next_finish().delta_s; }
  /// What happens next and when, from the rates in force (solving first only where something changed).
  Next next_finish();
  /// Advances to `t_s`, calling `on_finished(flow, owner)` for every flow that finishes on the way, at its finish
  /// time (now_s() then), in time order; the callback may start flows at that time. A flow that would finish less
  /// than `instant_s` after `t_s` finishes at `t_s`, and the clock does not move past `t_s` for it: the engine's
  /// instant is a time and every event up to 1 ps after it, and a flow started at that instant must start at its
  /// time, not at the last of the ends folded into it (else the difference adds up along a busy unit until two
  /// events of one instant are more than 1 ps apart).
  template <class OnFinished>
  void advance(double t_s, OnFinished&& on_finished, double instant_s = 0);
  /// The fraction of a running flow's work done, in [0, 1] (for an endless flow: the work done, unbounded).
  double progress(std::size_t flow) const {
    const Flow& f = flows_[flow];
    return f.endless ? f.done : 1.0 - f.remains;
  }
  /// A flow's rate now (solving first): what the hand-worked cases of tests/engine/fluid_hand_test.cpp check.
  double rate(std::size_t flow) {
    solve();
    return flows_[flow].value;
  }
  std::uint64_t owner(std::size_t flow) const { return flows_[flow].owner; }
  /// How much solving was done so far: solves (of one component each) and flows placed in them. For tests and
  /// profiles; copied with the system.
  std::uint64_t solves() const { return solves_; }
  std::uint64_t flows_solved() const { return flows_solved_; }

 private:
  struct Flow {
    std::uint32_t first = 0, count = 0;  // its elements, as runs: elements_[first, first + count)
    std::uint32_t capacity = 0;          // elements_ slots it owns (reused by the next flow in its place)
    std::size_t speed_of = 0;
    double cycles_per_entry = 0;
    double latency_s = 0;
    double remains = 1;
    double done = 0;   // endless flows: work done
    double value = 0;  // rate
    double bound = -1;
    std::uint64_t owner = 0;
    std::uint64_t mark = 0;   // solver: the component it was last gathered in
    std::uint64_t shape = 0;  // a hash of its runs (constraint, times, weight), part of a solve's key's hash
    bool endless = false;
    bool consumes = false;  // some element of non-zero weight
    bool alive = false;
  };
  struct Constraint {
    double capacity = 0;
    double speed = 0;
    int cores = 1;
    std::uint64_t mark = 0;   // solver: in the component being gathered
    bool changed = false;     // in changed_: its flows' rates must be solved again
    bool listed = false;      // solver: numbered in the solve being set up
    std::uint32_t local = 0;  // solver: its number there
  };
  /// Consecutive equal elements of a flow, kept once with their number (a kernel's core entries: one per core,
  /// all alike). The solver treats the run as its elements one after the other: it counts each, takes their
  /// (equal) offers once, and charges the constraint once per element, in order, so every rounding is the same.
  struct Run {
    std::size_t constraint = 0;
    double weight = 0;
    std::uint32_t times = 1;
  };
  /// The solver's own copies of what one solve reads and writes, numbered locally (solve_list).
  struct SolveFlow {
    double value, bound, mu;  // mu: its increment in the current round
    std::uint32_t elems_begin, elems_end;
    bool fixed;  // no longer raised
  };
  struct SolveConstraint {
    double remaining, usage;
    std::uint32_t open;  // elements of positive weight of flows not fixed yet
  };
  struct SolveElement {
    std::uint32_t constraint;
    double weight;
    std::uint32_t times;
  };

  void update_bound(Flow& f) const;
  /// The flow's rates must be solved again (it starts or stops taking part, or its bound changed).
  void touch(const Flow& f) {
    std::size_t last = std::numeric_limits<std::size_t>::max();
    for (std::uint32_t e = f.first; e < f.first + f.count; ++e)
      if (elements_[e].constraint != last) touch(last = elements_[e].constraint);
  }
  void touch(std::size_t constraint) {
    next_known_ = false;
    Constraint& c = constraints_[constraint];
    if (c.changed) return;
    c.changed = true;
    changed_.push_back(constraint);
  }
  /// A flow begins to take part in the sharing (no latency left).
  void activate(Flow& f);
  void solve();
  /// A run's constraint and number of elements as one word (constraints are numbered below 2^32).
  static std::uint64_t run_word(const Run& r) { return (std::uint64_t{r.constraint} << 32) | r.times; }
  /// A solve's key, the one place its layout is written: for each of `flows` in order its count and bound, then per
  /// run its run_word, weight and constraint's capacity, each passed to `word` (doubles as their bits) until it
  /// returns false. Returns whether every word was taken.
  template <class Word>
  bool key_words(const std::vector<std::size_t>& flows, Word&& word) const;
  /// Whether a past solve's key (`entry`) is that of the flows in list_ now, word for word.
  bool key_matches(const std::uint64_t* entry) const;
  /// Solves the flows in list_ (one or more whole components, in flow order).
  void solve_list();
  /// Moves every flow `dt` forward; those that finish are appended to `finished`.
  void step(double dt, std::vector<std::size_t>& finished);
  /// A flow finished or stopped: frees it.
  void retire(std::size_t flow);

  std::vector<Flow> flows_;
  std::vector<Run> elements_;       // every flow's elements as runs, each flow a range
  std::vector<Run> runs_;           // scratch: a starting flow's runs
  std::vector<std::size_t> alive_;  // running flows, in flow order
  std::vector<std::size_t> free_;   // free flow slots, the last freed last
  std::vector<Constraint> constraints_;
  std::vector<std::size_t> changed_;  // constraints whose flows must be solved again
  double now_s_ = 0;
  Next next_;                // what next_finish() found, while next_known_: nothing changed since
  bool next_known_ = false;  // cleared by every change (a start, a retire, a step, a touched constraint)
  std::uint64_t mark_ = 0;
  std::uint64_t solves_ = 0, flows_solved_ = 0;
  std::vector<std::size_t> finished_, done_;  // scratch
  std::vector<std::size_t> list_;             // solver scratch: the flows of the solve in progress
  std::vector<SolveFlow> sflows_;             // solver scratch, by local number
  std::vector<SolveConstraint> scnsts_;
  std::vector<SolveElement> selems_;
  std::vector<std::uint32_t> live_, open_;  // solver scratch: constraints still offering, flows still raised
  /// Past solves, direct-mapped by hash. A slot's key and then its rates' bits are kept in place in one flat
  /// array (`kSlotWords` a slot: a lookup reads them with no pointer to follow), or in `large` when longer.
  struct Cache {
    static constexpr std::size_t kSlots = 1024, kSlotWords = 60;
    struct Slot {
      std::uint64_t hash = 0;
      std::uint32_t words = 0;  // key and rates (0: empty)
    };
    std::vector<Slot> slots;
    // kSlotWords per slot, not initialised: a slot's words are read only once written (slots[].words > 0), so a
    // short run touches the few pages of the slots it uses, not the whole table
    std::unique_ptr<std::uint64_t[]> words;
    std::vector<std::vector<std::uint64_t>> large;  // per slot, for an entry of more than kSlotWords
    const std::uint64_t* entry(std::size_t slot) const {
      return slots[slot].words <= kSlotWords ? words.get() + slot * kSlotWords : large[slot].data();
    }
  };
  std::shared_ptr<Cache> cache_ = std::make_shared<Cache>();  // shared with copies: a dry run fills it
};

template <class OnFinished>
void FluidSystem::advance(double t_s, OnFinished&& on_finished, double instant_s) {
  while (true) {
    const Next next = next_finish();
    double delta = next.delta_s;
    if (now_s_ + delta > t_s) {
      // A flow ending less than `instant_s` after t_s ends at t_s, the clock staying there.
      if (!next.finishes || now_s_ + delta > t_s + instant_s) break;
      flows_[next.flow].remains = 0;  // step() lists it as finished
      delta = t_s - now_s_;
    }
    finished_.clear();
    step(delta, finished_);
    now_s_ += delta;
    done_.swap(finished_);
    for (std::size_t f : done_) {
      retire(f);
      on_finished(f, flows_[f].owner);
    }
  }
  if (t_s > now_s_) {
    finished_.clear();
    step(t_s - now_s_, finished_);
    now_s_ = t_s;
    done_.swap(finished_);  // within rounding of its end
    for (std::size_t f : done_) {
      retire(f);
      on_finished(f, flows_[f].owner);
    }
  }
}

}  // namespace framesim::engine
