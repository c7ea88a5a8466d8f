// Every worked number of the seed text (seeds/000) and its problems 1-3, out of `framesim budget` on the
// shipped hardware and network files, as a user would run it (JSON output, numbers with tolerances).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "core/files.hpp"
#include "test_support.hpp"

using framesim::testing::CliRun;
using framesim::testing::run_cli;
using nlohmann::json;

namespace {

json budget(const std::string& args) {
  const CliRun o = run_cli("budget " + args + " --json");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  return json::parse(o.out);
}

const json& kernel(const json& b, const std::string& name) {
  for (const auto& k : b["kernels"])
    if (k["name"] == name) return k;
  ADD_FAILURE() << "no kernel " << name;
  static const json none;
  return none;
}

}  // namespace

TEST(SeedBudget, ReferenceDeviceRidgeAndTheTwoMatmuls) {
  const json b = budget("hardware/seed_reference.yaml scenarios/networks/seed_matmuls.yaml");
  EXPECT_DOUBLE_EQ(b["machine"]["memory"][0]["ridge_ops_per_byte"]["fp32"].get<double>(), 40.0);
  const auto& square = kernel(b, "square_1024");
  EXPECT_NEAR(square["intensity"].get<double>(), 170.67, 0.01);
  EXPECT_EQ(square["limit"], "compute");
  EXPECT_NEAR(square["bound_s"].get<double>(), 1.074e-3, 0.0005e-3);
  const auto& linear = kernel(b, "batch1_linear");
  EXPECT_NEAR(linear["intensity"].get<double>(), 0.499, 0.0005);
  EXPECT_NEAR(linear["bound_s"].get<double>(), 84.0e-6, 0.05e-6);
  EXPECT_NEAR(linear["fraction_of_peak"].get<double>(), 0.0125, 0.00005);
  // Each kernel's ridge: its compute roof over the bandwidth of the level that binds its memory time. Both are
  // fp32 and the device has no derating: 2 TFLOP/s / 50 GB/s = 40 op/B, the machine's ridge above.
  EXPECT_DOUBLE_EQ(square["ridge"].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(linear["ridge"].get<double>(), 40.0);
}

TEST(SeedBudget, ConvolutionAgainstItsDepthwiseTwin) {
  const json b = budget(
      "hardware/seed_reference.yaml scenarios/networks/seed_conv_vs_depthwise.yaml --compare depthwise3x3,conv3x3");
  EXPECT_NEAR(kernel(b, "conv3x3")["bound_s"].get<double>(), 1.85e-3, 0.005e-3);
  EXPECT_NEAR(kernel(b, "depthwise3x3")["bound_s"].get<double>(), 129e-6, 0.5e-6);
  EXPECT_EQ(kernel(b, "depthwise3x3")["limit"], "dram");
  const auto& c = b["comparisons"][0];
  EXPECT_DOUBLE_EQ(c["ops_ratio"].get<double>(), 1.0 / 256);
  EXPECT_NEAR(c["bytes_ratio"].get<double>(), 0.73, 0.005);
  EXPECT_NEAR(1.0 / c["time_ratio"].get<double>(), 14.4, 0.05);
}

TEST(SeedBudget, PureBandwidthOperators) {
  const json b = budget("hardware/seed_reference.yaml scenarios/networks/seed_bandwidth_ops.yaml");
  EXPECT_NEAR(kernel(b, "add")["intensity"].get<double>(), 1.0 / 12, 1e-9);
  EXPECT_NEAR(kernel(b, "relu")["intensity"].get<double>(), 0.125, 1e-9);
  EXPECT_NEAR(kernel(b, "layernorm")["intensity"].get<double>(), 1.0, 0.002);  // "about 1"
  EXPECT_LT(kernel(b, "softmax")["intensity"].get<double>(), 1.0);             // "under 1"
  EXPECT_DOUBLE_EQ(kernel(b, "gather")["intensity"].get<double>(), 0.0);       // "exactly zero"
  // "a 4-byte gather ... costs a 64-byte cache line": 1024 lookups of one fp32 value read 1024 lines.
  EXPECT_DOUBLE_EQ(kernel(b, "gather")["bytes"]["dram"].get<double>(), 1024.0 * 64 + 1024 * 4 + 1024 * 4);
}

TEST(SeedBudget, SevenBillionInt8DecodeIs140MsPerToken) {
  const json b = budget("hardware/seed_reference.yaml scenarios/networks/seed_7b_int8_decode.yaml");
  EXPECT_NEAR(b["model"]["params"].get<double>(), 7.0e9, 0.001e9);
  EXPECT_NEAR(b["floor"]["weight_stream_s"].get<double>(), 0.140, 0.0002);
  EXPECT_NEAR(b["floor"]["estimate_s"].get<double>(), 0.140, 0.0003);
}

TEST(SeedBudget, FusionTakesTheResidualTailFromEightTraversalsToTwo) {
  // Problem 2: 16 blocks on 1x64x112x112 fp16 at 50 GB/s: 192.7 us saved per block, 3.08 ms per network.
  const json b = budget("hardware/seed_reference.yaml scenarios/networks/seed_residual_tail_fp16.yaml");
  const auto& f = b["fusion"];
  ASSERT_EQ(f["groups"].size(), 16u);
  for (const auto& g : f["groups"]) {
    EXPECT_EQ(g["tail_traversals_before"].get<int>(), 8);
    EXPECT_EQ(g["tail_traversals_after"].get<int>(), 2);
    EXPECT_NEAR((g["activation_bytes_before"].get<double>() - g["activation_bytes_after"].get<double>()) / 50e9,
                192.7e-6, 0.05e-6);
  }
  EXPECT_NEAR(f["traffic_s_before"].get<double>() - f["traffic_s_after"].get<double>(), 3.08e-3, 0.005e-3);
}

TEST(SeedBudget, FortyMegabytesAtOneSixtyPicojoulesPerByte) {
  const json b = budget("hardware/seed_reference.yaml scenarios/networks/seed_40mb_traffic.yaml --rate 30Hz");
  EXPECT_NEAR(b["energy"]["floor_J"].get<double>(), 6.4e-3, 0.001e-3);
  EXPECT_NEAR(b["energy"]["floor_W"].get<double>(), 0.19, 0.005);
}

TEST(SeedBudget, ProblemOneNpuFullyConnectedLayer) {
  const json b = budget("hardware/seed_npu.yaml scenarios/networks/seed_fc2048_int8.yaml");
  EXPECT_DOUBLE_EQ(b["machine"]["memory"][0]["ridge_ops_per_byte"]["int8"].get<double>(), 160.0);
  const auto& k = b["kernels"][0];
  EXPECT_NEAR(k["intensity"].get<double>(), 2.0, 0.002);
  EXPECT_NEAR(k["bound_s"].get<double>(), 167.9e-6, 0.05e-6);
  EXPECT_NEAR(k["fraction_of_peak"].get<double>(), 0.0125, 0.00005);
}

TEST(SeedBudget, ProblemThreeDecodeCeilingShortAndLongContext) {
  const json short_context = budget("hardware/seed_68gbs.yaml scenarios/networks/seed_3b_int4_decode_short.yaml");
  const json long_context = budget("hardware/seed_68gbs.yaml scenarios/networks/seed_3b_int4_decode_4k.yaml");
  EXPECT_NEAR(short_context["floor"]["weight_stream_s"].get<double>(), 31.2e-3, 0.1e-3);
  EXPECT_NEAR(short_context["floor"]["estimate_s"].get<double>(), 31.3e-3, 0.15e-3);
  EXPECT_NEAR(long_context["floor"]["estimate_s"].get<double>(), 38.2e-3, 0.2e-3);  // + 327 MB of KV cache
}

TEST(SeedBudget, VerdictAgainstTheSlice) {
  // resnet18 on the seed device fits a 12 ms slice (headroom = 1 - estimate / slice). The 7B int8 decode streams
  // 7.0006 GB of weights and 4.5 MB of activations and KV writes at 50 GB/s: its bound, 140.1 ms at peak roofs,
  // exceeds a 33.3 ms slice by 140.1 - 33.3 = 106.8 ms: impossible, not merely over budget.
  const json fits = budget("hardware/seed_reference.yaml scenarios/networks/resnet18.yaml --slice 12ms");
  EXPECT_TRUE(fits["verdict"]["fits"].get<bool>());
  EXPECT_FALSE(fits["verdict"]["impossible"].get<bool>());
  EXPECT_DOUBLE_EQ(fits["verdict"]["slice_s"].get<double>(), 0.012);
  EXPECT_NEAR(fits["verdict"]["headroom"].get<double>(), 1 - fits["floor"]["estimate_s"].get<double>() / 0.012, 1e-12);
  EXPECT_EQ(fits["verdict"]["excess_s"].get<double>(), 0.0);
  const json veto = budget("hardware/seed_reference.yaml scenarios/networks/seed_7b_int8_decode.yaml --slice 33.3ms");
  EXPECT_FALSE(veto["verdict"]["fits"].get<bool>());
  EXPECT_TRUE(veto["verdict"]["impossible"].get<bool>());
  EXPECT_NEAR(veto["floor"]["bound_s"].get<double>(), 0.1401, 0.05e-3);
  EXPECT_NEAR(veto["verdict"]["excess_s"].get<double>(), 0.1068, 0.05e-3);
}

namespace {

/// The `diagnosis_band` of each kernel of seed_matmuls when it is measured at `square_s` and `linear_s`.
std::pair<std::string, std::string> bands(const std::string& hardware, double square_s, double linear_s,
                                          const std::string& tag) {
  const auto csv =
      std::filesystem::temp_directory_path() / ("measured-" + tag + "-" + std::to_string(::getpid()) + ".csv");
  char text[160];
  std::snprintf(text, sizeof text, "layer,time_s\nsquare_1024,%.17g\nbatch1_linear,%.17g\n", square_s, linear_s);
  std::ofstream(csv) << text;
  const json m = budget(hardware + " scenarios/networks/seed_matmuls.yaml --measured " + csv.string());
  std::filesystem::remove(csv);
  return {kernel(m, "square_1024")["diagnosis_band"].get<std::string>(),
          kernel(m, "batch1_linear")["diagnosis_band"].get<std::string>()};
}

}  // namespace

TEST(SeedBudget, MeasuredTimesFallInTheSeedsFourBands) {
  // On the seed device (peak roofs, no overhead) the estimate is the bound: square_1024's is
  // 2 x 1024^3 / 2e12 = 1.073741824 ms (compute), batch1_linear's 4,202,496 B / 50e9 = 84.04992 us (DRAM). The
  // seed's bands on measured / estimate: < 1 impossible, [1, 2) at the roof ("~1.2x"), [2, 8) uncounted bytes
  // ("~3x"), >= 8 overhead ("~20x"). Each band is hit at its seed figure and just inside both of its edges.
  const std::string hw = "hardware/seed_reference.yaml";
  const double square = 2.0 * 1024 * 1024 * 1024 / 2e12, linear = 4202496.0 / 50e9;
  EXPECT_EQ(bands(hw, 0.8 * square, 20 * linear, "a"),
            std::make_pair(std::string("below_bound"), std::string("overhead")));
  EXPECT_EQ(bands(hw, 1.2 * square, 3 * linear, "b"),
            std::make_pair(std::string("at_roof"), std::string("uncounted_bytes")));
  EXPECT_EQ(bands(hw, 1.001 * square, 2.001 * linear, "c"),
            std::make_pair(std::string("at_roof"), std::string("uncounted_bytes")));
  EXPECT_EQ(bands(hw, 1.999 * square, 7.999 * linear, "d"),
            std::make_pair(std::string("at_roof"), std::string("uncounted_bytes")));
  EXPECT_EQ(bands(hw, 0.999 * square, 8.001 * linear, "e"),
            std::make_pair(std::string("below_bound"), std::string("overhead")));
}

TEST(SeedBudget, MeasuredBetweenTheBoundAndTheEstimateIsPessimisticEfficiency) {
  // The seed device at compute efficiency 0.5: square_1024's estimate is 2 x 1024^3 / 1e12 = 2.147 ms (its 12.58 MB
  // take 0.2517 ms), its bound still 1.0737 ms. Measured 1.5 ms: 1.397x the bound, 0.699x the estimate: the
  // fifth reading, "the efficiencies are pessimistic". batch1_linear is memory-bound (2.1 us of compute at
  // 1 TFLOP/s under 84.05 us of bytes): its estimate stays 84.04992 us, and 1.5x that is at the roof.
  const std::string seed = framesim::core::read_file(framesim::testing::source_path("hardware/seed_reference.yaml"));
  const std::string from = "    efficiency: 1.0\n    dispatch_overhead";
  ASSERT_NE(seed.find(from), std::string::npos);
  std::string derated = seed;
  derated.replace(derated.find(from), from.size(), "    efficiency: 0.5\n    dispatch_overhead");
  const auto file = std::filesystem::temp_directory_path() / ("seed-derated-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << derated;
  const auto b = bands(file.string(), 1.5e-3, 1.5 * 4202496.0 / 50e9, "derated");
  std::filesystem::remove(file);
  EXPECT_EQ(b, std::make_pair(std::string("faster_than_estimate"), std::string("at_roof")));
}

TEST(SeedBudget, MeasuredRatiosAndUnmatchedNames) {
  // The ratio is measured / estimate: 0.8 of square_1024's 1.073741824 ms reads 0.8; a name that is no layer is
  // listed, not dropped.
  const double square = 2.0 * 1024 * 1024 * 1024 / 2e12;
  const auto csv = std::filesystem::temp_directory_path() / ("measured-" + std::to_string(::getpid()) + ".csv");
  char text[160];
  std::snprintf(text, sizeof text, "layer,time_s\nsquare_1024,%.17g\nnot_a_layer,1\n", 0.8 * square);
  std::ofstream(csv) << text;
  const json m = budget("hardware/seed_reference.yaml scenarios/networks/seed_matmuls.yaml --measured " + csv.string());
  std::filesystem::remove(csv);
  EXPECT_NEAR(kernel(m, "square_1024")["ratio"].get<double>(), 0.8, 1e-12);
  EXPECT_NEAR(kernel(m, "square_1024")["bound_ratio"].get<double>(), 0.8, 1e-12);
  EXPECT_EQ(m["unmatched_measurements"], json::array({"not_a_layer"}));
  EXPECT_EQ(m["unmeasured_kernels"], json::array({"batch1_linear"}));
}

TEST(SeedBudget, RooflineSvgHasEveryKernelAsAPoint) {
  const auto svg = std::filesystem::temp_directory_path() / ("roofline-" + std::to_string(::getpid()) + ".svg");
  const CliRun o = run_cli(
      "budget hardware/jetson_orin_nx_16gb.yaml scenarios/networks/resnet18.yaml --unit gpu --precision int8 --svg " +
      svg.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string text = framesim::core::read_file(svg);
  std::filesystem::remove(svg);
  EXPECT_EQ(text.rfind("<svg", 0), 0u);
  // ResNet-18 after fusion, counted by hand: conv1+bn1+relu1, maxpool, layer1's two blocks of two convs (4),
  // layer2, layer3 and layer4 each two blocks of two convs plus a downsample conv (5 each), avgpool+flatten and
  // fc: 1 + 1 + 4 + 15 + 1 + 1 = 23 kernels, each one point with a <title>. The legend adds one marker per limit
  // that binds a kernel (dram, the int8 roof, dispatch overhead: 3), without a title.
  std::size_t points = 0, legend = 0;
  std::set<std::string> titled;
  for (auto pos = text.find("<circle"); pos != std::string::npos; pos = text.find("<circle", pos + 1)) {
    const auto end = text.find('>', pos);
    ASSERT_NE(end, std::string::npos);
    if (text[end - 1] == '/') {
      ++legend;
      continue;
    }
    ++points;
    const auto title = text.find("<title>", end);
    ASSERT_EQ(title, end + 1) << "a point without its title at " << pos;
    titled.insert(text.substr(title + 7, text.find(": ", title) - title - 7));
  }
  EXPECT_EQ(points, 23u);
  EXPECT_EQ(legend, 3u);
  EXPECT_EQ(titled.size(), 23u);  // every kernel once
  for (const char* k : {"conv1+bn1+relu1", "maxpool", "layer2_0_down+layer2_0_down_bn", "avgpool+flatten", "fc"})
    EXPECT_EQ(titled.count(k), 1u) << k;
  EXPECT_NE(text.find("dram"), std::string::npos);
  EXPECT_NE(text.find("int8"), std::string::npos);
}

TEST(SeedBudget, RooflinePointsWearTheColourOfWhatBindsThem) {
  // On the seed device batch1_linear is bound by DRAM, square_1024 by the fp32 roof. On the Orin NX GPU (an L2
  // slope drawn before the DRAM one) the int8 classifier is bound by DRAM and avgpool+flatten by dispatch
  // overhead. Each point has the colour of the line that binds it; overhead, which has no line, is grey.
  auto roofline = [](const std::string& args) {
    const auto svg =
        std::filesystem::temp_directory_path() / ("roofline-colours-" + std::to_string(::getpid()) + ".svg");
    const CliRun o = run_cli("budget " + args + " --svg " + svg.string());
    EXPECT_EQ(o.exit_code, 0) << o.err;
    std::string text = framesim::core::read_file(svg);
    std::filesystem::remove(svg);
    return text;
  };
  auto attribute = [](const std::string& text, std::size_t from, const std::string& name) {
    const auto at = text.rfind(name + "=\"", from) + name.size() + 2;
    return text.substr(at, text.find('"', at) - at);
  };
  // A legend line comes just before its label; a point's <title> ("NAME: time (limit), ...") is inside its <circle>.
  auto line_colour = [&](const std::string& text, const std::string& label) {
    return attribute(text, text.find(">" + label + "</text>"), "stroke");
  };
  auto point_colour = [&](const std::string& text, const std::string& kernel) {
    return attribute(text, text.find("<title>" + kernel + ": "), "fill");
  };
  const std::string seed = roofline("hardware/seed_reference.yaml scenarios/networks/seed_matmuls.yaml");
  EXPECT_EQ(point_colour(seed, "batch1_linear"), line_colour(seed, "estimate: dram 50 GB/s"));
  EXPECT_EQ(point_colour(seed, "square_1024"), line_colour(seed, "estimate: fp32 2 TOP/s"));
  EXPECT_NE(seed.find(">kernel: dram-bound</text>"), std::string::npos);
  EXPECT_NE(seed.find(">kernel: fp32-bound</text>"), std::string::npos);

  const std::string orin =
      roofline("hardware/jetson_orin_nx_16gb.yaml scenarios/networks/mobilenet_v2.yaml --precision int8");
  EXPECT_EQ(point_colour(orin, "classifier"), line_colour(orin, "estimate: dram 71.68 GB/s"));
  EXPECT_NE(point_colour(orin, "classifier"), line_colour(orin, "estimate: gpu_l2 329 GB/s"));
  EXPECT_EQ(point_colour(orin, "avgpool+flatten"), "#7f7f7f");
  for (const char* line : {"estimate: gpu_l2 329 GB/s", "estimate: dram 71.68 GB/s", "estimate: fp32 1.128 TOP/s",
                           "estimate: int8 18.05 TOP/s"})
    EXPECT_NE(line_colour(orin, line), "#7f7f7f") << line;
  EXPECT_NE(orin.find(">kernel: overhead-bound</text>"), std::string::npos);
  // The bound's peak roofs are drawn too where they differ from the estimate's: dashed, in the colour of the
  // estimate's roof they bound (not all in one grey, where several bounds could not be told apart).
  EXPECT_EQ(line_colour(orin, "bound: dram peak 102.4 GB/s"), line_colour(orin, "estimate: dram 71.68 GB/s"));
  const auto bound_at = orin.find(">bound: dram peak 102.4 GB/s</text>");
  EXPECT_NE(orin.rfind("stroke-dasharray", bound_at), std::string::npos);
  EXPECT_GT(orin.rfind("stroke-dasharray", bound_at), orin.rfind("<line", bound_at))
      << "the bound's legend line is dashed";
}
