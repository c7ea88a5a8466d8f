// One mapping per enum (core/enum_table.hpp): each table turns every name into its own value and back, no two
// entries share a name or a value, and every key of every file whose value is a choice lists exactly the names of
// the table its reader parses with, so the schema's allowed values, the reader and the writers cannot drift. A new
// choice key must be added to the list below (a key with choices of no table is reported), and the reader round
// trip shows a name read from a file becomes its own value, not the type's default.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/hardware.hpp"
#include "config/scenario.hpp"
#include "config/schema.hpp"
#include "config/sweep.hpp"
#include "model/hardware.hpp"
#include "model/network.hpp"
#include "model/op_class.hpp"
#include "model/precision.hpp"
#include "model/runtime.hpp"
#include "model/scenario.hpp"
#include "test_support.hpp"

using namespace framesim;
namespace schema = framesim::config::schema;

namespace {

/// Every name of `table` maps to a value that maps back to that name; names and values are distinct.
template <class Table>
void expect_round_trip(const Table& table, const std::string& what) {
  std::set<std::string> names;
  std::set<int> values;
  for (const auto& e : table.entries) {
    const auto value = table.value(e.name);
    ASSERT_TRUE(value.has_value()) << what << ": " << e.name;
    EXPECT_EQ(table.name(*value), e.name) << what;
    EXPECT_TRUE(names.insert(std::string(e.name)).second) << what << ": the name " << e.name << " is listed twice";
    EXPECT_TRUE(values.insert(static_cast<int>(e.value)).second) << what << ": a value is named twice";
  }
  EXPECT_FALSE(table.value("no_such_name").has_value()) << what;
}

/// The allowed values of every choice key: the file or fragment table, the key, and the names it must list.
struct ChoiceKey {
  std::string table;
  std::string path;
  std::vector<std::string> names;
};

std::vector<ChoiceKey> choice_keys() {
  const auto precisions = model::precision_names();
  return {
      {"scheduler", "policy", model::kSchedulingPolicies.names()},
      {"hardware", "units.<unit>.scheduler", model::kSchedulingPolicies.names()},
      {"scenario", "schedulers.<unit>", model::kSchedulingPolicies.names()},
      {"hardware", "memory.<level>.kind", model::kMemoryKinds.names()},
      {"hardware", "units.<unit>.kind", model::kUnitKinds.names()},
      {"hardware", "thermal.governor.policy", model::kGovernorPolicies.names()},
      {"distribution", "distribution", model::kDistributionKinds.names()},
      {"scenario", "stages.<stage>.policy", model::kInputPolicies.names()},
      {"scenario", "stages.<stage>.queue.overflow", model::kOverflows.names()},
      {"scenario", "stages.<stage>.side_work.when", model::kSideWorkWhen.names()},
      {"scenario", "networks.<network>.fusion", model::kFusionModes.names()},
      {"network", "fusion", model::kFusionModes.names()},
      {"runtime", "units.<unit>.fusion", model::kRuntimeFusion.names()},
      {"hardware", "units.<unit>.weight_caching", model::kWeightCaching.names()},
      {"runtime", "units.<unit>.weight_caching", model::kWeightCaching.names()},
      {"sweep", "mode", config::kSweepModes.names()},
      {"sweep", "axes.<key_path>.scale", config::kAxisScales.names()},
      // Names of their own tables (model/precision.hpp, model/op_class.hpp) and plain words read as text.
      {"hardware", "units.<unit>.handoff.reformat[]", {"input", "output"}},
      {"hardware", "units.<unit>.handoff.host_precision", precisions},
      {"hardware", "units.<unit>.capabilities.op_classes[]", model::op_class_names()},
      {"hardware", "units.<unit>.capabilities.precisions[]", precisions},
      {"map", "objective", {"energy", "p99"}},
      {"map", "strategy", {"auto", "exhaustive", "local", "genetic"}},
      {"network", "precision.weights", precisions},
      {"network", "precision.activations", precisions},
      {"network", "precision.compute", precisions},
      {"network", "inputs.<input>.precision", precisions},
      {"network", "layers[].precision.weights", precisions},
      {"network", "layers[].precision.activations", precisions},
      {"network", "layers[].precision.compute", precisions},
      {"work", "precision", precisions},
  };
}

}  // namespace

TEST(EnumTables, EveryTableRoundTrips) {
  expect_round_trip(model::kSchedulingPolicies, "scheduling policies");
  expect_round_trip(model::kMemoryKinds, "memory kinds");
  expect_round_trip(model::kUnitKinds, "unit kinds");
  expect_round_trip(model::kGovernorPolicies, "governor policies");
  expect_round_trip(model::kDistributionKinds, "distribution kinds");
  expect_round_trip(model::kInputPolicies, "input policies");
  expect_round_trip(model::kOverflows, "overflows");
  expect_round_trip(model::kSideWorkWhen, "side work when");
  expect_round_trip(model::kFusionModes, "fusion modes");
  expect_round_trip(model::kRuntimeFusion, "runtime fusion");
  expect_round_trip(config::kSweepModes, "sweep modes");
  expect_round_trip(config::kAxisScales, "axis scales");
  expect_round_trip(model::kPrecisionNames, "precisions");
  expect_round_trip(model::kOpClassNames, "op classes");
  // The per-precision and per-op-class arrays are indexed in the order of kAll*: the tables name them in it.
  for (std::size_t i = 0; i < model::kPrecisionCount; ++i)
    EXPECT_EQ(model::kPrecisionNames.entries[i].value, model::kAllPrecisions[i]) << i;
  for (std::size_t i = 0; i < model::kOpClassCount; ++i)
    EXPECT_EQ(model::kOpClassNames.entries[i].value, model::kAllOpClasses[i]) << i;
}

TEST(EnumTables, TheNamingFunctionsAreTheTables) {
  // The writers name values through these (model/*.cpp): each must give the table's name.
  for (const auto& e : model::kSchedulingPolicies.entries) EXPECT_EQ(model::scheduling_policy_name(e.value), e.name);
  for (const auto& e : model::kMemoryKinds.entries) EXPECT_EQ(model::memory_kind_name(e.value), e.name);
  for (const auto& e : model::kUnitKinds.entries) EXPECT_EQ(model::unit_kind_name(e.value), e.name);
  for (const auto& e : model::kGovernorPolicies.entries) EXPECT_EQ(model::governor_policy_name(e.value), e.name);
  for (const auto& e : model::kDistributionKinds.entries) EXPECT_EQ(model::distribution_kind_name(e.value), e.name);
  for (const auto& e : model::kInputPolicies.entries) EXPECT_EQ(model::input_policy_name(e.value), e.name);
  for (const auto& e : model::kOverflows.entries) EXPECT_EQ(model::overflow_name(e.value), e.name);
  for (const auto& e : model::kFusionModes.entries) EXPECT_EQ(model::fusion_mode_name(e.value), e.name);
}

TEST(EnumTables, EveryChoiceKeyListsItsTable) {
  const auto keys = choice_keys();
  for (const auto& c : keys) {
    const schema::Table* table = nullptr;
    for (const schema::Table* t : schema::file_tables())
      if (t->name == c.table) table = t;
    for (const schema::Table* t : schema::fragment_tables())
      if (t->name == c.table) table = t;
    ASSERT_NE(table, nullptr) << c.table;
    const schema::Key* key = table->find(c.path);
    ASSERT_NE(key, nullptr) << c.table << " " << c.path;
    EXPECT_EQ(key->kind, schema::Kind::choice) << c.path;
    EXPECT_EQ(key->choices, c.names) << c.table << " " << c.path;
  }
  // A choice key not listed above would be read by a mapping this test does not check.
  std::vector<const schema::Table*> tables = schema::file_tables();
  for (const schema::Table* t : schema::fragment_tables()) tables.push_back(t);
  for (const schema::Table* t : tables)
    for (const auto& k : t->keys) {
      if (k.kind != schema::Kind::choice) continue;
      bool listed = false;
      for (const auto& c : keys) listed = listed || (c.table == t->name && c.path == k.path);
      EXPECT_TRUE(listed) << t->name << " " << k.path << " is a choice of no checked table";
    }
}

TEST(EnumTables, TheScenarioReaderTakesEachNameForItsOwnValue) {
  // Each name of the stage policy, the queue overflow and the side work's `when`, written in a file, is read as
  // the value the table gives it. With every pair tried, a reader that turned some name into the default fails.
  for (const auto& policy : model::kInputPolicies.entries)
    for (const auto& overflow : model::kOverflows.entries)
      for (const auto& when : model::kSideWorkWhen.entries) {
        framesim::testing::Scratch dir;
        dir.write("hw.yaml", R"(name: enums
memory:
  dram: {kind: dram, capacity: "1 GiB", bandwidth: "10 GB/s"}
units:
  cpu: {kind: cpu, peak: {fp32: "10 GFLOP/s"}, memory: [dram]}
  dsp: {kind: dsp, peak: {fp32: "10 GFLOP/s"}, memory: [dram]}
)");
        const auto path =
            dir.write("scenario.yaml",
                      "name: enums\nhardware: hw.yaml\nduration: \"1 s\"\n"
                      "sensors:\n  camera: {rate: \"20 Hz\"}\n"
                      "stages:\n  detect:\n    unit: cpu\n    inputs: [camera]\n"
                      "    work: {time: \"5 ms\"}\n    policy: " +
                          std::string(policy.name) + "\n    queue: {overflow: " + std::string(overflow.name) +
                          "}\n    side_work: {unit: dsp, work: {time: \"1 ms\"}, "
                          "when: " +
                          std::string(when.name) + "}\n");
        const auto spec = config::load_scenario(path);
        ASSERT_EQ(spec.stages.size(), 1u);
        EXPECT_EQ(spec.stages[0].policy, policy.value) << policy.name;
        EXPECT_EQ(spec.stages[0].overflow, overflow.value) << overflow.name;
        ASSERT_EQ(spec.stages[0].side_work.size(), 1u);
        EXPECT_EQ(spec.stages[0].side_work[0].after, when.value) << when.name;
      }
}

namespace {

/// "file:line:column" of the first `token` in `text`, counted here from the text written (1-based, as editors do).
std::string location_of(const std::string& file, const std::string& text, const std::string& token) {
  const auto at = text.find(token);
  const auto line_start = text.rfind('\n', at);
  const auto line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1;
  const auto column = at - (line_start == std::string::npos ? 0 : line_start + 1) + 1;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

/// `"a", "b"` for the names of `table`, as a refusal lists them.
template <class Table>
std::string quoted_names(const Table& table) {
  std::string out;
  for (const auto& e : table.entries) out += (out.empty() ? "\"" : ", \"") + std::string(e.name) + "\"";
  return out;
}

}  // namespace

TEST(EnumTables, AnUnknownNameIsRefusedWhereItIsWritten) {
  // A name no table holds (a typo, or a value of a newer release) is refused with the file, line and column of the
  // name, the key and the names allowed; it is not read as the key's default. A reader that fell back to the
  // default for an unknown name (a string ternary) would load the file and fail here with an empty message; a
  // message located at the key's parent or listing other names fails the comparison.
  const std::string hardware =
      "name: enums\nmemory:\n  dram: {kind: dram, capacity: \"1 GiB\", bandwidth: \"10 GB/s\"}\n"
      "units:\n  cpu: {kind: cpu, peak: {fp32: \"10 GFLOP/s\"}, memory: [dram]}\n"
      "  dsp: {kind: dsp, peak: {fp32: \"10 GFLOP/s\"}, memory: [dram]}\n";
  struct Case {
    std::string key, written, text;
    std::string names;
  };
  const std::string head =
      "name: enums\nhardware: hw.yaml\nduration: \"1 s\"\nsensors:\n  camera: {rate: \"20 Hz\"}\n"
      "stages:\n  detect:\n    unit: cpu\n    inputs: [camera]\n    work: {time: \"5 ms\"}\n";
  const std::vector<Case> cases = {
      {"stages.detect.policy", "newest_first", head + "    policy: newest_first\n",
       quoted_names(model::kInputPolicies)},
      {"stages.detect.queue.overflow", "drop_random", head + "    queue: {overflow: drop_random}\n",
       quoted_names(model::kOverflows)},
      {"stages.detect.side_work[0].when", "sometimes",
       head + "    side_work: {unit: dsp, work: {time: \"1 ms\"}, when: sometimes}\n",
       quoted_names(model::kSideWorkWhen)},
  };
  for (const auto& c : cases) {
    framesim::testing::Scratch dir;
    dir.write("hw.yaml", hardware);
    const auto path = dir.write("scenario.yaml", c.text);
    const std::string message = framesim::testing::error_of([&] { config::load_scenario(path); });
    const std::string where = location_of(path.string(), c.text, c.written);
    EXPECT_NE(message.find(where + ": "), std::string::npos) << c.key << ": expected at " << where << "\n" << message;
    EXPECT_NE(message.find("\"" + c.written + "\" is not one of " + c.names), std::string::npos) << message;
  }
  // The hardware reader refuses an unknown unit kind the same way.
  framesim::testing::Scratch dir;
  const std::string bad = hardware + "  gpu: {kind: tpu, peak: {fp32: \"10 GFLOP/s\"}, memory: [dram]}\n";
  const auto path = dir.write("hw.yaml", bad);
  const std::string message = framesim::testing::error_of([&] { config::load_hardware(path); });
  EXPECT_NE(message.find(location_of(path.string(), bad, "tpu") + ": "), std::string::npos) << message;
  EXPECT_NE(message.find("\"tpu\" is not one of " + quoted_names(model::kUnitKinds)), std::string::npos) << message;
}
