// The scheduler's decisions on their own (no SimGrid): who holds which cores after each release, kernel boundary,
// expired quantum and end, for every policy. Each expectation follows from the policy's definition in
// model/hardware.hpp, worked out in the comment beside it.
#include <gtest/gtest.h>

#include "engine/scheduler.hpp"

using framesim::engine::Job;
using framesim::engine::UnitScheduler;
using framesim::model::SchedulerSpec;
using framesim::model::SchedulingPolicy;

namespace {

Job job(std::size_t owner, int priority, int cores = 1, framesim::engine::CoreMask pinned = 0) {
  Job j;
  j.owner = owner;
  j.priority = priority;
  j.cores = cores;
  j.pinned = pinned;
  return j;
}

SchedulerSpec policy(SchedulingPolicy p, double quantum_s = 0, double switch_s = 0) { return {p, quantum_s, switch_s}; }

}  // namespace

TEST(Scheduler, PriorityHandsTheUnitToTheHigherWaiterAtTheNextBoundary) {
  UnitScheduler s(policy(SchedulingPolicy::priority), 1, 2);
  Job lo = job(0, 0), hi = job(1, 10);
  std::vector<Job*> changed;
  EXPECT_TRUE(s.release(lo, 0.0, changed));
  EXPECT_FALSE(s.release(hi, 0.5, changed));  // non-preemptive: it waits
  EXPECT_TRUE(changed.empty());
  // lo's kernel ends at 1: hi ranks above it, so hi gets the unit and lo waits.
  EXPECT_FALSE(s.boundary(lo, 1.0, changed));
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0], &hi);
  EXPECT_EQ(lo.state, Job::State::waiting);
  // hi's boundaries: lo ranks below, hi keeps the unit.
  changed.clear();
  EXPECT_TRUE(s.boundary(hi, 2.0, changed));
  EXPECT_TRUE(changed.empty());
  s.finish(hi, 3.0, changed);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0], &lo);
  EXPECT_FALSE(lo.owes_switch);  // a boundary hand-over is not a forced switch
}

TEST(Scheduler, EqualPrioritiesRunInReleaseOrderToCompletion) {
  UnitScheduler s(policy(SchedulingPolicy::priority), 1, 2);
  Job a = job(0, 3), b = job(1, 3);
  std::vector<Job*> changed;
  EXPECT_TRUE(s.release(a, 0.0, changed));
  EXPECT_FALSE(s.release(b, 0.1, changed));
  EXPECT_TRUE(s.boundary(a, 1.0, changed));  // b was released later: a keeps the unit
  EXPECT_TRUE(changed.empty());
}

TEST(Scheduler, FifoIgnoresPriority) {
  UnitScheduler s(policy(SchedulingPolicy::fifo), 1, 2);
  Job lo = job(0, 0), hi = job(1, 10);
  std::vector<Job*> changed;
  EXPECT_TRUE(s.release(lo, 0.0, changed));
  EXPECT_FALSE(s.release(hi, 0.5, changed));
  EXPECT_TRUE(s.boundary(lo, 1.0, changed));
}

TEST(Scheduler, PreemptiveTakesTheCoresOfALowerHolderAtOnce) {
  UnitScheduler s(policy(SchedulingPolicy::preemptive, 0, 1e-4), 1, 2);
  Job lo = job(0, 0), hi = job(1, 10);
  std::vector<Job*> preempted;
  EXPECT_TRUE(s.release(lo, 0.0, preempted));
  EXPECT_TRUE(s.release(hi, 0.5, preempted));
  ASSERT_EQ(preempted.size(), 1u);
  EXPECT_EQ(preempted[0], &lo);
  EXPECT_EQ(lo.state, Job::State::waiting);
  EXPECT_TRUE(lo.owes_switch);  // it pays a switch when it resumes
  EXPECT_TRUE(hi.owes_switch);  // and the preempting job when it starts
  std::vector<Job*> granted;
  s.finish(hi, 2.5, granted);
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0], &lo);
}

TEST(Scheduler, PreemptiveNeverPreemptsAnEqualOrHigherPriority) {
  UnitScheduler s(policy(SchedulingPolicy::preemptive), 1, 3);
  Job a = job(0, 5), b = job(1, 5), c = job(2, 1);
  std::vector<Job*> preempted;
  EXPECT_TRUE(s.release(a, 0.0, preempted));
  EXPECT_FALSE(s.release(b, 0.1, preempted));
  EXPECT_FALSE(s.release(c, 0.2, preempted));
  EXPECT_TRUE(preempted.empty());
}

TEST(Scheduler, PinnedJobsShareAMultiCoreUnit) {
  // Four cores. A wants cores {0,1}, B wants {2,3}: both run at once. C wants any 2 cores and waits; it
  // reserves every core, so D (pinned to {2}, released after C) may not overtake it when B ends.
  UnitScheduler s(policy(SchedulingPolicy::priority), 4, 4);
  Job a = job(0, 0, 2, 0b0011), b = job(1, 0, 2, 0b1100), c = job(2, 0, 2), d = job(3, 0, 1, 0b0100);
  std::vector<Job*> changed;
  EXPECT_TRUE(s.release(a, 0.0, changed));
  EXPECT_TRUE(s.release(b, 0.0, changed));
  EXPECT_EQ(a.held, 0b0011u);
  EXPECT_EQ(b.held, 0b1100u);
  EXPECT_FALSE(s.release(c, 0.1, changed));
  EXPECT_FALSE(s.release(d, 0.2, changed));
  s.finish(b, 1.0, changed);
  ASSERT_EQ(changed.size(), 1u);  // C takes cores 2 and 3; D still waits
  EXPECT_EQ(changed[0], &c);
  EXPECT_EQ(c.held, 0b1100u);
  EXPECT_EQ(d.state, Job::State::waiting);
  // Busy core-seconds: A 2 cores x 1 s, B 2 x 1 s, C from 1 s.
  EXPECT_DOUBLE_EQ(s.busy_core_s(1.0), 4.0);
  EXPECT_DOUBLE_EQ(s.busy_core_s(2.0), 8.0);
  EXPECT_DOUBLE_EQ(s.owner_core_s()[0], 4.0);
  EXPECT_DOUBLE_EQ(s.owner_core_s()[2], 2.0);
}

TEST(Scheduler, TimeSliceRotatesOnlyWhenSomeoneWaits) {
  UnitScheduler s(policy(SchedulingPolicy::time_slice, 1e-3, 1e-4), 1, 2);
  Job a = job(0, 0), b = job(1, 99);  // priority plays no part in a round robin
  std::vector<Job*> changed;
  EXPECT_TRUE(s.release(a, 0.0, changed));
  EXPECT_DOUBLE_EQ(a.slice_end_s, 1e-3);
  // Alone at the end of its quantum: it keeps the unit for another quantum.
  EXPECT_FALSE(s.quantum_expired(a, 1e-3, changed));
  EXPECT_DOUBLE_EQ(a.slice_end_s, 2e-3);
  EXPECT_FALSE(s.release(b, 1.5e-3, changed));
  // With b waiting: a yields; b pays the switch, then runs a quantum.
  EXPECT_TRUE(s.quantum_expired(a, 2e-3, changed));
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0], &b);
  EXPECT_TRUE(b.owes_switch);
  EXPECT_DOUBLE_EQ(b.slice_end_s, 2e-3 + 1e-4 + 1e-3);
  EXPECT_TRUE(a.owes_switch);
  // A kernel boundary inside the quantum keeps the unit.
  changed.clear();
  EXPECT_TRUE(s.boundary(b, 2.5e-3, changed));
}
