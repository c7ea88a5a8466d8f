// The commands generated from the key declarations, run as a user runs them: `framesim keys`, `schema`,
// `init` and `validate FILE...`, and the checked-in copies of what they generate (docs/schema.md,
// docs/schema/*.schema.json) against what the binary prints now.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

#include "core/files.hpp"
#include "test_support.hpp"

using namespace framesim;
namespace fst = framesim::testing;
namespace fs = std::filesystem;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

}  // namespace

TEST(KeysCli, TheCheckedInReferenceIsCurrent) {
  const auto markdown = fst::run_cli("keys --markdown");
  ASSERT_EQ(markdown.exit_code, 0) << markdown.err;
  EXPECT_TRUE(markdown.out == core::read_file(fst::source_path("docs/schema.md")))
      << "docs/schema.md is stale: regenerate it with `build/framesim keys --markdown > docs/schema.md`";
  for (const std::string kind : {"hardware", "network", "scenario", "sweep", "runtime", "map"}) {
    const auto schema = fst::run_cli("schema " + kind);
    ASSERT_EQ(schema.exit_code, 0) << schema.err;
    EXPECT_TRUE(schema.out == core::read_file(fst::source_path("docs/schema/" + kind + ".schema.json")))
        << "docs/schema/" << kind << ".schema.json is stale: regenerate it with `build/framesim schema " << kind
        << " > docs/schema/" << kind << ".schema.json`";
  }
}

TEST(KeysCli, OneKeyInFullAndADidYouMean) {
  // A key as written in a file finds its declaration: unit, required, example (the values stated here by hand).
  const auto bandwidth = fst::run_cli("keys hardware memory.dram.bandwidth");
  ASSERT_EQ(bandwidth.exit_code, 0) << bandwidth.err;
  EXPECT_NE(bandwidth.out.find("memory.<level>.bandwidth (hardware keys)"), std::string::npos) << bandwidth.out;
  EXPECT_NE(bandwidth.out.find("unit:     a bandwidth (SI unit B/s)"), std::string::npos) << bandwidth.out;
  EXPECT_NE(bandwidth.out.find("required: yes"), std::string::npos);
  const auto line = fst::run_cli("keys hardware 'memory.<level>.line'");
  EXPECT_NE(line.out.find("default:  64 B"), std::string::npos) << line.out;
  const auto typo = fst::run_cli("keys hardware memory.dram.bandwith");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_EQ(typo.out, "");
  EXPECT_EQ(typo.err, "the hardware keys have no \"memory.dram.bandwith\" (did you mean \"memory.dram.bandwidth\"?)\n");
  const auto kind = fst::run_cli("keys senario");
  EXPECT_EQ(kind.exit_code, 2);
  EXPECT_NE(kind.err.find("(did you mean \"scenario\"?)"), std::string::npos) << kind.err;
  // Every declared key of a kind is listed.
  const auto all = fst::run_cli("keys scenario");
  for (const char* key : {"stages.<stage>.side_work.when", "background.<name>.profile", "chains.<chain>"})
    EXPECT_NE(all.out.find(key), std::string::npos) << key;
}

TEST(KeysCli, InitWritesTemplatesThatValidateAndRun) {
  fst::Scratch scratch;
  const fs::path dir = scratch.dir();
  // The scenario template names hardware.yaml; the sweep template scenario.yaml: written side by side they work.
  for (const std::string kind : {"hardware", "network", "scenario", "sweep", "runtime"}) {
    const auto r = fst::run_cli("init " + kind + " -o " + quoted(dir / (kind + ".yaml")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const std::string files = quoted(dir / "hardware.yaml") + " " + quoted(dir / "network.yaml") + " " +
                            quoted(dir / "scenario.yaml") + " " + quoted(dir / "sweep.yaml") + " " +
                            quoted(dir / "runtime.yaml");
  const auto validate = fst::run_cli("validate " + files);
  EXPECT_EQ(validate.exit_code, 0) << validate.err;
  EXPECT_EQ(validate.out, (dir / "hardware.yaml").string() + ": ok (hardware)\n" + (dir / "network.yaml").string() +
                              ": ok (network)\n" + (dir / "scenario.yaml").string() + ": ok (scenario)\n" +
                              (dir / "sweep.yaml").string() + ": ok (sweep)\n" + (dir / "runtime.yaml").string() +
                              ": ok (runtime)\n");
  // The map template (its stages name a scenario's: checked against one by `framesim map`) validates alone.
  ASSERT_EQ(fst::run_cli("init map -o " + quoted(dir / "map.yaml")).exit_code, 0);
  const auto map = fst::run_cli("validate " + quoted(dir / "map.yaml"));
  EXPECT_EQ(map.exit_code, 0) << map.err;
  EXPECT_EQ(map.out, (dir / "map.yaml").string() + ": ok (map)\n");
  const auto budget = fst::run_cli("budget " + quoted(dir / "hardware.yaml") + " " + quoted(dir / "network.yaml"));
  EXPECT_EQ(budget.exit_code, 0) << budget.err;
  const auto run = fst::run_cli("run " + quoted(dir / "scenario.yaml") + " --duration 1s -q -o " + quoted(dir / "run"));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(fs::exists(dir / "run" / "summary.json"));
  // Every declared top-level key is in the template, as a key or a commented-out key.
  const std::string hardware = core::read_file(dir / "hardware.yaml");
  for (const char* key : {"\nname: ", "\nmemory:\n", "\nunits:\n", "\n# thermal:\n", "    # busy_power: "})
    EXPECT_NE(hardware.find(key), std::string::npos) << key;
  // An existing file is kept unless --force.
  const auto again = fst::run_cli("init hardware -o " + quoted(dir / "hardware.yaml"));
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("exists; give --force to replace it"), std::string::npos) << again.err;
  std::ofstream(dir / "hardware.yaml") << "edited\n";
  EXPECT_EQ(core::read_file(dir / "hardware.yaml"), "edited\n");
  const auto forced = fst::run_cli("init hardware --force -o " + quoted(dir / "hardware.yaml"));
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(core::read_file(dir / "hardware.yaml"), hardware);
}

// A required key written as a one-line example (`peak: {...}`) shows its block form above it, commented: a user
// who uncomments the block and drops the one-liner gets a valid file. Done here by plain text editing, the way a
// user would, on the template as written.
TEST(KeysCli, InitBlockFormsCanBeUncommented) {
  fst::Scratch scratch;
  const fs::path path = scratch.dir() / "hardware.yaml";
  ASSERT_EQ(fst::run_cli("init hardware -o " + quoted(path)).exit_code, 0);
  std::istringstream in(core::read_file(path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string edited;
  bool found = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] != "    # peak:") {
      edited += lines[i] + "\n";
      continue;
    }
    found = true;
    edited += "    peak:\n";
    for (++i; i < lines.size() && lines[i].rfind("      # ", 0) == 0; ++i)  // the block's commented sub-keys
      if (lines[i].find("fp16: \"") != std::string::npos) edited += "      " + lines[i].substr(8) + "\n";
    ASSERT_LT(i, lines.size());
    ASSERT_EQ(lines[i].rfind("    peak: {", 0), 0u) << lines[i];  // the one-liner right after: dropped
  }
  ASSERT_TRUE(found) << "no commented block form of peak in the template";
  std::ofstream(path) << edited;
  const auto validate = fst::run_cli("validate " + quoted(path));
  EXPECT_EQ(validate.exit_code, 0) << validate.err << edited;
}

TEST(KeysCli, ValidateReportsEveryProblemOfEveryFile) {
  fst::Scratch scratch;
  const fs::path dir = scratch.dir();
  // Two mistakes in one hardware file, and a scenario naming it: the hardware's problems come through the
  // scenario too; an unreadable kind is said so. Exit code 2, the good file still "ok".
  std::ofstream(dir / "hw.yaml")
      << "name: x\n"
         "memory: {dram: {kind: dram, capacity: \"1 GB\", bandwidth: \"68\"}}\n"
         "units: {gpu: {kind: gpu, peak: {fp32: \"1 TFLOP/s\"}, memory: [dram], coress: 2}}\n";
  std::ofstream(dir / "sc.yaml") << "name: s\nhardware: hw.yaml\nduration: \"1 s\"\n"
                                    "sensors: {cam: {rate: \"30 Hz\"}}\nstages: {det: {unit: gpu, inputs: [cam]}}\n";
  std::ofstream(dir / "what.yaml") << "colour: blue\n";
  const auto r = fst::run_cli("validate " + quoted(dir / "hw.yaml") + " " + quoted(dir / "sc.yaml") + " " +
                              quoted(dir / "what.yaml") + " hardware/seed_reference.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "hardware/seed_reference.yaml: ok (hardware)\n");
  const std::string hw = (dir / "hw.yaml").string();
  // Columns counted by hand: "68" starts at column 58 of line 2, "coress" at column 69 of line 3.
  const std::string bandwidth =
      hw + ":2:58: memory.dram.bandwidth: expected a bandwidth like \"68 GB/s\", got \"68\" (the unit is missing)";
  const std::string cores = hw + ":3:69: units.gpu.coress: unknown key \"coress\" (did you mean \"cores\"?)";
  std::istringstream lines(r.err);
  std::vector<std::string> got;
  for (std::string l; std::getline(lines, l);) got.push_back(l);
  EXPECT_EQ(got,
            (std::vector<std::string>{
                bandwidth, cores, bandwidth, cores,
                (dir / "what.yaml").string() +
                    ": cannot tell which kind of file this is (no units, layers, stages, axes, runtime or "
                    "objective at the top level); give --kind hardware, network, scenario, sweep, runtime or map"}));
  // --kind forces the kind: the same file read as a hardware file names what is missing.
  const auto forced = fst::run_cli("validate --kind hardware " + quoted(dir / "what.yaml"));
  EXPECT_EQ(forced.exit_code, 2);
  EXPECT_NE(forced.err.find("colour: unknown key \"colour\""), std::string::npos) << forced.err;
}

// A scenario that lays a runtime profile over its hardware (`runtime: FILE`) is still a scenario to `validate`
// (both kinds have a top-level `runtime` key; a scenario's stages tell them apart), and the profile itself a runtime.
TEST(KeysCli, ValidateTellsAScenarioWithARuntimeFromARuntimeProfile) {
  const std::string scenario = "tests/validation/haxconn/googlenet_resnet101_haxconn.yaml";
  const std::string profile = "hardware/runtimes/jetson_agx_xavier_32gb_tensorrt-7.1.yaml";
  ASSERT_NE(core::read_file(fst::source_path(scenario)).find("\nruntime: "), std::string::npos) << scenario;
  const auto r = fst::run_cli("validate " + scenario + " " + profile);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, scenario + ": ok (scenario)\n" + profile + ": ok (runtime)\n");
}
