// framesim's fluid system (fluid.hpp) on small cases worked by hand, as SimGrid keeps beside its own solver: the
// end times below are derived in the comments from the fair-bottleneck rule (each constraint offers what it has
// left, split evenly among its unfixed flows; a flow takes the least offer / weight and what its bound leaves),
// not from running the code. And the incremental solving: what is solved again after a change, that a copy
// carries the rates in force and runs on alone, and that what a copy solved is not solved again by the original.
#include <gtest/gtest.h>

#include <map>

#include "engine/fluid.hpp"

using framesim::engine::FluidSystem;

namespace {

FluidSystem::FlowSpec flow(std::vector<FluidSystem::Element> elements, double latency_s = 0) {
  FluidSystem::FlowSpec f;
  f.elements = std::move(elements);
  f.latency_s = latency_s;
  return f;
}

/// Runs the system to its end; each owner's finish time.
std::map<std::uint64_t, double> run_out(FluidSystem& fluid) {
  std::map<std::uint64_t, double> end;
  fluid.advance(1e9, [&](std::size_t, std::uint64_t owner) { end[owner] = fluid.now_s(); });
  return end;
}

}  // namespace

TEST(FluidByHand, TwoFlowsOnOneConstraint) {
  // Capacity 100, weights 10 and 30. Round 1: each is offered 100 / 2 = 50, so the rates are 50/10 = 5 and
  // 50/30 = 5/3, which use 50 + 50 = 100: both fixed. Flow 1 ends at 1/5 = 0.2 s, when flow 2 has done 1/3;
  // alone it then runs at 100/30, its 2/3 left taking 0.2 s: it ends at 0.4 s = (10 + 30) / 100.
  FluidSystem fluid;
  const std::size_t c = fluid.add_constraint(100);
  const std::size_t a = fluid.start(flow({{c, 10}}), 1);
  const std::size_t b = fluid.start(flow({{c, 30}}), 2);
  EXPECT_DOUBLE_EQ(fluid.rate(a), 5.0);
  EXPECT_DOUBLE_EQ(fluid.rate(b), 5.0 / 3.0);
  const auto end = run_out(fluid);
  EXPECT_NEAR(end.at(1), 0.2, 1e-12);
  EXPECT_NEAR(end.at(2), 0.4, 1e-12);
}

TEST(FluidByHand, ABoundFlowLeavesTheRestToTheOther) {
  // A unit of speed 20, 5 cores (capacity 100). Flow A: one core entry of 1 cycle, so bounded at 20 / 1 = 20.
  // Flow B: weight 8 on the same constraint, no bound. Round 1: offer 50 each; A takes min(50, 20) = 20 (fixed
  // by its bound), B 50/8 = 6.25; 100 - 20 - 50 = 30 left. Round 2: B alone is offered 30, takes 30/8 more:
  // B = 10. So A uses 20 and B 80. A ends at 1/20 = 0.05 s, when B has done 0.5; alone B runs at 100/8 = 12.5,
  // its 0.5 taking 0.04 s: it ends at 0.09 s.
  FluidSystem fluid;
  const std::size_t c = fluid.add_constraint(100, 20, 5);
  FluidSystem::FlowSpec bound = flow({{c, 1}});
  bound.speed_of = c;
  bound.cycles_per_entry = 1;
  const std::size_t a = fluid.start(bound, 1);
  const std::size_t b = fluid.start(flow({{c, 8}}), 2);
  EXPECT_DOUBLE_EQ(fluid.rate(a), 20.0);
  EXPECT_DOUBLE_EQ(fluid.rate(b), 10.0);
  const auto end = run_out(fluid);
  EXPECT_NEAR(end.at(1), 0.05, 1e-12);
  EXPECT_NEAR(end.at(2), 0.09, 1e-12);
}

TEST(FluidByHand, ALatencyPhaseTakesNothing) {
  // Capacity 100; A (weight 50) waits 0.01 s of latency first, B (weight 50) starts at once. Over [0, 0.01] B is
  // alone at 100/50 = 2 and does 0.02. Then both run at 50/50 = 1: B's 0.98 left end at 0.99 s, when A has done
  // 0.98; alone A runs at 2, its 0.02 left taking 0.01 s: it ends at 1.00 s.
  FluidSystem fluid;
  const std::size_t c = fluid.add_constraint(100);
  const std::size_t a = fluid.start(flow({{c, 50}}, 0.01), 1);
  fluid.start(flow({{c, 50}}), 2);
  EXPECT_EQ(fluid.rate(a), 0.0);  // no progress while the latency lasts
  const FluidSystem::Next next = fluid.next_finish();
  EXPECT_EQ(next.flow, a);
  EXPECT_FALSE(next.finishes);
  EXPECT_NEAR(next.delta_s, 0.01, 1e-15);
  const auto end = run_out(fluid);
  EXPECT_NEAR(end.at(2), 0.99, 1e-12);
  EXPECT_NEAR(end.at(1), 1.00, 1e-12);
}

TEST(FluidByHand, OnlyTheComponentAChangeTouchesIsSolvedAgain) {
  // Two constraints nobody shares between them: x carries flows 1 and 2, y flow 3. Starting a flow on y solves
  // y's flows only; a flow starting in its latency changes no rate and solves nothing; x's rates are kept.
  FluidSystem fluid;
  const std::size_t x = fluid.add_constraint(100);
  const std::size_t y = fluid.add_constraint(100);
  const std::size_t f1 = fluid.start(flow({{x, 10}}), 1);
  fluid.start(flow({{x, 30}}), 2);
  fluid.start(flow({{y, 20}}), 3);
  fluid.next_finish();
  EXPECT_EQ(fluid.solves(), 1u);  // both components changed: solved together
  EXPECT_EQ(fluid.flows_solved(), 3u);
  const double before = fluid.rate(f1);

  fluid.start(flow({{y, 20}}), 4);
  fluid.next_finish();
  EXPECT_EQ(fluid.solves(), 2u);
  EXPECT_EQ(fluid.flows_solved(), 5u);  // flows 3 and 4
  EXPECT_EQ(fluid.rate(f1), before);

  fluid.start(flow({{x, 10}, {y, 10}}, 0.5), 5);  // bridges x and y once its latency is over
  fluid.next_finish();
  EXPECT_EQ(fluid.solves(), 2u);
  fluid.next_finish();  // nothing changed since: nothing solved
  EXPECT_EQ(fluid.solves(), 2u);

  // Flow 1 ends at 0.2 s (as in TwoFlowsOnOneConstraint): x's remaining flow is solved again, y's are not.
  fluid.advance(0.2, [](std::size_t, std::uint64_t) {});
  fluid.next_finish();
  EXPECT_EQ(fluid.solves(), 3u);
  EXPECT_EQ(fluid.flows_solved(), 6u);
}

TEST(FluidByHand, ACopyCarriesItsRatesAndRunsOnAlone) {
  // A copy predicts without solving again, and ends every flow when the original does; the original is untouched.
  FluidSystem fluid;
  const std::size_t c = fluid.add_constraint(100);
  fluid.start(flow({{c, 10}}), 1);
  fluid.start(flow({{c, 30}}), 2);
  fluid.next_finish();
  const auto solved = fluid.solves();
  FluidSystem dry;
  dry = fluid;
  EXPECT_NEAR(dry.next_event_s(), 0.2, 1e-12);
  EXPECT_EQ(dry.solves(), solved);  // the rates came with the copy
  const auto predicted = run_out(dry);
  EXPECT_GT(dry.solves(), solved);  // flow 2 alone, after flow 1
  EXPECT_EQ(fluid.now_s(), 0.0);
  EXPECT_EQ(run_out(fluid), predicted);
  EXPECT_EQ(fluid.solves(), solved);  // what the dry run solved served the original: nothing solved again
}

TEST(FluidByHand, CoreEntriesCountOnePerCore) {
  // A unit of 4 cores at speed 25 (capacity 100) and a bus of capacity 60. Flow A: 4 core entries of 1 cycle each
  // (bound 25 / 1 = 25) and 1 byte on the bus; flow B: 2 bytes on the bus. The unit offers 100 / 4 entries = 25 per
  // entry, A's bound is 25, the bus offers 60 / 2 = 30: A takes min(25, 30 / 1, 25) = 25 and is fixed by its
  // bound, B takes 30 / 2 = 15; the bus has 60 - 25 - 30 = 5 left, B alone takes 5 / 2 more: B = 17.5.
  // Given as one element of 4 times or as 4 elements, A is the same flow, to the last bit.
  for (const bool as_run : {true, false}) {
    FluidSystem fluid;
    const std::size_t cpu = fluid.add_constraint(100, 25, 4);
    const std::size_t bus = fluid.add_constraint(60);
    FluidSystem::FlowSpec a =
        as_run ? flow({{cpu, 1, 4}, {bus, 1}}) : flow({{cpu, 1}, {cpu, 1}, {cpu, 1}, {cpu, 1}, {bus, 1}});
    a.speed_of = cpu;
    a.cycles_per_entry = 1;
    const std::size_t fa = fluid.start(a, 1);
    const std::size_t fb = fluid.start(flow({{bus, 2}}), 2);
    EXPECT_EQ(fluid.rate(fa), 25.0) << as_run;
    EXPECT_EQ(fluid.rate(fb), 17.5) << as_run;
  }
}
