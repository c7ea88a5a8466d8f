// The fluid path (framesim's own model of SimGrid's sharing, fluid_executor.cpp) against the all-SimGrid path
// (`--exact`, one activity per kernel), both driven by the same dispatcher: every output file (the CSVs,
// summary.json and trace.json) of every shipped scenario, every example, and adversarial ones (contention that
// starts and ends mid-kernel on three units, throttling mid-run, background steps mid-kernel, Little's-law ports
// reloaded every tick, variability) must agree. The oracle is SimGrid's own solver.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "engine/run_support.hpp"
#include "test_support.hpp"

using framesim::testing::read_table;
using framesim::testing::run_framesim;
using framesim::testing::RunResult;
using framesim::testing::Scratch;
using framesim::testing::source_path;

namespace {

/// Every number within 1e-9 relative, every text equal. One allowance, stated: the last row of timeseries.csv
/// is a partial interval (the run ends when the pipeline drains), and SimGrid's clock drifts by ~1e-11 s from
/// exact sums of its events (surf/precision), which over a 2 ms interval moves per-second rates by ~1e-8.
void expect_same_outputs(const std::filesystem::path& x, const std::filesystem::path& y, const std::string& what) {
  for (const char* file : {"frames.csv", "stages.csv", "timeseries.csv", "kernels.csv", "tasks.csv"}) {
    const auto a = read_table(x / file);
    const auto b = read_table(y / file);
    ASSERT_EQ(a.rows.size(), b.rows.size()) << what << ": " << file;
    double worst = 0;
    std::string where;
    for (std::size_t r = 0; r < a.rows.size(); ++r) {
      const bool partial = std::string(file) == "timeseries.csv" && r + 1 == a.rows.size();
      for (const auto& [column, text] : b.rows[r]) {
        const std::string& other = a.rows[r].at(column);
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0') {
          EXPECT_EQ(other, text) << what << ": " << file << " row " << r << " " << column;
          continue;
        }
        const double rel = std::fabs(std::stod(other) - v) / std::max(std::fabs(v), 1e-300);
        const double allowed = partial && column != "time_s" ? 1e-6 : 1e-9;
        if (v == 0 && std::stod(other) == 0) continue;
        if (rel / allowed > worst) {
          worst = rel / allowed;
          where = fmt::format("row {} {}: {} vs {}", r, column, other, text);
        }
      }
    }
    EXPECT_LE(worst, 1.0) << what << ": " << file << " worst " << where;
  }
}

/// Every number of two JSON documents within 1e-9 relative (1e-12 absolute near 0), every other value equal; what
/// differs by design is left out: the provenance (command line), how the run was made (activities, the path, wall
/// time).
void expect_same_json(const nlohmann::json& a, const nlohmann::json& b, const std::string& where, int& bad) {
  if (a.is_object() && b.is_object()) {
    for (const auto& [key, value] : a.items()) {
      if (key == "provenance" || key == "activities" || key == "fast_path" || key.find("wall") != std::string::npos)
        continue;
      if (!b.contains(key)) {
        if (bad++ < 5) ADD_FAILURE() << where << "." << key << " missing";
        continue;
      }
      expect_same_json(value, b[key], where + "." + key, bad);
    }
    return;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) {
      if (bad++ < 5) ADD_FAILURE() << where << ": " << a.size() << " vs " << b.size() << " elements";
      return;
    }
    for (std::size_t i = 0; i < a.size(); ++i) expect_same_json(a[i], b[i], fmt::format("{}[{}]", where, i), bad);
    return;
  }
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    if (std::fabs(x - y) > 1e-12 + 1e-9 * std::max(std::fabs(x), std::fabs(y)) && bad++ < 5)
      ADD_FAILURE() << where << ": " << x << " vs " << y;
    return;
  }
  if (a != b && bad++ < 5) ADD_FAILURE() << where << ": " << a.dump() << " vs " << b.dump();
}

void expect_same_json_files(const std::filesystem::path& x, const std::filesystem::path& y, const std::string& what) {
  for (const char* file : {"summary.json", "trace.json"}) {
    std::ifstream fa(x / file), fb(y / file);
    ASSERT_TRUE(fa && fb) << what << ": " << file;
    int bad = 0;
    expect_same_json(nlohmann::json::parse(fa), nlohmann::json::parse(fb), what + ": " + file, bad);
    EXPECT_EQ(bad, 0) << what << ": " << file;
  }
}

/// Runs `scenario` both ways with `extra` options and compares; returns the fast run.
RunResult both_ways(const std::filesystem::path& scenario, const std::string& extra, Scratch& s,
                    const std::string& name) {
  const auto fast = run_framesim(scenario, s.dir() / (name + "-fast"), extra);
  const auto exact = run_framesim(scenario, s.dir() / (name + "-exact"), extra + " --exact");
  EXPECT_EQ(fast.exit_code, 0) << fast.output;
  EXPECT_EQ(exact.exit_code, 0) << exact.output;
  if (fast.exit_code == 0 && exact.exit_code == 0) {
    EXPECT_TRUE(fast.summary["run"]["fast_path"].get<bool>()) << name << ": every scenario takes the fluid path";
    EXPECT_FALSE(exact.summary["run"]["fast_path"].get<bool>());
    EXPECT_EQ(fast.summary["run"]["activities"], 0) << name << ": no SimGrid activity per kernel on the fluid path";
    expect_same_outputs(s.dir() / (name + "-fast"), s.dir() / (name + "-exact"), name);
    expect_same_json_files(s.dir() / (name + "-fast"), s.dir() / (name + "-exact"), name);
  }
  return fast;
}

}  // namespace

TEST(FastPath, EveryShippedScenarioAgreesWithTheExactPath) {
  Scratch s;
  int compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source_path("scenarios"))) {
    if (entry.path().extension() != ".yaml") continue;
    both_ways(entry.path(), "--duration 4s", s, entry.path().stem().string());
    ++compared;
  }
  for (const auto& entry : std::filesystem::directory_iterator(source_path("scenarios/bench"))) {
    if (entry.path().extension() != ".yaml") continue;
    both_ways(entry.path(), "--duration 4s", s, "bench-" + entry.path().stem().string());
    ++compared;
  }
  EXPECT_GE(compared, 10);
}

// Every example scenario (the ones whose header derives `# expect:` lines), both ways, every output.
TEST(FastPath, EveryExampleAgreesWithTheExactPath) {
  Scratch s;
  int compared = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(source_path("examples"))) {
    if (entry.path().extension() != ".yaml") continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("# expect:") == std::string::npos) continue;
    both_ways(entry.path(), "", s, entry.path().parent_path().filename().string() + "-" + entry.path().stem().string());
    ++compared;
  }
  EXPECT_GE(compared, 25);
}

TEST(FastPath, ThrottlingMidRunAgreesWithTheExactPath) {
  // The reference with a trip just above ambient: the governor steps the clocks down and up mid-kernel.
  Scratch s;
  const auto r = both_ways(
      source_path("scenarios/bench/reference.yaml"),
      "--duration 8s --set 'hardware.thermal.trip=25.05 C' --set 'hardware.thermal.release=25.03 C'", s, "throttled");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.summary["run"]["fast_path"].get<bool>());
  EXPECT_GT(r.summary["thermal"]["throttled_s"].get<double>(), 2.0);
}

TEST(FastPath, LoadedPortsAndBackgroundStepsAgreeWithTheExactPath) {
  // Two units with Little's-law caps reloaded at every tick by the other's traffic, a third without, a background
  // profile stepping every 7 ms (mid-kernel), variability on every stage.
  Scratch s;
  s.write("hw.yaml", R"(name: ports
memory:
  dram: {kind: dram, capacity: "8 GiB", bandwidth: "20 GB/s", latency: "300 ns", energy_per_byte: "80 pJ"}
units:
  a: {kind: gpu, peak: {fp32: "2 TFLOP/s"}, memory: [dram], outstanding: "2 KiB", dispatch_overhead: "9 us",
      energy_per_op: {fp32: "1 pJ"}, static_power: "1 W"}
  b: {kind: npu, peak: {fp32: "1 TFLOP/s"}, memory: [dram], outstanding: "4 KiB", energy_per_op: {fp32: "0.5 pJ"}}
  c: {kind: cpu, cores: 4, peak: {fp32: "200 GFLOP/s"}, memory: [dram], dispatch_overhead: "20 us"}
)");
  std::string profile = "time_s,rate\n";
  for (int i = 0; i < 200; ++i) profile += fmt::format("{},{} GB/s\n", i * 0.007, (i % 5) * 1.5);
  s.write("traffic.csv", profile);
  const auto scenario = s.write("s.yaml", fmt::format(R"(name: ports
hardware: hw.yaml
networks:
  big: {{file: {}, precision: fp32}}
  small: {{file: {}, precision: fp32}}
duration: "1.2 s"
deadline: "200 ms"
sample_period: "10 ms"
sensors:
  camera: {{rate: "20 Hz", jitter: {{distribution: normal, mean: "0 ms", stddev: "1 ms"}}}}
stages:
  detect: {{unit: a, inputs: [camera], network: big, variability: {{distribution: lognormal, mean: 1, sigma: 0.2}}}}
  depth: {{unit: b, inputs: [camera], network: small, variability: {{distribution: uniform, min: 0.5, max: 1.5}}}}
  track: {{unit: c, cores: 2, inputs: [detect], work: {{ops: "40 MFLOP", bytes: {{dram: "30 MB"}}}}}}
background:
  display: {{memory: dram, profile: traffic.csv}}
)",
                                                      source_path("scenarios/networks/resnet18.yaml"),
                                                      source_path("scenarios/networks/mobilenet_v2.yaml")));
  const auto r = both_ways(scenario, "", s, "ports");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.summary["run"]["fast_path"].get<bool>());
}
