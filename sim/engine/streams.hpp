// Seeds of a run's random streams. Every stream (a sensor's jitter, a stage's work, a side-work entry's work, a
// task's work) is seeded from (run seed, kind, index, sub-stream) through one mixing function, so no two streams
// share a seed and adding a stream leaves the draws of every other unchanged (tests/unit/streams_test.cpp).
#pragma once

#include <cstdint>

namespace framesim::engine {

enum class StreamKind : std::uint64_t { sensor_jitter = 1, stage_work = 2, side_work = 3, task_work = 4 };

/// SplitMix64's finaliser: a bijection of 64-bit words that spreads every input bit over the output.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// The seed of stream (`kind`, `index`, `sub`) of a run seeded with `seed`.
constexpr std::uint64_t stream_seed(std::uint64_t seed, StreamKind kind, std::uint64_t index, std::uint64_t sub = 0) {
  return mix64(mix64(mix64(mix64(seed) ^ static_cast<std::uint64_t>(kind)) ^ index) ^ sub);
}

}  // namespace framesim::engine
