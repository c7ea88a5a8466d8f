// First contact (issue 23): a missing argument names its command, `-` reads standard input for `run` and
// `validate`, and `init` prints its template unless -o names a file (nothing lands in the working directory).
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/files.hpp"
#include "test_support.hpp"

using framesim::testing::run_cli;
using framesim::testing::Scratch;
using framesim::testing::source_path;
namespace fs = std::filesystem;

TEST(FirstContact, MissingArgumentNamesTheCommand) {
  const auto r = run_cli("run");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "framesim run: scenario is required\nRun `framesim run --help` for its arguments.\n");
}

TEST(FirstContact, DashReadsStandardInputForRunAndValidate) {
  // The scenario names its hardware by an absolute path: standard input has no folder of its own (its relative
  // paths are from the working directory).
  Scratch s;
  std::string text = framesim::core::read_file(source_path("tests/report/two_camera/scenario.yaml"));
  const std::string from = "hardware: hardware.yaml";
  text.replace(text.find(from), from.size(), "hardware: " + source_path("tests/report/two_camera/hardware.yaml"));
  s.write("piped.yaml", text);
  const auto v = run_cli(fmt::format("validate - < '{}'", (s.dir() / "piped.yaml").string()));
  EXPECT_EQ(v.exit_code, 0) << v.err;
  EXPECT_EQ(v.out, "<stdin>: ok (scenario)\n");
  const auto r =
      run_cli(fmt::format("run - -q -o '{}' < '{}'", (s.dir() / "out").string(), (s.dir() / "piped.yaml").string()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(s.dir() / "out" / "summary.json"));
  // A mistake on standard input is reported at <stdin>, line and column.
  s.write("bad.yaml", "name: x\nbogus: 1\n");
  const auto bad = run_cli(fmt::format("validate --kind scenario - < '{}'", (s.dir() / "bad.yaml").string()));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("<stdin>:2:1: bogus: unknown key \"bogus\""), std::string::npos) << bad.err;
}

TEST(FirstContact, InitPrintsUnlessToldWhereToWrite) {
  Scratch s;
  const auto r = run_cli(fmt::format("init hardware > '{}/printed.yaml'; ls '{}'", s.dir().string(), s.dir().string()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string printed = framesim::core::read_file(s.dir() / "printed.yaml");
  EXPECT_EQ(printed.rfind("# A hardware file", 0), 0u) << printed.substr(0, 200);
  EXPECT_FALSE(fs::exists(fs::path(FRAMESIM_SOURCE_DIR) / "hardware.yaml")) << "init wrote into the working directory";
}
