// Issue 20's six defects as regression tests, each with its numbers worked out by hand from the rules of
// sim/engine/README.md ("One instant, one decision") and run both ways (fluid and --exact): one unit `a` with one
// core, work given as `work: {time}`. Before engine v3 the decisions at one instant followed the order SimGrid
// woke actors in, and random streams of different kinds could share a seed. Tests 7 and 8 pin what an instant is:
// the kernel ends in it apply in declaration order, and ends microseconds apart are not in one; test 9 that a switch
// ending at the instant its job is preempted is no start.
#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>

#include "engine/run_support.hpp"
#include "test_support.hpp"

using framesim::testing::run_framesim;
using framesim::testing::RunResult;
using framesim::testing::Scratch;

namespace {

std::string hardware(const std::string& policy) {
  return fmt::format(R"(name: one-core
memory:
  dram: {{kind: dram, capacity: "8 GiB", bandwidth: "10 TB/s", latency: "100 ns", energy_per_byte: "1 pJ"}}
units:
  a:
    kind: cpu
    peak: {{fp32: "1 GFLOP/s"}}
    memory: [dram]
    energy_per_op: {{fp32: "1 pJ"}}
    scheduler: {}
)",
                     policy);
}

/// Only the tasks run: the sensor's first capture is after the run.
std::string tasks_only(const std::string& tasks, const std::string& duration) {
  return fmt::format(R"(name: tasks
hardware: hw.yaml
duration: "{}"
deadline: "1 s"
sensors:
  never: {{rate: "0.5 Hz", phase: "1.9 s"}}
stages:
  idle: {{unit: a, inputs: [never], work: {{time: "1 ns"}}}}
tasks:
{})",
                     duration, tasks);
}

double number(const std::map<std::string, std::string>& row, const std::string& column) {
  return std::stod(row.at(column));
}

void expect_time(double actual, double expected, const std::string& what) {
  EXPECT_NEAR(actual, expected, 1e-12 + 1e-9 * std::fabs(expected)) << what;
}

/// Runs `scenario` both ways; calls `check` on each result.
template <class Check>
void both_ways(Scratch& s, const std::filesystem::path& scenario, Check check) {
  for (const char* how : {"", "--exact"}) {
    const auto r = run_framesim(scenario, s.dir() / (std::string("out") + how), how);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    SCOPED_TRACE(*how ? "exact path" : "fluid path");
    check(r);
  }
}

}  // namespace

// 1. priority, synchronous release: lo (priority 0, 5 ms, 100 Hz, declared first) and hi (priority 9, 1 ms). Both
// are released at 0, 10, 20... ms; the decision after both releases gives hi the unit: hi [0, 1] ms, lo [1, 6] ms in
// every period. (Before: lo was woken first and took the unit, hi responded in 6 ms.)
TEST(Instant, ASynchronousReleaseGoesToTheHigherPriority) {
  Scratch s;
  s.write("hw.yaml", hardware("priority"));
  const auto scenario =
      s.write("s.yaml", tasks_only(R"(  lo: {rate: "100 Hz", unit: a, priority: 0, work: {time: "5 ms"}}
  hi: {rate: "100 Hz", unit: a, priority: 9, work: {time: "1 ms"}}
)",
                                   "100 ms"));
  both_ways(s, scenario, [](const RunResult& r) {
    ASSERT_EQ(r.tasks.where("task", "hi").size(), 10u);
    for (const auto& row : r.tasks.where("task", "hi")) expect_time(number(row, "response_s"), 1e-3, "hi");
    for (const auto& row : r.tasks.where("task", "lo")) expect_time(number(row, "response_s"), 6e-3, "lo");
  });
}

// 2. priority, a pipeline's hand-off: camera 50 Hz -> s0 (priority 1, 2 ms) -> s1 (priority 9, 2 ms), both on a,
// and a task t (priority -5, 3 ms, 50 Hz, phase 1 ms). s0 runs [0, 2] ms; t, released at 1 ms, waits; at 2 ms s0
// ends and hands its item to s1 at that instant, so the decision sees s1's job: s1 [2, 4] ms, t [4, 7] ms (response
// 6 ms), in every 20 ms period. (Before: t took the unit at 2 ms before s1's job existed; s1 responded in 5 ms.)
TEST(Instant, AStageHandOffIsReleasedBeforeTheDecision) {
  Scratch s;
  s.write("hw.yaml", hardware("priority"));
  const auto scenario = s.write("s.yaml", R"(name: hand-off
hardware: hw.yaml
duration: "100 ms"
deadline: "1 s"
sensors:
  camera: {rate: "50 Hz"}
stages:
  s0: {unit: a, inputs: [camera], priority: 1, work: {time: "2 ms"}}
  s1: {unit: a, inputs: [s0], priority: 9, work: {time: "2 ms"}}
tasks:
  t: {rate: "50 Hz", phase: "1 ms", unit: a, priority: -5, work: {time: "3 ms"}}
)");
  both_ways(s, scenario, [](const RunResult& r) {
    const auto s1 = r.stages.where("stage", "s1");
    ASSERT_EQ(s1.size(), 5u);
    for (std::size_t k = 0; k < s1.size(); ++k) {
      expect_time(number(s1[k], "start_s"), 0.020 * static_cast<double>(k) + 0.002, "s1 starts");
      expect_time(number(s1[k], "end_s"), 0.020 * static_cast<double>(k) + 0.004, "s1 ends");
    }
    const auto t = r.tasks.where("task", "t");
    ASSERT_EQ(t.size(), 5u);
    for (const auto& row : t) {
      expect_time(number(row, "response_s"), 6e-3, "t responds");
      expect_time(number(row, "start_s") - number(row, "release_s"), 3e-3, "t waits for s0 and s1");
    }
  });
}

// 3. preemptive with a 0.1 ms switch cost, the synchronous release of 1: nothing is preempted at 0 (both released
// at one instant, hi simply goes first), so no switch is paid: hi 1.0 ms and lo 6.0 ms, at 0 as at 10 ms.
// (Before: a spurious preemption at t = 0, hi 1.1 ms and lo 6.2 ms.)
TEST(Instant, ASynchronousReleaseCausesNoPreemption) {
  Scratch s;
  s.write("hw.yaml", hardware(R"({policy: preemptive, switch_cost: "0.1 ms"})"));
  const auto scenario =
      s.write("s.yaml", tasks_only(R"(  lo: {rate: "100 Hz", unit: a, priority: 0, work: {time: "5 ms"}}
  hi: {rate: "100 Hz", unit: a, priority: 9, work: {time: "1 ms"}}
)",
                                   "50 ms"));
  both_ways(s, scenario, [](const RunResult& r) {
    for (const auto& row : r.tasks.where("task", "hi")) expect_time(number(row, "response_s"), 1e-3, "hi");
    for (const auto& row : r.tasks.where("task", "lo")) expect_time(number(row, "response_s"), 6e-3, "lo");
    EXPECT_EQ(r.summary["run"]["preemptions"], 0);
  });
}

// 4. fifo overrun: p (12 ms every 10 ms) overruns; its job 1 is released at its nominal 10 ms while job 0 still runs
// and waits. q (1 ms, phase 11 ms) is released at 11 ms. At 12 ms p1 (released 10 ms) goes before q (11 ms):
// p1 [12, 24]; at 24 ms q (11) goes before p2 (20): q [24, 25], p2 [25, 37]. Responses p0 12, p1 14, q 14, p2 17 ms.
// The run drains every task job released before its end (25 ms), so p2 is there.
// (Before: p1 ranked by when p0 ended, 12 ms, behind q: q [12, 13], p1 [13, 25].)
TEST(Instant, AFifoBackloggedJobRanksByItsRelease) {
  Scratch s;
  s.write("hw.yaml", hardware("fifo"));
  const auto scenario = s.write("s.yaml", tasks_only(R"(  p: {rate: "100 Hz", unit: a, work: {time: "12 ms"}}
  q: {rate: "50 Hz", phase: "11 ms", unit: a, priority: 9, work: {time: "1 ms"}}
)",
                                                     "25 ms"));
  both_ways(s, scenario, [](const RunResult& r) {
    const auto p = r.tasks.where("task", "p");
    ASSERT_EQ(p.size(), 3u);
    expect_time(number(p[0], "response_s"), 12e-3, "p0");
    expect_time(number(p[1], "response_s"), 14e-3, "p1");
    expect_time(number(p[2], "response_s"), 17e-3, "p2");
    const auto q = r.tasks.where("task", "q");
    ASSERT_EQ(q.size(), 1u);
    expect_time(number(q[0], "start_s"), 24e-3, "q starts after p1");
    expect_time(number(q[0], "response_s"), 14e-3, "q");
  });
}

// 5. fifo ties at one instant: zeta (declared first, 2 ms) and alpha (declared second, priority 9, 3 ms) are
// released together every 10 ms. fifo ignores priority and breaks the tie by declaration order, not by name or
// wake order: zeta [0, 2], alpha [2, 5] ms.
TEST(Instant, FifoTiesFollowDeclarationOrder) {
  Scratch s;
  s.write("hw.yaml", hardware("fifo"));
  const auto scenario = s.write("s.yaml", tasks_only(R"(  zeta: {rate: "100 Hz", unit: a, work: {time: "2 ms"}}
  alpha: {rate: "100 Hz", unit: a, priority: 9, work: {time: "3 ms"}}
)",
                                                     "50 ms"));
  both_ways(s, scenario, [](const RunResult& r) {
    for (const auto& row : r.tasks.where("task", "zeta")) expect_time(number(row, "response_s"), 2e-3, "zeta");
    for (const auto& row : r.tasks.where("task", "alpha")) expect_time(number(row, "response_s"), 5e-3, "alpha");
  });
}

// 6. random streams: the camera's jitter and stage 0's side work are both uniform on [0, 10 ms]. Before, both
// streams were seeded alike and every frame drew the same value for both. Now the side work's time (the stage's
// service minus its own 1 ms, nothing else runs on either unit) differs from the capture's jitter; and adding a
// task (a new stream) leaves every capture time unchanged.
TEST(Instant, RandomStreamsOfDifferentKindsDoNotCollide) {
  Scratch s;
  s.write("hw.yaml", hardware("fifo") + R"(  b:
    kind: cpu
    peak: {fp32: "1 GFLOP/s"}
    memory: [dram]
    energy_per_op: {fp32: "1 pJ"}
)");
  const std::string base = R"(name: streams
hardware: hw.yaml
duration: "1 s"
deadline: "1 s"
sensors:
  camera: {rate: "20 Hz", jitter: {distribution: uniform, min: "0 ms", max: "10 ms"}}
stages:
  s0:
    unit: a
    inputs: [camera]
    work: {time: "1 ms"}
    side_work: {unit: b, work: {time: {distribution: uniform, min: "0 ms", max: "10 ms"}}}
)";
  const auto plain = run_framesim(s.write("s.yaml", base), s.dir() / "plain");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  const auto more = run_framesim(
      s.write("t.yaml", base + "tasks:\n  extra: {rate: \"7 Hz\", unit: b, work: {time: {distribution: uniform, min: "
                               "\"0 ms\", max: \"1 ms\"}}}\n"),
      s.dir() / "more");
  ASSERT_EQ(more.exit_code, 0) << more.output;
  const auto rows = plain.stages.where("stage", "s0");
  ASSERT_EQ(rows.size(), 20u);
  int equal = 0;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const double jitter = number(rows[k], "capture_s") - 0.05 * static_cast<double>(k);
    const double side = number(rows[k], "end_s") - number(rows[k], "start_s") - 1e-3;
    if (std::fabs(jitter - side) < 1e-12) ++equal;
    EXPECT_GE(jitter, 0.0);
    EXPECT_LE(side, 10e-3 + 1e-12);
  }
  EXPECT_EQ(equal, 0) << "the side work drew the capture jitter's values";
  const auto other = more.stages.where("stage", "s0");
  ASSERT_EQ(other.size(), rows.size());
  for (std::size_t k = 0; k < rows.size(); ++k)
    EXPECT_EQ(rows[k].at("capture_s"), other[k].at("capture_s")) << "frame " << k;
}

namespace {

/// Units b and c beside a, alike: one core, 1 GFLOP/s each.
std::string three_units() {
  std::string out = hardware("fifo");
  for (const char* name : {"b", "c"})
    out += fmt::format(R"(  {}:
    kind: cpu
    peak: {{fp32: "1 GFLOP/s"}}
    memory: [dram]
    energy_per_op: {{fp32: "1 pJ"}}
)",
                       name);
  return out;
}

}  // namespace

// 7. kernel ends of one instant apply in declaration order, not in the order an executor reports them (README, "One
// instant, one decision", step 1). camera 10 Hz; `first` (unit a) and `second` (unit b) each take 2 ms of every
// frame, so both end at 100k + 2 ms, one instant; `fuse` (unit c, 1 ms, policy latest, inputs [first, second])
// runs on each item of `first` and takes the newest result of `second` it finds when it starts, which it does
// as soon as `first`'s item arrives (it is free: its previous run ended at 100(k - 1) + 3 ms). The chain
// camera -> second -> fuse measures which of `second`'s results fuse used (data age = fuse's end - the capture
// behind that result):
//  - `first` declared before `second`: first's end applies first, so fuse k starts before second's result k is
//    in and takes result k - 1: age (100k + 3) - 100(k - 1) = 103 ms for k = 1..9; frame 0 has no older result,
//    so fuse 0 waits for second's: 3 ms. Ages: min 3 ms, max 103 ms.
//  - `second` declared first: its result k is in when first's end applies: every age 3 ms.
// Ten actuations each way (captures 0..900 ms in a 1 s run).
TEST(Instant, KernelEndsOfOneInstantApplyInDeclarationOrder) {
  for (bool first_declared_first : {true, false}) {
    SCOPED_TRACE(first_declared_first ? "first, then second" : "second, then first");
    Scratch s;
    s.write("hw.yaml", three_units());
    const std::string first = R"(  first: {unit: a, inputs: [camera], work: {time: "2 ms"}}
)";
    const std::string second = R"(  second: {unit: b, inputs: [camera], work: {time: "2 ms"}}
)";
    const auto scenario =
        s.write("s.yaml", R"(name: ends
hardware: hw.yaml
duration: "1 s"
deadline: "1 s"
sensors:
  camera: {rate: "10 Hz"}
stages:
)" + (first_declared_first ? first + second : second + first) +
                              R"(  fuse: {unit: c, inputs: [first, second], policy: latest, work: {time: "1 ms"}}
chains:
  via_second: [camera, second, fuse]
)");
    both_ways(s, scenario, [&](const RunResult& r) {
      const auto& chain = r.summary["chains"]["via_second"];
      EXPECT_EQ(chain["actuations"], 10);
      expect_time(chain["data_age_s"]["min"].get<double>(), 3e-3, "youngest data");
      expect_time(chain["data_age_s"]["max"].get<double>(), first_declared_first ? 103e-3 : 3e-3, "oldest data");
    });
  }
}

// 8. ends close together but more than an instant apart stay apart (README: an instant is t and the events within
// 1 ps after it). Three tasks at 100 Hz, each alone on its unit: a 1 ms, b 1.001 ms, c 1.05 ms of work. Each
// responds in exactly its work time; in particular b and c do not end with a at 1 ms (1 us and 50 us later are
// other instants), on the SimGrid path as on the fluid one.
TEST(Instant, EndsMicrosecondsApartAreSeparateInstants) {
  Scratch s;
  s.write("hw.yaml", three_units());
  const auto scenario = s.write("s.yaml", tasks_only(R"(  ta: {rate: "100 Hz", unit: a, work: {time: "1 ms"}}
  tb: {rate: "100 Hz", unit: b, work: {time: "1.001 ms"}}
  tc: {rate: "100 Hz", unit: c, work: {time: "1.05 ms"}}
)",
                                                     "50 ms"));
  both_ways(s, scenario, [](const RunResult& r) {
    for (const auto& [task, work_s] : {std::pair{"ta", 1e-3}, std::pair{"tb", 1.001e-3}, std::pair{"tc", 1.05e-3}}) {
      const auto rows = r.tasks.where("task", task);
      ASSERT_EQ(rows.size(), 5u) << task;
      for (const auto& row : rows) expect_time(number(row, "response_s"), work_s, task);
    }
  });
}

// 9. preemptive, a 0.125 ms switch cost: a switch that ends at the instant its job is preempted is no start. lo
// (priority 0, 2 ms) runs from 0; mid (priority 1, 0.375 ms) is released at 1 ms and takes the core, switching
// [1, 1.125] ms; at 1.125 ms hi (priority 2, 0.75 ms) is released: the decision of that instant gives hi the core,
// so mid never held it with its switch paid. hi switches [1.125, 1.25] and runs [1.25, 2]; mid, owing a switch,
// takes the core at 2: switch [2, 2.125], runs [2.125, 2.5]; lo switches [2.5, 2.625] and runs its last 1 ms
// [2.625, 3.625]. mid starts at 2.125 ms (wait 1.125 ms, no blocked time). (Before: mid started at 1.125 ms, the end
// of the switch it was preempted in, with 1 ms blocked.)
TEST(Instant, ASwitchEndingAtAPreemptionIsNoStart) {
  Scratch s;
  s.write("hw.yaml", hardware(R"({policy: preemptive, switch_cost: "0.125 ms"})"));
  const auto scenario =
      s.write("s.yaml", tasks_only(R"(  lo: {rate: "100 Hz", unit: a, priority: 0, work: {time: "2 ms"}}
  mid: {rate: "100 Hz", phase: "1 ms", unit: a, priority: 1, work: {time: "0.375 ms"}}
  hi: {rate: "100 Hz", phase: "1.125 ms", unit: a, priority: 2, work: {time: "0.75 ms"}}
)",
                                   "5 ms"));
  both_ways(s, scenario, [](const RunResult& r) {
    const auto hi = r.tasks.where("task", "hi");
    const auto mid = r.tasks.where("task", "mid");
    const auto lo = r.tasks.where("task", "lo");
    ASSERT_EQ(hi.size(), 1u);
    ASSERT_EQ(mid.size(), 1u);
    ASSERT_EQ(lo.size(), 1u);
    expect_time(number(hi[0], "start_s"), 1.25e-3, "hi starts after its switch");
    expect_time(number(hi[0], "end_s"), 2e-3, "hi ends");
    expect_time(number(mid[0], "start_s"), 2.125e-3, "mid starts after the switch it finishes");
    expect_time(number(mid[0], "wait_s"), 1.125e-3, "mid waits");
    expect_time(number(mid[0], "blocked_s"), 0, "mid is never blocked after its start");
    expect_time(number(mid[0], "end_s"), 2.5e-3, "mid ends");
    expect_time(number(lo[0], "end_s"), 3.625e-3, "lo ends");
  });
}

namespace {

/// Unit a (1 TFLOP/s, 0.5 ms to launch each kernel, `policy` on its scheduler) and unit b (alike, no launch
/// cost); `five`, five kernels of 1 GOP (1 ms each on either unit, their 8 B of memory traffic never binds).
void launch_hardware(Scratch& s, const std::string& policy) {
  s.write("hw.yaml", fmt::format(R"(name: launches
memory:
  dram: {{kind: dram, capacity: "8 GiB", bandwidth: "100 GB/s", latency: "100 ns"}}
units:
  a: {{kind: gpu, peak: {{fp32: "1 TFLOP/s"}}, memory: [dram], dispatch_overhead: "0.5 ms", scheduler: {}}}
  b: {{kind: gpu, peak: {{fp32: "1 TFLOP/s"}}, memory: [dram]}}
)",
                                 policy));
  s.write("five.yaml", R"(name: five-kernels
fusion: none
inputs:
  x: [1, 1]
layers:
  - {name: k0, op: custom, ops: 1000000000}
  - {name: k1, op: custom, ops: 1000000000}
  - {name: k2, op: custom, ops: 1000000000}
  - {name: k3, op: custom, ops: 1000000000}
  - {name: k4, op: custom, ops: 1000000000}
)");
}

/// hi (its one row in `hi`) holds a in [3, 4] ms, from lo's boundary at 3 ms; lo ends after it, at 8.5 ms.
void expect_hi_at_the_boundary(const std::vector<std::map<std::string, std::string>>& hi, const RunResult& r) {
  ASSERT_EQ(hi.size(), 1u);
  expect_time(number(hi[0], "start_s"), 3e-3, "hi takes the unit at lo's boundary");
  expect_time(number(hi[0], "end_s"), 4e-3, "hi ends");
  const auto lo = r.stages.where("stage", "lo");
  ASSERT_EQ(lo.size(), 1u);
  expect_time(number(lo[0], "end_s"), 8.5e-3, "lo ends after hi");
}

}  // namespace

// 10. priority, a release at the exact instant of a kernel boundary is decided there, launches included. lo (stage,
// priority 0) runs five kernels on a: each a launch of 0.5 ms then 1 ms of work, kernel k in [1.5k, 1.5(k + 1)] ms
// alone. hi (task, priority 9, 1 ms of work given as a time: no launch) is released at 3 ms, the end of lo's kernel
// k1: the decision of that instant gives hi the unit, hi [3, 4] ms, and lo's k2..k4 follow in [4, 8.5] ms.
// On the fluid path lo's boundaries at 1.5 ms and 6, 7.5 ms are the executor's own (nothing else happens then);
// the one at 3 ms is not, a timer being in its instant. Released at 2.5 ms instead, hi waits, and the boundary at
// 3 ms (alone in its instant) is still decided by the dispatcher, a job waiting there: the same times.
TEST(Instant, AReleaseAtAKernelBoundaryIsDecidedThere) {
  for (const char* phase : {"3 ms", "2.5 ms"}) {
    SCOPED_TRACE(std::string("hi released at ") + phase);
    Scratch s;
    launch_hardware(s, "{policy: priority}");
    const auto scenario = s.write("s.yaml", fmt::format(R"(name: boundary
hardware: hw.yaml
networks: {{five: five.yaml}}
duration: "20 ms"
deadline: "1 s"
trace: {{kernels: "20 ms"}}
sensors:
  camera: {{rate: "1 Hz"}}
stages:
  lo: {{unit: a, inputs: [camera], network: five, priority: 0}}
tasks:
  hi: {{rate: "1 Hz", phase: "{}", unit: a, priority: 9, work: {{time: "1 ms"}}}}
)",
                                                        phase));
    both_ways(s, scenario, [](const RunResult& r) {
      expect_hi_at_the_boundary(r.tasks.where("task", "hi"), r);
      // lo's kernels (kernels.csv start_s is when the work began): k0 0.5, k1 2, then after hi 4.5, 6, 7.5 ms.
      const auto kernels = r.kernels.where("owner", "lo");
      ASSERT_EQ(kernels.size(), 5u);
      const double starts[] = {0.5e-3, 2e-3, 4.5e-3, 6e-3, 7.5e-3};
      for (std::size_t k = 0; k < 5; ++k) {
        expect_time(number(kernels[k], "start_s"), starts[k], fmt::format("lo k{} starts its work", k));
        expect_time(number(kernels[k], "end_s"), starts[k] + 1e-3, fmt::format("lo k{} ends", k));
      }
    });
  }
}

// 11. priority, a job released on a by another unit's job ending at the same instant as a kernel boundary on a:
// feed (stage on b, 3 ms of work) ends at 3 ms and hands its item to hi (stage on a, priority 9, 1 ms of work) at
// that instant, which is also the end of lo's kernel k1 (as in 10). The decision sees hi's job: hi [3, 4] ms, lo's
// k2..k4 in [4, 8.5] ms. Were lo's boundary taken alone, lo would keep the unit until 7.5 ms and hi end at 8.5 ms.
TEST(Instant, AHandOffAtAnotherUnitsEndIsDecidedAtTheBoundary) {
  Scratch s;
  launch_hardware(s, "{policy: priority}");
  const auto scenario = s.write("s.yaml", R"(name: hand-off at a boundary
hardware: hw.yaml
networks: {five: five.yaml}
duration: "20 ms"
deadline: "1 s"
sensors:
  camera: {rate: "1 Hz"}
stages:
  lo: {unit: a, inputs: [camera], network: five, priority: 0}
  feed: {unit: b, inputs: [camera], work: {time: "3 ms"}}
  hi: {unit: a, inputs: [feed], priority: 9, work: {time: "1 ms"}}
)");
  both_ways(s, scenario, [](const RunResult& r) { expect_hi_at_the_boundary(r.stages.where("stage", "hi"), r); });
}
