// The unit scheduler inside the engine against oracles that share no code with it: response-time analysis
// (the fixed point computed here), the closed forms of time slicing and preemption worked out by hand, a D/D/1
// queue with a finite waiting room simulated here event by event, and hand-derived chain ages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>

#include <fmt/format.h>

#include "engine/run_support.hpp"
#include "test_support.hpp"

using framesim::testing::run_framesim;
using framesim::testing::RunResult;
using framesim::testing::Scratch;

namespace {

/// One single-core cpu at 1 GFLOP/s (so `ops: 1000000` is 1 ms) behind a DRAM too fast to matter, with the
/// given scheduler line (indented under the unit).
std::string one_core_hardware(const std::string& scheduler, const std::string& extra_unit = "") {
  return fmt::format(R"(name: one-core
memory:
  dram: {{kind: dram, capacity: "8 GiB", bandwidth: "10 TB/s", latency: "100 ns", energy_per_byte: "1 pJ"}}
units:
  cpu:
    kind: cpu
    peak: {{fp32: "1 GFLOP/s"}}
    memory: [dram]
    energy_per_op: {{fp32: "1 pJ"}}
    {}
{})",
                     scheduler, extra_unit);
}

double number(const std::map<std::string, std::string>& row, const std::string& column) {
  return std::stod(row.at(column));
}

void expect_near_rel(double actual, double expected, const std::string& what, double tolerance = 1e-9) {
  EXPECT_LE(std::fabs(actual - expected), tolerance * std::max(1e-12, std::fabs(expected)))
      << what << ": " << actual << " vs " << expected;
}

/// When each of `stages` ended its first execution, earliest first.
std::vector<double> first_ends_sorted(const RunResult& r, std::initializer_list<const char*> stages) {
  std::vector<double> ends;
  for (const char* stage : stages) ends.push_back(number(r.stages.where("stage", stage).at(0), "end_s"));
  std::sort(ends.begin(), ends.end());
  return ends;
}

struct PeriodicTask {
  double c_s, t_s;
  int priority;
};

/// Response-time analysis for fixed priorities on one core, synchronous release: the smallest fixed point of
/// R = blocking + C + sum over higher priorities of ceil(R / T_j) C_j (Joseph & Pandya 1986; Audsley et al. 1993).
double rta_s(const std::vector<PeriodicTask>& set, std::size_t i, double blocking_s = 0) {
  double r = blocking_s + set[i].c_s;
  for (int iteration = 0; iteration < 1000; ++iteration) {
    double next = blocking_s + set[i].c_s;
    for (const auto& j : set)
      if (j.priority > set[i].priority) next += std::ceil(r / j.t_s - 1e-12) * j.c_s;
    if (std::fabs(next - r) < 1e-15) return next;
    r = next;
  }
  ADD_FAILURE() << "RTA did not converge";
  return r;
}

/// Non-preemptive fixed priorities: the latest start w = B + sum_hp (floor(w / T_j) + 1) C_j, then R = w + C_i,
/// B the longest job of lower priority (George, Rivierre & Spuri 1996; valid when R <= T_i, checked by the caller).
double np_bound_s(const std::vector<PeriodicTask>& set, std::size_t i) {
  double blocking = 0;
  for (const auto& j : set)
    if (j.priority < set[i].priority) blocking = std::max(blocking, j.c_s);
  double w = blocking;
  for (int iteration = 0; iteration < 1000; ++iteration) {
    double next = blocking;
    for (const auto& j : set)
      if (j.priority > set[i].priority) next += (std::floor(w / j.t_s + 1e-12) + 1) * j.c_s;
    if (std::fabs(next - w) < 1e-15) return w + set[i].c_s;
    w = next;
  }
  ADD_FAILURE() << "non-preemptive RTA did not converge";
  return w;
}

std::string tasks_yaml(const std::vector<PeriodicTask>& set, const std::vector<double>& phases_s = {}) {
  std::string out;
  for (std::size_t i = 0; i < set.size(); ++i)
    out +=
        fmt::format("  t{}: {{rate: \"{} Hz\", phase: \"{} s\", unit: cpu, priority: {}, work: {{time: \"{} s\"}}}}\n",
                    i, 1.0 / set[i].t_s, phases_s.empty() ? 0.0 : phases_s[i], set[i].priority, set[i].c_s);
  return out;
}

/// A scenario whose sensor never captures within `duration` (< 1.9 s): only the tasks run.
std::string task_scenario(const std::string& tasks, const std::string& duration) {
  return fmt::format(R"(name: tasks
hardware: hw.yaml
duration: "{}"
deadline: "1 s"
sensors:
  never: {{rate: "0.5 Hz", phase: "1.9 s"}}
stages:
  idle: {{unit: cpu, inputs: [never], work: {{time: "1 ns"}}}}
tasks:
{})",
                     duration, tasks);
}

}  // namespace

// The defect of issue 8: lo (priority 0) and hi (priority 10) each run ten 1 ms kernels on one unit; lo is
// released at 0, hi at 0.5 ms. Non-preemptive priority gives hi the unit at lo's first kernel boundary (1 ms):
// hi runs 1..11 ms, then lo's nine remaining kernels run 11..20 ms. hi waited 0.5 ms for the unit.
TEST(Scheduling, PriorityTakesTheUnitAtTheNextKernelBoundary) {
  Scratch s;
  s.write("hw.yaml", one_core_hardware("scheduler: priority"));
  std::string layers;
  for (int i = 0; i < 10; ++i) layers += fmt::format("  - {{name: k{}, op: custom, ops: 1000000}}\n", i);
  s.write("ten.yaml", "name: ten\nfusion: none\ninputs:\n  x: [1, 1]\nlayers:\n" + layers);
  const auto r = run_framesim(s.write("s.yaml", R"(name: inversion
hardware: hw.yaml
networks: {ten: ten.yaml}
duration: "50 ms"
deadline: "1 s"
sensors:
  s_low: {rate: "20 Hz"}
  s_high: {rate: "20 Hz", phase: "0.5 ms"}
stages:
  low: {unit: cpu, inputs: [s_low], network: ten, priority: 0}
  high: {unit: cpu, inputs: [s_high], network: ten, priority: 10}
)"),
                              s.dir() / "out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto high = r.stages.where("stage", "high").at(0);
  const auto low = r.stages.where("stage", "low").at(0);
  expect_near_rel(number(high, "end_s"), 0.011, "high ends");
  expect_near_rel(number(low, "end_s"), 0.020, "low ends");
  expect_near_rel(number(high, "wait_s"), 0.0005, "high waited for the unit");
  expect_near_rel(number(low, "blocked_s"), 0.010, "low lost the unit for high's 10 ms");
}

// Preemptive fixed priority on one core, synchronous release, constant execution times: each task's first
// response equals the RTA fixed point. By hand for this set (C, T in ms, priority high to low):
// (1, 4): R = 1; (1.5, 6): R = 1.5 + 1 = 2.5; (2, 10): 2 -> 4.5 -> 5.5; (3, 20): 3 -> 7.5 -> 10 -> 11 -> 13 -> 15.5.
TEST(Scheduling, PreemptiveFirstResponsesEqualResponseTimeAnalysis) {
  const std::vector<PeriodicTask> set{{1e-3, 4e-3, 4}, {1.5e-3, 6e-3, 3}, {2e-3, 10e-3, 2}, {3e-3, 20e-3, 1}};
  const std::vector<double> by_hand{1e-3, 2.5e-3, 5.5e-3, 15.5e-3};
  Scratch s;
  s.write("hw.yaml", one_core_hardware("scheduler: preemptive"));
  const auto r = run_framesim(s.write("s.yaml", task_scenario(tasks_yaml(set), "120 ms")), s.dir() / "out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (std::size_t i = 0; i < set.size(); ++i) {
    expect_near_rel(rta_s(set, i), by_hand[i], "the oracle itself");
    const auto first = r.tasks.where("task", fmt::format("t{}", i)).at(0);
    ASSERT_EQ(first.at("job"), "0");
    expect_near_rel(number(first, "response_s"), rta_s(set, i), fmt::format("t{} first response", i));
    // Synchronous release is the critical instant: no later job responds more slowly.
    for (const auto& row : r.tasks.where("task", fmt::format("t{}", i)))
      EXPECT_LE(number(row, "response_s"), rta_s(set, i) * (1 + 1e-9)) << "t" << i << " job " << row.at("job");
  }
  EXPECT_GT(r.summary["run"]["preemptions"].get<int>(), 0);
  EXPECT_EQ(r.summary["tasks"]["t3"]["missed"], 0);
}

// Non-preemptive priority: every response stays within the non-preemptive bound (the latest start after the
// longest lower-priority job, plus C). By hand for this set (C, T in ms): t0 (1, 5): B 2, R 3; t1 (1.5, 8):
// w = 2 + 1 = 3, R 4.5; t2 (2, 12): w = 1 + 1 + 1.5 = 3.5, R 5.5; t3 (1, 24): w = 4.5, R 5.5. A constructed worst
// case reaches its bound: t0 (1 ms every 10 ms, high) is released 1 us after t1 (3 ms, low) started, so it waits
// 3 ms - 1 us and responds in 4 ms - 1 us.
TEST(Scheduling, NonPreemptiveResponsesStayWithinTheBlockingBound) {
  const std::vector<PeriodicTask> set{{1e-3, 5e-3, 4}, {1.5e-3, 8e-3, 3}, {2e-3, 12e-3, 2}, {1e-3, 24e-3, 1}};
  const std::vector<double> by_hand{3e-3, 4.5e-3, 5.5e-3, 5.5e-3};
  for (std::size_t i = 0; i < set.size(); ++i) expect_near_rel(np_bound_s(set, i), by_hand[i], "the oracle itself");
  Scratch s;
  s.write("hw.yaml", one_core_hardware("scheduler: priority"));
  auto r = run_framesim(s.write("s.yaml", task_scenario(tasks_yaml(set), "240 ms")), s.dir() / "out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (std::size_t i = 0; i < set.size(); ++i) {
    const double bound = np_bound_s(set, i);
    ASSERT_LE(bound, set[i].t_s) << "the bound is valid only within a period";
    for (const auto& row : r.tasks.where("task", fmt::format("t{}", i)))
      EXPECT_LE(number(row, "response_s"), bound * (1 + 1e-9)) << "t" << i << " job " << row.at("job");
  }
  const std::vector<PeriodicTask> pair{{1e-3, 10e-3, 2}, {3e-3, 20e-3, 1}};
  Scratch w;
  w.write("hw.yaml", one_core_hardware("scheduler: priority"));
  r = run_framesim(w.write("s.yaml", task_scenario(tasks_yaml(pair, {1e-6, 0}), "20 ms")), w.dir() / "out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_near_rel(number(r.tasks.where("task", "t0").at(0), "response_s"), 4e-3 - 1e-6, "worst case");
  expect_near_rel(np_bound_s(pair, 0), 4e-3, "its bound");
}

// Preemption resumes the remaining work exactly, and each switch costs 0.1 ms: lo (10 ms) from 0, hi (2 ms,
// higher priority) at 3 ms. hi pays a switch and runs 3.1..5.1; lo pays a switch on resuming and runs its last
// 7 ms 5.2..12.2. The arithmetic energy is that of the whole work, however it was cut: 12 Mop x 1 pJ = 12 uJ.
TEST(Scheduling, PreemptedWorkResumesWhereItStopped) {
  Scratch s;
  s.write("hw.yaml", one_core_hardware(R"(scheduler: {policy: preemptive, switch_cost: "0.1 ms"})"));
  const auto r = run_framesim(s.write("s.yaml", R"(name: preempt
hardware: hw.yaml
duration: "20 ms"
deadline: "1 s"
sensors:
  a: {rate: "10 Hz"}
  b: {rate: "10 Hz", phase: "3 ms"}
stages:
  lo: {unit: cpu, inputs: [a], priority: 1, work: {ops: "10 MFLOP", bytes: {dram: "1 MB"}}}
  hi: {unit: cpu, inputs: [b], priority: 2, work: {ops: "2 MFLOP", bytes: {dram: "1 MB"}}}
)"),
                              s.dir() / "out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto hi = r.stages.where("stage", "hi").at(0);
  const auto lo = r.stages.where("stage", "lo").at(0);
  expect_near_rel(number(hi, "start_s"), 0.0031, "hi starts after its switch");
  expect_near_rel(number(hi, "end_s"), 0.0051, "hi ends");
  expect_near_rel(number(lo, "end_s"), 0.0122, "lo ends");
  expect_near_rel(number(lo, "blocked_s"), 0.0022, "lo lost 2.2 ms: hi's switch, hi, its own switch");
  expect_near_rel(r.summary["energy"]["breakdown_per_frame_J"]["compute"]["cpu"].get<double>(), 12e-6,
                  "compute energy");
  // Bytes too: 2 MB at 1 pJ/B.
  expect_near_rel(r.summary["utilisation"]["memory"]["dram"]["bytes"].get<double>(), 2e6, "bytes served");
}

// Round robin: two equal compute-bound stages of 4 ms each, quantum 1 ms, switch 0.1 ms, both released at 0.
// The first runs [0, 1], then each switch-in costs 0.1 ms: slots of 1 ms alternate, the first finishes its 4th
// slot at 7q + 6s = 7.6 ms, the second (switched out, so it pays on resuming) at 8q + 7s = 8.7 ms.
TEST(Scheduling, TimeSlicingFinishesAtTheClosedFormTimes) {
  Scratch s;
  s.write("hw.yaml", one_core_hardware(R"(scheduler: {policy: time_slice, quantum: "1 ms", switch_cost: "0.1 ms"})"));
  const auto r = run_framesim(s.write("s.yaml", R"(name: slices
hardware: hw.yaml
duration: "20 ms"
deadline: "1 s"
sensors:
  camera: {rate: "10 Hz"}
stages:
  a: {unit: cpu, inputs: [camera], work: {time: "4 ms"}}
  b: {unit: cpu, inputs: [camera], work: {time: "4 ms"}}
)"),
                              s.dir() / "out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto ends = first_ends_sorted(r, {"a", "b"});
  expect_near_rel(ends[0], 7 * 1e-3 + 6 * 1e-4, "first to finish");
  expect_near_rel(ends[1], 8 * 1e-3 + 7 * 1e-4, "second to finish");
}

// The same scenario without a scenario-level override runs the hardware's policy; `schedulers:` replaces it.
TEST(Scheduling, AScenarioOverridesTheHardwareScheduler) {
  Scratch s;
  s.write("hw.yaml", one_core_hardware("scheduler: fifo"));
  const auto r = run_framesim(s.write("s.yaml", R"(name: override
hardware: hw.yaml
duration: "20 ms"
deadline: "1 s"
schedulers:
  cpu: {policy: time_slice, quantum: "1 ms"}
sensors:
  camera: {rate: "10 Hz"}
stages:
  a: {unit: cpu, inputs: [camera], work: {time: "2 ms"}}
  b: {unit: cpu, inputs: [camera], work: {time: "2 ms"}}
)"),
                              s.dir() / "out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Round robin with no switch cost: a [0,1], b [1,2], a [2,3] ends at 3 ms, b at 4 ms (fifo: 2 and 4).
  const auto ends = first_ends_sorted(r, {"a", "b"});
  expect_near_rel(ends[0], 3e-3, "first");
  expect_near_rel(ends[1], 4e-3, "second");
}

// Partitioned cores: on a two-core unit, stages pinned to core 0 and core 1 run side by side; a third stage
// pinned to core 0 waits for the first. Each 2 ms of work on one core of a 2 GFLOP/s two-core unit.
TEST(Scheduling, PinnedStagesRunOnTheirOwnCores) {
  Scratch s;
  s.write("hw.yaml", R"(name: two-cores
memory:
  dram: {kind: dram, capacity: "8 GiB", bandwidth: "10 TB/s", latency: "100 ns"}
units:
  cpu: {kind: cpu, cores: 2, peak: {fp32: "2 GFLOP/s"}, memory: [dram]}
)");
  const auto r = run_framesim(s.write("s.yaml", R"(name: pinned
hardware: hw.yaml
duration: "20 ms"
deadline: "1 s"
sensors:
  camera: {rate: "10 Hz"}
stages:
  a: {unit: cpu, cores: [0], inputs: [camera], work: {ops: "2 MFLOP"}}
  b: {unit: cpu, cores: [1], inputs: [camera], work: {ops: "2 MFLOP"}}
  c: {unit: cpu, cores: [0], inputs: [camera], work: {ops: "2 MFLOP"}}
)"),
                              s.dir() / "out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_near_rel(number(r.stages.where("stage", "a").at(0), "end_s"), 2e-3, "a");
  expect_near_rel(number(r.stages.where("stage", "b").at(0), "end_s"), 2e-3, "b");
  expect_near_rel(number(r.stages.where("stage", "c").at(0), "end_s"), 4e-3, "c after a on core 0");
  // Core-time: 3 x 2 ms on a 2-core unit over a 20 ms run = 15 % busy.
  expect_near_rel(r.summary["utilisation"]["units"]["cpu"]["busy"].get<double>(), 0.15, "busy");
}

/// A D/D/1 queue with `room` waiting places, simulated here event by event: arrivals every `period_s` from 0,
/// service `service_s` each, in order. Returns each arrival's wait (NaN: dropped) and the time-average number
/// waiting over [0, last departure].
struct DD1 {
  std::vector<double> wait_s;
  double mean_waiting = 0;
  std::size_t max_waiting = 0;
};
DD1 dd1(int arrivals, double period_s, double service_s, std::size_t room, bool drop_newest) {
  DD1 out;
  out.wait_s.assign(static_cast<std::size_t>(arrivals), NAN);
  std::deque<int> waiting;
  double free_at = 0, area = 0, last_change = 0;
  auto change = [&](double t) {
    area += static_cast<double>(waiting.size()) * (t - last_change);
    last_change = t;
  };
  auto serve_until = [&](double t) {  // starts every waiting item whose turn comes before t
    while (!waiting.empty() && free_at < t) {
      change(free_at);
      const int k = waiting.front();
      waiting.pop_front();
      out.wait_s[static_cast<std::size_t>(k)] = free_at - k * period_s;
      free_at += service_s;
    }
  };
  for (int k = 0; k < arrivals; ++k) {
    const double a = k * period_s;
    serve_until(a);
    change(a);
    if (waiting.empty() && free_at <= a) {
      out.wait_s[static_cast<std::size_t>(k)] = 0;
      free_at = a + service_s;
      continue;
    }
    if (waiting.size() == room) {
      if (drop_newest) continue;
      waiting.pop_front();
    }
    waiting.push_back(k);
    out.max_waiting = std::max(out.max_waiting, waiting.size());
  }
  serve_until(1e300);
  change(free_at);
  out.mean_waiting = area / free_at;
  return out;
}

// Replaces the old Little's-law test (two sums equal by construction): 50 frames at 100 Hz into a stage that
// takes 13.7 ms each (no two events at the same instant), with 3 waiting places; the waits, the drops and the
// mean queue depth match the D/D/1 recursion above, for both overflow policies.
TEST(Scheduling, DeterministicQueueMatchesTheDD1Recursion) {
  for (const bool drop_newest : {true, false}) {
    Scratch s;
    s.write("hw.yaml", one_core_hardware("scheduler: fifo"));
    const auto r = run_framesim(s.write("s.yaml", fmt::format(R"(name: dd1
hardware: hw.yaml
duration: "0.5 s"
deadline: "10 s"
sensors:
  camera: {{rate: "100 Hz"}}
stages:
  server: {{unit: cpu, inputs: [camera], queue: {{depth: 3, overflow: {}}}, work: {{time: "13.7 ms"}}}}
)",
                                                              drop_newest ? "drop_newest" : "drop_oldest")),
                                s.dir() / "out");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const DD1 expected = dd1(50, 0.01, 0.0137, 3, drop_newest);
    std::size_t dropped = 0;
    for (std::size_t k = 0; k < expected.wait_s.size(); ++k) {
      const auto rows = r.stages.where("frame", std::to_string(k));
      if (std::isnan(expected.wait_s[k])) {
        ++dropped;
        EXPECT_TRUE(rows.empty()) << "frame " << k << " should be dropped";
        continue;
      }
      ASSERT_EQ(rows.size(), 1u) << "frame " << k;
      EXPECT_NEAR(number(rows[0], "wait_s"), expected.wait_s[k], 1e-12) << "frame " << k;
    }
    // The drop count by hand, the same for both policies (a drop either way leaves the server's work unchanged):
    // the server never idles after t = 0 (13.7 ms of work arrives every 10 ms), so its starts are at 13.7 j ms.
    // Arrivals come at 10 k ms, k = 0..49. The queue first overflows at k = 12 (13 arrivals by 120 ms, 9 starts
    // by then: 13.7 x 8 = 109.6 ms, so 4 would wait); from then on at most one start falls between two arrivals, so
    // 3 wait after every arrival. At the last arrival (490 ms) 36 have started (13.7 x 35 = 479.5 ms <= 490 < 493.2)
    // and 3 wait; all of them are served. Dropped = 50 - 36 - 3 = 11.
    EXPECT_EQ(dropped, 11u);
    EXPECT_EQ(r.summary["frames"]["dropped"].get<std::size_t>(), dropped);
    const auto& q = r.summary["utilisation"]["queues"]["server"];
    EXPECT_EQ(q["max"].get<std::size_t>(), expected.max_waiting);
    expect_near_rel(q["mean"].get<double>(), expected.mean_waiting, "mean queue depth", 1e-9);
  }
}

// Chains: frames every 100 ms, detect takes 30 ms, control reads detect at 50 Hz with no work of its own.
// A result is ready 30 ms after capture; the ticks after it come at capture + 40, 60, 80, 100, 120 ms, so the
// data age cycles through those five values and every sample first reaches an actuation 40 ms after capture.
// The chain that ends at detect itself actuates at detect's end: 30 ms for both.
TEST(Scheduling, ChainsReportDataAgeAndReactionTime) {
  Scratch s;
  s.write("hw.yaml", one_core_hardware("scheduler: priority"));
  const auto r = run_framesim(s.write("s.yaml", R"(name: chains
hardware: hw.yaml
duration: "2 s"
deadline: "1 s"
sensors:
  camera: {rate: "10 Hz"}
stages:
  detect: {unit: cpu, inputs: [camera], work: {time: "30 ms"}}
tasks:
  control: {rate: "50 Hz", reads: detect}
chains:
  to_control: [camera, detect, control]
  to_detect: [camera, detect]
)"),
                              s.dir() / "out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto& c = r.summary["chains"]["to_control"];
  expect_near_rel(c["data_age_s"]["min"].get<double>(), 0.040, "age min");
  expect_near_rel(c["data_age_s"]["max"].get<double>(), 0.120, "age max");
  expect_near_rel(c["data_age_s"]["p50"].get<double>(), 0.080, "age median");
  expect_near_rel(c["reaction_s"]["min"].get<double>(), 0.040, "reaction min");
  expect_near_rel(c["reaction_s"]["max"].get<double>(), 0.040, "reaction max");
  EXPECT_EQ(c["reaction_s"]["count"].get<int>(), 20);
  const auto& d = r.summary["chains"]["to_detect"];
  expect_near_rel(d["data_age_s"]["max"].get<double>(), 0.030, "stage chain age");
  expect_near_rel(d["reaction_s"]["max"].get<double>(), 0.030, "stage chain reaction");
}

// A stage whose side input never arrives (the lidar's first capture would come after the run) holds frames
// forever: the run ends at its drain limit and says, as data, where frames are stuck and what they wait for.
// By hand: the camera captures 10 frames (0, 100, ..., 900 ms); fuse joins camera with gate, which never
// produces, so every camera frame waits at fuse; its queue keeps 2 (drop_oldest: frames 0..7 dropped), and
// frames 8 and 9 are unfinished. Nothing reaches points or gate. Drain limit: max(2 s, 20 x 50 ms) = 2 s, so
// the run ends at 1 s + 2 s = 3 s. The run still completes (exit 0) and writes its folder.
TEST(Scheduling, AStuckPipelineIsReported) {
  Scratch s;
  s.write("hw.yaml", one_core_hardware("scheduler: priority"));
  const auto r = run_framesim(s.write("s.yaml", R"(name: stuck
hardware: hw.yaml
duration: "1 s"
deadline: "50 ms"
sensors:
  camera: {rate: "10 Hz"}
  lidar: {rate: "0.5 Hz", phase: "1.5 s"}
stages:
  points: {unit: cpu, inputs: [lidar], work: {time: "1 ms"}, queue: {depth: 1}}
  gate: {unit: cpu, inputs: [points], work: {time: "1 ms"}, queue: {depth: 1}}
  fuse: {unit: cpu, inputs: [camera, gate], policy: latest, work: {time: "1 ms"}, queue: {depth: 2}}
)"),
                              s.dir() / "out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto& stuck = r.summary["stuck"];
  ASSERT_TRUE(stuck.is_object()) << r.summary.dump(2);
  EXPECT_DOUBLE_EQ(stuck["drain_limit_s"].get<double>(), 2.0);
  EXPECT_EQ(stuck["unfinished_frames"].get<int>(), 2);
  ASSERT_EQ(stuck["stages"].size(), 1u);
  EXPECT_EQ(stuck["stages"][0]["stage"], "fuse");
  EXPECT_EQ(stuck["stages"][0]["queued"].get<int>(), 2);
  EXPECT_EQ(stuck["stages"][0]["waiting_for"], nlohmann::json::array({"gate"}));
  EXPECT_NEAR(r.summary["run"]["simulated_s"].get<double>(), 3.0, 1e-9);
  EXPECT_EQ(r.frames.where("outcome", "unfinished").size(), 2u);
  EXPECT_EQ(r.summary["frames"]["dropped"].get<int>(), 8);
  EXPECT_FALSE(r.summary["warnings"].empty());  // and the same as a warning for the reader of the summary
}

// The last item of a `latest` join's side input, arriving after the last trigger, is not stuck: no trigger can
// come once the sensors stopped, so it ends as every passed-over side input does. By hand: the camera captures at
// 0, 100, ..., 900 ms and triggers fuse; the radar (phase 50 ms) at 50, ..., 950 ms is fuse's side input. Camera
// frame 0 waits for the first radar item (50 ms); every later camera frame runs at once (1 ms of work), the last
// ending at 901 ms. Radar frames 50..850 ms are passed over at the next trigger; the 950 ms one waits with nothing
// else in flight. So: 10 camera frames completed, 10 radar frames ended as side inputs, none unfinished, no stuck
// report, no warning, and the run ends at its 1 s duration (before the fix: a false "did not drain" warning, a
// stuck report naming fuse and the run extended to the 2 s drain limit, 3 s).
TEST(Scheduling, ALatestJoinsLastSideInputIsNotStuck) {
  Scratch s;
  s.write("hw.yaml", one_core_hardware("scheduler: priority"));
  const auto r = run_framesim(s.write("s.yaml", R"(name: latest-tail
hardware: hw.yaml
duration: "1 s"
deadline: "50 ms"
sensors:
  camera: {rate: "10 Hz"}
  radar: {rate: "10 Hz", phase: "50 ms"}
stages:
  fuse: {unit: cpu, inputs: [camera, radar], policy: latest, work: {time: "1 ms"}}
)"),
                              s.dir() / "out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.summary["stuck"].is_null()) << r.summary["stuck"].dump(2);
  EXPECT_TRUE(r.summary["warnings"].empty()) << r.summary["warnings"].dump(2);
  EXPECT_NEAR(r.summary["run"]["simulated_s"].get<double>(), 1.0, 1e-9);
  EXPECT_EQ(r.frames.where("outcome", "completed").size(), 10u);
  EXPECT_EQ(r.frames.where("outcome", "side_input").size(), 10u);
  EXPECT_EQ(r.frames.where("outcome", "unfinished").size(), 0u);
}

// A pipeline that drains has no stuck report.
TEST(Scheduling, ADrainedPipelineHasNoStuckReport) {
  Scratch s;
  s.write("hw.yaml", one_core_hardware("scheduler: priority"));
  const auto r = run_framesim(s.write("s.yaml", R"(name: drains
hardware: hw.yaml
duration: "1 s"
deadline: "50 ms"
sensors:
  camera: {rate: "10 Hz"}
stages:
  fuse: {unit: cpu, inputs: [camera], work: {time: "1 ms"}}
)"),
                              s.dir() / "out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.summary["stuck"].is_null());
  EXPECT_TRUE(r.summary["warnings"].empty());
}
