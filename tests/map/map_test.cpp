// framesim map end to end, as a user runs it. Against hand-worked numbers on the split example's SoC
// (examples/16_network_split: every mapping's latency derived in its header), then on the two-network Orin
// scenario, where the check is the issue's: a mapping meeting the deadline that everything-on-the-GPU misses,
// found with fewer simulations than the space has points; the written scenario rerun by this test gives the
// same frames and stages byte for byte; a rerun of the search simulates nothing again.
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

const json* row_with_role(const json& map, const std::string& role) {
  for (const auto& r : map["mappings"])
    if (r["role"].get<std::string>().find(role) != std::string::npos) return &r;
  return nullptr;
}

/// The split example's network at 100 Hz, deadline 4 ms, one stage the map moves and cuts.
void write_small(const fst::Scratch& s) {
  const std::string ex = fst::source_path("examples/16_network_split/");
  s.write("scenario.yaml", "name: small-map\nhardware: " + ex + "hardware.yaml\nnetworks: {net: " + ex +
                               "network_small_cut.yaml}\nduration: \"2 s\"\ndeadline: \"4 ms\"\n"
                               "sensors:\n  camera: {rate: \"100 Hz\"}\n"
                               "stages:\n  s: {unit: a, inputs: [camera], network: net}\n");
}

}  // namespace

// By hand (examples/16_network_split/scenario.yaml's header, the same SoC and network; b's hand-off reformats
// on a, 0.2 ms for x or the cut, 0.8 ns for y): all on a 5 ms; head on a, tail on b 1 + 0.2 + 1 ms + 0.8 ns;
// all on b 0.2 + 2.5 + 1 ms + 0.8 ns = 3.7 ms + 0.8 ns; head on b, tail on a 0.2 + 2.5 + 0.2 (the cut's
// reformat after b's part) + 4 = 6.9 ms. At 100 Hz nothing queues. The static pass drops the two whose floors
// exceed the 4 ms deadline (5 ms, 6.9 ms); the scenario as written (all on a) is simulated as a baseline
// anyway. p99: the split wins.
TEST(Map, FindsTheSplitTheHandDerivationPicks) {
  fst::Scratch s;
  write_small(s);
  const auto r = fst::run_cli("map " + quoted(s.dir() / "scenario.yaml") +
                              " --units s=a,b --splits s=1 --objective p99 -o " + quoted(s.dir() / "map"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json map = json::parse(framesim::core::read_file(s.dir() / "map" / "map.json"));
  EXPECT_EQ(map["space_size"].get<double>(), 4);
  EXPECT_EQ(map["static_kept"].get<int>(), 2);
  EXPECT_EQ(map["simulations"].get<int>(), 3);  // the two kept and the scenario as written
  const json* best = row_with_role(map, "best");
  ASSERT_NE(best, nullptr);
  EXPECT_EQ((*best)["mapping"], "s=a|b@1");
  EXPECT_NEAR((*best)["metrics"]["p99_s"].get<double>(), 0.0022000008, 1e-12);
  const json* own = row_with_role(map, "your scenario");
  ASSERT_NE(own, nullptr);
  EXPECT_NEAR((*own)["metrics"]["p99_s"].get<double>(), 0.005, 1e-12);
  EXPECT_FALSE((*own)["metrics"]["meets_deadline"].get<bool>());
  for (const auto& row : map["mappings"]) {
    if (row["mapping"] == "s=b") {
      EXPECT_NEAR(row["metrics"]["p99_s"].get<double>(), 0.0037000008, 1e-12);
    }
  }
  for (const char* f : {"best.yaml", "report.html", "pareto.svg", "mappings.csv"})
    EXPECT_TRUE(fs::exists(s.dir() / "map" / f)) << f;
}

TEST(Map, OnTheOrinItBeatsEverythingOnTheGpuWithFewerSimulationsThanTheSpace) {
  fst::Scratch s;
  const fs::path out = s.dir() / "map";
  const std::string command =
      "map scenarios/map/orin_two_networks.yaml --space scenarios/map/orin_two_networks.map.yaml -j 2 -o " +
      quoted(out);
  const auto r = fst::run_cli(command);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string first = framesim::core::read_file(out / "map.json");
  const json map = json::parse(first);
  const int simulations = map["simulations"].get<int>();
  EXPECT_LE(simulations, 30);  // the space's budget
  EXPECT_LT(static_cast<double>(simulations), map["space_size"].get<double>());
  EXPECT_EQ(map["space_size"].get<double>(), 7200);  // 3600 placements x 2 GPU clock caps
  const json* best = row_with_role(map, "best");
  const json* gpu = row_with_role(map, "all on gpu");
  ASSERT_NE(best, nullptr);
  ASSERT_NE(gpu, nullptr);
  EXPECT_TRUE((*best)["metrics"]["meets_deadline"].get<bool>());
  EXPECT_FALSE((*gpu)["metrics"]["meets_deadline"].get<bool>());
  EXPECT_LE((*best)["metrics"]["p99_s"].get<double>(), 0.008);
  EXPECT_GT((*gpu)["metrics"]["p99_s"].get<double>(), 0.008);

  // The written scenario (it carries the GPU's clock cap too), run here, gives the frames and stages the search
  // measured, byte for byte.
  EXPECT_NE(framesim::core::read_file(out / "best.yaml").find("clock_caps:"), std::string::npos);
  const auto rerun = fst::run_cli("run " + quoted(out / "best.yaml") + " -q -o " + quoted(s.dir() / "again"));
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  const fs::path measured = (*best)["run"].get<std::string>();
  for (const char* f : {"frames.csv", "stages.csv"})
    EXPECT_TRUE(framesim::core::read_file(s.dir() / "again" / f) == framesim::core::read_file(measured / f)) << f;

  // Again in the same folder: every batch is found finished, nothing is simulated again, the same answer.
  const auto mtime = fs::last_write_time(measured / "frames.csv");
  const auto again = fst::run_cli(command);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(fs::last_write_time(measured / "frames.csv"), mtime);
  EXPECT_EQ(framesim::core::read_file(out / "map.json"), first);
}

// Two shards in one folder (a Slurm array's tasks): each simulates its half of every batch and waits for the
// other's; both end with the answer one unsharded run gives, mapping for mapping.
TEST(Map, TwoShardsInOneFolderGiveTheUnshardedAnswer) {
  fst::Scratch s;
  write_small(s);
  const std::string space = " --units s=a,b --splits s=1 --objective p99 --strategy exhaustive";
  const auto whole =
      fst::run_cli("map " + quoted(s.dir() / "scenario.yaml") + space + " -o " + quoted(s.dir() / "one"));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const std::string each = std::string("'") + FRAMESIM_BINARY + "' map " + quoted(s.dir() / "scenario.yaml") + space +
                           " -q -o " + quoted(s.dir() / "two") + " --shard ";
  const std::string both = "cd '" + std::string(FRAMESIM_SOURCE_DIR) + "' && (" + each + "0/2 > /dev/null & " + each +
                           "1/2 > /dev/null; r=$?; wait $!; exit $(( r + $? )))";
  ASSERT_EQ(std::system(both.c_str()), 0);
  const json one = json::parse(framesim::core::read_file(s.dir() / "one" / "map.json"));
  const json two = json::parse(framesim::core::read_file(s.dir() / "two" / "map.json"));
  ASSERT_EQ(one["mappings"].size(), two["mappings"].size());
  for (std::size_t i = 0; i < one["mappings"].size(); ++i) {
    EXPECT_EQ(one["mappings"][i]["mapping"], two["mappings"][i]["mapping"]);
    EXPECT_EQ(one["mappings"][i]["metrics"], two["mappings"][i]["metrics"]);
  }
  EXPECT_EQ(one["best"], two["best"]);
  EXPECT_TRUE(fs::exists(s.dir() / "two" / "batches" / "000" / "shard-1" / "runs"));
}
