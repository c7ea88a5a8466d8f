// framesim map's explanation and the dimensions of its space beyond units and splits, each against numbers
// worked by hand in the test's comment: the explanation reads the tail of the window the metric judges (the
// sustained window), stage priorities searched (clock caps: map_caps_test.cpp).
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/files.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
namespace fst = framesim::testing;
using nlohmann::json;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

const json* row_of(const json& map, const std::string& mapping) {
  for (const auto& r : map["mappings"])
    if (r["mapping"] == mapping) return &r;
  return nullptr;
}

std::string why_of(const json& map) {
  std::string t;
  for (const auto& l : map["why"]) t += l.get<std::string>() + "\n";
  return t;
}

/// examples/11_throttling's SoC (one lumped thermal node, unit a 5 W at 1 GHz, 2 W at 0.5 GHz) with a second
/// unit b that has no operating points (it never throttles) and a priority scheduler on a.
void write_throttling(const fst::Scratch& s) {
  s.write("hardware.yaml",
          "name: throttled-a-steady-b\n"
          "memory:\n  dram: {kind: dram, capacity: \"8 GiB\", bandwidth: \"10 GB/s\", latency: \"100 ns\"}\n"
          "units:\n"
          "  a:\n    kind: npu\n    peak: {fp32: \"1 TFLOP/s\"}\n    memory: [dram]\n    scheduler: priority\n"
          "    static_power: \"5 W\"\n    operating_points:\n"
          "      - {frequency: \"1 GHz\", voltage: \"1 V\"}\n"
          "      - {frequency: \"0.5 GHz\", voltage: \"0.8 V\", static_power: \"2 W\"}\n"
          "  b: {kind: npu, peak: {fp32: \"1 TFLOP/s\"}, memory: [dram]}\n"
          "thermal: {ambient: \"25 C\", resistance: \"10 C/W\", capacitance: \"0.05 J/C\", trip: \"50 C\", release: "
          "\"40 C\", governor: {period: \"50 ms\", policy: step}}\n");
  s.write("scenario.yaml",
          "name: cold-burst-hot-throttle\nhardware: hardware.yaml\nduration: \"2 s\"\ndeadline: \"100 ms\"\n"
          "windows: {cold: \"0.25 s\", sustained: \"0.95 s\"}\nsensors:\n  camera: {rate: \"10 Hz\"}\n"
          "stages:\n  model: {unit: a, inputs: [camera], work: {time: \"10 ms\"}}\n"
          "tasks:\n  burst: {rate: \"0.4 Hz\", phase: \"0.1 s\", unit: a, priority: 10, work: {time: \"30 ms\"}}\n");
}

}  // namespace

// By hand, on a (examples/11_throttling/scenario.yaml's derivation, the same thermal node and static powers,
// whatever runs where): the governor steps a down to 0.5 GHz at 0.35 s and it stays there, so frames captured
// from 0.4 s take 20 ms = the 10 ms floor + 10 ms of throttling. The burst task (priority 10, released at 0.1 s
// and next at 2.6 s, after the run) takes a first at 0.1 s: frame 1 queues 30 ms, 40 ms end to end, the run's
// worst frame. So the whole run's tail (20 frames, nearest-rank p99 = the 20th = 40 ms) is frame 1 alone,
// queueing 30 ms and no throttling; the sustained window (captures in [1.05 s, 2 s): 1.1 .. 1.9 s, 9 frames,
// each 20 ms) has p99 20 ms and all 9 in its tail, throttling 10 ms each and no queueing. On b (one clock, no
// burst): 10 ms every frame. The metric (sustained p99) picks b, 10 ms against 20 ms, and the reason is the
// throttling in the sustained window; the whole run's tail would have named queueing.
TEST(MapExplain, TheWhyReadsTheSustainedWindowTheMetricJudges) {
  fst::Scratch s;
  write_throttling(s);
  const auto run = fst::run_cli("run " + quoted(s.dir() / "scenario.yaml") + " -q -o " + quoted(s.dir() / "run"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json why = json::parse(framesim::core::read_file(s.dir() / "run" / "summary.json"))["why"];
  EXPECT_EQ(why["tail"]["frames"], 1);
  EXPECT_NEAR(why["tail"]["mean_parts"]["queue_s"].get<double>(), 0.030, 1e-12);
  EXPECT_NEAR(why["tail"]["mean_parts"]["throttling_s"].get<double>(), 0, 1e-12);
  EXPECT_EQ(why["sustained_tail"]["frames"], 9);
  EXPECT_NEAR(why["sustained_tail"]["p99_s"].get<double>(), 0.020, 1e-12);
  EXPECT_NEAR(why["sustained_tail"]["mean_parts"]["throttling_s"].get<double>(), 0.010, 1e-12);
  EXPECT_NEAR(why["sustained_tail"]["mean_parts"]["floor_s"].get<double>(), 0.010, 1e-12);
  EXPECT_NEAR(why["sustained_tail"]["mean_parts"]["queue_s"].get<double>(), 0, 1e-12);
  EXPECT_NEAR(why["sustained_tail"]["window_s"][0].get<double>(), 1.05, 1e-12);

  const auto r = fst::run_cli("map " + quoted(s.dir() / "scenario.yaml") + " --units model=a,b --objective p99 -o " +
                              quoted(s.dir() / "map"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json map = json::parse(framesim::core::read_file(s.dir() / "map" / "map.json"));
  ASSERT_TRUE(map["best"].is_number());
  EXPECT_EQ(map["mappings"][map["best"].get<std::size_t>()]["mapping"], "model=b");
  const json* on_a = row_of(map, "model=a");
  ASSERT_NE(on_a, nullptr);
  EXPECT_NEAR((*on_a)["metrics"]["p99_s"].get<double>(), 0.020, 1e-12);
  EXPECT_NEAR((*on_a)["metrics"]["tail"]["mean_parts"]["throttling_s"].get<double>(), 0.010, 1e-12);
  const std::string text = why_of(map);
  EXPECT_NE(text.find("throttling: 10 ms -> 0 s"), std::string::npos) << text;
  EXPECT_EQ(text.find("queueing"), std::string::npos) << text;
}

// Priorities searched. Unit a orders waiting work by priority (scheduler: priority); both stages on it take
// the same camera frame at the same instant. l (3 ms, priority 1) ends a path; h1 (1 ms) feeds h2 (3 ms on b).
// Deadline 4.5 ms. As written (h1 at 0, below l): l runs 0-3 ms (path l: 3 ms), h1 3-4, h2 4-7 ms (path h2:
// 7 ms): a miss. With h1 raised to 2: h1 0-1, h2 1-4 ms (4 ms), l 1-4 ms (4 ms): both within 4.5 ms. The
// static pass does not see priorities: both mappings keep the same bounds, a at 4 ms x 10 Hz = 4 % and the
// longest floor path 1 + 3 = 4 ms, so both are simulated, and the search must take the raised priority.
TEST(MapSpace, RaisesTheStagePriorityThatMeetsTheDeadline) {
  fst::Scratch s;
  s.write("hardware.yaml",
          "name: two-units\n"
          "memory:\n  dram: {kind: dram, capacity: \"8 GiB\", bandwidth: \"10 GB/s\", latency: \"100 ns\"}\n"
          "units:\n  a: {kind: npu, peak: {fp32: \"1 TFLOP/s\"}, memory: [dram], scheduler: priority}\n"
          "  b: {kind: npu, peak: {fp32: \"1 TFLOP/s\"}, memory: [dram]}\n");
  s.write("scenario.yaml",
          "name: priority-map\nhardware: hardware.yaml\nduration: \"1 s\"\ndeadline: \"4.5 ms\"\n"
          "sensors:\n  camera: {rate: \"10 Hz\"}\nstages:\n"
          "  l: {unit: a, inputs: [camera], work: {time: \"3 ms\"}, priority: 1}\n"
          "  h1: {unit: a, inputs: [camera], work: {time: \"1 ms\"}, priority: 0}\n"
          "  h2: {unit: b, inputs: [h1], work: {time: \"3 ms\"}}\n");
  const auto r =
      fst::run_cli("map " + quoted(s.dir() / "scenario.yaml") + " --priorities h1=0,2 -o " + quoted(s.dir() / "map"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json map = json::parse(framesim::core::read_file(s.dir() / "map" / "map.json"));
  EXPECT_EQ(map["static_kept"], 2);
  const json* low = row_of(map, "h1=a p0");
  const json* raised = row_of(map, "h1=a p2");
  ASSERT_NE(low, nullptr);
  ASSERT_NE(raised, nullptr);
  EXPECT_EQ((*low)["metrics"]["static"], (*raised)["metrics"]["static"]);
  EXPECT_NEAR((*low)["metrics"]["static"]["max_utilisation"].get<double>(), 0.04, 1e-12);
  EXPECT_NEAR((*low)["metrics"]["static"]["worst_path_floor_s"].get<double>(), 0.004, 1e-12);
  EXPECT_NEAR((*low)["metrics"]["path_p99_s"]["l"].get<double>(), 0.003, 1e-12);
  EXPECT_NEAR((*low)["metrics"]["path_p99_s"]["h2"].get<double>(), 0.007, 1e-12);
  EXPECT_FALSE((*low)["metrics"]["meets_deadline"].get<bool>());
  EXPECT_NEAR((*raised)["metrics"]["path_p99_s"]["l"].get<double>(), 0.004, 1e-12);
  EXPECT_NEAR((*raised)["metrics"]["path_p99_s"]["h2"].get<double>(), 0.004, 1e-12);
  EXPECT_TRUE((*raised)["metrics"]["meets_deadline"].get<bool>());
  EXPECT_EQ(map["mappings"][map["best"].get<std::size_t>()]["mapping"], "h1=a p2");
  const std::string best = framesim::core::read_file(s.dir() / "map" / "best.yaml");
  EXPECT_NE(best.find("priority: 2"), std::string::npos) << best;
}

// The genetic search against exhaustive enumeration on a space small enough to enumerate: three copies of the
// split example's network on one 50 Hz camera, each on a or b, unsplit or cut at layer 1 (4 options a stage, 64
// mappings, every one within the 40 ms deadline statically). Exhaustive simulates all 64 and gives the optimum;
// the genetic search with a budget of 10 (a population of 2, the two statically best mappings; the scenario as
// written is a baseline) must end on the same mapping with the same p99, a mapping it bred (not a seed of its
// first generation), and a second run with the same seed must simulate the same mappings in the same order.
// Another seed draws other children.
TEST(MapSpace, GeneticFindsTheExhaustiveOptimumWithFewerSimulations) {
  fst::Scratch s;
  const std::string ex = fst::source_path("examples/16_network_split/");
  s.write("scenario.yaml", "name: genetic-small\nhardware: " + ex + "hardware.yaml\nnetworks: {net: " + ex +
                               "network_small_cut.yaml}\nduration: \"1 s\"\ndeadline: \"40 ms\"\n"
                               "sensors:\n  camera: {rate: \"50 Hz\"}\nstages:\n"
                               "  s1: {unit: a, inputs: [camera], network: net}\n"
                               "  s2: {unit: a, inputs: [camera], network: net}\n"
                               "  s3: {unit: a, inputs: [camera], network: net}\n");
  std::string space = " --objective p99";
  for (const char* st : {"s1", "s2", "s3"}) space += std::string(" --units ") + st + "=a,b --splits " + st + "=1";
  auto map_of = [&](const std::string& options, const std::string& out) {
    const auto r =
        fst::run_cli("map " + quoted(s.dir() / "scenario.yaml") + space + options + " -o " + quoted(s.dir() / out));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(framesim::core::read_file(s.dir() / out / "map.json"));
  };
  const json all = map_of(" --strategy exhaustive --budget 100", "exhaustive");
  ASSERT_EQ(all["space_size"].get<double>(), 64);
  ASSERT_EQ(all["simulations"], 64);
  const json& optimum = all["mappings"][all["best"].get<std::size_t>()];

  const json ga = map_of(" --strategy genetic --budget 10 --seed 1", "genetic");
  EXPECT_EQ(ga["simulations"], 10);
  EXPECT_EQ(ga["strategy"], "genetic, seed 1");
  const std::size_t best = ga["best"].get<std::size_t>();
  EXPECT_EQ(ga["mappings"][best]["mapping"], optimum["mapping"]);
  EXPECT_EQ(ga["mappings"][best]["metrics"]["p99_s"], optimum["metrics"]["p99_s"]);
  EXPECT_GE(best, 3u);  // after the scenario as written and the first generation's two

  const json again = map_of(" --strategy genetic --budget 10 --seed 1", "genetic-again");
  const json other = map_of(" --strategy genetic --budget 10 --seed 4", "genetic-other");
  std::vector<std::string> first, second, third;
  for (const auto& r : ga["mappings"]) first.push_back(r["mapping"]);
  for (const auto& r : again["mappings"]) second.push_back(r["mapping"]);
  for (const auto& r : other["mappings"]) third.push_back(r["mapping"]);
  EXPECT_EQ(first, second);
  EXPECT_NE(first, third);
}
