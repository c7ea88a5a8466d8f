// The profiles edge users have (trace/measured.hpp): trtexec's --exportProfile with its --exportLayerInfo,
// Nsight Systems' cuda_gpu_trace CSV and SQLite export, ONNX Runtime's session profile - of tiny_convnet.onnx
// (tests/trace/fixtures/edge/, written from the tools' documented schemas; see the comments in the readers).
// Oracles independent of the readers: each fixture has a plain CSV twin holding the per-layer times computed by
// hand (the sums for fused layers, the means over frames are in its comments); the twin must give the same
// matches, the same budget, the same replayed frames and the same calibration. Frame timestamps are checked
// against the numbers the fixture scripts put in.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/hardware.hpp"
#include "config/network.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "model/budget.hpp"
#include "test_support.hpp"
#include "trace/import.hpp"
#include "trace/measured.hpp"
#include "trace/measured_formats.hpp"

namespace framesim {
namespace {

namespace fs = std::filesystem;
using trace::EntryFate;
using trace::MeasuredFormat;

const std::string kEdge = "tests/trace/fixtures/edge/";
/// Each profile and its plain-CSV twin (the same per-layer times, worked out by hand).
const std::vector<std::pair<std::string, std::string>> kTwins{
    {"tiny_convnet_trt.profile.json", "tiny_convnet_trt_as_csv.csv"},
    {"tiny_convnet_nsys.sqlite", "tiny_convnet_nsys_as_csv.csv"},
    {"tiny_convnet_ort.json", "tiny_convnet_ort_as_csv.csv"}};

std::string fixture(const std::string& name) { return testing::source_path(kEdge + name); }

model::NetworkSpec tiny() { return trace::import_model(fixture("tiny_convnet.onnx")).network; }

using testing::error_of;

/// name -> time of the measurements that name a layer of `net`.
std::map<std::string, double> layer_times(const trace::MatchedMeasurements& m, const model::NetworkSpec& net) {
  std::map<std::string, double> out;
  for (const auto& x : m.measurements)
    for (const auto& l : net.layers)
      if (l.name == x.name) out[x.name] = x.time_s;
  return out;
}

void expect_same_times(const std::map<std::string, double>& got, const std::map<std::string, double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, t] : want) {
    ASSERT_TRUE(got.count(name)) << name;
    EXPECT_NEAR(got.at(name), t, 1e-12) << name;
  }
}

trace::MatchedMeasurements matched(const std::string& file, const model::NetworkSpec& net) {
  return trace::match_measurements(trace::read_measured_trace(fixture(file)), net);
}

const trace::EntryMatch& entry(const trace::MatchedMeasurements& m, const std::string& recorded) {
  for (const auto& e : m.entries)
    if (e.recorded == recorded) return e;
  ADD_FAILURE() << "no entry " << recorded;
  static const trace::EntryMatch none;
  return none;
}

TEST(TensorRtProfile, FusedLayersReformatsAndSplitsMatchTheHandComputedCsv) {
  const auto net = tiny();
  const auto trace = trace::read_measured_trace(fixture("tiny_convnet_trt.profile.json"));
  EXPECT_EQ(trace.format, MeasuredFormat::tensorrt_profile);
  EXPECT_EQ(trace.iterations, 100);
  const auto m = trace::match_measurements(trace, net);
  using V = std::vector<std::string>;
  EXPECT_EQ(entry(m, "Conv_0 + Relu_1").fate, EntryFate::merged);
  EXPECT_EQ(entry(m, "Conv_0 + Relu_1").layers, (V{"Conv_0", "Relu_1"}));
  EXPECT_EQ(entry(m, "PWN(Relu_3, Add_4)").fate, EntryFate::merged);
  EXPECT_EQ(entry(m, "PWN(Relu_3, Add_4)").layers, (V{"Relu_3", "Add_4"}));
  EXPECT_EQ(entry(m, "Conv_2").fate, EntryFate::matched);
  EXPECT_EQ(entry(m, "Flatten_6 + (Unnamed Layer* 9) [Shuffle]").fate, EntryFate::matched);
  // Gemm_7's bias runs as its own TensorRT layer: the layer information says both come from Gemm_7.
  EXPECT_EQ(entry(m, "Gemm_7").fate, EntryFate::split);
  EXPECT_EQ(entry(m, "(Unnamed Layer* 12) [ElementWise]").fate, EntryFate::split);
  EXPECT_EQ(entry(m, "(Unnamed Layer* 12) [ElementWise]").layers, (V{"Gemm_7"}));
  EXPECT_EQ(entry(m, "Reformatting CopyNode for Input Tensor 0 to Conv_0 + Relu_1").fate, EntryFate::data_movement);
  EXPECT_EQ(entry(m, "Reformatting CopyNode for Input Tensor 0 to Conv_0 + Relu_1").layers, (V{"Conv_0"}));
  EXPECT_EQ(entry(m, "Reformatting CopyNode for Output Tensor 0 to Gemm_7").layers, (V{"Gemm_7"}));
  // Nothing is left over: every entry's time is in a layer (81 us in all).
  EXPECT_EQ(layer_times(m, net).size(), m.measurements.size());
  expect_same_times(layer_times(m, net), layer_times(matched("tiny_convnet_trt_as_csv.csv", net), net));
}

TEST(TensorRtProfile, WithoutLayerInformationTheNamesStillGiveTheFusedNodes) {
  const auto net = tiny();
  const auto m = trace::match_measurements(
      trace::parse_measured_trace(core::read_file(fixture("tiny_convnet_trt.profile.json")), "p.json"), net);
  // The bias layer has no name to go by: unmatched, kept under its own name; Gemm_7 = 8 + output reformat 2 us.
  EXPECT_EQ(entry(m, "(Unnamed Layer* 12) [ElementWise]").fate, EntryFate::unmatched);
  EXPECT_EQ(entry(m, "Gemm_7").fate, EntryFate::matched);
  auto times = layer_times(m, net);
  EXPECT_NEAR(times["Gemm_7"], 10e-6, 1e-12);
  EXPECT_NEAR(times["Conv_0"], 25e-6, 1e-12);
  EXPECT_NEAR(times["Relu_3"], 6e-6, 1e-12);
}

TEST(TensorRtProfile, LayerNamesGiveTheirOnnxNodes) {
  using V = std::vector<std::string>;
  EXPECT_EQ(trace::tensorrt_name_origins("Conv_0 + Relu_1"), (V{"Conv_0", "Relu_1"}));
  EXPECT_EQ(trace::tensorrt_name_origins("PWN(PWN(Sigmoid_3), Mul_4) + Conv_5"), (V{"Sigmoid_3", "Mul_4", "Conv_5"}));
  EXPECT_EQ(trace::tensorrt_name_origins("Conv_1 || Conv_2"), (V{"Conv_1", "Conv_2"}));
  EXPECT_EQ(trace::tensorrt_name_origins("{ForeignNode[Conv_5...Add_9]}"), (V{"Conv_5...Add_9"}));
  EXPECT_EQ(trace::tensorrt_name_origins("(Unnamed Layer* 3) [Shuffle]"), V{});
  EXPECT_EQ(trace::tensorrt_name_origins("Reformatting CopyNode for Input Tensor 0 to Conv_0"), V{});
  EXPECT_EQ(trace::tensorrt_reformat_target("Reformatting CopyNode for Input Tensor 0 to Conv_0 + Relu_1"),
            "Conv_0 + Relu_1");
  EXPECT_EQ(trace::tensorrt_reformat_target("Conv_0 + Relu_1 input reformatter 0"), "Conv_0 + Relu_1");
}

TEST(TensorRtProfile, AProfileOfAnotherNetworkIsAnError) {
  const auto other = config::load_network(testing::source_path("tests/trace/fixtures/three_layers.yaml"));
  const std::string e = error_of([&] { matched("tiny_convnet_trt.profile.json", other); });
  EXPECT_NE(e.find("a profile of another network?"), std::string::npos) << e;
  const std::string info = error_of([&] {
    auto t = trace::read_measured_trace(fixture("tiny_convnet_trt.profile.json"));
    trace::add_tensorrt_layer_info(t, "{\"Layers\": [\"conv1\", \"relu1\"], \"Bindings\": []}", "l.json");
  });
  EXPECT_NE(info.find("layer information of another engine?"), std::string::npos) << info;
}

TEST(NsightSystems, SqliteLayersByNvtxRangesMatchTheHandComputedCsv) {
  const auto net = tiny();
  const auto trace = trace::read_measured_trace(fixture("tiny_convnet_nsys.sqlite"));
  EXPECT_EQ(trace.format, MeasuredFormat::nsys_sqlite);
  const auto m = trace::match_measurements(trace, net);
  expect_same_times(layer_times(m, net), layer_times(matched("tiny_convnet_nsys_as_csv.csv", net), net));
  EXPECT_EQ(entry(m, "Conv_0 + Relu_1").fate, EntryFate::merged);
  EXPECT_EQ(entry(m, "Reformatting CopyNode for Input Tensor 0 to Conv_0 + Relu_1").fate, EntryFate::data_movement);
  // The warm-up kernel before the first "frame" range is left out; the copy at the end of each frame is kept.
  for (const auto& e : trace.entries) EXPECT_NE(e.name, "warmup_kernel");
  EXPECT_NEAR(entry(m, "[CUDA memcpy DtoH]").time_s, 3e-6, 1e-12);
}

/// The frames make_nsys_sqlite.py and the CSV describe: GPU work from 1 050 000 ns and 2 050 000 ns, back to back,
/// 76 000 + 3 000 ns and 76 400 + 3 000 ns long, 9 activities each.
void expect_script_frames(const trace::MeasuredTrace& t) {
  ASSERT_EQ(t.frames.size(), 2u);
  EXPECT_NEAR(t.frames[0].start_s, 0, 1e-15);
  EXPECT_NEAR(t.frames[0].end_s, 79000e-9, 1e-15);
  EXPECT_NEAR(t.frames[1].start_s, 1e-3, 1e-15);
  EXPECT_NEAR(t.frames[1].end_s - t.frames[1].start_s, 79400e-9, 1e-15);
  ASSERT_EQ(t.frames[1].spans.size(), 9u);
  EXPECT_NEAR(t.frames[1].spans[2].start_s, 1e-3 + 25000e-9, 1e-15);  // the third activity: Conv_2's first kernel
  EXPECT_NEAR(t.frames[1].spans[2].duration_s, 25400e-9, 1e-15);
  EXPECT_EQ(t.frames[1].spans[2].stream, "7");
}

TEST(NsightSystems, FramesAreTimelinesOfTheGpuWork) {
  expect_script_frames(trace::read_measured_trace(fixture("tiny_convnet_nsys.sqlite")));
  const auto csv = trace::read_measured_trace(fixture("tiny_convnet_nsys_cuda_gpu_trace.csv"));
  EXPECT_EQ(csv.format, MeasuredFormat::nsys_csv);
  expect_script_frames(csv);
}

TEST(NsightSystems, CsvWithoutNvtxGroupsKernelsByNameWithinAFrame) {
  const auto t = trace::read_measured_trace(fixture("tiny_convnet_nsys_cuda_gpu_trace.csv"));
  std::map<std::string, double> by_name;
  for (const auto& e : t.entries) by_name[e.name] = e.time_s;
  const std::string conv = "sm86_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nchwkcrs_nchw";
  EXPECT_NEAR(by_name[conv], (21000 + 20800) / 2.0 * 1e-9, 1e-15);
  EXPECT_NEAR(by_name[conv + " #2"], (25000 + 25400) / 2.0 * 1e-9, 1e-15);
  EXPECT_NEAR(by_name["copyPackedKernel #2"], 2000e-9, 1e-15);
  EXPECT_EQ(t.entries.size(), 9u);
  // Kernel names are no layer names: listed, no error (unlike a profile whose layer names match nothing).
  const auto m = trace::match_measurements(t, tiny());
  EXPECT_EQ(m.measurements.size(), 9u);
}

TEST(NsightSystems, BadExportsAreLocatedErrors) {
  auto error_in = [](const std::string& file) { return error_of([&] { trace::read_measured_trace(fixture(file)); }); };
  EXPECT_NE(error_in("nsys_truncated.sqlite").find("a truncated or damaged file?"), std::string::npos);
  EXPECT_NE(error_in("nsys_old_schema.sqlite").find("CUPTI_ACTIVITY_KIND_KERNEL: no column \"correlationId\""),
            std::string::npos)
      << error_in("nsys_old_schema.sqlite");
  const std::string other = error_of([&] { matched("nsys_other_network.sqlite", tiny()); });
  EXPECT_NE(other.find("a profile of another network?"), std::string::npos) << other;
}

TEST(OnnxRuntimeProfile, NodeTimesMatchTheHandComputedCsvAndFramesAreModelRuns) {
  const auto net = tiny();
  const auto t = trace::read_measured_trace(fixture("tiny_convnet_ort.json"));
  EXPECT_EQ(t.format, MeasuredFormat::onnxruntime_profile);
  const auto m = trace::match_measurements(t, net);
  expect_same_times(layer_times(m, net), layer_times(matched("tiny_convnet_ort_as_csv.csv", net), net));
  ASSERT_EQ(t.frames.size(), 2u);
  EXPECT_NEAR(t.frames[0].start_s, 0, 1e-15);
  EXPECT_NEAR(t.frames[0].end_s, 100e-6, 1e-15);
  EXPECT_NEAR(t.frames[1].start_s, 1000e-6, 1e-15);
  ASSERT_EQ(t.frames[1].spans.size(), 7u);
  EXPECT_NEAR(t.frames[1].spans[0].start_s, (6002 - 4995) * 1e-6, 1e-15);
  EXPECT_NEAR(t.frames[1].spans[0].duration_s, 24e-6, 1e-15);
}

TEST(EdgeProfiles, TheBudgetOfEachFormatIsTheBudgetOfItsCsvTwin) {
  const auto hw = config::load_hardware(testing::source_path("hardware/jetson_orin_nx_16gb.yaml"));
  const auto net = tiny();
  for (const auto& [profile, twin] : kTwins) {
    model::BudgetOptions a, b;
    for (std::size_t u = 0; u < hw.units.size(); ++u)
      if (hw.units[u].name == "gpu") a.unit = b.unit = u;
    a.measured = matched(profile, net).measurements;
    b.measured = matched(twin, net).measurements;
    const auto ra = model::make_budget(hw, net, a);
    const auto rb = model::make_budget(hw, net, b);
    ASSERT_EQ(ra.kernels.size(), rb.kernels.size());
    for (std::size_t k = 0; k < ra.kernels.size(); ++k) {
      ASSERT_EQ(ra.kernels[k].measured_s.has_value(), rb.kernels[k].measured_s.has_value()) << profile;
      if (ra.kernels[k].measured_s) {
        EXPECT_NEAR(*ra.kernels[k].measured_s, *rb.kernels[k].measured_s, 1e-12) << profile;
      }
    }
    EXPECT_EQ(ra.unmeasured_kernels, rb.unmeasured_kernels) << profile;
  }
}

/// The lines of a file that are not comments (the calibrated file's header names the measured files).
std::string without_comments(const fs::path& file) {
  std::ifstream in(file);
  std::string line, out;
  while (std::getline(in, line))
    if (!line.starts_with("#")) out += line + "\n";
  return out;
}

class EdgeProfilesCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("framesim-edge-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(EdgeProfilesCli, CalibrationFromEachFormatIsTheCalibrationFromItsCsvTwin) {
  const std::string hw = "hardware/jetson_orin_nx_16gb.yaml", onnx = kEdge + "tiny_convnet.onnx";
  for (const auto& [profile, twin] : kTwins) {
    const fs::path a = dir_ / "a.yaml", b = dir_ / "b.yaml";
    const auto ra =
        testing::run_cli(fmt::format("calibrate {} {} {} --unit gpu -o '{}'", hw, onnx, kEdge + profile, a.string()));
    const auto rb =
        testing::run_cli(fmt::format("calibrate {} {} {} --unit gpu -o '{}'", hw, onnx, kEdge + twin, b.string()));
    ASSERT_EQ(ra.exit_code, 0) << ra.err;
    ASSERT_EQ(rb.exit_code, 0) << rb.err;
    EXPECT_EQ(without_comments(a), without_comments(b)) << profile;
    // From the fitted roofs to the end, without the last line ("wrote a.yaml").
    const auto fitted = [](const std::string& out) {
      const std::string from = out.substr(out.find("fitted roofs"));
      return from.substr(0, from.rfind("wrote "));
    };
    EXPECT_EQ(fitted(ra.out), fitted(rb.out)) << profile;
  }
}

TEST_F(EdgeProfilesCli, ReplayOfEachFormatIsTheReplayOfItsCsvTwin) {
  auto scenario = [&](const std::string& measured) {
    const fs::path file = dir_ / "replay.yaml";
    std::ofstream(file) << fmt::format(
        "name: replay\nhardware: {}\nnetworks:\n  net: {{file: {}}}\nseed: 1\nduration: \"2 s\"\nwarmup: \"0.1 s\"\n"
        "deadline: \"10 ms\"\nsensors:\n  camera: {{rate: \"30 Hz\"}}\nstages:\n"
        "  infer: {{unit: gpu, inputs: [camera], network: net, measured: {}}}\n",
        testing::source_path("hardware/jetson_orin_nx_16gb.yaml"), fixture("tiny_convnet.onnx"), fixture(measured));
    const fs::path out = dir_ / ("run-" + measured);
    const auto r = testing::run_cli(fmt::format("run '{}' -o '{}' -q", file.string(), out.string()));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return core::read_file(out / "frames.csv");
  };
  for (const auto& [profile, twin] : kTwins) {
    const std::string a = scenario(profile), b = scenario(twin);
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, b) << profile;
  }
}

TEST_F(EdgeProfilesCli, AReplayedNsightProfileShowsItsOwnFramesBesideTheSimulatedOnes) {
  // make_nsys_sqlite.py writes two frames: kernels of 4 + 21 + 25 + 5 + 6 + 5 + 2 + 8 = 76 us back to back, then
  // a 3 us copy: 79 us; the second 4.2 + 20.8 + 25.4 + 4.8 + 6.2 + 4.8 + 2 + 8.2 = 76.4 us + 3 us = 79.4 us. In the
  // first, Conv_2's first kernel starts after the reformat (4 us) and Conv_0 + Relu_1 (21 us): at 25 us.
  const fs::path file = dir_ / "frames.yaml";
  std::ofstream(file) << fmt::format(
      "name: frames\nhardware: {}\nnetworks:\n  net: {{file: {}}}\nduration: \"1 s\"\ndeadline: \"10 ms\"\n"
      "sensors:\n  camera: {{rate: \"30 Hz\"}}\nstages:\n  infer: {{unit: gpu, inputs: [camera], network: net, "
      "measured: {}}}\n",
      testing::source_path("hardware/jetson_orin_nx_16gb.yaml"), fixture("tiny_convnet.onnx"),
      fixture("tiny_convnet_nsys.sqlite"));
  const fs::path out = dir_ / "run-frames";
  const auto r = testing::run_cli(fmt::format("run '{}' -o '{}' -q --json", file.string(), out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(core::read_file(out / "summary.json"));
  const auto& m = summary["measured_frames"]["infer"];
  EXPECT_EQ(m["frames"].get<int>(), 2);
  EXPECT_NEAR(m["measured_s"]["min"].get<double>(), 79.0e-6, 1e-12);
  EXPECT_NEAR(m["measured_s"]["max"].get<double>(), 79.4e-6, 1e-12);
  EXPECT_GT(m["simulated_service_s"]["count"].get<int>(), 20);
  const auto rows = core::parse_csv(core::read_file(out / "measured_timeline.csv"));
  bool conv2 = false;
  for (const auto& row : rows)
    if (row.cells.size() >= 5 && row.cells[1].text == "0" && row.cells[3].text == "Conv_2" && !conv2) {
      conv2 = true;
      EXPECT_NEAR(std::stod(row.cells[4].text), 25e-6, 1e-12);
    }
  EXPECT_TRUE(conv2);
}

}  // namespace
}  // namespace framesim
