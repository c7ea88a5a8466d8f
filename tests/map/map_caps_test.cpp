// Clock caps as an axis of framesim map's space (map file `clock_caps.<unit>`, or --clock-caps), against numbers
// worked by hand from the operating points' clocks and powers; they share no code with the static pass or the
// engine.
//
// The device: one unit a, 10 GFLOP/s fp32 at 1 GHz (the roof scales with the clock), 1 nJ per op at 1 V (scaling
// with V^2), static 10 W at 1 V (scaling with V); points full 1 GHz / 1 V, half 0.5 GHz / 0.5 V, quarter
// 0.25 GHz / 0.25 V. A job of 10 MFLOP (no bytes) takes 10 MFLOP / roof: 1 ms, 2 ms, 4 ms; its dynamic energy is
// 10 MFLOP x 1 nJ x V^2: 10, 2.5, 0.625 mJ. A 100 Hz camera for 1 s (100 frames, the run ends at 1 s): each
// frame carries its own jobs' dynamic energy and a hundredth of the static energy, the static power x 1 s:
// 10, 5, 2.5 W -> 100, 50, 25 mJ per frame.
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

double metric(const json* row, const char* key) { return (*row)["metrics"][key].get<double>(); }
double static_metric(const json* row, const char* key) { return (*row)["metrics"]["static"][key].get<double>(); }

/// The device of the header and a scenario of `stages` on it (camera 100 Hz, 1 s, deadline 3 ms).
void write_device(const fst::Scratch& s, const std::string& stages) {
  s.write("hardware.yaml",
          "name: three-clocks\n"
          "memory:\n  dram: {kind: dram, capacity: \"8 GiB\", bandwidth: \"10 GB/s\", latency: \"100 ns\"}\n"
          "units:\n  a:\n    kind: npu\n    peak: {fp32: \"10 GFLOP/s\"}\n    memory: [dram]\n"
          "    energy_per_op: {fp32: \"1 nJ\"}\n    static_power: \"10 W\"\n    operating_points:\n"
          "      - {name: full, frequency: \"1 GHz\", voltage: \"1 V\"}\n"
          "      - {name: half, frequency: \"0.5 GHz\", voltage: \"0.5 V\"}\n"
          "      - {name: quarter, frequency: \"0.25 GHz\", voltage: \"0.25 V\"}\n");
  s.write("scenario.yaml",
          "name: capped-map\nhardware: hardware.yaml\nduration: \"1 s\"\ndeadline: \"3 ms\"\n"
          "sensors:\n  camera: {rate: \"100 Hz\"}\nstages:\n" +
              stages);
}

}  // namespace

// One 10 MFLOP stage, caps full, half (by name) and 250 MHz (quarter, by frequency) from a map file, objective
// energy. Static pass: floors 1, 2, 4 ms at the capped clocks; quarter's 4 ms exceeds the 3 ms deadline, so 2 of
// the 3 mappings are kept; utilisation 1 ms x 100 Hz = 0.1 and 0.2; energy per frame 10 + 100 = 110 mJ and
// 2.5 + 50 = 52.5 mJ. Simulated, nothing queues (one job per 10 ms): p99 1 ms and 2 ms, both within 3 ms, energy
// 110 and 52.5 mJ per frame: the half-clock cap wins on energy. Its written scenario carries `clock_caps: {a:
// half}` and, run again, gives the frames and stages of the search's run byte for byte.
TEST(MapCaps, ALowerCapWinsOnEnergyWhileMeetingTheDeadline) {
  fst::Scratch s;
  write_device(s, "  job: {unit: a, inputs: [camera], work: {ops: \"10 MFLOP\"}}\n");
  s.write("space.yaml",
          "# yaml-language-server: $schema=../docs/schema/map.schema.json\nobjective: energy\n"
          "clock_caps:\n  a: [full, half, \"250 MHz\"]\n");
  const fs::path out = s.dir() / "map";
  const auto r = fst::run_cli("map " + quoted(s.dir() / "scenario.yaml") + " --space " +
                              quoted(s.dir() / "space.yaml") + " -o " + quoted(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json map = json::parse(framesim::core::read_file(out / "map.json"));
  EXPECT_EQ(map["space_size"].get<double>(), 3);
  EXPECT_EQ(map["static_kept"], 2);
  EXPECT_EQ(map["stages"], json::array({"clock_caps.a"}));
  const json* full = row_of(map, "clock_caps.a=full");
  const json* half = row_of(map, "clock_caps.a=half");
  ASSERT_NE(full, nullptr);
  ASSERT_NE(half, nullptr);
  EXPECT_EQ(row_of(map, "clock_caps.a=250 MHz"), nullptr);  // discarded by the static pass: not simulated
  EXPECT_NEAR(static_metric(full, "worst_path_floor_s"), 1e-3, 1e-12);
  EXPECT_NEAR(static_metric(half, "worst_path_floor_s"), 2e-3, 1e-12);
  EXPECT_NEAR(static_metric(full, "max_utilisation"), 0.1, 1e-12);
  EXPECT_NEAR(static_metric(half, "max_utilisation"), 0.2, 1e-12);
  EXPECT_NEAR(static_metric(full, "energy_per_frame_J"), 0.110, 1e-12);
  EXPECT_NEAR(static_metric(half, "energy_per_frame_J"), 0.0525, 1e-12);
  EXPECT_NEAR(metric(full, "p99_s"), 1e-3, 1e-12);
  EXPECT_NEAR(metric(half, "p99_s"), 2e-3, 1e-12);
  EXPECT_NEAR(metric(full, "energy_mean_J"), 0.110, 1e-9);
  EXPECT_NEAR(metric(half, "energy_mean_J"), 0.0525, 1e-9);
  EXPECT_TRUE((*half)["metrics"]["meets_deadline"].get<bool>());
  EXPECT_NE((*full)["role"].get<std::string>().find("your scenario"), std::string::npos);
  ASSERT_TRUE(map["best"].is_number());
  EXPECT_EQ(map["mappings"][map["best"].get<std::size_t>()]["mapping"], "clock_caps.a=half");

  const std::string best = framesim::core::read_file(out / "best.yaml");
  EXPECT_NE(best.find("clock_caps:\n  a: half"), std::string::npos) << best;
  const auto rerun = fst::run_cli("run " + quoted(out / "best.yaml") + " -q -o " + quoted(s.dir() / "again"));
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  const fs::path measured = (*half)["run"].get<std::string>();
  for (const char* f : {"frames.csv", "stages.csv"})
    EXPECT_TRUE(framesim::core::read_file(s.dir() / "again" / f) == framesim::core::read_file(measured / f)) << f;
  const json summary = json::parse(framesim::core::read_file(s.dir() / "again" / "summary.json"));
  EXPECT_NEAR(summary["energy"]["per_frame_J"]["mean"].get<double>(), 0.0525, 1e-9);
}

// Two 10 MFLOP stages x and y on a, both fed by the camera: a runs one job at a time (its FIFO scheduler), x
// first as declared. Caps half and full (--clock-caps). Static pass: each floor alone is within the deadline
// (2 ms at half, 1 ms at full) and a is 40 % / 20 % busy, so both mappings are kept, and half is the cheaper:
// 2 x 2.5 + 50 = 55 mJ against 2 x 10 + 100 = 120 mJ per frame. Simulated, y waits for x: at half x ends at
// 2 ms, y at 4 ms, past the 3 ms deadline (a miss); at full 1 ms and 2 ms. The energy objective takes only
// mappings that meet every deadline: full, at more than twice half's energy.
TEST(MapCaps, ACapTooLowForTheDeadlineIsNotChosen) {
  fst::Scratch s;
  write_device(s,
               "  x: {unit: a, inputs: [camera], work: {ops: \"10 MFLOP\"}}\n"
               "  y: {unit: a, inputs: [camera], work: {ops: \"10 MFLOP\"}}\n");
  const auto r = fst::run_cli("map " + quoted(s.dir() / "scenario.yaml") + " --clock-caps a=half,full -o " +
                              quoted(s.dir() / "map"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json map = json::parse(framesim::core::read_file(s.dir() / "map" / "map.json"));
  EXPECT_EQ(map["static_kept"], 2);
  const json* full = row_of(map, "clock_caps.a=full");
  const json* half = row_of(map, "clock_caps.a=half");
  ASSERT_NE(full, nullptr);
  ASSERT_NE(half, nullptr);
  EXPECT_NEAR(static_metric(half, "energy_per_frame_J"), 0.055, 1e-12);
  EXPECT_NEAR(static_metric(full, "energy_per_frame_J"), 0.120, 1e-12);
  EXPECT_NEAR(static_metric(half, "max_utilisation"), 0.4, 1e-12);
  EXPECT_NEAR(static_metric(half, "worst_path_floor_s"), 2e-3, 1e-12);
  EXPECT_NEAR((*half)["metrics"]["path_p99_s"]["x"].get<double>(), 2e-3, 1e-12);
  EXPECT_NEAR((*half)["metrics"]["path_p99_s"]["y"].get<double>(), 4e-3, 1e-12);
  EXPECT_FALSE((*half)["metrics"]["meets_deadline"].get<bool>());
  EXPECT_NEAR(metric(half, "energy_mean_J"), 0.055, 1e-9);
  EXPECT_NEAR((*full)["metrics"]["path_p99_s"]["y"].get<double>(), 2e-3, 1e-12);
  EXPECT_TRUE((*full)["metrics"]["meets_deadline"].get<bool>());
  EXPECT_NEAR(metric(full, "energy_mean_J"), 0.120, 1e-9);
  EXPECT_EQ(map["mappings"][map["best"].get<std::size_t>()]["mapping"], "clock_caps.a=full");
}
