// The key declarations (config/schema.hpp) against what is really written: every key of every shipped file and
// of everything the writers write is declared; the declarations are complete enough to document and to fill a
// template; and the readers apply a declaration's checks (its bounds appear in their messages).
//
// The oracle of the walks is independent of the readers: the YAML tree as yaml-cpp parses it, each key path
// looked up in the declarations, a layer's parameters in its op's own list (model/network.hpp).
#include <algorithm>
#include <set>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "config/hardware.hpp"
#include "config/hardware_writer.hpp"
#include "config/network.hpp"
#include "config/network_writer.hpp"
#include "config/schema.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "test_support.hpp"

using namespace framesim;
namespace fst = framesim::testing;
namespace schema = framesim::config::schema;

namespace {

/// Key paths in `node` (at `path`) that `table` does not declare. A network's layer may also carry its op's
/// parameters, and a repeat block's keys are the repeat block's.
void undeclared(const schema::Table& table, const YAML::Node& node, const std::string& path,
                std::vector<std::string>& out) {
  if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) undeclared(table, node[i], path + "[" + std::to_string(i) + "]", out);
    return;
  }
  if (!node.IsMap()) return;
  const bool network_item = &table == &schema::network_table() && path.rfind("layers[", 0) == 0 && path.back() == ']';
  if (network_item && node["repeat"].IsDefined()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (!schema::repeat_table().find(key)) out.push_back(path + "." + key + " (repeat block)");
      else if (key == "layers") undeclared(table, it->second, "layers", out);
    }
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.Scalar();
    // A key with dots (a sweep axis' key path) is one component of the path.
    std::string component = key;
    std::replace(component.begin(), component.end(), '.', '_');
    const std::string child = path.empty() ? component : path + "." + component;
    const auto m = schema::match(table, child);
    if (!m) {
      const model::OpSchema* op =
          network_item && node["op"].IsDefined() ? model::find_op(node["op"].Scalar()) : nullptr;
      const bool op_param = op && std::any_of(op->params.begin(), op->params.end(),
                                              [&](const model::ParamSchema& p) { return p.key == key; });
      if (!op_param) out.push_back(child);
      continue;
    }
    if (m->key->kind == schema::Kind::any) continue;  // any YAML (a sweep axis' values)
    undeclared(table, it->second, child, out);
  }
}

std::vector<std::string> undeclared_in(const schema::Table& table, const YAML::Node& root) {
  std::vector<std::string> out;
  undeclared(table, root, "", out);
  return out;
}

}  // namespace

TEST(Declarations, TheWalkFindsAnUndeclaredKey) {
  // The control: the walk of the tests below reports a misspelt key, a key in the wrong block, an op parameter
  // on another op, and accepts the same file spelt right.
  const auto bad = YAML::Load(R"(
name: x
memory: {dram: {kind: dram, capacity: "1 GB", bandwdith: "1 GB/s"}}
units: {gpu: {kind: gpu, peak: {fp32: "1 TFLOP/s"}, memory: [dram], governor: {period: "1 s"}}}
)");
  EXPECT_EQ(undeclared_in(schema::hardware_table(), bad),
            (std::vector<std::string>{"memory.dram.bandwdith", "units.gpu.governor"}));
  const auto good = YAML::Load(R"(
name: x
memory: {dram: {kind: dram, capacity: "1 GB", bandwidth: "1 GB/s", operating_points: [{frequency: "1 GHz"}]}}
units: {gpu: {kind: gpu, peak: {fp32: "1 TFLOP/s"}, efficiency: {fp32: 0.5, by_op: {conv: {fp32: 0.4}}},
              memory: [dram], scheduler: {policy: time_slice, quantum: "1 ms"}}}
)");
  EXPECT_TRUE(undeclared_in(schema::hardware_table(), good).empty());
  const auto net = YAML::Load(R"(
name: n
inputs: {x: [1, 8]}
layers: [{op: linear, out_features: 4, kernel: 3}, {repeat: 2, name: r, layers: [{op: relu}]}]
)");
  EXPECT_EQ(undeclared_in(schema::network_table(), net), (std::vector<std::string>{"layers[0].kernel"}));
}

TEST(Declarations, EveryShippedFileUsesOnlyDeclaredKeys) {
  struct Folder {
    const char* path;
    const schema::Table& table;
  };
  const Folder folders[] = {{"hardware", schema::hardware_table()},
                            {"scenarios/networks", schema::network_table()},
                            {"scenarios", schema::scenario_table()},
                            {"scenarios/bench", schema::scenario_table()},
                            {"scenarios/sweeps", schema::sweep_table()}};
  int files = 0;
  for (const auto& f : folders) {
    for (const auto& path : fst::shipped_yaml_files(f.path)) {
      SCOPED_TRACE(path.string());
      EXPECT_EQ(undeclared_in(f.table, YAML::LoadFile(path.string())), std::vector<std::string>{});
      ++files;
    }
  }
  // The examples (examples/NN_*/), each file's kind from its top-level keys.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(fst::source_path("examples"))) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    const YAML::Node root = YAML::LoadFile(entry.path().string());
    const schema::Table& table = root["units"]    ? schema::hardware_table()
                                 : root["layers"] ? schema::network_table()
                                                  : schema::scenario_table();
    EXPECT_EQ(undeclared_in(table, root), std::vector<std::string>{});
    ++files;
  }
  EXPECT_GE(files, 60);
}

TEST(Declarations, TheHardwareWriterWritesOnlyDeclaredKeys) {
  int files = 0;
  for (const auto& path : fst::shipped_yaml_files("hardware")) {
    SCOPED_TRACE(path.string());
    const auto hw = config::load_hardware(path);
    const YAML::Node written = YAML::Load(config::write_hardware_yaml(hw, {}));
    EXPECT_EQ(undeclared_in(schema::hardware_table(), written), std::vector<std::string>{});
    EXPECT_TRUE(written["units"].IsMap());  // the walk saw a whole file, not an empty one
    ++files;
  }
  EXPECT_GE(files, 10);
}

TEST(Declarations, TheNetworkWriterWritesOnlyDeclaredKeys) {
  int files = 0;
  for (const auto& path : fst::shipped_yaml_files("scenarios/networks")) {
    SCOPED_TRACE(path.string());
    const auto net = config::load_network(path);
    const YAML::Node written = YAML::Load(config::network_to_yaml(net, {}));
    EXPECT_EQ(undeclared_in(schema::network_table(), written), std::vector<std::string>{});
    EXPECT_EQ(written["layers"].size(), net.layers.size());
    ++files;
  }
  EXPECT_GE(files, 10);
}

TEST(Declarations, EveryKeyCanBeDocumentedAndTemplated) {
  std::vector<const schema::Table*> tables = schema::file_tables();
  for (const auto* f : schema::fragment_tables()) tables.push_back(f);
  for (const auto* t : tables) {
    std::set<std::string> paths;
    for (const auto& k : t->keys) {
      SCOPED_TRACE(t->name + ": " + k.path);
      EXPECT_TRUE(paths.insert(k.path).second) << "declared twice";
      EXPECT_FALSE(k.description.empty());
      // Its parent is declared: the tree has no orphans.
      if (!k.parent().empty()) {
        EXPECT_NE(t->find(k.parent()), nullptr);
      }
      // A quantity has a unit; a choice its choices; a distribution's mapping form is the distribution keys.
      if (k.kind == schema::Kind::quantity) {
        EXPECT_NE(k.dimension, core::Dimension::Ratio);
      }
      if (k.kind == schema::Kind::choice) {
        EXPECT_FALSE(k.choices.empty());
      }
      if (k.kind == schema::Kind::distribution) {
        EXPECT_EQ(k.fragment, &schema::distribution_table());
      }
      // `framesim init` fills a required or template key with its example, or writes its keys.
      if ((k.required || k.in_template) && k.kind != schema::Kind::map) {
        EXPECT_FALSE(k.example.empty());
      }
    }
  }
}

TEST(Declarations, TheReadersApplyTheDeclaredBounds) {
  // units.<unit>.cores is declared 1..64: 65 is refused with the declared maximum.
  const auto* cores = schema::hardware_table().find("units.<unit>.cores");
  ASSERT_NE(cores, nullptr);
  ASSERT_EQ(cores->max, 64);
  const std::string text = R"(name: x
memory: {dram: {kind: dram, capacity: "1 GB", bandwidth: "1 GB/s"}}
units: {gpu: {kind: gpu, cores: 65, peak: {fp32: "1 TFLOP/s"}, memory: [dram]}}
)";
  try {
    config::parse_hardware(text, "t.yaml");
    FAIL() << "65 cores were accepted";
  } catch (const core::UserError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].key_path, "units.gpu.cores");
    EXPECT_EQ(e.diagnostics()[0].message, "must be at most 64, got 65");
  }
}

TEST(Declarations, AConcretePathFindsItsDeclaration) {
  // Hand-picked paths through named keys, list items and fragments, with the declaration each must find.
  const std::pair<const char*, const char*> hardware[] = {
      {"units.gpu.peak.fp16", "units.<unit>.peak.<precision>"},
      {"units.dla0.efficiency.by_op.depthwise.int8", "units.<unit>.efficiency.by_op.<op_class>.<precision>"},
      {"memory.dram.operating_points[2].frequency", "memory.<level>.operating_points[].frequency"},
      {"units.cpu.scheduler.quantum", "quantum"}};
  for (const auto& [path, declared] : hardware) {
    const auto m = schema::match(schema::hardware_table(), path);
    ASSERT_TRUE(m.has_value()) << path;
    EXPECT_EQ(m->key->path, declared);
  }
  const auto jitter = schema::match(schema::scenario_table(), "sensors.cam.jitter.stddev");
  ASSERT_TRUE(jitter);
  EXPECT_EQ(jitter->table, &schema::distribution_table());
  const auto side = schema::match(schema::scenario_table(), "stages.s.side_work[1].when");
  ASSERT_TRUE(side);
  EXPECT_EQ(side->key->path, "stages.<stage>.side_work.when");
  const auto axis = schema::match(schema::sweep_table(), "axes.hardware.memory.dram.bandwidth.scale");
  ASSERT_TRUE(axis);  // a sweep axis' key path has dots of its own
  EXPECT_EQ(axis->key->path, "axes.<key_path>.scale");
  const auto value = schema::match(schema::sweep_table(), "axes.sensors.camera.rate[1]");
  ASSERT_TRUE(value);
  EXPECT_EQ(value->key->path, "axes.<key_path>[]");
  EXPECT_FALSE(schema::match(schema::hardware_table(), "units.gpu.peak.fp23"));  // not a precision
  EXPECT_FALSE(schema::match(schema::hardware_table(), "memory.dram.bandwith"));
}

TEST(Declarations, EveryUnitSpellingTheSchemasListParses) {
  // The JSON Schemas' unit patterns come from core::unit_spellings: each spelling must be one parse_quantity
  // reads in that dimension (and the lists are not empty, nor do they take another dimension's unit).
  for (int d = 0; d <= static_cast<int>(core::Dimension::Ratio); ++d) {
    const auto dim = static_cast<core::Dimension>(d);
    const auto spellings = core::unit_spellings(dim);
    EXPECT_FALSE(spellings.empty());
    for (const auto& s : spellings)
      EXPECT_TRUE(core::parse_quantity("0 " + s, dim).value.has_value()) << s;  // 0: in range whatever the prefix
  }
  const auto bandwidth = core::unit_spellings(core::Dimension::BytesPerSecond);
  EXPECT_NE(std::find(bandwidth.begin(), bandwidth.end(), "GB/s"), bandwidth.end());
  EXPECT_NE(std::find(bandwidth.begin(), bandwidth.end(), "GiB/s"), bandwidth.end());
  EXPECT_EQ(std::find(bandwidth.begin(), bandwidth.end(), "GHz"), bandwidth.end());
  EXPECT_EQ(std::find(bandwidth.begin(), bandwidth.end(), "KB/s"), bandwidth.end());  // "K" is ambiguous
}

TEST(Declarations, TheHardwareWriterWritesEveryBranchDeclaredAndReadsBack) {
  // A file using every optional key the writer has a branch for: written, walked, read back the same.
  const std::string text = R"(name: full
memory:
  sram: {kind: sram, capacity: "4 MiB", bandwidth: "200 GB/s", latency: "5 ns", line: "32 B"}
  dram:
    kind: dram
    capacity: "8 GiB"
    bandwidth: "68 GB/s"
    efficiency: 0.7
    energy_per_byte: "20 pJ/bit"
    operating_points: [{name: hi, frequency: "3.2 GHz"}, {name: lo, frequency: "1.6 GHz"}]
    contention: {slowdown: [[0.5, 1.2], [0.9, 2]], source: "a guess"}
units:
  gpu:
    kind: gpu
    cores: 8
    peak: {fp32: "2 TFLOP/s", fp16: "4 TFLOP/s"}
    efficiency: {fp32: 0.5, fp16: 0.6, by_op: {depthwise: 0.3, conv: {fp16: 0.7}}}
    dispatch_overhead: "5 us"
    outstanding: "64 KiB"
    contention_sensitivity: 1.5
    memory: [sram, dram]
    operating_points: [{name: max, frequency: "1 GHz", voltage: "0.9 V", static_power: "1 W"}, {frequency: "500 MHz"}]
    static_power: "1.5 W"
    energy_per_op: {fp32: "1 pJ", fp16: "0.5 pJ"}
    scheduler: {policy: time_slice, quantum: "2 ms", switch_cost: "50 us"}
  cpu: {kind: cpu, peak: {fp32: "100 GFLOP/s"}, memory: [dram], scheduler: fifo}
thermal:
  ambient: "25 C"
  resistance: "4 C/W"
  capacitance: "20 J/C"
  trip: "85 C"
  release: "80 C"
  governor: {period: "100 ms", policy: bang_bang, throttle: [gpu, dram]}
)";
  const auto hw = config::parse_hardware(text, "full.yaml");
  const std::string written = config::write_hardware_yaml(hw, {});
  EXPECT_EQ(undeclared_in(schema::hardware_table(), YAML::Load(written)), std::vector<std::string>{});
  const auto back = config::parse_hardware(written, "written.yaml");
  ASSERT_EQ(back.units.size(), 2u);
  EXPECT_EQ(back.units[0].scheduler.policy, model::SchedulingPolicy::time_slice);
  EXPECT_DOUBLE_EQ(back.units[0].scheduler.quantum_s, 2e-3);
  EXPECT_DOUBLE_EQ(back.units[0].scheduler.switch_cost_s, 50e-6);
  EXPECT_EQ(back.units[1].scheduler.policy, model::SchedulingPolicy::fifo);
  EXPECT_EQ(config::write_hardware_yaml(back, {}), written);  // a fixed point
}
