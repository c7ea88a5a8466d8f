// Nothing half-written (issue 10): a run stopped by --wall-limit or a signal leaves neither its run folder nor a
// temporary one; an existing good run folder survives a failed rerun; a temporary folder a killed run left
// behind is removed by the next run.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_support.hpp"

namespace framesim {
namespace {

namespace fs = std::filesystem;

/// The `<out>.tmp-*` folders beside `out`.
std::vector<fs::path> temporaries(const fs::path& out) {
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(out.parent_path()))
    if (e.path().filename().string().rfind(out.filename().string() + ".tmp-", 0) == 0) found.push_back(e.path());
  return found;
}

// hot_enclosure_20min takes several seconds of wall time: long enough to be stopped part-way.
const char* const kLongRun = "run scenarios/hot_enclosure_20min.yaml -q";

TEST(RunOutput, WallLimitStopsTheRunAndWritesNothing) {
  framesim::testing::Scratch scratch;
  const fs::path out = scratch.dir() / "run";
  const auto r = framesim::testing::run_cli(std::string(kLongRun) + " --wall-limit 300ms -o '" + out.string() + "'");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err, "framesim: stopped after 300 ms of wall time (--wall-limit 300ms); nothing was written\n");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(temporaries(out).empty());
}

TEST(RunOutput, SigtermRemovesTheTemporaryFolder) {
  framesim::testing::Scratch scratch;
  const fs::path out = scratch.dir() / "run";
  // timeout sends SIGTERM after 0.5 s and passes on framesim's own exit status.
  const auto r = framesim::testing::run_cli(std::string(kLongRun) + " -o '" + out.string() + "'",
                                           "timeout --preserve-status -s TERM 0.5 ");
  EXPECT_EQ(r.exit_code, 128 + 15) << r.err;
  EXPECT_EQ(r.err, "framesim: interrupted by SIGTERM; nothing was written\n");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(temporaries(out).empty());
}

TEST(RunOutput, AGoodRunFolderSurvivesAFailedRerun) {
  framesim::testing::Scratch scratch;
  const fs::path out = scratch.dir() / "run";
  const std::string args = "run scenarios/robot_30fps.yaml -q --duration 3s -o '" + out.string() + "'";
  ASSERT_EQ(framesim::testing::run_cli(args).exit_code, 0);
  const std::string summary = core::read_file(out / "summary.json");
  // A user error, then a run stopped by the wall-time limit: the first run's folder is untouched.
  EXPECT_EQ(framesim::testing::run_cli(args + " --set sensors.camera.rate=0Hz").exit_code, 2);
  EXPECT_EQ(framesim::testing::run_cli(std::string(kLongRun) + " --wall-limit 200ms -o '" + out.string() + "'").exit_code, 3);
  EXPECT_EQ(core::read_file(out / "summary.json"), summary);
  EXPECT_TRUE(temporaries(out).empty());
  // A successful rerun replaces it whole.
  ASSERT_EQ(framesim::testing::run_cli(args + " --seed 7").exit_code, 0);
  EXPECT_NE(core::read_file(out / "summary.json"), summary);
  EXPECT_TRUE(temporaries(out).empty());
}

TEST(RunOutput, ALaterRunRemovesWhatADeadRunLeft) {
  framesim::testing::Scratch scratch;
  const fs::path out = scratch.dir() / "run";
  // The pid of a process that has exited (and been reaped): no process has it now.
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const fs::path stale = out.string() + ".tmp-" + std::to_string(dead);
  fs::create_directories(stale);
  std::ofstream(stale / "frames.csv") << "frame\n1\n";
  ASSERT_EQ(framesim::testing::run_cli("run scenarios/robot_30fps.yaml -q --duration 3s -o '" + out.string() + "'").exit_code, 0);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(out / "summary.json"));
}

}  // namespace
}  // namespace framesim
