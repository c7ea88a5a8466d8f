// The engine's time lattice (engine/instant.hpp): a time a user writes, however the engine arrives at it, is one
// double; a time off the lattice keeps its precision. The expected values are written as decimal literals (the
// compiler's correctly rounded doubles), not computed with the code under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>

#include "engine/fluid.hpp"
#include "engine/instant.hpp"

using framesim::engine::FluidSystem;
using framesim::engine::kInstant_s;
using framesim::engine::nearest_integer;
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

TEST(Lattice, NearestIntegerIsStdRoundButForTies) {
  // The oracle is the maths library's std::round. They differ only on exact ties (x.5), where std::round goes away
  // from zero and nearest_integer to even: both then lie half a tick away, which on_lattice never snaps to.
  EXPECT_EQ(nearest_integer(2.5), 2.0);
  EXPECT_EQ(std::round(2.5), 3.0);
  EXPECT_EQ(nearest_integer(3.5), 4.0);
  EXPECT_EQ(nearest_integer(0.49999999999999994), 0.0);
  EXPECT_EQ(nearest_integer(4503599627370495.5), 4503599627370496.0);  // the last tie below 2^52
  EXPECT_EQ(nearest_integer(9007199254740991.0), 9007199254740991.0);  // 2^53 - 1: an integer already
  std::mt19937_64 rng(25);
  std::uniform_real_distribution<double> exponent(-3, 15.9);
  for (int i = 0; i < 200000; ++i) {
    const double x = std::pow(10.0, exponent(rng)) * (1 + 1e-3 * (i % 7));
    if (x - std::floor(x) == 0.5) continue;
    ASSERT_EQ(nearest_integer(x), std::round(x)) << x;
  }
}

TEST(Lattice, OnLatticeAsWrittenWithStdRound) {
  // The lattice rule spelled with std::round (the oracle), against on_lattice, on times near lattice points (a
  // few ulps off, where snapping decides) and far from them, up to the 4,096-s limit.
  auto reference = [](double t) {
    if (!(t > 0 && t < 4096.0)) return t;
    const double point = std::round(t * 2e12) / 2e12;
    return std::fabs(point - t) <= std::min(16 * DBL_EPSILON * t, 0.25 / 2e12) ? point : t;
  };
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> when(0, 4200);
  std::uniform_int_distribution<int> ulps(-40, 40);
  for (int i = 0; i < 200000; ++i) {
    double t = std::round(when(rng) * 2e6) / 2e6;  // a decimal time of whole microseconds
    for (int u = ulps(rng); u != 0; u += u > 0 ? -1 : 1) t = std::nextafter(t, u > 0 ? 1e9 : -1e9);
    if (i % 3 == 0) t = when(rng);  // anywhere
    ASSERT_EQ(on_lattice(t), reference(t)) << t;
  }
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
