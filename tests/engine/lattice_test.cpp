// The engine's time lattice (engine/instant.hpp): a time a user writes, however the engine arrives at it, is one
// double; a time off the lattice keeps its precision. The expected values are written as decimal literals (the
// compiler's correctly rounded doubles), not computed with the code under test.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "engine/fluid.hpp"
#include "engine/instant.hpp"

using framesim::engine::FluidSystem;
using framesim::engine::kInstant_s;
using framesim::engine::on_lattice;

TEST(Lattice, ATimeReachedTwoWaysIsOneDouble) {
  // 0.1 + 0.2 is 0.30000000000000004 in doubles; 1000 quanta of 0.75 ms summed one by one drift from 0.75 by
  // several ulps; 0.0565 reached as 0.0565 and as 0.05675 - 0.00025.
  ASSERT_NE(0.1 + 0.2, 0.3);
  EXPECT_EQ(on_lattice(0.1 + 0.2), 0.3);
  double t = 0;
  for (int i = 0; i < 1000; ++i) t += 0.00075;
  ASSERT_NE(t, 0.75);
  EXPECT_EQ(on_lattice(t), 0.75);
  EXPECT_EQ(on_lattice(0.05675 - 0.00025), 0.0565);
  // Multiples of 2^-13 s are on the lattice (k / 8192 s = k * 122070312.5 ps): left exactly as they are.
  for (int k = 1; k < 100000; k += 37) EXPECT_EQ(on_lattice(k / 8192.0), k / 8192.0) << k;
}

TEST(Lattice, ATimeOffTheLatticeKeepsItsPrecision) {
  // 1/3 ms is 666,666,666.67 half-picoseconds: far from a lattice point, left alone.
  EXPECT_EQ(on_lattice(1.0 / 3000), 1.0 / 3000);
  // 0.3 + 1e-14 is a few dozen ulps from 0.3: not a rounding of it, left alone.
  EXPECT_EQ(on_lattice(0.3 + 1e-14), 0.3 + 1e-14);
  // Past 4,096 s, and infinity, zero and NaN: unchanged.
  EXPECT_EQ(on_lattice(5000.1 + 1e-12), 5000.1 + 1e-12);
  EXPECT_EQ(on_lattice(std::numeric_limits<double>::infinity()), std::numeric_limits<double>::infinity());
  EXPECT_EQ(on_lattice(0.0), 0.0);
  EXPECT_TRUE(std::isnan(on_lattice(std::nan(""))));
}

TEST(Lattice, AFlowEndingWithinTheInstantEndsAtItsTime) {
  // One constraint of capacity 1, a flow of weight 1 (1 s of work): advanced to 1 s - 0.5 ps it is 0.5 ps from its
  // end, which is within the instant (1 ps): it ends now, and the clock stays at the instant's time instead of
  // moving 0.5 ps on (a flow started next starts at that time, not 0.5 ps late).
  FluidSystem fluid;
  const std::size_t c = fluid.add_constraint(1.0);
  FluidSystem::FlowSpec f;
  f.elements = {{c, 1.0}};
  fluid.start(f, 7);
  const double t = 1.0 - 0.5e-12;
  std::uint64_t ended = 0;
  fluid.advance(
      t, [&](std::size_t, std::uint64_t owner) { ended = owner; }, kInstant_s);
  EXPECT_EQ(ended, 7u);
  EXPECT_EQ(fluid.now_s(), t);
  // A flow 2 ps from its end is not of this instant.
  fluid.start(f, 8);
  ended = 0;
  fluid.advance(
      t + 1.0 - 2e-12, [&](std::size_t, std::uint64_t owner) { ended = owner; }, kInstant_s);
  EXPECT_EQ(ended, 0u);
  EXPECT_EQ(fluid.now_s(), t + 1.0 - 2e-12);
  // Without the instant (the default), a flow 0.5 ps from its end goes on.
  FluidSystem plain;
  const std::size_t pc = plain.add_constraint(1.0);
  FluidSystem::FlowSpec g;
  g.elements = {{pc, 1.0}};
  plain.start(g, 9);
  ended = 0;
  plain.advance(t, [&](std::size_t, std::uint64_t owner) { ended = owner; });
  EXPECT_EQ(ended, 0u);
}
