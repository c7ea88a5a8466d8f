// Co-run slowdowns on a Jetson AGX Orin (GPU + both DLAs) against published measurements (README.md here):
// framesim's slowdown (throughput alone / together) for every simulated row of measurements.csv must stay
// within the row's max_slowdown_error (relative) of the measured one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "config/hardware.hpp"
#include "config/network.hpp"
#include "engine/run_support.hpp"
#include "model/corun.hpp"
#include "test_support.hpp"

using framesim::testing::read_table;
using framesim::testing::run_framesim;
using framesim::testing::Scratch;
using framesim::testing::source_path;

namespace {

constexpr double kWarmup_s = 0.2;  // the scenarios' warm-up

/// Completions per second of `stage` after the warm-up: (n - 1) / (last end - first end).
double throughput(const framesim::testing::RunResult& r, const std::string& stage) {
  std::vector<double> ends;
  for (const auto& row : r.stages.where("stage", stage))
    if (std::stod(row.at("end_s")) > kWarmup_s) ends.push_back(std::stod(row.at("end_s")));
  std::sort(ends.begin(), ends.end());
  if (ends.size() < 2) return NAN;
  return static_cast<double>(ends.size() - 1) / (ends.back() - ends.front());
}

}  // namespace

TEST(Validation, CoRunSlowdownsOnAgxOrinGpuAndDlas) {
  Scratch s;
  const auto together = run_framesim(source_path("scenarios/orin_gpu_2dla_contention.yaml"), s.dir() / "together");
  const auto gpu_alone = run_framesim(source_path("tests/validation/contention/gpu_alone.yaml"), s.dir() / "gpu");
  const auto dla_alone = run_framesim(source_path("tests/validation/contention/dla_alone.yaml"), s.dir() / "dla");
  ASSERT_EQ(together.exit_code, 0) << together.output;
  ASSERT_EQ(gpu_alone.exit_code, 0) << gpu_alone.output;
  ASSERT_EQ(dla_alone.exit_code, 0) << dla_alone.output;
  // Alone, a DLA model is dla0_conv in dla_alone.yaml (dla1 is its twin).
  auto alone_qps = [&](const std::string& stage) {
    return stage == "gpu_conv" ? throughput(gpu_alone, "gpu_conv") : throughput(dla_alone, "dla0_conv");
  };
  const auto rows = read_table(source_path("tests/validation/contention/measurements.csv"));
  int simulated = 0;
  double error_sum = 0;
  for (const auto& row : rows.rows) {
    if (row.at("simulated") != "yes") continue;
    const std::string stage = row.at("stage");
    const double measured = std::stod(row.at("alone_qps")) / std::stod(row.at("together_qps"));
    const double predicted = alone_qps(stage) / throughput(together, stage);
    const double error = std::fabs(predicted - measured) / measured;
    EXPECT_LE(error, std::stod(row.at("max_slowdown_error")))
        << row.at("row") << ": framesim " << predicted << " vs measured " << measured;
    std::printf("%s: measured slowdown %.3f, framesim %.3f, error %.1f %%\n", row.at("row").c_str(), measured,
                predicted, 100 * error);
    error_sum += error;
    ++simulated;
  }
  ASSERT_EQ(simulated, 3);
  std::printf("mean absolute relative error of the slowdown: %.1f %%\n", 100 * error_sum / simulated);
}

// The documented example of `framesim calibrate --corun` (README.md here): corun.csv holds the forum rows with
// their networks. The convolution is compute-bound with slack on every unit (0.37 ms of DRAM time against
// 2.37 ms of compute on the GPU), and the largest sensitivity (10) at the others' ~7 % of the bus still leaves
// its memory time below its compute time, so no row depends on any sensitivity: all three stay at their prior
// (1) and the steady co-run predicts no slowdown, an error of 1 / 1.768 - 1 = -43.4 % on the GPU row and
// 1 / 1.173 - 1 = -14.8 % on each DLA row. The test pins that honest miss, not a good fit.
TEST(Validation, CoRunCalibrationOnTheForumRowsLeavesEverySensitivityAtItsPrior) {
  Scratch s;
  const auto out = s.dir() / "orin_corun.yaml";
  const auto r = framesim::testing::run_cli(
      "calibrate hardware/jetson_agx_orin_64gb.yaml --corun "
      "tests/validation/contention/corun.csv -o '" +
      out.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The same fit through the library, to compare numbers rather than report text.
  const auto orin = framesim::config::load_hardware(source_path("hardware/jetson_agx_orin_64gb.yaml"));
  const auto conv = framesim::config::load_network(source_path("scenarios/networks/conv3x3_256_320_int8.yaml"));
  std::vector<framesim::model::CorunMember> members;
  for (std::size_t u = 0; u < orin.units.size(); ++u)
    if (orin.units[u].name != "cpu")
      members.push_back({"conv", u, framesim::model::plan_network(conv, orin, u).kernels});
  ASSERT_EQ(members.size(), 3u);  // gpu, dla0, dla1
  const std::vector<framesim::model::CorunRow> rows{
      {"gpu", members, 0, 405.3 / 229.2}, {"dla0", members, 1, 132.7 / 113.1}, {"dla1", members, 2, 132.7 / 113.1}};
  const auto fit = framesim::model::fit_corun(orin, rows);
  for (const auto& p : fit.parameters) EXPECT_FALSE(p.identifiable) << orin.units[p.unit].name;
  EXPECT_NEAR(fit.predicted_slowdown[0] / rows[0].measured_slowdown - 1, -0.434, 0.001);
  EXPECT_NEAR(fit.predicted_slowdown[1] / rows[1].measured_slowdown - 1, -0.148, 0.001);
  const auto hw = framesim::config::load_hardware(out.string());
  for (const auto& u : hw.units) EXPECT_DOUBLE_EQ(u.contention_sensitivity, 1.0) << u.name;
}
