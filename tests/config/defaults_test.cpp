// The documented default is the one that acts. For each key below, the oracle is the default the key's declaration
// documents (its `default_value` text, what docs/schema.md and `framesim keys` print), read as a user would read it
// (the unit parser for quantities, a choice as its name); the tested value is what the reader puts in the
// scenario when the key is absent. A reader whose `value_or(...)` drifts from the documentation fails here.
#include <string>

#include <gtest/gtest.h>

#include "config/scenario.hpp"
#include "config/schema.hpp"
#include "core/units.hpp"
#include "test_support.hpp"

using namespace framesim;
namespace schema = framesim::config::schema;

namespace {

/// A scenario with every optional key below left out: one sensor, one stage, one task.
model::ScenarioSpec minimal(const framesim::testing::Scratch& dir) {
  dir.write("hw.yaml", R"(name: defaults
memory:
  dram: {kind: dram, capacity: "1 GiB", bandwidth: "10 GB/s"}
units:
  cpu: {kind: cpu, peak: {fp32: "10 GFLOP/s"}, memory: [dram]}
  dsp: {kind: dsp, peak: {fp32: "10 GFLOP/s"}, memory: [dram]}
)");
  const auto path = dir.write("scenario.yaml", R"(name: defaults
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
)");
  return config::load_scenario(path);
}

/// The default text the declaration of `key` documents (failing the test when it documents none).
std::string documented(const std::string& key) {
  const schema::Key* k = schema::scenario_table().find(key);
  EXPECT_NE(k, nullptr) << key << " is not declared";
  if (!k) return "";
  EXPECT_FALSE(k->default_value.empty()) << key << " documents no default";
  return k->default_value;
}

/// The documented default of `key` as a quantity of `dimension` (its text up to the first " (": an explanation
/// may follow the value).
double documented_quantity(const std::string& key, core::Dimension dimension) {
  std::string text = documented(key);
  text = text.substr(0, text.find(" ("));
  return core::parse_quantity(text, dimension).value.value_or(-1);
}

}  // namespace

TEST(Defaults, TheScenarioReaderActsAsDocumented) {
  framesim::testing::Scratch dir;
  const model::ScenarioSpec s = minimal(dir);
  EXPECT_EQ(std::to_string(s.seed), documented("seed"));
  EXPECT_DOUBLE_EQ(s.warmup_s, documented_quantity("warmup", core::Dimension::Seconds));
  EXPECT_DOUBLE_EQ(s.sample_period_s, documented_quantity("sample_period", core::Dimension::Seconds));
  EXPECT_DOUBLE_EQ(s.kernel_trace_s, documented_quantity("trace.kernels", core::Dimension::Seconds));
  // "the first sensor's period"
  EXPECT_EQ(documented("deadline"), "the first sensor's period");
  EXPECT_DOUBLE_EQ(s.deadline_s, 1.0 / 20);
}

TEST(Defaults, TheStageReaderActsAsDocumented) {
  framesim::testing::Scratch dir;
  const model::ScenarioSpec s = minimal(dir);
  ASSERT_EQ(s.stages.size(), 1u);
  const model::StageSpec& st = s.stages[0];
  EXPECT_EQ(std::to_string(st.queue_depth), documented("stages.<stage>.queue.depth"));
  EXPECT_EQ(std::to_string(st.priority), documented("stages.<stage>.priority"));
  EXPECT_EQ(documented("stages.<stage>.queue.overflow"), "drop_oldest");
  EXPECT_EQ(st.overflow, model::Overflow::drop_oldest);
  EXPECT_EQ(documented("stages.<stage>.policy"), "all");
  EXPECT_EQ(st.policy, model::InputPolicy::all);
  ASSERT_EQ(st.side_work.size(), 1u);
  EXPECT_EQ(documented("stages.<stage>.side_work.when"), "before");
  EXPECT_FALSE(st.side_work[0].after);
}

TEST(Defaults, TheTaskReaderActsAsDocumented) {
  framesim::testing::Scratch dir;
  const model::ScenarioSpec s = minimal(dir);
  ASSERT_EQ(s.tasks.size(), 1u);
  EXPECT_EQ(std::to_string(s.tasks[0].priority), documented("tasks.<task>.priority"));
  EXPECT_DOUBLE_EQ(s.tasks[0].phase_s, documented_quantity("tasks.<task>.phase", core::Dimension::Seconds));
}
