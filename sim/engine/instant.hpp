// What one instant is, in the engine's doubles.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace framesim::engine {

/// Events less than this apart are one instant, at the first one's time: the rounding of two ways to the same
/// time (k / rate against a sum of kernel times), and SimGrid's own resolution (framesim sets surf/precision to
/// 1e-12). Both executors end a kernel that is less than this from its end at the instant's time.
inline constexpr double kInstant_s = 1e-12;

/// Times a user writes (decimal down to the picosecond, or multiples of 2^-k s) lie on a lattice of half
/// picoseconds. The engine puts every time it acts at (a timer, a kernel end) that is within a few ulps of a
/// lattice point on that point, so that such a time has one double however it was computed and an exact tie stays
/// exactly a tie. Without it an error of an ulp doubles each time a job evicted at an exact time (a release)
/// resumes at a time carrying the error of its start (its progress was counted from the wrong start, its end again
/// from the wrong resume): on a time-sliced unit kept busy for half a second that reaches 1 ps, and the events of
/// one instant fall apart. Times off the lattice (a kernel's time from its work and a shared rate) are left as they
/// are: moving them would cost their precision.
inline constexpr double kTicksPerSecond = 2e12;
/// How near (in ulps of the time) a time must be to a lattice point to be put on it, and at most a quarter tick.
inline constexpr double kSnapUlps = 16;
/// Up to here a time times kTicksPerSecond is an exact integer in a double (2^53 / 2e12 = 4,503 s); past it the
/// doubles are as coarse as the lattice and a time is left as it is.
inline constexpr double kLatticeLimit_s = 4096.0;

/// The integer nearest to `x` in [0, 2^53), without a call into the maths library (it is on every timer and every
/// kernel end): below 2^52, adding and taking away 2^52 leaves x rounded to an integer (ties to even, where
/// std::round goes away from zero; a tie is half a tick from both neighbours, so on_lattice leaves it alone either
/// way); from 2^52 on every double is an integer already.
inline double nearest_integer(double x) {
  constexpr double kTwo52 = 4503599627370496.0;
  return x < kTwo52 ? (x + kTwo52) - kTwo52 : x;
}

inline double on_lattice(double t_s) {
  if (!(t_s > 0 && t_s < kLatticeLimit_s)) return t_s;  // also infinity and NaN
  const double point = nearest_integer(t_s * kTicksPerSecond) / kTicksPerSecond;
  const double near = std::min(kSnapUlps * DBL_EPSILON * t_s, 0.25 / kTicksPerSecond);
  return std::fabs(point - t_s) <= near ? point : t_s;
}

}  // namespace framesim::engine
