// Clock caps (scenario `clock_caps`) against hand calculations that share no code with the engine, on both engine
// paths (the fluid fast path and `--exact`, every kernel a SimGrid activity).
//
// The device: one cpu, 10 GFLOP/s fp32 at 1 GHz (the roof scales with f), 1 nJ per op at 1 V (scaling with V^2),
// static 10 W at 1 V (scaling with V), three operating points 1 GHz / 1 V, 0.5 GHz / 0.5 V, 0.25 GHz / 0.25 V;
// DRAM 10 GB/s at 1 pJ/B. Power when busy without a break:
//   P0 (1 GHz):    dynamic 10 GFLOP/s x 1 nJ = 10 W         + static 10 W  = 20 W
//   P1 (0.5 GHz):  dynamic 5 GFLOP/s x 1 nJ x 0.5^2 = 1.25 W  + static 5 W   = 6.25 W
//   P2 (0.25 GHz): dynamic 2.5 GFLOP/s x 1 nJ x 0.25^2 = 0.15625 W + static 2.5 W = 2.65625 W
//
// Latency: a job of 10 MFLOP moving 1 MB is compute-bound at every point (memory 1 MB / 10 GB/s = 0.1 ms); its
// time is N / roof(f): 1 ms at 1 GHz, 2 ms under a 0.5 GHz cap, 4 ms under a 0.25 GHz cap, and its dynamic
// energy 10 MFLOP x 1 nJ x V^2 (10, 2.5, 0.625 mJ) plus 1 MB x 1 pJ = 1 uJ of DRAM.
//
// Thermal (RC die: Ta = 25 C, R = 2 C/W, C = 0.05 J/C, RC = 0.1 s; governor every 10 ms, one step): a 2 kHz camera
// feeds the jobs through a one-place queue, so the cpu never idles and each period's power is its point's.
//   Uncapped, trip 50 C / release 40 C: T = 65 - 40 e^(-t/0.1) passes 50 C at 98.08 ms; the tick at 100 ms steps
//     down (tests/engine/thermal_test.cpp follows it further).
//   Capped at 0.5 GHz, same enclosure: the steady state is 25 + 6.25 x 2 = 37.5 C, below the trip: the die
//     follows T = 37.5 - 12.5 e^(-t/0.1) for the whole run (37.2711 C at 0.4 s), never throttles, and although
//     it is below the release all the time the governor never picks the faster 1 GHz.
//   Capped at 0.5 GHz, trip 35 C / release 32 C: T = 37.5 - 12.5 e^(-t/0.1) passes 35 C at 0.1 ln 5 = 160.9 ms;
//     the tick at 170 ms reads 37.5 - 12.5 e^-1.7 = 35.2165 C and steps down to 0.25 GHz (throttling still goes
//     slower than the cap). At P2 the die falls towards 25 + 2.65625 x 2 = 30.3125 C: from 35.2165 C,
//     T = 30.3125 + 4.9040 e^(-x/0.1) passes 32 C at x = 106.7 ms; the tick at x = 110 ms (280 ms) reads
//     31.9449 C and steps up to the cap, 0.5 GHz, not to 1 GHz.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/run_support.hpp"
#include "test_support.hpp"

using framesim::testing::run_framesim;
using framesim::testing::RunResult;
using framesim::testing::Scratch;

namespace {

constexpr double kTa_C = 25, kR = 2, kRC_s = 0.1;
constexpr double kP1_W = 6.25, kP2_W = 2.65625;

double rc_C(double t0_C, double power_W, double x_s) {
  const double steady = kTa_C + power_W * kR;
  return steady + (t0_C - steady) * std::exp(-x_s / kRC_s);
}

/// The device of the header; `thermal` is its thermal block (empty: none).
void write_hardware(const Scratch& s, const std::string& thermal) {
  s.write("hw.yaml", R"(name: capped
memory:
  dram: {kind: dram, capacity: "8 GiB", bandwidth: "10 GB/s", latency: "100 ns", energy_per_byte: "1 pJ"}
units:
  cpu:
    kind: cpu
    peak: {fp32: "10 GFLOP/s"}
    memory: [dram]
    energy_per_op: {fp32: "1 nJ"}
    static_power: "10 W"
    operating_points:
      - {name: full, frequency: "1 GHz", voltage: "1 V"}
      - {name: half, frequency: "0.5 GHz", voltage: "0.5 V"}
      - {name: quarter, frequency: "0.25 GHz", voltage: "0.25 V"}
)" + thermal);
}

/// One 10 MFLOP job per frame of a 100 Hz camera, no thermal model; `cap` is the clock_caps block (may be empty).
RunResult latency_run(const Scratch& s, const std::string& cap, const std::string& extra) {
  write_hardware(s, "");
  return run_framesim(s.write("s.yaml", R"(name: capped
hardware: hw.yaml
duration: "0.1 s"
deadline: "10 ms"
sensors:
  camera: {rate: "100 Hz"}
)" + cap + R"(
stages:
  job: {unit: cpu, inputs: [camera], work: {ops: "10 MFLOP", bytes: {dram: "1 MB"}}}
)"),
                      s.dir() / "out", extra);
}

RunResult thermal_run(const Scratch& s, const std::string& cap, const std::string& trip, const std::string& release,
                      const std::string& extra = "") {
  write_hardware(s, R"(thermal:
  ambient: "25 C"
  resistance: "2 C/W"
  capacitance: "0.05 J/C"
  trip: ")" + trip + R"("
  release: ")" + release +
                        R"("
  governor: {period: "10 ms", policy: step}
)");
  return run_framesim(s.write("s.yaml", R"(name: capped
hardware: hw.yaml
duration: "0.4 s"
deadline: "1 s"
sensors:
  camera: {rate: "2 kHz"}
)" + cap + R"(
stages:
  busy: {unit: cpu, inputs: [camera], queue: {depth: 1, overflow: drop_newest}, work: {ops: "10 MFLOP"}}
)"),
                      s.dir() / "out", extra);
}

double number(const std::map<std::string, std::string>& row, const char* column) { return std::stod(row.at(column)); }

}  // namespace

class ClockCapBothPaths : public ::testing::TestWithParam<const char*> {};

TEST_P(ClockCapBothPaths, ACappedUnitRunsAComputeBoundJobAtTheRoofOfItsCap) {
  struct Case {
    std::string cap;
    double service_s, dynamic_J, frequency_Hz;
  };
  // The cap by name and by frequency; no cap: nominal (header).
  for (const Case& c : {Case{"", 1e-3, 10e-3, 1e9}, Case{"clock_caps: {cpu: half}", 2e-3, 2.5e-3, 0.5e9},
                        Case{"clock_caps: {cpu: \"250 MHz\"}", 4e-3, 0.625e-3, 0.25e9}}) {
    Scratch s;
    const RunResult r = latency_run(s, c.cap, GetParam());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_EQ(r.stages.rows.size(), 10u) << c.cap;
    for (const auto& row : r.stages.rows) {
      EXPECT_NEAR(number(row, "service_s"), c.service_s, 1e-12) << c.cap;
      EXPECT_NEAR(number(row, "energy_J"), c.dynamic_J + 1e-6, 1e-15) << c.cap;
    }
    for (const auto& row : r.frames.rows) EXPECT_EQ(number(row, "freq_cpu_Hz"), c.frequency_Hz) << c.cap;
    // Running at its cap is not throttling.
    EXPECT_EQ(r.summary["thermal"]["throttled_s"].get<double>(), 0.0) << c.cap;
  }
}

TEST_P(ClockCapBothPaths, TheUncappedUnitThrottlesAndTheCappedOneStaysBelowTheTrip) {
  {
    Scratch s;
    const RunResult r = thermal_run(s, "", "50 C", "40 C", GetParam());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    double first_step_s = -1;
    for (const auto& row : r.timeseries.rows)
      if (first_step_s < 0 && number(row, "freq_cpu_Hz") != 1e9) first_step_s = number(row, "time_s");
    EXPECT_NEAR(first_step_s, 0.100, 1e-9);
    EXPECT_GT(r.summary["thermal"]["throttled_s"].get<double>(), 0.0);
  }
  Scratch s;
  const RunResult r = thermal_run(s, "clock_caps: {cpu: half}", "50 C", "40 C", GetParam());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(r.timeseries.rows.size(), 41u);  // a tick every 10 ms to 400 ms, and the run's end at 402 ms
  for (const auto& row : r.timeseries.rows) {
    const double t = number(row, "time_s");
    // Below the release at every tick, yet never faster than the cap.
    EXPECT_EQ(number(row, "freq_cpu_Hz"), 0.5e9) << "at " << t;
    if (t <= 0.4 + 1e-12) {
      EXPECT_NEAR(number(row, "temperature_C"), rc_C(kTa_C, kP1_W, t), 1e-9) << "at " << t;
    }
    EXPECT_LT(number(row, "temperature_C"), 40.0) << "at " << t;
  }
  EXPECT_EQ(r.summary["thermal"]["throttled_s"].get<double>(), 0.0);
  // 2 ms jobs back to back from 0 to 402 ms (the frame queued at 400 ms runs last), all at P1.
  EXPECT_NEAR(r.summary["run"]["simulated_s"].get<double>(), 0.402, 1e-9);
  EXPECT_NEAR(r.summary["energy"]["total_J"].get<double>(), 0.402 * kP1_W, 1e-9);
}

TEST_P(ClockCapBothPaths, ThrottlingStillGoesBelowTheCapAndReleasesBackToTheCapNotAboveIt) {
  Scratch s;
  const RunResult r = thermal_run(s, "clock_caps: {cpu: half}", "35 C", "32 C", GetParam());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  struct Step {
    double time_s, frequency_Hz, temperature_C;
  };
  std::vector<Step> steps;
  double previous_Hz = 0.5e9;
  for (const auto& row : r.timeseries.rows) {
    const double f = number(row, "freq_cpu_Hz");
    EXPECT_LE(f, 0.5e9) << "at " << number(row, "time_s");
    if (f != previous_Hz) steps.push_back({number(row, "time_s"), f, number(row, "temperature_C")});
    previous_Hz = f;
  }
  const double t170 = rc_C(kTa_C, kP1_W, 0.170);  // 35.2165 C
  const double t280 = rc_C(t170, kP2_W, 0.110);   // 31.9449 C
  ASSERT_GE(steps.size(), 2u);
  EXPECT_NEAR(steps[0].time_s, 0.170, 1e-9);
  EXPECT_EQ(steps[0].frequency_Hz, 0.25e9);
  EXPECT_NEAR(steps[0].temperature_C, t170, 1e-9);
  EXPECT_NEAR(steps[1].time_s, 0.280, 1e-9);
  EXPECT_EQ(steps[1].frequency_Hz, 0.5e9);
  EXPECT_NEAR(steps[1].temperature_C, t280, 1e-9);
  // Throttled: only the time below the cap, from 170 to 280 ms at least.
  EXPECT_GE(r.summary["thermal"]["throttled_s"].get<double>(), 0.110 - 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Paths, ClockCapBothPaths, ::testing::Values("", "--exact"),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           return std::string(*p.param ? "exact" : "fluid");
                         });
