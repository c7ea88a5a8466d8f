// Nothing half-written (issue 10): a run stopped by --wall-limit or a signal leaves neither its run folder nor a
// temporary one; an existing good run folder survives a failed rerun; a temporary folder a killed run left
// behind is removed by the next run, one a live run is writing is not; a run folder holding files framesim did not
// write is not replaced without --force (issue 13).
#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

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
  EXPECT_EQ(
      framesim::testing::run_cli(std::string(kLongRun) + " --wall-limit 200ms -o '" + out.string() + "'").exit_code, 3);
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
  ASSERT_EQ(
      framesim::testing::run_cli("run scenarios/robot_30fps.yaml -q --duration 3s -o '" + out.string() + "'").exit_code,
      0);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(out / "summary.json"));
}

/// Starts `framesim run ARGS...` as a child process (stderr to `err`), sends it `signal` once its temporary folder
/// beside `out` exists (so the signal lands while it simulates), and returns its exit code (-1: killed by the signal).
int interrupt_run(const std::vector<std::string>& args, const fs::path& out, const fs::path& err, int signal) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!::freopen(err.c_str(), "w", stderr) || !::freopen("/dev/null", "w", stdout)) ::_exit(126);
    if (::chdir(FRAMESIM_SOURCE_DIR) != 0) ::_exit(126);
    std::vector<char*> argv{const_cast<char*>(FRAMESIM_BINARY), const_cast<char*>("run")};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(FRAMESIM_BINARY, argv.data());
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (temporaries(out).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_FALSE(temporaries(out).empty()) << "the run never created its temporary folder";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // well into the simulation
  ::kill(pid, signal);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Ctrl-C in a terminal is SIGINT to the process: exit code 128 + 2, the temporary folder removed, nothing written.
TEST(RunOutput, SigintExits130AndRemovesTheTemporaryFolder) {
  framesim::testing::Scratch scratch;
  const fs::path out = scratch.dir() / "run";
  const fs::path err = scratch.dir() / "stderr.txt";
  const int code = interrupt_run({"scenarios/hot_enclosure_20min.yaml", "-q", "-o", out.string()}, out, err, SIGINT);
  EXPECT_EQ(code, 130);
  EXPECT_EQ(core::read_file(err), "framesim: interrupted by SIGINT; nothing was written\n");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(temporaries(out).empty());
}

// The same for SIGTERM sent straight to the process, over a good run folder: that folder is untouched.
TEST(RunOutput, SigtermKeepsTheOldRunFolder) {
  framesim::testing::Scratch scratch;
  const fs::path out = scratch.dir() / "run";
  ASSERT_EQ(
      framesim::testing::run_cli("run scenarios/robot_30fps.yaml -q --duration 3s -o '" + out.string() + "'").exit_code,
      0);
  const std::string summary = core::read_file(out / "summary.json");
  const int code = interrupt_run({"scenarios/hot_enclosure_20min.yaml", "-q", "-o", out.string()}, out,
                                 scratch.dir() / "stderr.txt", SIGTERM);
  EXPECT_EQ(code, 143);
  EXPECT_EQ(core::read_file(out / "summary.json"), summary);
  EXPECT_TRUE(temporaries(out).empty());
}

// A temporary folder whose process is alive (this test's own pid) belongs to a run in progress: kept.
TEST(RunOutput, ALaterRunKeepsALiveRunsTemporaryFolder) {
  framesim::testing::Scratch scratch;
  const fs::path out = scratch.dir() / "run";
  const fs::path live = out.string() + ".tmp-" + std::to_string(::getpid());
  fs::create_directories(live);
  ASSERT_EQ(
      framesim::testing::run_cli("run scenarios/robot_30fps.yaml -q --duration 3s -o '" + out.string() + "'").exit_code,
      0);
  EXPECT_TRUE(fs::exists(live));
}

/// The names in `folder`, sorted.
std::vector<std::string> names_in(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(folder)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A run folder lists what framesim wrote in it (.framesim-files: every other entry, one a line), so a rerun
// replaces it; a file the user added is never removed silently: the rerun is refused (exit 2, the folder
// untouched) until --force.
TEST(RunOutput, AFolderWithAUserFileIsReplacedOnlyWithForce) {
  framesim::testing::Scratch scratch;
  const fs::path out = scratch.dir() / "run";
  const std::string args = "run scenarios/robot_30fps.yaml -q --duration 3s -o '" + out.string() + "'";
  ASSERT_EQ(framesim::testing::run_cli(args).exit_code, 0);
  // The list against the folder's own entries, read independently: every entry but the list itself.
  std::string expected =
      "# written by framesim: what it wrote in this run folder. It replaces the folder on a rerun "
      "only when the folder holds nothing else (or with --force).\n";
  for (const auto& name : names_in(out))
    if (name != ".framesim-files") expected += name + "\n";
  EXPECT_EQ(core::read_file(out / ".framesim-files"), expected);
  // framesim's own folder: replaced.
  ASSERT_EQ(framesim::testing::run_cli(args + " --seed 3").exit_code, 0);
  const std::string summary = core::read_file(out / "summary.json");
  // A user's file in it: refused, nothing changed.
  std::ofstream(out / "notes.txt") << "my notes\n";
  const auto refused = framesim::testing::run_cli(args + " --seed 4");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(refused.err, "-o: " + out.string() +
                             " holds a file framesim did not write (notes.txt): not replacing it; "
                             "--force replaces it anyway, or choose another folder\n");
  EXPECT_EQ(core::read_file(out / "notes.txt"), "my notes\n");
  EXPECT_EQ(core::read_file(out / "summary.json"), summary);
  EXPECT_TRUE(temporaries(out).empty());
  // --force: replaced whole, the user's file gone.
  ASSERT_EQ(framesim::testing::run_cli(args + " --seed 4 --force").exit_code, 0);
  EXPECT_FALSE(fs::exists(out / "notes.txt"));
  EXPECT_NE(core::read_file(out / "summary.json"), summary);
}

// A folder that holds the run's own input is never replaced, not even with --force (`run proj/s.yaml -o proj
// --force` would have removed the project); a compare never writes into a run folder it compares (its report.html
// would be replaced).
TEST(RunOutput, AFolderHoldingAnInputIsNeverReplaced) {
  framesim::testing::Scratch scratch;
  const fs::path proj = scratch.dir() / "proj";
  fs::create_directories(proj);
  const std::string scenario = core::read_file("examples/01_bus_sharing/scenario.yaml");
  const fs::path copy = proj / "scenario.yaml";
  std::ofstream(copy) << scenario;
  fs::copy_file("examples/01_bus_sharing/hardware.yaml", proj / "hardware.yaml");
  for (const fs::path& out : {proj, scratch.dir()}) {
    const auto refused = framesim::testing::run_cli("run '" + copy.string() + "' -q --force -o '" + out.string() + "'");
    EXPECT_EQ(refused.exit_code, 2) << refused.err;
    EXPECT_EQ(refused.err, "-o: " + out.string() + " holds " + copy.lexically_normal().generic_string() +
                               ", an input of this command: not replacing it, even with --force; choose another "
                               "folder\n");
    EXPECT_EQ(core::read_file(copy), scenario);
  }
  const fs::path a = scratch.dir() / "a", b = scratch.dir() / "b";
  ASSERT_EQ(framesim::testing::run_cli("run '" + copy.string() + "' -q -o '" + a.string() + "'").exit_code, 0);
  ASSERT_EQ(framesim::testing::run_cli("run '" + copy.string() + "' -q --seed 2 -o '" + b.string() + "'").exit_code, 0);
  const std::string report = core::read_file(a / "report.html");
  const auto compared =
      framesim::testing::run_cli("compare '" + a.string() + "' '" + b.string() + "' -o '" + a.string() + "'");
  EXPECT_EQ(compared.exit_code, 2);
  EXPECT_EQ(compared.err, "-o: " + a.string() +
                              " is one of the run folders compared; its report.html would be replaced: give "
                              "another folder\n");
  EXPECT_EQ(core::read_file(a / "report.html"), report);
  EXPECT_FALSE(fs::exists(a / "compare.json"));
}

// A folder an older framesim wrote (no list) is replaced when everything in it is a file the new run writes too,
// and refused when it holds anything else.
TEST(RunOutput, AFolderWithoutTheListIsJudgedByTheNewRunsFiles) {
  framesim::testing::Scratch scratch;
  const fs::path out = scratch.dir() / "run";
  const std::string args = "run scenarios/robot_30fps.yaml -q --duration 3s -o '" + out.string() + "'";
  ASSERT_EQ(framesim::testing::run_cli(args).exit_code, 0);
  fs::remove(out / ".framesim-files");
  ASSERT_EQ(framesim::testing::run_cli(args + " --seed 5").exit_code, 0);
  EXPECT_TRUE(fs::exists(out / ".framesim-files"));
  fs::remove(out / ".framesim-files");
  fs::create_directories(out / "plots");
  const auto refused = framesim::testing::run_cli(args + " --seed 6");
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_TRUE(fs::exists(out / "plots"));
  EXPECT_TRUE(temporaries(out).empty());
}

}  // namespace
}  // namespace framesim
