// Sweeps: point expansion (grid, zip, Latin hypercube), a sweep end to end with its Pareto front against one
// computed here by brute force over results.csv, nothing lost or repeated when a sweep is killed mid-way and
// rerun, shards merged into the same table as one local run, and the Slurm script.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "config/scenario.hpp"
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
    const double bw =
        *framesim::core::parse_quantity(p.overrides[0].value_yaml, framesim::core::Dimension::BytesPerSecond).value;
    const double rate =
        *framesim::core::parse_quantity(p.overrides[1].value_yaml, framesim::core::Dimension::Hertz).value;
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
  // Start the same sweep on one process, SIGKILL it (and with it its simulation) as soon as its first point
  // file appears, run it again. A point takes about half a second and the poll is every 5 ms, so the kill lands
  // mid-sweep: some points finished, not all (asserted, so a kill that came too early or too late fails).
  const std::string cmd = fmt::format("'{}' sweep {} -j 1 -o {} > /dev/null 2>&1 & echo $!", FRAMESIM_BINARY, sweep,
                                      (s.dir() / "killed").string());
  FILE* pipe = ::popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  int pid = 0;
  ASSERT_EQ(std::fscanf(pipe, "%d", &pid), 1);
  ::pclose(pipe);
  const auto points = s.dir() / "killed" / "points";
  auto finished = [&] {  // NNNNNN.json; a point being written is NNNNNN.json.tmp.PID
    std::size_t n = 0;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(points, ec); !ec && it != std::filesystem::directory_iterator();
         it.increment(ec))
      n += it->path().extension() == ".json";
    return n;
  };
  for (int i = 0; i < 12000 && finished() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::size_t done_when_killed = finished();
  EXPECT_GT(done_when_killed, 0u);
  EXPECT_LT(done_when_killed, 12u);
  EXPECT_FALSE(std::filesystem::exists(s.dir() / "killed" / "results.csv"));
  std::map<std::filesystem::path, std::filesystem::file_time_type> before;
  for (const auto& e : std::filesystem::directory_iterator(points))
    if (e.path().extension() == ".json") before[e.path()] = e.last_write_time();
  ASSERT_EQ(run_cli(fmt::format("sweep {} -j 2 -o {}", sweep, (s.dir() / "killed").string())).exit_code, 0);
  EXPECT_EQ(finished(), 12u);
  for (const auto& [file, written] : before)  // the rerun kept the finished points, it did not run them again
    EXPECT_EQ(std::filesystem::last_write_time(file), written) << file;
  EXPECT_EQ(framesim::core::read_file(s.dir() / "killed" / "results.csv"),
            framesim::core::read_file(s.dir() / "whole" / "results.csv"));
  EXPECT_EQ(framesim::core::read_file(s.dir() / "killed" / "results.json"),
            framesim::core::read_file(s.dir() / "whole" / "results.json"));
}

TEST(Sweep, APointRunInTheSweepsChildIsTheCommandLineRun) {
  // A point runs in a child forked from the sweep process (sweep_pool.hpp), which parsed the points' files before
  // forking; the oracle is `framesim run` with the point's overrides as a process of its own, which shares none of
  // that. Every file of the kept run folder is the same, byte for byte, summary.json and its provenance included.
  Scratch s;
  write_small_sweep(s);
  const auto out = s.dir() / "sweep";
  ASSERT_EQ(run_cli(fmt::format("sweep {} -j 2 --keep-runs -o {}", (s.dir() / "sweep.yaml").string(), out.string()))
                .exit_code,
            0);
  for (const int point : {0, 7}) {
    const auto result =
        nlohmann::json::parse(framesim::core::read_file(out / "points" / fmt::format("{:06}.json", point)));
    std::string sets;
    for (const auto& o : result["overrides"])
      sets += fmt::format(" --set '{}={}'", o["path"].get<std::string>(), o["value"].get<std::string>());
    const auto alone = s.dir() / fmt::format("alone{}", point);
    const auto r =
        run_cli(fmt::format("run {} -o {} -q --json{}", (s.dir() / "scenario.yaml").string(), alone.string(), sets));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto kept = out / "runs" / fmt::format("{:06}", point);
    std::size_t compared = 0;
    // The sweep's child also writes its progress to a file of the sweep's (`--progress-file`) and prints only the
    // figures the sweep keeps (`--point-metrics` where the oracle has `--json`), which the command line in
    // report.html shows: the only differences allowed.
    auto without_progress_file = [](std::string text) {
      const std::string option = " --progress-file ";
      if (const auto at = text.find(option); at != std::string::npos)
        text.erase(at, text.find(' ', at + option.size()) - at);
      const std::string printing = " --point-metrics";
      if (const auto at = text.find(printing); at != std::string::npos) text.replace(at, printing.size(), " --json");
      return text;
    };
    for (const auto& e : std::filesystem::directory_iterator(alone)) {
      if (e.path().filename() == "summary.json") continue;  // compared below, without the output folder's name
      EXPECT_EQ(without_progress_file(framesim::core::read_file(kept / e.path().filename())),
                framesim::core::read_file(e.path()))
          << e.path().filename();
      ++compared;
    }
    EXPECT_GT(compared, 5u);
    auto summary = [](const std::filesystem::path& f) {
      auto j = nlohmann::json::parse(framesim::core::read_file(f));
      j["provenance"].erase("command_line");  // the sweep passes the scenario as its sweep file names it
      return j;
    };
    EXPECT_EQ(summary(kept / "summary.json"), summary(alone / "summary.json")) << "point " << point;
    // The figures the sweep kept of the point are those of the command line's summary.json, looked up here by
    // their keys in that file (not through the code that picks them).
    const auto oracle = nlohmann::json::parse(framesim::core::read_file(alone / "summary.json"));
    const auto& all = oracle["windows"]["all"];
    const auto& metrics = result["metrics"];
    EXPECT_EQ(metrics["p50_s"], all["latency_s"]["p50"]) << "point " << point;
    EXPECT_EQ(metrics["p99_s"], all["latency_s"]["p99"]) << "point " << point;
    EXPECT_EQ(metrics["p99_9_s"], all["latency_s"]["p99_9"]) << "point " << point;
    EXPECT_EQ(metrics["max_s"], all["latency_s"]["max"]) << "point " << point;
    EXPECT_EQ(metrics["p99_count"], all["latency_s"]["count"]) << "point " << point;
    EXPECT_EQ(metrics["p99_ci_lo_s"], all["latency_s"]["ci"]["p99"][0]) << "point " << point;
    EXPECT_EQ(metrics["p99_ci_hi_s"], all["latency_s"]["ci"]["p99"][1]) << "point " << point;
    EXPECT_EQ(metrics["frames"], all["frames"]) << "point " << point;
    EXPECT_EQ(metrics["missed"], all["missed"]) << "point " << point;
    EXPECT_EQ(metrics["dropped"], all["dropped"]) << "point " << point;
    EXPECT_EQ(metrics["miss_rate"], all["miss_rate"]) << "point " << point;
    EXPECT_EQ(metrics["mean_power_W"], oracle["energy"]["mean_power_W"]) << "point " << point;
    EXPECT_EQ(metrics["energy_mean_J"], oracle["energy"]["per_frame_J"]["mean"]) << "point " << point;
    EXPECT_EQ(metrics["deadline_s"], oracle["scenario"]["deadline_s"]) << "point " << point;
  }
}

// Ctrl-C (SIGINT to the sweep) as soon as its first point is done: a message saying the finished points are kept
// and how to resume; the resumed sweep leaves no work folder and does not run the finished point again.
TEST(Sweep, SigintKeepsTheFinishedPointsAndSaysSo) {
  Scratch s;
  write_small_sweep(s);
  const auto out = s.dir() / "interrupted";
  const std::string cmd = fmt::format("'{}' sweep {} -q -j 1 -o {} > /dev/null 2> {} & echo $!", FRAMESIM_BINARY,
                                      (s.dir() / "sweep.yaml").string(), out.string(), (s.dir() / "err").string());
  FILE* pipe = ::popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  int pid = 0;
  ASSERT_EQ(std::fscanf(pipe, "%d", &pid), 1);
  ::pclose(pipe);
  const auto first_point = out / "points" / "000000.json";
  for (int i = 0; i < 12000 && !std::filesystem::exists(first_point); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(std::filesystem::exists(first_point));
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  // Not our child (the shell's): wait for it to go, then read what it said.
  for (int i = 0; i < 2000 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_NE(::kill(pid, 0), 0) << "the sweep did not stop on SIGINT";
  EXPECT_EQ(framesim::core::read_file(s.dir() / "err"),
            fmt::format("framesim: interrupted by SIGINT; the points finished so far are kept in {}: the same "
                        "command resumes\n",
                        (out / "points").string()));
  EXPECT_FALSE(std::filesystem::exists(out / "results.csv"));
  ASSERT_TRUE(std::filesystem::exists(first_point));
  // The work folder is removed as the sweep stops, but a simulation in flight may still write into it until it
  // dies with its parent: the resumed sweep removes what is left, and keeps the point already done.
  const auto written = std::filesystem::last_write_time(first_point);
  ASSERT_EQ(run_cli(fmt::format("sweep {} -q -j 2 -o {}", (s.dir() / "sweep.yaml").string(), out.string())).exit_code,
            0);
  EXPECT_FALSE(std::filesystem::exists(out / "work"));
  EXPECT_EQ(std::filesystem::last_write_time(first_point), written);
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
  // results.json too, but for the command that wrote it: the merge carries the input files (names, SHA-256,
  // sizes) the shards recorded, as the local sweep records its own.
  auto without_command = [&](const char* folder) {
    auto j = nlohmann::json::parse(framesim::core::read_file(s.dir() / folder / "results.json"));
    j["provenance"].erase("command_line");
    return j;
  };
  const auto local = without_command("local");
  EXPECT_FALSE(local["provenance"]["inputs"].empty());
  EXPECT_EQ(without_command("merged"), local);
  // An incomplete merge says what is missing.
  EXPECT_EQ(
      run_cli(fmt::format("merge {} -o {}", (s.dir() / "shard0").string(), (s.dir() / "partial").string())).exit_code,
      2);
}

// Shards run from different input files are not merged into one table: shard 0 ran, then the scenario was edited
// (a comment: the points' own settings are unchanged), then shard 1 ran.
TEST(Sweep, ShardsRunFromDifferentInputsAreNotMerged) {
  Scratch s;
  write_small_sweep(s);
  const std::string sweep = (s.dir() / "sweep.yaml").string();
  ASSERT_EQ(run_cli(fmt::format("sweep {} --shard 0/2 -o {}", sweep, (s.dir() / "shard0").string())).exit_code, 0);
  s.write("scenario.yaml", framesim::core::read_file(s.dir() / "scenario.yaml") + "# edited between the shards\n");
  ASSERT_EQ(run_cli(fmt::format("sweep {} --shard 1/2 -o {}", sweep, (s.dir() / "shard1").string())).exit_code, 0);
  const auto r = run_cli(fmt::format("merge {} {} -o {}", (s.dir() / "shard0").string(), (s.dir() / "shard1").string(),
                                     (s.dir() / "merged").string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("were run from different inputs: " + (s.dir() / "scenario.yaml").string() + " differs"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(s.dir() / "merged")) << "nothing is written";
}

// A shard's provenance.json that is not JSON stops the merge at its line and column, with nothing written.
TEST(Sweep, ABrokenShardProvenanceIsNamedAtItsLineAndColumn) {
  Scratch s;
  write_small_sweep(s);
  const std::string sweep = (s.dir() / "sweep.yaml").string();
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(
        run_cli(fmt::format("sweep {} --shard {}/2 -o {}", sweep, i, (s.dir() / fmt::format("shard{}", i)).string()))
            .exit_code,
        0);
  const auto broken = s.write("shard1/provenance.json", "{\"inputs\": [");
  const auto r = run_cli(fmt::format("merge {} {} -o {}", (s.dir() / "shard0").string(), (s.dir() / "shard1").string(),
                                     (s.dir() / "merged").string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(broken.string() + ":1:13: not valid JSON"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(s.dir() / "merged")) << "nothing is written";
}

TEST(Sweep, SlurmJobArrayScript) {
  Scratch s;
  write_small_sweep(s);
  ASSERT_EQ(
      run_cli(fmt::format("sweep {} --emit slurm -o {}", (s.dir() / "sweep.yaml").string(), (s.dir() / "out").string()))
          .exit_code,
      0);
  const std::string script = framesim::core::read_file(s.dir() / "out" / "sweep.sbatch");
  EXPECT_NE(script.find("#SBATCH --array=0-11"), std::string::npos) << script;
  EXPECT_NE(script.find("sweep "), std::string::npos);
  EXPECT_NE(script.find("shard-${SLURM_ARRAY_TASK_ID}"), std::string::npos);
}

namespace {

/// results.csv read here, apart from framesim's CSV code: a header line, then one row per point; a field is
/// bare or in double quotes (a quote inside doubled). Rows as column -> text.
std::vector<std::map<std::string, std::string>> read_results_csv(const std::string& text) {
  std::vector<std::vector<std::string>> lines(1, std::vector<std::string>(1));
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted && c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
      lines.back().back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (!quoted && c == ',') {
      lines.back().emplace_back();
    } else if (!quoted && c == '\n') {
      lines.emplace_back(1);
    } else {
      lines.back().back() += c;
    }
  }
  if (lines.back().size() == 1 && lines.back()[0].empty()) lines.pop_back();
  std::vector<std::map<std::string, std::string>> rows;
  for (std::size_t r = 1; r < lines.size(); ++r) {
    EXPECT_EQ(lines[r].size(), lines[0].size()) << "row " << r;
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < lines[0].size() && c < lines[r].size(); ++c) row[lines[0][c]] = lines[r][c];
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

TEST(Sweep, TheParetoFrontIsExactlyTheNonDominatedPoints) {
  Scratch s;
  write_small_sweep(s);
  ASSERT_EQ(run_cli(fmt::format("sweep {} -j 2 -o {}", (s.dir() / "sweep.yaml").string(), (s.dir() / "out").string()))
                .exit_code,
            0);
  // The oracle: the front computed here by brute force over results.csv, with the definition of
  // scenarios/README.md: a point is on the front when no other point is no worse on both p99 and energy per frame
  // within 1 % and better on one by more than 1 %.
  const auto rows = read_results_csv(framesim::core::read_file(s.dir() / "out" / "results.csv"));
  ASSERT_EQ(rows.size(), 12u);
  std::vector<double> p99(rows.size()), energy(rows.size());
  std::vector<std::size_t> index(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    index[i] = std::stoul(rows[i].at("index"));
    p99[i] = std::stod(rows[i].at("p99_s"));
    energy[i] = std::stod(rows[i].at("energy_mean_J"));
    ASSERT_TRUE(std::isfinite(p99[i]) && std::isfinite(energy[i])) << "point " << index[i];
  }
  const double tol = 0.01;
  std::set<std::size_t> expected;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    bool dominated = false;
    for (std::size_t j = 0; j < rows.size(); ++j)
      dominated = dominated || (p99[j] <= p99[i] * (1 + tol) && energy[j] <= energy[i] * (1 + tol) &&
                                (p99[j] < p99[i] * (1 - tol) || energy[j] < energy[i] * (1 - tol)));
    if (!dominated) expected.insert(index[i]);
  }
  // This table has a front (the fastest point is dominated by nobody here): an empty answer cannot pass.
  ASSERT_FALSE(expected.empty());
  const auto fastest = std::min_element(p99.begin(), p99.end()) - p99.begin();
  const auto cheapest = std::min_element(energy.begin(), energy.end()) - energy.begin();

  const auto j = nlohmann::json::parse(framesim::core::read_file(s.dir() / "out" / "results.json"));
  EXPECT_DOUBLE_EQ(j["tie_tolerance"].get<double>(), tol);
  std::set<std::size_t> front;
  std::vector<double> front_p99;
  for (const auto& f : j["pareto"]) {
    front.insert(f.get<std::size_t>());
    front_p99.push_back(j["points"][f.get<std::size_t>()]["metrics"]["p99_s"].get<double>());
  }
  EXPECT_EQ(front, expected);  // complete (nothing missing) and sound (nothing extra)
  EXPECT_EQ(front.size(), j["pareto"].size()) << "a point listed twice";
  EXPECT_TRUE(std::is_sorted(front_p99.begin(), front_p99.end())) << "the front comes by increasing p99";
  // The two ends of the front, within the tie tolerance of the extremes of the table.
  EXPECT_LE(front_p99.front(), p99[static_cast<std::size_t>(fastest)] * (1 + tol));
  bool cheapest_end = false;
  for (std::size_t f : front) {
    const auto it = std::find(index.begin(), index.end(), f);
    ASSERT_NE(it, index.end());
    cheapest_end = cheapest_end || energy[static_cast<std::size_t>(it - index.begin())] <=
                                       energy[static_cast<std::size_t>(cheapest)] * (1 + tol);
  }
  EXPECT_TRUE(cheapest_end);
  EXPECT_TRUE(j["sensitivity"].contains("networks.net.precision"));
  EXPECT_TRUE(std::filesystem::exists(s.dir() / "out" / "pareto.svg"));
}

TEST(Sweep, ANetworkFileReadAgainInOneProcessIsReadAsItIsNow) {
  // A sweep's points take a network file that was read cleanly before, unchanged and not overridden, as it was read
  // then (scenario_files.cpp). The oracle is the file as last written: a second load after rewriting it, and a load
  // overriding one of its keys, see what the file (or the override) says now, not the first read.
  Scratch s;
  auto write_network = [&](int convs) {
    std::string text = "name: chain\nprecision: fp16\ninputs:\n  image: [1, 8, 16, 16]\nlayers:\n";
    for (int i = 0; i < convs; ++i)
      text += fmt::format("  - {{name: conv{}, op: conv2d, out_channels: 8, kernel: 3, padding: 1}}\n", i);
    s.write("net.yaml", text);
  };
  write_network(2);
  s.write("scenario.yaml", fmt::format(R"(name: chain
hardware: {}
networks: {{net: net.yaml}}
duration: "1 s"
sensors:
  camera: {{rate: "30 Hz"}}
stages:
  model: {{unit: gpu, inputs: [camera], network: net}}
)",
                                       source_path("hardware/seed_reference.yaml")));
  const auto scenario = s.dir() / "scenario.yaml";
  auto load = [&](const std::vector<framesim::config::Override>& overrides = {}) {
    return framesim::config::load_scenario(scenario, overrides).networks.at(0).network;
  };
  EXPECT_EQ(load().layers.size(), 2u);
  EXPECT_EQ(load().layers.size(), 2u);  // the same file again: the same network
  write_network(3);
  EXPECT_EQ(load().layers.size(), 3u);  // rewritten: read as it is now
  const auto renamed = load({{"network.net.layers[1].name", "middle", {"--set", 0, 0}}});
  ASSERT_EQ(renamed.layers.size(), 3u);
  EXPECT_EQ(renamed.layers[1].name, "middle");  // overridden: the override holds
  EXPECT_EQ(load().layers[1].name, "conv1");    // and the next load without it has the file's name again
}
