// Co-run slowdowns on a Jetson AGX Orin (GPU + both DLAs) against published measurements (README.md here):
// framesim's slowdown (throughput alone / together) for every simulated row of measurements.csv must stay
// within the row's max_slowdown_error (relative) of the measured one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/run_support.hpp"
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
