// The sweep's report (issue 23): a zipped sweep says its axes are confounded (a grid does not), the every-point
// table has throttled fraction, max temperature and drops, and the Pareto plot marks points that drop frames.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/files.hpp"
#include "sweep/small_sweep.hpp"
#include "test_support.hpp"

using framesim::core::read_file;
using framesim::testing::run_cli;
using framesim::testing::Scratch;
using framesim::testing::source_path;
using nlohmann::json;

namespace {

/// Two points, bandwidth and precision zipped: 1 GB/s with fp32 and 100 GB/s with fp16. At 1 GB/s a MobileNetV2
/// frame takes over 100 ms (its p50 here: 115 ms), more than three 33 ms camera periods, so its queue of 2
/// overflows and frames are dropped; at 100 GB/s and fp16 (354 us) it keeps up.
void write_zip_sweep(const Scratch& s) {
  s.write("scenario.yaml", fmt::format(R"(name: tiny
hardware: {}
networks: {{net: {}}}
duration: "0.6 s"
warmup: "0.1 s"
deadline: "10 ms"
sensors:
  camera: {{rate: "30 Hz"}}
stages:
  model: {{unit: gpu, inputs: [camera], network: net}}
)",
                                       source_path("hardware/seed_reference.yaml"),
                                       source_path("scenarios/networks/mobilenet_v2.yaml")));
  s.write("sweep.yaml", R"(name: tiny-zip
scenario: scenario.yaml
mode: zip
axes:
  hardware.memory.dram.bandwidth: ["1 GB/s", "100 GB/s"]
  networks.net.precision: [fp32, fp16]
)");
}

}  // namespace

TEST(SweepReport, ZippedAxesAreConfoundedAndDroppingPointsAreMarked) {
  Scratch s;
  write_zip_sweep(s);
  const auto run =
      run_cli(fmt::format("sweep '{}' -o '{}' -j 2 -q", (s.dir() / "sweep.yaml").string(), (s.dir() / "out").string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("confounded with networks.net.precision: they move together in every point (zipped)"),
            std::string::npos)
      << run.out;
  const json r = json::parse(read_file(s.dir() / "out" / "results.json"));
  EXPECT_EQ(r["sensitivity"]["hardware.memory.dram.bandwidth"]["confounded_with"],
            json::array({"networks.net.precision"}));
  // Point 0 drops frames; its marker is labelled so and its tooltip gives the drops.
  const auto& p0 = r["points"][0]["metrics"];
  ASSERT_GT(p0["dropped"].get<std::int64_t>(), 0) << p0.dump(1);
  EXPECT_EQ(p0["missed"].get<std::int64_t>(), p0["late"].get<std::int64_t>() + p0["dropped"].get<std::int64_t>());
  const std::string svg = read_file(s.dir() / "out" / "pareto.svg");
  EXPECT_NE(svg.find(">0 (drops)</text>"), std::string::npos);
  EXPECT_NE(svg.find("point that drops frames"), std::string::npos);
  const std::string html = read_file(s.dir() / "out" / "report.html");
  for (const char* column : {"<th>throttled</th>", "<th>max temperature</th>", "<th>dropped</th>"})
    EXPECT_NE(html.find(column), std::string::npos) << column;
}

TEST(SweepReport, GridAxesAreNotConfounded) {
  Scratch s;
  framesim::testing::write_small_sweep(s);
  const auto run =
      run_cli(fmt::format("sweep '{}' -o '{}' -j 2 -q", (s.dir() / "sweep.yaml").string(), (s.dir() / "out").string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.find("confounded"), std::string::npos) << run.out;
}

TEST(SweepReport, APointsRunWritesTheFractionItHasSimulated) {
  // A sweep shows progress within points from the file each point's `framesim run --progress-file` rewrites:
  // a fraction in [0, 1], and 1 once the run has simulated everything.
  Scratch s;
  write_zip_sweep(s);
  const auto run = run_cli(fmt::format("run '{}' -q -o '{}' --progress-file '{}'", (s.dir() / "scenario.yaml").string(),
                                       (s.dir() / "run").string(), (s.dir() / "progress").string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(read_file(s.dir() / "progress"), "1.000000\n");
}
