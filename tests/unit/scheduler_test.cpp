// The scheduler's decisions on their own (no SimGrid): who holds which cores after an instant's releases, kernel
// boundaries, expired quanta and ends, for every policy and every tie-break rule of sim/engine/README.md ("One
// instant, one decision"). Each expectation is worked out from those rules in the comment beside it; every test
// tells the scheduler everything of an instant first and asks once.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/scheduler.hpp"

using framesim::engine::Job;
using framesim::engine::UnitScheduler;
using framesim::model::SchedulerSpec;
using framesim::model::SchedulingPolicy;

namespace {

Job job(std::size_t owner, int priority, double release_s, int cores = 1, framesim::engine::CoreMask pinned = 0) {
  Job j;
  j.owner = owner;
  j.declared = owner;
  j.priority = priority;
  j.release_s = release_s;
  j.cores = cores;
  j.pinned = pinned;
  return j;
}

SchedulerSpec policy(SchedulingPolicy p, double quantum_s = 0, double switch_s = 0) { return {p, quantum_s, switch_s}; }

UnitScheduler::Decision decide(UnitScheduler& s, double now_s) {
  UnitScheduler::Decision d;
  s.decide(now_s, d);
  return d;
}

bool has(const std::vector<Job*>& jobs, const Job& j) { return std::find(jobs.begin(), jobs.end(), &j) != jobs.end(); }

}  // namespace

// Issue 20, defect 1 at the scheduler: lo (priority 0, declared first) and hi (priority 9) released at one instant.
// The decision comes after both releases: hi gets the unit, whatever the order they were told in.
TEST(Scheduler, ASynchronousReleaseGoesToTheHigherPriorityWhateverTheOrderTold) {
  for (bool lo_first : {true, false}) {
    UnitScheduler s(policy(SchedulingPolicy::priority), 1, 2);
    Job lo = job(0, 0, 0.0), hi = job(1, 9, 0.0);
    if (lo_first) {
      s.release(lo, 0.0);
      s.release(hi, 0.0);
    } else {
      s.release(hi, 0.0);
      s.release(lo, 0.0);
    }
    const auto d = decide(s, 0.0);
    ASSERT_EQ(d.granted.size(), 1u);
    EXPECT_EQ(d.granted[0], &hi);
    EXPECT_EQ(lo.state, Job::State::waiting);
  }
}

// Non-preemptive priority: hi released while lo runs waits for lo's kernel boundary, then takes the unit; at
// hi's own boundaries lo ranks below and hi keeps it; lo resumes when hi ends, with no switch owed.
TEST(Scheduler, PriorityHandsTheUnitToTheHigherWaiterAtTheNextBoundary) {
  UnitScheduler s(policy(SchedulingPolicy::priority), 1, 2);
  Job lo = job(0, 0, 0.0), hi = job(1, 10, 0.5);
  s.release(lo, 0.0);
  decide(s, 0.0);
  s.release(hi, 0.5);
  auto d = decide(s, 0.5);
  EXPECT_TRUE(d.granted.empty());  // lo is mid-kernel: not contested
  EXPECT_EQ(lo.state, Job::State::holding);
  s.boundary(lo);
  d = decide(s, 1.0);
  EXPECT_TRUE(has(d.granted, hi));
  EXPECT_TRUE(has(d.stopped, lo));
  EXPECT_FALSE(lo.owes_switch);
  s.boundary(hi);
  d = decide(s, 2.0);
  EXPECT_TRUE(has(d.granted, hi));  // kept after the contest
  EXPECT_TRUE(d.stopped.empty());
  s.finish(hi, 3.0);
  d = decide(s, 3.0);
  ASSERT_EQ(d.granted.size(), 1u);
  EXPECT_EQ(d.granted[0], &lo);
  EXPECT_FALSE(lo.owes_switch);
}

// Equal priorities rank by release time, then declaration order: b released later waits at a's boundary; of two
// released at the same time the one declared first goes first.
TEST(Scheduler, EqualPrioritiesRankByReleaseThenDeclaration) {
  UnitScheduler s(policy(SchedulingPolicy::priority), 1, 3);
  Job a = job(0, 3, 0.0), b = job(1, 3, 0.1);
  s.release(a, 0.0);
  decide(s, 0.0);
  s.release(b, 0.1);
  decide(s, 0.1);
  s.boundary(a);
  auto d = decide(s, 1.0);
  EXPECT_TRUE(has(d.granted, a));
  EXPECT_EQ(b.state, Job::State::waiting);
  UnitScheduler t(policy(SchedulingPolicy::priority), 1, 3);
  Job second = job(2, 3, 0.0), first = job(1, 3, 0.0);  // declared 2 and 1, told in that order
  t.release(second, 0.0);
  t.release(first, 0.0);
  d = decide(t, 0.0);
  ASSERT_EQ(d.granted.size(), 1u);
  EXPECT_EQ(d.granted[0], &first);
}

// fifo ignores priority and ranks by release: a backlogged job released at 0.2 goes before one released at 0.3
// even when it was told later (issue 20, defect 4); ties by declaration (defect 5).
TEST(Scheduler, FifoRanksByReleaseNotByWhenItWasTold) {
  UnitScheduler s(policy(SchedulingPolicy::fifo), 1, 4);
  Job running = job(0, 0, 0.0), late = job(1, 10, 0.3), early = job(2, 0, 0.2);
  s.release(running, 0.0);
  decide(s, 0.0);
  s.release(late, 0.3);
  decide(s, 0.3);
  s.release(early, 0.2);  // told at 0.5 (its predecessor ended then), released at 0.2
  s.finish(running, 0.5);
  auto d = decide(s, 0.5);
  ASSERT_EQ(d.granted.size(), 1u);
  EXPECT_EQ(d.granted[0], &early);
  UnitScheduler t(policy(SchedulingPolicy::fifo), 1, 4);
  Job x = job(3, 0, 1.0), y = job(1, 0, 1.0);
  t.release(x, 1.0);
  t.release(y, 1.0);
  d = decide(t, 1.0);
  ASSERT_EQ(d.granted.size(), 1u);
  EXPECT_EQ(d.granted[0], &y);
}

// Preemptive: hi released while lo holds takes the core at once; the loser owes a switch on resuming and the
// preemptor one before starting. Released together, there is no preemption and no switch (defect 3).
TEST(Scheduler, PreemptiveTakesTheCoresOfALowerHolderButASynchronousReleaseSwitchesNothing) {
  UnitScheduler s(policy(SchedulingPolicy::preemptive, 0, 1e-4), 1, 2);
  Job lo = job(0, 0, 0.0), hi = job(1, 10, 0.5);
  s.release(lo, 0.0);
  decide(s, 0.0);
  s.release(hi, 0.5);
  auto d = decide(s, 0.5);
  EXPECT_TRUE(has(d.stopped, lo));
  EXPECT_TRUE(has(d.granted, hi));
  EXPECT_TRUE(lo.owes_switch);
  EXPECT_TRUE(hi.owes_switch);
  UnitScheduler t(policy(SchedulingPolicy::preemptive, 0, 1e-4), 1, 2);
  Job lo2 = job(0, 0, 0.0), hi2 = job(1, 10, 0.0);
  t.release(lo2, 0.0);
  t.release(hi2, 0.0);
  d = decide(t, 0.0);
  EXPECT_TRUE(d.stopped.empty());
  ASSERT_EQ(d.granted.size(), 1u);
  EXPECT_EQ(d.granted[0], &hi2);
  EXPECT_FALSE(hi2.owes_switch);
}

TEST(Scheduler, PreemptiveNeverPreemptsAnEqualOrHigherPriority) {
  UnitScheduler s(policy(SchedulingPolicy::preemptive), 1, 3);
  Job a = job(0, 5, 0.0), b = job(1, 5, 0.1), c = job(2, 1, 0.2);
  s.release(a, 0.0);
  decide(s, 0.0);
  s.release(b, 0.1);
  s.release(c, 0.2);
  const auto d = decide(s, 0.2);
  EXPECT_TRUE(d.stopped.empty());
  EXPECT_TRUE(d.granted.empty());
  EXPECT_EQ(a.state, Job::State::holding);
}

// Two cores, holders A (priority 5) and B (priority 1); C (priority 9) arrives: the lowest-ranked holder (B)
// loses its core, A keeps its own, and only C (which took B's core) owes a switch.
TEST(Scheduler, PreemptionTakesTheLowestRankedHoldersCores) {
  UnitScheduler s(policy(SchedulingPolicy::preemptive, 0, 1e-4), 2, 3);
  Job a = job(0, 5, 0.0), b = job(1, 1, 0.0), c = job(2, 9, 1.0);
  s.release(a, 0.0);
  s.release(b, 0.0);
  decide(s, 0.0);
  const auto a_core = a.held, b_core = b.held;
  s.release(c, 1.0);
  const auto d = decide(s, 1.0);
  EXPECT_TRUE(has(d.stopped, b));
  EXPECT_EQ(a.held, a_core);
  EXPECT_EQ(c.held, b_core);
  EXPECT_FALSE(a.owes_switch);
  EXPECT_TRUE(c.owes_switch);
}

TEST(Scheduler, PinnedJobsShareAMultiCoreUnit) {
  // Four cores. A wants cores {0,1}, B wants {2,3}: both run at once. C wants any 2 cores and waits; it
  // reserves every core, so D (pinned to {2}, released after C) may not overtake it when B ends.
  UnitScheduler s(policy(SchedulingPolicy::priority), 4, 4);
  Job a = job(0, 0, 0.0, 2, 0b0011), b = job(1, 0, 0.0, 2, 0b1100), c = job(2, 0, 0.1, 2),
      d = job(3, 0, 0.2, 1, 0b0100);
  s.release(a, 0.0);
  s.release(b, 0.0);
  decide(s, 0.0);
  EXPECT_EQ(a.held, 0b0011u);
  EXPECT_EQ(b.held, 0b1100u);
  s.release(c, 0.1);
  decide(s, 0.1);
  s.release(d, 0.2);
  decide(s, 0.2);
  s.finish(b, 1.0);
  const auto r = decide(s, 1.0);
  ASSERT_EQ(r.granted.size(), 1u);  // C takes cores 2 and 3; D still waits
  EXPECT_EQ(r.granted[0], &c);
  EXPECT_EQ(c.held, 0b1100u);
  EXPECT_EQ(d.state, Job::State::waiting);
  // Busy core-seconds: A 2 cores x 1 s, B 2 x 1 s, C from 1 s.
  EXPECT_DOUBLE_EQ(s.busy_core_s(1.0), 4.0);
  EXPECT_DOUBLE_EQ(s.busy_core_s(2.0), 8.0);
  EXPECT_DOUBLE_EQ(s.owner_core_s()[0], 4.0);
  EXPECT_DOUBLE_EQ(s.owner_core_s()[2], 2.0);
}

// Round robin: alone at the end of its quantum a keeps the unit for another quantum; with b waiting it yields,
// b pays the switch then runs a quantum, a owes a switch. Priority plays no part.
TEST(Scheduler, TimeSliceRotatesOnlyWhenSomeoneWaits) {
  UnitScheduler s(policy(SchedulingPolicy::time_slice, 1e-3, 1e-4), 1, 2);
  Job a = job(0, 0, 0.0), b = job(1, 99, 1.5e-3);
  s.release(a, 0.0);
  decide(s, 0.0);
  EXPECT_DOUBLE_EQ(a.slice_end_s, 1e-3);
  s.expire(a, 1e-3);
  auto d = decide(s, 1e-3);
  EXPECT_TRUE(has(d.granted, a));
  EXPECT_DOUBLE_EQ(a.slice_end_s, 2e-3);
  s.release(b, 1.5e-3);
  d = decide(s, 1.5e-3);
  EXPECT_TRUE(d.granted.empty());
  s.expire(a, 2e-3);
  d = decide(s, 2e-3);
  EXPECT_TRUE(has(d.stopped, a));
  ASSERT_TRUE(has(d.granted, b));
  EXPECT_TRUE(b.owes_switch);
  EXPECT_DOUBLE_EQ(b.slice_end_s, 2e-3 + 1e-4 + 1e-3);
  EXPECT_TRUE(a.owes_switch);
  s.boundary(b);  // a boundary inside the quantum changes nothing
  EXPECT_FALSE(s.pending());
}

// A new quantum beside a waiter that cannot use the expired holder's cores (README, "Decisions": a time-sliced
// holder whose quantum expired and whose cores nobody took keeps them, its place in the round and a new
// quantum). Quantum 1 ms, no switch cost, two cores. Both ways a holder keeps its cores while someone waits:
// 1. pinned apart: a on core 0, b and c on core 1. a and b start at 0; c (released at 0.5 ms) waits for core 1.
//    At 1 ms both quanta expire: c (round place 0.5 ms) ranks first and takes core 1 from b; a's core 0 is of no
//    use to c, so a keeps it with a new quantum, 1 + 1 = 2 ms.
// 2. a waiter that needs both cores: a (1 core) and b (1 core, released at 0.25 ms) hold one core each; w (2
//    cores, released at 0.5 ms) waits. At a's expiry (1 ms) w ranks first but finds one core free of b's, not
//    two: it reserves both, so a loses its place in the decision; nobody was given a's core, so a keeps it with
//    a new quantum, 2 ms, and w still waits.
TEST(Scheduler, TimeSliceRenewsTheQuantumOfAHolderThatAWaiterCannotDisplace) {
  {
    UnitScheduler s(policy(SchedulingPolicy::time_slice, 1e-3, 0), 2, 3);
    Job a = job(0, 0, 0.0, 1, 0b01), b = job(1, 0, 0.0, 1, 0b10), c = job(2, 0, 0.5e-3, 1, 0b10);
    s.release(a, 0.0);
    s.release(b, 0.0);
    decide(s, 0.0);
    s.release(c, 0.5e-3);
    decide(s, 0.5e-3);
    ASSERT_EQ(c.state, Job::State::waiting);
    s.expire(a, 1e-3);
    s.expire(b, 1e-3);
    const auto d = decide(s, 1e-3);
    EXPECT_TRUE(has(d.granted, c));
    EXPECT_TRUE(has(d.stopped, b));
    EXPECT_TRUE(has(d.granted, a));  // kept after the contest
    EXPECT_EQ(a.held, 0b01u);
    EXPECT_DOUBLE_EQ(a.slice_end_s, 2e-3);
    EXPECT_DOUBLE_EQ(c.slice_end_s, 2e-3);
  }
  {
    UnitScheduler s(policy(SchedulingPolicy::time_slice, 1e-3, 0), 2, 3);
    Job a = job(0, 0, 0.0), b = job(1, 0, 0.25e-3), w = job(2, 0, 0.5e-3, 2);
    s.release(a, 0.0);
    decide(s, 0.0);
    s.release(b, 0.25e-3);
    decide(s, 0.25e-3);
    s.release(w, 0.5e-3);
    decide(s, 0.5e-3);
    ASSERT_EQ(w.state, Job::State::waiting);
    s.expire(a, 1e-3);
    const auto d = decide(s, 1e-3);
    EXPECT_TRUE(d.stopped.empty());
    EXPECT_TRUE(has(d.granted, a));
    EXPECT_EQ(w.state, Job::State::waiting);
    EXPECT_DOUBLE_EQ(a.slice_end_s, 2e-3);
    EXPECT_DOUBLE_EQ(b.slice_end_s, 0.25e-3 + 1e-3);  // b was not contested: its quantum is untouched
  }
}

// The round's tie: a's quantum expires at the instant c is released. a goes behind c (README: "behind the jobs
// released at the same instant"), so after b it is c's turn, then a's.
TEST(Scheduler, AQuantumExpiringAtAReleaseGoesBehindTheNewJob) {
  UnitScheduler s(policy(SchedulingPolicy::time_slice, 1e-3, 0), 1, 3);
  Job a = job(0, 0, 0.0), b = job(1, 0, 0.5e-3), c = job(2, 0, 1e-3);
  s.release(a, 0.0);
  decide(s, 0.0);
  s.release(b, 0.5e-3);
  decide(s, 0.5e-3);
  s.expire(a, 1e-3);
  s.release(c, 1e-3);
  auto d = decide(s, 1e-3);
  ASSERT_TRUE(has(d.granted, b));
  s.finish(b, 1.5e-3);
  d = decide(s, 1.5e-3);
  ASSERT_EQ(d.granted.size(), 1u);
  EXPECT_EQ(d.granted[0], &c);
}
