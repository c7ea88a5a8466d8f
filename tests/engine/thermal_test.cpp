// The governor and the energy of a throttled run against hand calculations that share no code with the engine:
// the RC die's closed form T(t) = Ta + P R + (T0 - Ta - P R) exp(-t / RC) between the governor's ticks, the
// trip/release hysteresis read off it, and the energy as the sum over intervals of P(V, f) x time with P from the
// hardware file's operating points. (examples/11_throttling shows the governor on an idle unit, static power
// only; here the unit is busy, so the dynamic energy at (V / V_nominal)^2 is checked too, period by period.)
//
// The scenario: one cpu kept busy without a break (a 2 kHz camera feeds 1 ms jobs through a one-place queue; at
// half clock they take 2 ms, and the queue never empties), so the power in each governor period is set by the
// operating point alone:
//   nominal 1 GHz at 1 V:    dynamic 10 GFLOP/s x 1 nJ = 10 W, static 10 W              -> P0 = 20 W
//   throttled 0.5 GHz, 0.5 V: dynamic 5 GFLOP/s x 1 nJ x (0.5 / 1)^2 = 1.25 W,
//                             static 10 W x 0.5 / 1 = 5 W                              -> P1 = 6.25 W
// Die: Ta = 25 C, R = 2 C/W, C = 0.05 J/C, so RC = 0.1 s; trip 50 C, release 40 C; the governor looks every 10 ms
// and steps one operating point (`step`). Steady states: 25 + 20 x 2 = 65 C at P0, 25 + 6.25 x 2 = 37.5 C at P1.
//   From 25 C at P0: T = 65 - 40 e^(-t/0.1) reaches 50 C at t = 0.1 ln(40/15) = 98.08 ms; the first tick at or
//     after it is 100 ms, where T = 65 - 40 e^-1 = 50.2848 C: step down at 100 ms.
//   From 50.2848 C at P1: T = 37.5 + 12.7848 e^(-x/0.1) falls to 40 C at x = 0.1 ln(12.7848/2.5) = 163.2 ms; the
//     tick at x = 170 ms (t = 270 ms) reads 37.5 + 12.7848 e^-1.7 = 39.8356 C: step up at 270 ms. Between 110 and
//     260 ms the die is below the trip and above the release: the clock stays down (hysteresis).
//   From 39.8356 C at P0: T = 65 - 25.1644 e^(-x/0.1) reaches 50 C at x = 0.1 ln(25.1644/15) = 51.7 ms; the tick
//     at x = 60 ms (t = 330 ms) reads 65 - 25.1644 e^-0.6 = 51.1895 C: step down at 330 ms.
// The camera stops at 400 ms (800 frames); jobs at P1 end every 2 ms from 330 ms, one ends at 400 ms and the last
// queued frame runs until 402 ms. Time at P0: 100 + 60 = 160 ms; at P1: 170 + 70 + 2 = 242 ms.
#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>

#include "engine/run_support.hpp"
#include "test_support.hpp"

using framesim::testing::run_framesim;
using framesim::testing::RunResult;
using framesim::testing::Scratch;

namespace {

constexpr double kP0_W = 20, kP1_W = 6.25;  // busy power at each operating point (header)
constexpr double kTa_C = 25, kR = 2, kRC_s = 0.1;

/// The die temperature x seconds after t0 at T0 under constant power P (the RC closed form).
double rc_C(double t0_C, double power_W, double x_s) {
  const double steady = kTa_C + power_W * kR;
  return steady + (t0_C - steady) * std::exp(-x_s / kRC_s);
}

RunResult throttled_run(const Scratch& s) {
  s.write("hw.yaml", R"(name: throttle
memory:
  dram: {kind: dram, capacity: "8 GiB", bandwidth: "10 TB/s", latency: "100 ns", energy_per_byte: "1 pJ"}
units:
  cpu:
    kind: cpu
    peak: {fp32: "10 GFLOP/s"}
    memory: [dram]
    energy_per_op: {fp32: "1 nJ"}
    static_power: "10 W"
    operating_points: [{frequency: "1 GHz", voltage: "1 V"}, {frequency: "0.5 GHz", voltage: "0.5 V"}]
thermal:
  ambient: "25 C"
  resistance: "2 C/W"
  capacitance: "0.05 J/C"
  trip: "50 C"
  release: "40 C"
  governor: {period: "10 ms", policy: step}
)");
  return run_framesim(s.write("s.yaml", R"(name: throttle
hardware: hw.yaml
duration: "0.4 s"
deadline: "1 s"
sensors:
  camera: {rate: "2 kHz"}
stages:
  busy: {unit: cpu, inputs: [camera], queue: {depth: 1, overflow: drop_newest}, work: {ops: "10 MFLOP"}}
)"),
                      s.dir() / "out");
}

double number(const std::map<std::string, std::string>& row, const char* column) { return std::stod(row.at(column)); }

}  // namespace

TEST(Thermal, GovernorStepsAtTheTripAndReleaseTicksOfTheRcClosedForm) {
  Scratch s;
  const RunResult r = throttled_run(s);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Clock steps: the first tick whose clock differs from the one before.
  struct Step {
    double time_s, frequency_Hz, temperature_C;
  };
  std::vector<Step> steps;
  double previous_Hz = 1e9;
  for (const auto& row : r.timeseries.rows) {
    const double f = number(row, "freq_cpu_Hz");
    if (f != previous_Hz) steps.push_back({number(row, "time_s"), f, number(row, "temperature_C")});
    previous_Hz = f;
  }
  const double t100 = rc_C(kTa_C, kP0_W, 0.100);  // 50.2848 C
  const double t270 = rc_C(t100, kP1_W, 0.170);   // 39.8356 C
  const double t330 = rc_C(t270, kP0_W, 0.060);   // 51.1895 C
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_NEAR(steps[0].time_s, 0.100, 1e-9);
  EXPECT_EQ(steps[0].frequency_Hz, 0.5e9);
  EXPECT_NEAR(steps[0].temperature_C, t100, 1e-9);
  EXPECT_NEAR(steps[1].time_s, 0.270, 1e-9);
  EXPECT_EQ(steps[1].frequency_Hz, 1e9);
  EXPECT_NEAR(steps[1].temperature_C, t270, 1e-9);
  EXPECT_NEAR(steps[2].time_s, 0.330, 1e-9);
  EXPECT_EQ(steps[2].frequency_Hz, 0.5e9);
  EXPECT_NEAR(steps[2].temperature_C, t330, 1e-9);
  // Hysteresis: from 110 to 260 ms the die is between release and trip and the clock stays down; a governor
  // with one threshold would have stepped up at 110 ms (49.07 C < 50 C).
  int held = 0;
  for (const auto& row : r.timeseries.rows) {
    const double t = number(row, "time_s");
    if (t < 0.105 || t > 0.265) continue;
    ++held;
    const double expected_C = rc_C(t100, kP1_W, t - 0.100);
    EXPECT_NEAR(number(row, "temperature_C"), expected_C, 1e-9) << "at " << t;
    EXPECT_GT(expected_C, 40.0);
    EXPECT_LT(expected_C, 50.0);
    EXPECT_EQ(number(row, "freq_cpu_Hz"), 0.5e9) << "at " << t;
  }
  EXPECT_EQ(held, 16);
  EXPECT_DOUBLE_EQ(r.summary["thermal"]["max_C"].get<double>(), steps[2].temperature_C);
}

TEST(Thermal, EnergyOfAThrottledRunIsPowerAtEachOperatingPointTimesItsTime) {
  Scratch s;
  const RunResult r = throttled_run(s);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Every governor period: dynamic and static energy from the operating point in force during it (the clock of
  // the previous row; the first period at nominal).
  double previous_Hz = 1e9, previous_s = 0;
  for (const auto& row : r.timeseries.rows) {
    const double t = number(row, "time_s"), dt = t - previous_s;
    const bool nominal = previous_Hz == 1e9;
    EXPECT_NEAR(number(row, "dynamic_J"), (nominal ? 10.0 : 1.25) * dt, 1e-12) << "at " << t;
    EXPECT_NEAR(number(row, "static_J"), (nominal ? 10.0 : 5.0) * dt, 1e-12) << "at " << t;
    previous_Hz = number(row, "freq_cpu_Hz");
    previous_s = t;
  }
  // The whole run (header): 160 ms at 20 W + 242 ms at 6.25 W = 3.2 + 1.5125 = 4.7125 J; of it static
  // 0.16 x 10 + 0.242 x 5 = 2.81 J and the frames' dynamic 0.16 x 10 + 0.242 x 1.25 = 1.9025 J.
  const auto& e = r.summary["energy"];
  EXPECT_NEAR(e["total_J"].get<double>(), 0.160 * kP0_W + 0.242 * kP1_W, 1e-9);
  EXPECT_NEAR(e["static_J"].get<double>(), 2.81, 1e-9);
  EXPECT_NEAR(e["frames_J"].get<double>(), 1.9025, 1e-9);
  EXPECT_NEAR(r.summary["run"]["simulated_s"].get<double>(), 0.402, 1e-9);
  const auto& th = r.summary["thermal"];
  EXPECT_NEAR(th["throttled_s"].get<double>(), 0.242, 1e-9);
  const auto& at = th["time_at_frequency"]["cpu"];
  ASSERT_EQ(at.size(), 2u);
  EXPECT_NEAR(at[0]["seconds"].get<double>(), 0.160, 1e-9);
  EXPECT_NEAR(at[1]["seconds"].get<double>(), 0.242, 1e-9);
  EXPECT_EQ(r.summary["run"]["frames_captured"].get<int>(), 800);
}
