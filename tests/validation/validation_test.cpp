// framesim against published measurements (tests/validation/suite.csv: vendor tables, MLPerf Tiny and MLPerf
// Inference results, each row with its source), and calibration from whole-network totals against oracles
// computed by hand.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/calibrate.hpp"
#include "model/plan.hpp"
#include "test_support.hpp"

using namespace framesim;
using framesim::testing::NetBuilder;
using framesim::testing::run_cli;
using framesim::testing::seed_device;

namespace {

nlohmann::json validate() {
  const auto run = run_cli("validate tests/validation/suite.csv --json");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return nlohmann::json::parse(run.out);
}

}  // namespace

TEST(Validation, TheBoundNeverExceedsAPublishedMeasurement) {
  // The oracle is the published figure itself: no correct measurement can beat the bound at peak roofs.
  const auto j = validate();
  ASSERT_GE(j["rows"].size(), 40u);
  for (const auto& row : j["rows"]) {
    if (row["scope"] != "network") continue;
    EXPECT_LE(row["bound_s"].get<double>(), row["measured_s"].get<double>()) << row["id"] << ": " << row["source"];
  }
  EXPECT_TRUE(j["summary"]["bound_above_measured"].empty());
  // Whole-application rows (their bound: the network's at peak roofs plus the other stages at peak) hold too.
  EXPECT_TRUE(j["summary"]["application_bound_above_measured"].empty()) << j["summary"];
}

TEST(Validation, SsdMobileNetV1BoundByHandKeepsItsWeightsOnChip) {
  // Coral's SSD MobileNet v1 (11 ms) was once below its bound (14.76 ms): the plan streamed all 6.813 MB of its
  // weights over PCIe (6.813 MB / 500 MB/s = 13.63 ms alone, more than the measurement) because weights plus the
  // 2.16 MB activation peak exceed the 8 MiB SRAM. The Edge TPU caches parameters on chip and streams only what
  // does not fit (coral.ai/docs/edgetpu/compiler, "Parameter data caching"); the bound takes the best case: the
  // SRAM's whole declared capacity for weights. By hand: 6,813 kB <= 8 MiB = 8,388,608 B, so no weight byte crosses
  // the link; what must cross it is the 300x300x3 int8 input (270,000 B) and the heads' outputs (1917 anchors x
  // (4 box + 91 class) int8 = 182,115 B): 452,115 B / 500 MB/s = 904.2 us; the arithmetic, 2.511 GOP / 4 TOP/s =
  // 627.8 us. The network's bound is at least the larger of the two, and with the post-processing stage at peak
  // (0.784 M fp32 ops / 6 GFLOP/s, one A53 core = 130.7 us) below the 11 ms measured.
  const auto j = validate();
  bool seen = false;
  for (const auto& r : j["rows"]) {
    if (r["id"] != "coral-ssd_mobilenet_v1") continue;
    seen = true;
    const double post_s = 0.784e6 / 6e9, link_s = 452115.0 / 500e6, compute_s = 2.511e9 / 4e12;
    const double network_bound_s = r["bound_s"].get<double>() - post_s;
    EXPECT_GE(network_bound_s, std::max(link_s, compute_s) * (1 - 1e-3)) << r;
    EXPECT_LT(r["bound_s"].get<double>(), 11e-3) << r;
    EXPECT_LT(network_bound_s, 6.813e6 / 500e6) << "the weights still stream in the bound";
  }
  EXPECT_TRUE(seen);
}

TEST(Validation, WholeApplicationRowsArePredictedAsStagesAndKeptOutOfTheNetworkGeomean) {
  // The suite's whole-application rows (Coral's SSD detectors: one TFLite invoke, whose detection post-processing
  // runs on the CPU) are predicted as their scenario's pipeline: the network stage on the Edge TPU with the same
  // fit as the network rows, the post-processing stage on a Cortex-A53 core from its derived work; the end to end
  // time is their sum (a chain). None is in the network-time geomean: its row count excludes them.
  const auto j = validate();
  int application = 0, held_out_network = 0;
  for (const auto& r : j["rows"]) {
    if (r["scope"] != "application") {
      if (r["set"] == "held_out") ++held_out_network;
      continue;
    }
    ++application;
    EXPECT_EQ(r["set"], "held_out") << r["id"];  // never fitted on
    ASSERT_EQ(r["stages"].size(), 2u) << r["id"];
    double sum = 0;
    for (const auto& st : r["stages"]) {
      EXPECT_GT(st["predicted_s"].get<double>(), 0.0) << r["id"] << " " << st["stage"];
      sum += st["predicted_s"].get<double>();
    }
    EXPECT_EQ(r["stages"][0]["unit"], "edgetpu");
    EXPECT_EQ(r["stages"][1]["unit"], "cpu");
    EXPECT_NEAR(r["predicted_s"].get<double>(), sum, 1e-12) << r["id"];
    // Post-processing by hand: 0.784 M fp32 ops on one of four A53 cores (24 GFLOP/s / 4 x efficiency 0.3 =
    // 1.8 GFLOP/s) = 435.6 us, plus the 5 us dispatch overhead; its 212,787 B from DRAM at 12.8 GB/s x 0.6 take
    // 27.7 us, hidden under the compute: 440.6 us.
    EXPECT_NEAR(r["stages"][1]["predicted_s"].get<double>(), 0.784e6 / 1.8e9 + 5e-6, 1e-7) << r["id"];
  }
  EXPECT_GE(application, 2);
  EXPECT_EQ(j["summary"]["application_rows"].get<int>(), application);
  EXPECT_EQ(j["summary"]["held_out_rows"].get<int>(), held_out_network);
}

TEST(Validation, HeldOutErrorStaysBelowTheRatchet) {
  // Ratchet: the figures reached when the Edge TPU's weights were cached on chip up to its SRAM (partial weight
  // caching: Coral's ResNet and VGG rows stream only what does not fit), unchanged by the whole-application rows,
  // which are in no network-time geomean (held out: latency 10.3 % with AGX Orin's v3.0 row, energy 10.2 %; with the
  // files' roofs alone 65.4 % and 170 %). Lower them when the model improves; never raise them silently.
  const auto j = validate();
  const auto& s = j["summary"];
  std::cout << "held-out geomean error: latency " << s["latency_geomean_error_held_out"] << ", energy "
            << s["energy_geomean_error_held_out"] << "; calibration: latency " << s["latency_geomean_error_calibration"]
            << "\n";
  EXPECT_LT(s["latency_geomean_error_held_out"].get<double>(), 0.104);
  EXPECT_LT(s["energy_geomean_error_held_out"].get<double>(), 0.105);
  // The whole-application rows apart: 139 %, predicted too fast (5.19 ms and 5.21 ms against 11 and 14 ms). It was
  // 55.2 % while the detector's 6.8 MB of weights streamed over PCIe (19.4 ms, too slow: above the bound's
  // physics); with them cached the Edge TPU part is 4.7 ms and the rest of the measured invoke (the CPU side of
  // the TFLite call beyond the derived post-processing work) is not modelled. Raised with that reason only.
  EXPECT_LT(s["latency_geomean_error_application"].get<double>(), 1.40);
  EXPECT_GE(s["held_out_rows"].get<int>(), 14);
  // Calibration beats the files' own roofs on the rows it never saw.
  EXPECT_LT(s["latency_geomean_error_held_out"].get<double>(),
            s["latency_geomean_error_held_out_uncalibrated"].get<double>());
  // Not systematically optimistic or pessimistic by more than the spread reported beside it.
  EXPECT_LT(std::fabs(std::log1p(s["latency_bias_held_out"].get<double>())),
            s["latency_spread_ln_held_out"].get<double>());
  // An MCU, an Edge TPU and a Jetson GPU, latency and energy.
  std::set<std::string> devices;
  for (const auto& d : j["devices"]) devices.insert(d["device"].get<std::string>());
  for (const char* file : {"stm32h7a3.yaml", "stm32l4r5.yaml", "coral_edge_tpu.yaml", "jetson_agx_orin_64gb.yaml"})
    EXPECT_TRUE(std::any_of(devices.begin(), devices.end(), [&](const std::string& d) {
      return d.find(file) != std::string::npos;
    })) << file;
}

TEST(Validation, TheSuiteIsLargeAndSourcedAndCalibrationNeverHurtsADevice) {
  // At least 44 published rows (2 of them whole-application) on at least 5 devices and 7 runtimes, each naming its
  // source; no device's held-out rows predicted worse after calibration than with its file's roofs (latency and
  // energy).
  const auto j = validate();
  const auto& rows = j["rows"];
  EXPECT_GE(rows.size(), 44u);
  EXPECT_GE(j["summary"]["application_rows"].get<int>(), 2);
  std::set<std::string> devices, runtimes, held_out_devices, held_out_runtimes;
  int with_energy = 0;
  for (const auto& r : rows) {
    devices.insert(r["device"].get<std::string>());
    runtimes.insert(r["runtime"].get<std::string>());
    if (r["set"] == "held_out" && r["scope"] == "network") {
      held_out_devices.insert(r["device"].get<std::string>());
      held_out_runtimes.insert(r["runtime"].get<std::string>());
    }
    EXPECT_FALSE(r["source"].get<std::string>().empty()) << r["id"];
    if (r.contains("measured_J")) ++with_energy;
  }
  EXPECT_GE(devices.size(), 5u);
  EXPECT_GE(runtimes.size(), 7u);
  // The held-out network rows alone span 5 devices (an MCU pair, the Edge TPU, two Jetson GPUs) and 7 runtimes.
  EXPECT_GE(held_out_devices.size(), 5u);
  EXPECT_GE(held_out_runtimes.size(), 3u);
  EXPECT_GE(with_energy, 15);
  EXPECT_TRUE(j["summary"]["calibration_worse_than_file"].empty()) << j["summary"]["calibration_worse_than_file"];
  // Leave one runtime out is reported for the MCUs (several runtimes each), beside the files' own error.
  EXPECT_GE(j["summary"]["leave_one_runtime_out"].size(), 8u);
}

namespace {

/// A conv (3x3, 64 -> 64 on 56x56: compute-bound on the seed device) and a linear layer, as two networks.
model::TotalSample sample(const model::HardwareSpec& hw, bool conv, double measured_s) {
  NetBuilder b;
  if (conv) {
    int x = b.input("x", {1, 64, 56, 56});
    b.layer("conv2d", "conv", {x},
            {{"out_channels", std::int64_t{64}}, {"kernel", std::int64_t{3}}, {"padding", std::int64_t{1}}});
  } else {
    int x = b.input("x", {64, 1024});
    b.layer("linear", "fc", {x}, {{"out_features", std::int64_t{1024}}});
  }
  const auto net = b.done();
  model::TotalSample s;
  s.network = conv ? "conv" : "fc";
  s.kernels = model::plan_network(net, hw, 0).kernels;
  s.measured_s = measured_s;
  return s;
}

}  // namespace

TEST(CalibrateTotals, RecoversTheEfficiencyThatMadeTheTimes) {
  // Conv: F = 2 x 64x56x56 x 64x9 = 231.2 MFLOP; at 2 TFLOP/s x 0.5 = 231.2 us (bytes 1.75 MB at 50 GB/s = 35 us:
  // compute-bound). Matmul 64x1024x1024: F = 134.2 MFLOP, 4.72 MB; at efficiency 0.8: 83.9 us vs 94.4 us of
  // bytes: memory-bound at 50 GB/s. Measured times made with conv efficiency 0.5 and no overhead; the file says
  // 0.9 everywhere. The fit must find 0.5 for conv and leave matmul (which the bytes hide) at its prior.
  auto hw = seed_device();
  hw.units[0].efficiency[model::Precision::fp32] = 0.9;
  const double conv_s = 2.0 * 64 * 56 * 56 * 64 * 9 / (2e12 * 0.5);
  const double fc_bytes = 4.0 * (64 * 1024 + 1024 * 1024 + 64 * 1024);
  const double fc_s = fc_bytes / 50e9;
  const std::vector<model::TotalSample> samples{sample(hw, true, conv_s), sample(hw, false, fc_s)};
  const model::TotalsFit fit = model::fit_totals(hw, 0, samples);
  for (const auto& p : fit.parameters) {
    if (p.kind == model::TotalParameterKind::class_efficiency && p.op_class == model::OpClass::conv) {
      EXPECT_NEAR(p.fitted, 0.5, 0.01);
      EXPECT_TRUE(p.pinned);
    }
    if (p.kind == model::TotalParameterKind::class_efficiency && p.op_class == model::OpClass::matmul) {
      EXPECT_FALSE(p.pinned);  // memory-bound: the compute roof does not show
      EXPECT_DOUBLE_EQ(p.fitted, 0.9);
    }
    if (p.kind == model::TotalParameterKind::bandwidth_efficiency) {
      EXPECT_NEAR(p.fitted, 1.0, 0.01);  // the bytes took exactly M / peak B
      EXPECT_TRUE(p.at_bound);           // and efficiency cannot exceed 1: at the bound, said so
    }
    if (p.kind == model::TotalParameterKind::dispatch_overhead) {
      EXPECT_LT(p.fitted, 1e-6);
    }
  }
  // The pull toward the prior (lambda 0.01 on ln 0.9 / 0.5) costs about 1 % of the fit.
  EXPECT_NEAR(fit.predicted_s[0], conv_s, conv_s * 0.02);
  EXPECT_NEAR(fit.predicted_s[1], fc_s, fc_s * 0.02);
  // A sample faster than the bound cannot be fitted by physical parameters: it shows as an efficiency at 1.
  const auto too_fast = model::fit_totals(hw, 0, {sample(hw, true, conv_s / 10)});
  for (const auto& p : too_fast.parameters) {
    if (p.kind == model::TotalParameterKind::class_efficiency && p.op_class == model::OpClass::conv) {
      EXPECT_TRUE(p.at_bound) << p.fitted << " " << p.pinned << " " << p.sensitivity;
    }
  }
}
