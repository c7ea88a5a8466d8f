// Co-run slowdowns on a Jetson AGX Orin (GPU + both DLAs) against published measurements (README.md here).
// framesim runs the shipped hardware file and networks with no side work written anywhere (the DLAs' hand-off
// is derived from the network by the file's `handoff`), and the loss (slowdown - 1, slowdown = throughput
// alone / together) of every simulated row of measurements.csv must stay within the row's max_loss_error
// (relative) of the measured one. Then `calibrate --corun` on the same rows: it must move its parameters,
// reproduce the rows, and say how well each row is predicted when it is left out of the fit.
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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
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
  for (const auto& row : rows.rows) {
    if (row.at("simulated") != "yes") continue;
    const std::string stage = row.at("stage");
    const double measured = std::stod(row.at("alone_qps")) / std::stod(row.at("together_qps"));
    const double predicted = alone_qps(stage) / throughput(together, stage);
    const double error = (predicted - 1) / (measured - 1) - 1;
    EXPECT_LE(std::fabs(error), std::stod(row.at("max_loss_error")))
        << row.at("row") << ": framesim " << predicted << " vs measured " << measured;
    std::printf("%s: measured slowdown %.3f (loss %.1f %%), framesim %.3f (loss %.1f %%), error of the loss %+.1f %%\n",
                row.at("row").c_str(), measured, 100 * (measured - 1), predicted, 100 * (predicted - 1), 100 * error);
    ++simulated;
  }
  ASSERT_EQ(simulated, 3);
  // No side work is written in the scenario: the DLA stages' host work comes from the file's handoff.
  const auto& slowdown = together.summary["slowdown"];
  EXPECT_GT(slowdown["dla0_conv"]["handoff"].get<double>(), 0.05);        // waiting for the GPU to reformat
  EXPECT_GT(slowdown["gpu_conv"]["wait"].get<double>(), 0.3);             // the GPU running the DLAs' reformats
  EXPECT_LT(std::fabs(slowdown["gpu_conv"]["bus"].get<double>()), 0.05);  // compute-bound, overlap 1: no bus
}

// `framesim calibrate --corun` on corun.csv (the forum rows with their networks). With the file's parameters
// the steady co-run of model/corun.hpp already comes close (the hand-off work derived on the GPU, which the
// DLAs' reformats wait for); the fit must still move its parameters toward the rows and reproduce them, and
// each row left out of the fit must be predicted within the goal (median of |error| <= 25 %).
TEST(Validation, CoRunCalibrationOnTheForumRowsMovesItsParametersAndIsJudgedLeaveOneOut) {
  Scratch s;
  const auto out = s.dir() / "orin_corun.yaml";
  const auto r = framesim::testing::run_cli(
      "calibrate hardware/jetson_agx_orin_64gb.yaml --corun "
      "tests/validation/contention/corun.csv -o '" +
      out.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("held out"), std::string::npos) << r.out;
  // The same fit through the library, to compare numbers rather than report text.
  const auto orin = framesim::config::load_hardware(source_path("hardware/jetson_agx_orin_64gb.yaml"));
  const auto conv = framesim::config::load_network(source_path("scenarios/networks/conv3x3_256_320_int8.yaml"));
  std::vector<framesim::model::CorunMember> members;
  for (std::size_t u = 0; u < orin.units.size(); ++u)
    if (orin.units[u].name != "cpu") members.push_back(framesim::model::corun_member(orin, u, conv));
  ASSERT_EQ(members.size(), 3u);               // gpu, dla0, dla1
  EXPECT_GT(members[1].reformat_in_bytes, 0);  // the DLAs' hand-off, from the network
  const std::vector<framesim::model::CorunRow> rows{
      {"gpu", members, 0, 405.3 / 229.2}, {"dla0", members, 1, 132.7 / 113.1}, {"dla1", members, 2, 132.7 / 113.1}};
  const auto fit = framesim::model::fit_corun(orin, rows);
  bool moved = false;
  for (const auto& p : fit.parameters) moved = moved || std::fabs(p.fitted - p.prior) > 1e-3 * std::max(1e-3, p.prior);
  EXPECT_TRUE(moved);
  EXPECT_LT(fit.rms_log, fit.prior_rms_log);
  EXPECT_LT(fit.rms_log, 0.01);
  const auto held_out = framesim::model::leave_one_out(orin, rows);
  std::vector<double> errors;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    errors.push_back(std::fabs(held_out[i] / rows[i].measured_slowdown - 1));
    std::printf("%s: measured %.3f, file %.3f, calibrated %.3f, held out %.3f (error %+.1f %%)\n",
                rows[i].label.c_str(), rows[i].measured_slowdown, fit.prior_slowdown[i], fit.predicted_slowdown[i],
                held_out[i], 100 * (held_out[i] / rows[i].measured_slowdown - 1));
  }
  std::printf("median |held-out error| %.1f %%\n", 100 * median(errors));
  EXPECT_LE(median(errors), 0.25);
  // The calibrated file reads back with the fitted values.
  const auto hw = framesim::config::load_hardware(out.string());
  for (const auto& p : fit.parameters) {
    if (p.kind == framesim::model::CorunParameterKind::overlap) {
      EXPECT_DOUBLE_EQ(hw.units[p.unit].overlap, p.fitted) << hw.units[p.unit].name;
    }
  }
}
