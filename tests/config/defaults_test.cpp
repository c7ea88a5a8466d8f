// The documented default is the one that acts. Each default has one definition, its key's declared fallback
// (config/schema.hpp), which the readers take when the key is absent. The oracle here is not that fallback but the
// checked-in documentation a user reads, docs/schema.md (its Default column), read as a user would read it (the unit
// parser for quantities, a choice as its name), and for the defaults derived from other values a number worked by
// hand. A fallback changed in the schema alone (a reader acting differently from what docs/schema.md says) fails
// here, and so does a reader that does not take the declared fallback.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "config/hardware.hpp"
#include "config/map_space.hpp"
#include "config/scenario.hpp"
#include "config/schema.hpp"
#include "config/sweep.hpp"
#include "core/units.hpp"
#include "test_support.hpp"

using namespace framesim;
namespace schema = framesim::config::schema;
namespace fst = framesim::testing;

namespace {

constexpr const char* kHardware = R"(name: defaults
memory:
  dram: {kind: dram, capacity: "1 GiB", bandwidth: "10 GB/s"}
units:
  cpu: {kind: cpu, peak: {fp32: "10 GFLOP/s"}, memory: [dram]}
  dsp: {kind: dsp, peak: {fp32: "10 GFLOP/s"}, memory: [dram], operating_points: [{frequency: "1 GHz"}]}
)";

constexpr const char* kScenario = R"(name: defaults
hardware: hw.yaml
duration: "1 s"
sensors:
  camera: {rate: "20 Hz"}
stages:
  detect:
    unit: cpu
    inputs: [camera]
    work: {time: "5 ms"}
    side_work:
      - {unit: dsp, work: {time: "1 ms"}}
tasks:
  control: {unit: cpu, rate: "50 Hz", work: {time: "1 ms"}}
)";

/// A scenario with every optional key below left out: one sensor, one stage, one task, on `hardware`.
model::ScenarioSpec minimal(const fst::Scratch& dir, const std::string& hardware = kHardware) {
  dir.write("hw.yaml", hardware);
  return config::load_scenario(dir.write("scenario.yaml", kScenario));
}

/// The Default cell docs/schema.md gives `key` in the section headed `section` ("## scenario files",
/// "### scheduler"); fails the test when the row is missing or documents no default.
std::string documented(const std::string& section, const std::string& key) {
  std::ifstream in(fst::source_path("docs/schema.md"));
  std::string line;
  bool inside = false;
  const std::string row = "| `" + key + "` |";
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) inside = line == section;
    if (!inside || line.rfind(row, 0) != 0) continue;
    // | `key` | value | default | description |
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    std::string cell;
    while (std::getline(ss, cell, '|')) cells.push_back(cell.substr(1, cell.size() >= 2 ? cell.size() - 2 : 0));
    EXPECT_GE(cells.size(), 3u) << line;
    if (cells.size() < 3) return "";
    EXPECT_FALSE(cells[2].empty()) << key << " documents no default";
    return cells[2];
  }
  ADD_FAILURE() << "docs/schema.md has no row " << key << " under " << section;
  return "";
}

/// The documented default as a quantity of `dimension` (the text up to " (": a remark may follow the value).
double documented_quantity(const std::string& section, const std::string& key, core::Dimension dimension) {
  std::string text = documented(section, key);
  text = text.substr(0, text.find(" ("));
  const auto parsed = core::parse_quantity(text, dimension).value;
  EXPECT_TRUE(parsed.has_value()) << key << ": \"" << text << "\" does not read as a quantity";
  return parsed.value_or(-1);
}

double documented_number(const std::string& section, const std::string& key) {
  std::string text = documented(section, key);
  return std::stod(text.substr(0, text.find(" (")));
}

const std::string kScenarioFiles = "## scenario files";
const std::string kSweepFiles = "## sweep files";
const std::string kMapFiles = "## map files";
const std::string kScheduler = "### scheduler";

/// The declarations with a fallback whose acting default a test of this file compares with docs/schema.md: the
/// table and the key. A declaration given a fallback and left out of here fails EveryFallbackIsTested.
const std::vector<std::pair<std::string, std::string>> kTested = {
    {"scenario", "seed"},
    {"scenario", "warmup"},
    {"scenario", "sample_period"},
    {"scenario", "contention_period"},
    {"scenario", "trace.kernels"},
    {"scenario", "sensors.<sensor>.phase"},
    {"scenario", "stages.<stage>.policy"},
    {"scenario", "stages.<stage>.queue.depth"},
    {"scenario", "stages.<stage>.queue.overflow"},
    {"scenario", "stages.<stage>.priority"},
    {"scenario", "stages.<stage>.side_work.when"},
    {"scenario", "tasks.<task>.phase"},
    {"scenario", "tasks.<task>.priority"},
    {"hardware", "memory.<level>.efficiency"},
    {"hardware", "memory.<level>.latency"},
    {"hardware", "memory.<level>.energy_per_byte"},
    {"hardware", "memory.<level>.line"},
    {"hardware", "units.<unit>.cores"},
    {"hardware", "units.<unit>.dispatch_overhead"},
    {"hardware", "units.<unit>.contention_sensitivity"},
    {"hardware", "units.<unit>.overlap"},
    {"hardware", "units.<unit>.weight_caching"},
    {"hardware", "units.<unit>.handoff.efficiency"},
    {"hardware", "units.<unit>.handoff.launch"},
    {"hardware", "units.<unit>.operating_points[].voltage"},
    {"hardware", "units.<unit>.static_power"},
    {"hardware", "thermal.governor.policy"},
    {"scheduler", "switch_cost"},
    {"sweep", "mode"},
    {"sweep", "seed"},
    {"map", "budget"},
    {"map", "strategy"},
    {"map", "seed"},
};
const std::string kHardwareFiles = "## hardware files";

}  // namespace

TEST(Defaults, EveryFallbackIsAValueOfItsOwnKey) {
  // A fallback is read as the key's value would be: the right unit, in the key's range, one of its choices.
  std::vector<const schema::Table*> tables = schema::file_tables();
  for (const schema::Table* t : schema::fragment_tables()) tables.push_back(t);
  int fallbacks = 0;
  for (const schema::Table* t : tables)
    for (const auto& k : t->keys) {
      if (k.fallback.empty()) continue;
      ++fallbacks;
      EXPECT_FALSE(k.required) << t->name << " " << k.path << ": a required key needs no default";
      if (k.kind == schema::Kind::choice)
        EXPECT_NE(std::find(k.choices.begin(), k.choices.end(), k.fallback), k.choices.end()) << k.path;
      else EXPECT_TRUE(schema::fallback_value(k).has_value()) << t->name << " " << k.path << ": " << k.fallback;
    }
  EXPECT_GE(fallbacks, 32);  // 13 scenario keys, 2 sweep keys, 3 map keys, 14 hardware keys (with switch_cost)
}

TEST(Defaults, EveryFallbackIsTested) {
  // Each declared fallback is one this file loads a file without and compares with the documentation; and each
  // key listed is declared with a fallback (a list that named keys no longer defaulted would prove nothing).
  std::vector<const schema::Table*> tables = schema::file_tables();
  for (const schema::Table* t : schema::fragment_tables()) tables.push_back(t);
  std::size_t declared = 0;
  for (const schema::Table* t : tables)
    for (const auto& k : t->keys) {
      if (k.fallback.empty()) continue;
      ++declared;
      const bool tested = std::find(kTested.begin(), kTested.end(), std::make_pair(t->name, k.path)) != kTested.end();
      EXPECT_TRUE(tested) << t->name << " " << k.path << " has a fallback no test of defaults_test.cpp reads";
    }
  EXPECT_EQ(declared, kTested.size());
}

TEST(Defaults, TheScenarioReaderActsAsDocumented) {
  fst::Scratch dir;
  const model::ScenarioSpec s = minimal(dir);
  EXPECT_EQ(documented(kScenarioFiles, "seed"), "1");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_DOUBLE_EQ(s.warmup_s, documented_quantity(kScenarioFiles, "warmup", core::Dimension::Seconds));
  // "100 ms (the governor's period when there is one)": no governor here, so the tick is the sample period.
  EXPECT_DOUBLE_EQ(s.sample_period_s, documented_quantity(kScenarioFiles, "sample_period", core::Dimension::Seconds));
  EXPECT_DOUBLE_EQ(s.tick_period_s, 0.1);
  EXPECT_DOUBLE_EQ(s.kernel_trace_s, documented_quantity(kScenarioFiles, "trace.kernels", core::Dimension::Seconds));
  // "the first sensor's period": 1 / 20 Hz.
  EXPECT_EQ(documented(kScenarioFiles, "deadline"), "the first sensor's period");
  EXPECT_DOUBLE_EQ(s.deadline_s, 1.0 / 20);
  // No contention curve: the ports are reloaded at every tick (0).
  EXPECT_EQ(s.contention_period_s, 0.0);
  ASSERT_EQ(s.sensors.size(), 1u);
  EXPECT_DOUBLE_EQ(s.sensors[0].phase_s,
                   documented_quantity(kScenarioFiles, "sensors.<sensor>.phase", core::Dimension::Seconds));
}

TEST(Defaults, TheStageReaderActsAsDocumented) {
  fst::Scratch dir;
  const model::ScenarioSpec s = minimal(dir);
  ASSERT_EQ(s.stages.size(), 1u);
  const model::StageSpec& st = s.stages[0];
  EXPECT_EQ(documented(kScenarioFiles, "stages.<stage>.queue.depth"), "2");
  EXPECT_EQ(st.queue_depth, 2);
  EXPECT_EQ(st.priority, documented_number(kScenarioFiles, "stages.<stage>.priority"));
  EXPECT_EQ(documented(kScenarioFiles, "stages.<stage>.queue.overflow"), "drop_oldest");
  EXPECT_EQ(st.overflow, model::Overflow::drop_oldest);
  EXPECT_EQ(documented(kScenarioFiles, "stages.<stage>.policy"), "all");
  EXPECT_EQ(st.policy, model::InputPolicy::all);
  ASSERT_EQ(st.side_work.size(), 1u);
  EXPECT_EQ(documented(kScenarioFiles, "stages.<stage>.side_work.when"), "before");
  EXPECT_FALSE(st.side_work[0].after);
}

TEST(Defaults, TheTaskReaderActsAsDocumented) {
  fst::Scratch dir;
  const model::ScenarioSpec s = minimal(dir);
  ASSERT_EQ(s.tasks.size(), 1u);
  EXPECT_EQ(s.tasks[0].priority, documented_number(kScenarioFiles, "tasks.<task>.priority"));
  EXPECT_DOUBLE_EQ(s.tasks[0].phase_s,
                   documented_quantity(kScenarioFiles, "tasks.<task>.phase", core::Dimension::Seconds));
}

TEST(Defaults, TheContentionAndTickPeriodsAreResolvedAsDocumented) {
  // "10 ms (with a contention curve, else every tick)", and never coarser than the tick: resolved in config, so the
  // engine takes contention_period_s and tick_period_s as they are.
  const std::string curve = R"(  dram:
    kind: dram
    capacity: "1 GiB"
    bandwidth: "10 GB/s"
    contention: {slowdown: [[0.5, 2.0]]}
)";
  std::string with_curve = kHardware;
  with_curve.replace(with_curve.find("  dram:"), with_curve.find("units:") - with_curve.find("  dram:"), curve);
  const double documented_s =
      documented_quantity(kScenarioFiles, "contention_period", core::Dimension::Seconds);  // 10 ms
  {
    fst::Scratch dir;
    const auto s = minimal(dir, with_curve);
    EXPECT_DOUBLE_EQ(s.contention_period_s, documented_s);
    EXPECT_DOUBLE_EQ(s.contention_period_s, 0.01);  // the curve's default, finer than the 100 ms tick
  }
  {
    // A governor polling every 5 ms ticks at 5 ms; 10 ms contention sampling would be coarser: every tick (0).
    fst::Scratch dir;
    const auto s = minimal(dir, with_curve + R"(thermal:
  ambient: "25 C"
  resistance: "2 C/W"
  capacitance: "10 J/C"
  trip: "90 C"
  release: "85 C"
  governor: {period: "5 ms"}
)");
    EXPECT_DOUBLE_EQ(s.tick_period_s, 0.005);
    EXPECT_EQ(s.contention_period_s, 0.0);
    EXPECT_EQ(s.hardware.thermal->policy, model::GovernorPolicy::step);
    EXPECT_EQ(documented(kHardwareFiles, "thermal.governor.policy"), "step");
  }
}

TEST(Defaults, TheHardwareReaderActsAsDocumented) {
  fst::Scratch dir;
  const model::HardwareSpec hw = config::load_hardware(dir.write("hw.yaml", kHardware));
  const auto& level = hw.memory.at(0);
  EXPECT_DOUBLE_EQ(level.efficiency, documented_number(kHardwareFiles, "memory.<level>.efficiency"));
  EXPECT_DOUBLE_EQ(level.latency_s,
                   documented_quantity(kHardwareFiles, "memory.<level>.latency", core::Dimension::Seconds));
  EXPECT_DOUBLE_EQ(level.energy_per_byte_J, documented_quantity(kHardwareFiles, "memory.<level>.energy_per_byte",
                                                                core::Dimension::JoulesPerByte));
  EXPECT_EQ(documented(kHardwareFiles, "memory.<level>.line"), "64 B");
  EXPECT_DOUBLE_EQ(level.line_bytes, 64);
  const auto& cpu = hw.units.at(0);
  EXPECT_EQ(cpu.cores, documented_number(kHardwareFiles, "units.<unit>.cores"));
  EXPECT_DOUBLE_EQ(cpu.dispatch_overhead_s,
                   documented_quantity(kHardwareFiles, "units.<unit>.dispatch_overhead", core::Dimension::Seconds));
  EXPECT_DOUBLE_EQ(cpu.contention_sensitivity,
                   documented_number(kHardwareFiles, "units.<unit>.contention_sensitivity"));
  EXPECT_DOUBLE_EQ(cpu.overlap, documented_number(kHardwareFiles, "units.<unit>.overlap"));  // "1 (perfect ...)"
  EXPECT_EQ(model::kWeightCaching.name(cpu.weight_caching), documented(kHardwareFiles, "units.<unit>.weight_caching"));
  EXPECT_DOUBLE_EQ(cpu.static_power_W,
                   documented_quantity(kHardwareFiles, "units.<unit>.static_power", core::Dimension::Watts));
  // An operating point without a voltage: "1 V".
  const auto& dsp = hw.units.at(1);
  ASSERT_EQ(dsp.operating_points.size(), 1u);
  EXPECT_DOUBLE_EQ(
      dsp.operating_points[0].voltage_V,
      documented_quantity(kHardwareFiles, "units.<unit>.operating_points[].voltage", core::Dimension::Volts));
}

TEST(Defaults, TheSchedulerAndHandoffReadersActAsDocumented) {
  // A time-slice scheduler given without a switch cost, and a hand-off given its unit only: each value loaded must
  // be the Default column of docs/schema.md. A reader keeping its own literal (a struct initialiser or value_or)
  // that differs from the declared fallback, or a fallback changed without regenerating the docs, fails here.
  fst::Scratch dir;
  const std::string hardware = std::string(kHardware) +
                               "  npu: {kind: npu, peak: {int8: \"1 TOPS\"}, memory: [dram], handoff: {unit: cpu}, "
                               "scheduler: {policy: time_slice, quantum: \"2 ms\"}}\n";
  const model::HardwareSpec hw = config::load_hardware(dir.write("hw.yaml", hardware));
  const auto& npu = hw.units.at(2);
  EXPECT_EQ(npu.scheduler.policy, model::SchedulingPolicy::time_slice);
  EXPECT_DOUBLE_EQ(npu.scheduler.switch_cost_s,
                   documented_quantity(kScheduler, "switch_cost", core::Dimension::Seconds));
  ASSERT_TRUE(npu.handoff.has_value());
  EXPECT_DOUBLE_EQ(npu.handoff->efficiency, documented_number(kHardwareFiles, "units.<unit>.handoff.efficiency"));
  EXPECT_DOUBLE_EQ(npu.handoff->launch_s,
                   documented_quantity(kHardwareFiles, "units.<unit>.handoff.launch", core::Dimension::Seconds));
}

TEST(Defaults, TheSweepAndMapReadersActAsDocumented) {
  // A sweep without mode or seed and a map space without budget, strategy or seed load with the values docs/schema.md
  // states. The map reader once had its own value_or(50) and value_or(1): a fallback changed in the schema alone
  // (documented as 40, acting as 50) fails here.
  fst::Scratch dir;
  minimal(dir);  // writes scenario.yaml for the sweep to name
  const auto sweep = config::load_sweep(
      dir.write("sweep.yaml", "name: defaults\nscenario: scenario.yaml\naxes:\n  sensors.camera.rate: [\"20 Hz\"]\n"));
  EXPECT_EQ(documented(kSweepFiles, "mode"), "grid");
  EXPECT_EQ(sweep.mode, config::SweepMode::grid);
  EXPECT_EQ(sweep.seed, static_cast<std::uint64_t>(documented_number(kSweepFiles, "seed")));
  const auto space =
      config::load_map_space(dir.write("space.yaml", "name: defaults\nobjective: energy\nstages:\n  detect: {}\n"));
  EXPECT_EQ(space.budget, static_cast<std::size_t>(documented_number(kMapFiles, "budget")));
  EXPECT_EQ(space.strategy, documented(kMapFiles, "strategy"));
  EXPECT_EQ(space.seed, static_cast<std::uint64_t>(documented_number(kMapFiles, "seed")));
}
