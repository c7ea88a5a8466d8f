// Sweeps: point expansion (grid, zip, Latin hypercube), a sweep end to end, nothing lost or repeated when a
// sweep is killed and rerun, shards merged into the same table as one local run, and the Slurm script.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "config/sweep.hpp"
#include "core/error.hpp"
#include "engine/run_support.hpp"
#include "sweep/small_sweep.hpp"
#include "test_support.hpp"

using framesim::testing::run_cli;
using framesim::testing::Scratch;
using framesim::testing::source_path;

using framesim::testing::write_small_sweep;

TEST(Sweep, GridZipAndLatinHypercubeExpand) {
  Scratch s;
  write_small_sweep(s);
  const auto grid = framesim::config::expand_sweep(framesim::config::load_sweep(s.dir() / "sweep.yaml"));
  ASSERT_EQ(grid.size(), 12u);
  EXPECT_EQ(grid[0].labels, (std::vector<std::string>{"25 GB/s", "fp32", "30 Hz"}));
  EXPECT_EQ(grid[1].labels, (std::vector<std::string>{"25 GB/s", "fp32", "60 Hz"}));  // the last axis fastest
  EXPECT_EQ(grid[11].labels, (std::vector<std::string>{"100 GB/s", "fp16", "60 Hz"}));
  EXPECT_EQ(grid[5].overrides[0].path, "hardware.memory.dram.bandwidth");

  s.write("lhs.yaml", R"(name: lhs
scenario: scenario.yaml
mode: latin_hypercube
samples: 10
seed: 3
axes:
  hardware.memory.dram.bandwidth: {range: ["10 GB/s", "1000 GB/s"], scale: log}
  sensors.camera.rate: {range: ["10 Hz", "20 Hz"]}
)");
  const auto lhs = framesim::config::expand_sweep(framesim::config::load_sweep(s.dir() / "lhs.yaml"));
  ASSERT_EQ(lhs.size(), 10u);
  // Every tenth of each axis (log scale for the bandwidth) holds exactly one sample.
  std::set<int> bw_strata, rate_strata;
  for (const auto& p : lhs) {
    const double bw = *framesim::core::parse_quantity(p.overrides[0].value_yaml, framesim::core::Dimension::BytesPerSecond).value;
    const double rate = *framesim::core::parse_quantity(p.overrides[1].value_yaml, framesim::core::Dimension::Hertz).value;
    bw_strata.insert(static_cast<int>(std::log10(bw / 10e9) / 2 * 10));
    rate_strata.insert(static_cast<int>((rate - 10) / 10 * 10));
  }
  EXPECT_EQ(bw_strata.size(), 10u);
  EXPECT_EQ(rate_strata.size(), 10u);
}

TEST(Sweep, BadAxisIsAnErrorBeforeAnythingRuns) {
  Scratch s;
  write_small_sweep(s);
  s.write("bad.yaml", R"(name: bad
scenario: scenario.yaml
axes:
  hardware.memory.dram.bandwith: ["25 GB/s"]
)");
  const auto out = s.dir() / "out";
  EXPECT_EQ(run_cli(fmt::format("sweep {} -o {}", (s.dir() / "bad.yaml").string(), out.string())).exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(out / "points"));
}

TEST(Sweep, KilledAndRerunGivesTheSameTable) {
  Scratch s;
  write_small_sweep(s);
  const std::string sweep = (s.dir() / "sweep.yaml").string();
  ASSERT_EQ(run_cli(fmt::format("sweep {} -j 2 -o {}", sweep, (s.dir() / "whole").string())).exit_code, 0);
  // Start the same sweep, kill it (and with it its simulations) once some points are done, run it again.
  const std::string cmd = fmt::format("'{}' sweep {} -j 1 -o {} > /dev/null 2>&1 & echo $!", FRAMESIM_BINARY, sweep,
                                      (s.dir() / "killed").string());
  FILE* pipe = ::popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  int pid = 0;
  ASSERT_EQ(std::fscanf(pipe, "%d", &pid), 1);
  ::pclose(pipe);
  const auto points = s.dir() / "killed" / "points";
  for (int i = 0; i < 600; ++i) {
    std::size_t n = 0;
    if (std::filesystem::exists(points))
      for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(points)) ++n;
    if (n >= 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(std::filesystem::exists(s.dir() / "killed" / "results.csv"));
  ASSERT_EQ(run_cli(fmt::format("sweep {} -j 2 -o {}", sweep, (s.dir() / "killed").string())).exit_code, 0);
  EXPECT_EQ(framesim::core::read_file(s.dir() / "killed" / "results.csv"),
            framesim::core::read_file(s.dir() / "whole" / "results.csv"));
  EXPECT_EQ(framesim::core::read_file(s.dir() / "killed" / "results.json"),
            framesim::core::read_file(s.dir() / "whole" / "results.json"));
}

TEST(Sweep, ShardsMergeIntoTheLocalTable) {
  Scratch s;
  write_small_sweep(s);
  const std::string sweep = (s.dir() / "sweep.yaml").string();
  ASSERT_EQ(run_cli(fmt::format("sweep {} -j 2 -o {}", sweep, (s.dir() / "local").string())).exit_code, 0);
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(
        run_cli(fmt::format("sweep {} --shard {}/3 -o {}", sweep, i, (s.dir() / fmt::format("shard{}", i)).string()))
            .exit_code,
        0);
  EXPECT_FALSE(std::filesystem::exists(s.dir() / "shard0" / "results.csv"));  // a shard alone is incomplete
  ASSERT_EQ(run_cli(fmt::format("merge {} {} {} -o {}", (s.dir() / "shard0").string(), (s.dir() / "shard1").string(),
                                (s.dir() / "shard2").string(), (s.dir() / "merged").string()))
                .exit_code,
            0);
  EXPECT_EQ(framesim::core::read_file(s.dir() / "merged" / "results.csv"),
            framesim::core::read_file(s.dir() / "local" / "results.csv"));
  // An incomplete merge says what is missing.
  EXPECT_EQ(
      run_cli(fmt::format("merge {} -o {}", (s.dir() / "shard0").string(), (s.dir() / "partial").string())).exit_code,
      2);
}

TEST(Sweep, SlurmJobArrayScript) {
  Scratch s;
  write_small_sweep(s);
  ASSERT_EQ(run_cli(fmt::format("sweep {} --emit slurm -o {}", (s.dir() / "sweep.yaml").string(),
                                (s.dir() / "out").string()))
                .exit_code,
            0);
  const std::string script = framesim::core::read_file(s.dir() / "out" / "sweep.sbatch");
  EXPECT_NE(script.find("#SBATCH --array=0-11"), std::string::npos) << script;
  EXPECT_NE(script.find("sweep "), std::string::npos);
  EXPECT_NE(script.find("shard-${SLURM_ARRAY_TASK_ID}"), std::string::npos);
}

TEST(Sweep, AnswersArePareto) {
  Scratch s;
  write_small_sweep(s);
  ASSERT_EQ(run_cli(fmt::format("sweep {} -j 2 -o {}", (s.dir() / "sweep.yaml").string(), (s.dir() / "out").string()))
                .exit_code,
            0);
  const auto j = nlohmann::json::parse(framesim::core::read_file(s.dir() / "out" / "results.json"));
  ASSERT_EQ(j["points"].size(), 12u);
  const auto& points = j["points"];
  // No point on the front is dominated by any point: no worse on both within the tolerance, better on one
  // by more than it.
  const double tol = j["tie_tolerance"].get<double>();
  EXPECT_GT(tol, 0);
  for (const auto& f : j["pareto"]) {
    const auto& a = points[f.get<std::size_t>()]["metrics"];
    const double pa = a["p99_s"].get<double>(), ea = a["energy_mean_J"].get<double>();
    for (const auto& b : points) {
      const double pb = b["metrics"]["p99_s"].get<double>(), eb = b["metrics"]["energy_mean_J"].get<double>();
      const bool dominates = pb <= pa * (1 + tol) && eb <= ea * (1 + tol) && (pb < pa * (1 - tol) || eb < ea * (1 - tol));
      EXPECT_FALSE(dominates) << f << " dominated by " << b["index"];
    }
  }
  // Every point off the front is dominated by one on it or beside it.
  std::set<std::size_t> front;
  for (const auto& f : j["pareto"]) front.insert(f.get<std::size_t>());
  for (const auto& b : points) {
    if (front.count(b["index"].get<std::size_t>())) continue;
    const double pb = b["metrics"]["p99_s"].get<double>(), eb = b["metrics"]["energy_mean_J"].get<double>();
    bool dominated = false;
    for (const auto& a : points) {
      const double pa = a["metrics"]["p99_s"].get<double>(), ea = a["metrics"]["energy_mean_J"].get<double>();
      dominated = dominated || (pa <= pb * (1 + tol) && ea <= eb * (1 + tol) && (pa < pb * (1 - tol) || ea < eb * (1 - tol)));
    }
    EXPECT_TRUE(dominated) << b["index"] << " is off the front but nothing dominates it";
  }
  EXPECT_TRUE(j["sensitivity"].contains("networks.net.precision"));
  EXPECT_TRUE(std::filesystem::exists(s.dir() / "out" / "pareto.svg"));
}
