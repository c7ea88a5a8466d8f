// The shipped networks (scenarios/networks/*.yaml): every file loads; the real architectures match their
// published parameter and MAC counts, as do the validation suite's networks the HaX-CoNN pairs run
// (tests/validation/networks, written by make_networks.py); the seed's networks give the seed's worked numbers
// through the budget on the seed's devices (peak roofs as the seed states them).
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/hardware.hpp"
#include "config/network.hpp"
#include "model/budget.hpp"
#include "test_support.hpp"

using namespace framesim;
using framesim::testing::shipped_yaml_files;
using framesim::testing::source_path;

namespace {

model::NetworkSpec load(const std::string& file) {
  return config::load_network(source_path("scenarios/networks/" + file));
}
model::HardwareSpec hardware(const std::string& file) { return config::load_hardware(source_path("hardware/" + file)); }
model::NetworkSpec load_validation(const std::string& file) {
  return config::load_network(source_path("tests/validation/networks/" + file));
}

/// Operations in the multiply-accumulate layers (convolutions, linear layers, matmuls), bias adds included.
double mac_layer_ops(const model::NetworkSpec& net) {
  double ops = 0;
  for (const auto& l : net.layers)
    if (l.kind == model::OpKind::conv2d || l.kind == model::OpKind::linear || l.kind == model::OpKind::matmul)
      ops += l.ops;
  return ops;
}

double params_of_kind(const model::NetworkSpec& net, model::OpKind kind) {
  double n = 0;
  for (const auto& l : net.layers)
    if (l.kind == kind) n += l.params_count;
  return n;
}

double relative(double value, double reference) { return std::fabs(value - reference) / reference; }

model::BudgetReport budget(const std::string& hw_file, const std::string& net_file) {
  const auto hw = hardware(hw_file);
  const auto net = load(net_file);
  EXPECT_TRUE(model::missing_roofs(net, hw.units[0]).empty()) << net_file << " on " << hw_file;
  return model::make_budget(hw, net, model::BudgetOptions{});
}

}  // namespace

// ---- every file ----

TEST(ShippedNetworks, EveryFileLoadsAndStartsWithAHeaderComment) {
  const auto files = shipped_yaml_files("scenarios/networks");
  ASSERT_GE(files.size(), 15u);  // the foundation's 3 seed examples + the 12 files of this change
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    model::NetworkSpec net;
    ASSERT_NO_THROW(net = config::load_network(path));
    EXPECT_FALSE(net.name.empty());
    EXPECT_FALSE(net.layers.empty());
    EXPECT_FALSE(net.outputs.empty());
    std::ifstream in(path);
    std::string first;
    std::getline(in, first);
    EXPECT_EQ(first.rfind("# ", 0), 0u) << "a network file opens with a comment naming what it models";
  }
}

TEST(ShippedNetworks, EveryFileBudgetsOnTheSeedReferenceDevice) {
  // The seed device has fp32, fp16 and int8 roofs: every shipped network (fp32, fp16, w4a16 -> fp16
  // arithmetic, int8) can be budgeted on it as written.
  const auto hw = hardware("seed_reference.yaml");
  for (const auto& path : shipped_yaml_files("scenarios/networks")) {
    SCOPED_TRACE(path.filename().string());
    const auto net = config::load_network(path);
    ASSERT_TRUE(model::missing_roofs(net, hw.units[0]).empty());
    const auto r = model::make_budget(hw, net, model::BudgetOptions{});
    EXPECT_GT(r.estimate_s, 0.0);
    EXPECT_TRUE(r.fits);
  }
}

// ---- real architectures against their published counts ----

TEST(PublishedNetworks, ResNet18MatchesTorchvision) {
  const auto net = load("resnet18.yaml");
  // torchvision: 11,689,512 parameters, batchnorm scale and shift counted -- as framesim counts them.
  EXPECT_DOUBLE_EQ(net.total_params(), 11689512.0);
  // 1.82 GMACs published (fvcore/ptflops style: convolutions + fc). framesim: 1.814 G (-0.3 %).
  EXPECT_LT(relative(mac_layer_ops(net) / 2, 1.82e9), 0.01);
  // All operations: 2 x MACs plus batchnorms, ReLUs, adds and pools (+0.3 %): within 1 % of 2 x 1.82 G.
  EXPECT_LT(relative(net.total_ops(), 2 * 1.82e9), 0.01);
  EXPECT_GT(net.total_ops(), mac_layer_ops(net));
}

TEST(PublishedNetworks, ResNet18FoldsEveryBatchnormUnderAutomaticFusion) {
  const auto hw = hardware("seed_reference.yaml");
  const auto net = load("resnet18.yaml");
  const auto plan = model::plan_network(net, hw, 0);
  std::size_t batchnorms = 0, folded = 0;
  for (const auto& l : net.layers) batchnorms += l.kind == model::OpKind::batchnorm;
  for (const auto& k : plan.kernels) folded += k.folded.size();
  EXPECT_EQ(batchnorms, 20u);  // 17 convolutions in the body + 3 downsample convolutions
  EXPECT_EQ(folded, batchnorms);
  // 20 conv kernels + the maxpool + global pool (+ flatten, free) + fc.
  EXPECT_EQ(plan.kernels.size(), 23u);
}

TEST(PublishedNetworks, MobileNetV2MatchesTorchvision) {
  const auto net = load("mobilenet_v2.yaml");
  EXPECT_DOUBLE_EQ(net.total_params(), 3504872.0);  // torchvision mobilenet_v2
  // The paper: 300 M MACs. framesim: 300.8 M in the convolutions and the classifier.
  EXPECT_LT(relative(mac_layer_ops(net) / 2, 300e6), 0.01);
  // Depthwise networks have few MACs per activation: batchnorms, ReLU6s, adds and the pool add about
  // 4.3 % to 2 x MACs here.
  EXPECT_LT(relative(net.total_ops(), 2 * 300e6), 0.05);
}

TEST(PublishedNetworks, YoloV3TinyMatchesDarknet) {
  const auto net = load("yolov3_tiny.yaml");
  // 8.86 M usually quoted; ultralytics' exact count (batchnorm scale and shift included) is 8,852,366.
  EXPECT_DOUBLE_EQ(net.total_params(), 8852366.0);
  EXPECT_LT(relative(net.total_params(), 8.86e6), 0.002);
  // darknet: 5.56 BFLOPs at 416 (convolutions only, a MAC = 2). framesim's convolutions: 5.565 G.
  EXPECT_LT(relative(mac_layer_ops(net), 5.56e9), 0.005);
  // With batchnorms, leaky ReLUs and pools: +0.5 %.
  EXPECT_LT(relative(net.total_ops(), 5.56e9), 0.01);
  const auto head13 = net.find_layer("head13");
  const auto head26 = net.find_layer("head26");
  ASSERT_TRUE(head13 && head26);
  EXPECT_EQ(net.tensors[static_cast<std::size_t>(net.layers[static_cast<std::size_t>(*head13)].output)].shape,
            (model::Shape{1, 255, 13, 13}));
  EXPECT_EQ(net.tensors[static_cast<std::size_t>(net.layers[static_cast<std::size_t>(*head26)].output)].shape,
            (model::Shape{1, 255, 26, 26}));
}

TEST(PublishedNetworks, FastDepthMatchesThePaperBeforePruning) {
  const auto net = load("fastdepth.yaml");
  // Wofk et al. 2019: 0.74 GMACs and 3.93 M weights before NetAdapt pruning (0.37 GMACs after; the pruned
  // channel counts are not published, so the unpruned network is modelled). framesim: 0.737 G MACs.
  EXPECT_LT(relative(mac_layer_ops(net) / 2, 0.74e9), 0.01);
  // Convolution weights alone: 3,933,088, the paper's 3.93 M.
  EXPECT_LT(relative(params_of_kind(net, model::OpKind::conv2d), 3.93e6), 0.002);
  // framesim also counts batchnorm scale and shift (28 k), which the paper's figure leaves out: +0.8 %.
  EXPECT_LT(relative(net.total_params(), 3.93e6), 0.01);
  const auto& depth = net.tensors[static_cast<std::size_t>(net.outputs.front())];
  EXPECT_EQ(depth.shape, (model::Shape{1, 1, 224, 224}));
}

TEST(PublishedNetworks, TinyLlamaDecodeStep) {
  const auto net = load("tinyllama_1b_decode.yaml");
  // The model card's 1.1 B: exactly 1,100,048,384 from its config (untied head, RMSNorm weights included).
  EXPECT_DOUBLE_EQ(net.total_params(), 1100048384.0);
  // A decode step: 2 x (parameters except the embedding table, which is a gather) in matrix products (the
  // 2N rule of Kaplan et al. 2020) -- exact here, since the linear layers hold exactly those parameters --
  // plus attention over 1025 keys: 22 layers x 32 heads x 1025 x (QK^T 2x64 + softmax 5 + PV 2x64).
  const double embedding = 32000.0 * 2048;
  const double norms = (2.0 * 22 + 1) * 2048;
  EXPECT_DOUBLE_EQ(mac_layer_ops(net), 2 * (net.total_params() - embedding - norms));
  const double attention = 22.0 * 32 * 1025 * (4 * 64 + 5);
  // The rest (norms, RoPE, SiLU, products, residual adds) is about 0.1 %.
  EXPECT_LT(relative(net.total_ops(), 2 * (net.total_params() - embedding) + attention), 0.002);
  // The KV cache after this step: 22 layers x 1025 tokens x K and V x 4 heads x 64 x 2 bytes.
  EXPECT_DOUBLE_EQ(net.total_state_bytes(), 22.0 * 1025 * 2 * 4 * 64 * 2);
}

TEST(PublishedNetworks, SegmenterIsSmallAndDense) {
  // No published figure for this exact configuration: check its shape and framesim's own count (1.90 M
  // parameters: MobileNetV2's 3.50 M less the 1x1-to-1280 layer and classifier, plus an 85 k head).
  const auto net = load("lraspp_mobilenet_v2_seg.yaml");
  EXPECT_LT(
      relative(net.total_params(), 3504872.0 - (320.0 * 1280 + 2 * 1280) - (1280.0 * 1000 + 1000) +
                                       (320.0 * 128 + 2 * 128) + 320.0 * 128 + (32.0 * 19 + 19) + (128.0 * 19 + 19)),
      1e-12);
  // framesim's MAC count (a regression check, not a published figure): 1.217 G at 256x512, output stride 16.
  EXPECT_LT(relative(mac_layer_ops(net) / 2, 1.2174e9), 0.001);
  const auto& logits = net.tensors[static_cast<std::size_t>(net.outputs.front())];
  EXPECT_EQ(logits.shape, (model::Shape{1, 19, 256, 512}));
}

// ---- the validation suite's networks (tests/validation/networks) against their published counts ----

TEST(PublishedNetworks, GoogLeNetMatchesCaffeBvlcGooglenet) {
  // HaX-CoNN's Exp1 network: its prototxt_input_files/googlenet.prototxt is Caffe's bvlc_googlenet deploy.
  const auto net = load_validation("googlenet_224.yaml");
  // OpenVINO Open Model Zoo, models/public/googlenet-v1 (the Caffe model): 6.999 MParams. framesim: 6,998,552
  // (convolution and linear weights with their biases; the network has no batchnorm).
  EXPECT_LT(relative(net.total_params(), 6.999e6), 0.0002);
  // Szegedy et al., Going Deeper with Convolutions (CVPR 2015): "a computational budget of 1.5 billion
  // multiply-adds at inference time". Counted apart from framesim over the prototxt's 57 convolutions and its
  // classifier (Caffe's output sizes): 1,582,671,872 MACs, which framesim's layers hold (plus half their
  // 3.2 M bias adds: +0.1 %); 5.5 % above the paper's round budget.
  EXPECT_LT(relative(mac_layer_ops(net) / 2, 1.5827e9), 0.002);
  EXPECT_LT(relative(mac_layer_ops(net) / 2, 1.5e9), 0.06);
}

TEST(PublishedNetworks, InceptionV4MatchesItsPublishedCounts) {
  // HaX-CoNN's Exp2 network (prototxt_input_files/inception.prototxt: Inception-v4, 299x299, 149 convolutions).
  const auto net = load_validation("inception_v4_299.yaml");
  // timm's inception_v4.tf_in1k model card (huggingface.co/timm/inception_v4.tf_in1k): 42.7 M parameters,
  // 12.3 GMACs at 299x299; OpenVINO Open Model Zoo models/public/googlenet-v4 (the Caffe model of the same layer
  // names): 24.584 GFLOPs, 42.648 MParams. framesim: 12.254 G MACs (-0.4 %; the prototxt's own count, apart from
  // framesim, is 12,253,974,624) and 42,679,816 parameters (batchnorm scale and shift counted).
  EXPECT_LT(relative(mac_layer_ops(net) / 2, 12.3e9), 0.005);
  EXPECT_LT(relative(mac_layer_ops(net), 24.584e9), 0.005);
  EXPECT_LT(relative(mac_layer_ops(net) / 2, 12.253974624e9), 1e-6);
  EXPECT_LT(relative(net.total_params(), 42.648e6), 0.001);
  EXPECT_LT(relative(net.total_params(), 42.7e6), 0.002);
}

TEST(PublishedNetworks, ResNet101And152MatchTorchvision) {
  // The ResNets of the HaX-CoNN pairs. torchvision's model pages (pytorch.org/vision/stable/models): resnet101
  // 44,549,160 parameters and 7.80 GFLOPS, resnet152 60,192,808 and 11.51 (multiply-adds; batchnorm scale and
  // shift counted, as framesim counts them). Both put a stage's stride on the 3x3 convolution ("ResNet v1.5"),
  // as make_networks.py does; He et al. 2016, table 1, put it on the first 1x1: 7.6 and 11.3 G, as do the Caffe
  // prototxts HaX-CoNN ran (7.57 and 11.28 G counted from them) -- framesim's ResNets compute 3.0 % and 2.0 % more.
  const auto r101 = load_validation("resnet101_224.yaml");
  const auto r152 = load_validation("resnet152_224.yaml");
  EXPECT_DOUBLE_EQ(r101.total_params(), 44549160.0);
  EXPECT_DOUBLE_EQ(r152.total_params(), 60192808.0);
  EXPECT_LT(relative(mac_layer_ops(r101) / 2, 7.80e9), 0.005);
  EXPECT_LT(relative(mac_layer_ops(r152) / 2, 11.51e9), 0.005);
  EXPECT_LT(relative(mac_layer_ops(r152) / 2, 11.3e9), 0.025);
}

// ---- the seed's worked numbers ----

TEST(SeedNetworks, SevenBillionInt8DecodeIs140msOnFiftyGBs) {
  const auto net = load("seed_7b_int8_decode.yaml");
  // 6.476 B in the Llama-2-7B body + a 524.3 M tied table = 7.0006 B parameters, 7.0006 GB at int8.
  EXPECT_LT(relative(net.total_params(), 7.000e9), 0.0002);
  EXPECT_LT(relative(net.total_weight_bytes(), 7.0e9), 0.0002);
  const auto r = budget("seed_reference.yaml", "seed_7b_int8_decode.yaml");
  // "cannot decode faster than 7 / 50 = 140 ms per token": framesim 140.1 ms (activations and KV writes
  // add 4 MB to the 7.0006 GB of weights).
  EXPECT_EQ(r.limit, model::LimitKind::memory);
  EXPECT_LT(relative(r.estimate_s, 0.140), 0.002);
  EXPECT_NEAR(1.0 / r.estimate_s, 7.1, 0.1);  // "about 7 tokens per second"
}

TEST(SeedNetworks, ThreeBillionInt4DecodeShortAndLongContext) {
  const auto short_ctx = budget("seed_68gbs.yaml", "seed_3b_int4_decode_short.yaml");
  const auto long_ctx = budget("seed_68gbs.yaml", "seed_3b_int4_decode_4k.yaml");
  const double b = 68e9 * 0.7;  // 47.6 GB/s effective
  // ~2.97 B parameters, int4: 1.485 GB of weights -> 31.2 ms per token from the weights alone.
  EXPECT_LT(relative(short_ctx.params, 2.97e9), 0.001);
  EXPECT_LT(relative(short_ctx.weight_bytes / b, 31.2e-3), 0.001);
  // The whole step also moves ~5 MB of fp16 activations: 31.3 ms, within 0.5 % of the seed's 31.2 ms.
  EXPECT_LT(relative(short_ctx.estimate_s, 31.2e-3), 0.005);
  EXPECT_NEAR(1.0 / short_ctx.estimate_s, 32.0, 0.5);  // ~32 tokens/s
  // At 4096 attended tokens: 26 layers x 4096 x (K and V) x 8 x 96 x 2 bytes = 327,155,712 B (327 MB) of fp16
  // cache, which the network holds as its state and each step reads.
  const double kv_bytes = 26.0 * 4096 * 2 * 8 * 96 * 2;
  EXPECT_DOUBLE_EQ(long_ctx.state_bytes, 327155712.0);
  EXPECT_LT(relative(long_ctx.estimate_s - short_ctx.estimate_s, kv_bytes / b), 0.002);  // +6.9 ms
  EXPECT_LT(relative(long_ctx.estimate_s, 38e-3), 0.01);                                 // ~38 ms
  EXPECT_NEAR(1.0 / long_ctx.estimate_s, 26.0, 0.5);                                     // ~26 tokens/s
}

TEST(SeedNetworks, ResidualTailFusionSaves3msOverSixteenBlocks) {
  const auto r = budget("seed_reference.yaml", "seed_residual_tail_fp16.yaml");
  ASSERT_EQ(r.fusion.groups.size(), 16u);
  for (const auto& g : r.fusion.groups) {
    EXPECT_EQ(g.tail_before, 8);  // conv writes; BN r+w; ReLU r+w; add reads two, writes one
    EXPECT_EQ(g.tail_after, 2);   // read the skip, write the result
  }
  // 6 traversals of 1.606 MB at 50 GB/s = 192.7 us per block; x 16 = 3.08 ms. (The folded batchnorm's 256 B
  // of scale and shift per block are the only other difference: 0.08 us over the network.)
  const double saved = r.fusion.traffic_s_before - r.fusion.traffic_s_after;
  EXPECT_NEAR(saved / 16, 192.7e-6, 0.05e-6);
  EXPECT_NEAR(saved, 3.08e-3, 0.005e-3);
}

TEST(SeedNetworks, FortyMegabytesAt160pJPerByte) {
  const auto hw = hardware("seed_reference.yaml");
  const auto net = load("seed_40mb_traffic.yaml");
  model::BudgetOptions options;
  options.rate_Hz = 30;
  const auto r = model::make_budget(hw, net, options);
  // 40 MB of weights + 4 B in + 4 B out, x 160 pJ/B = 6.4 mJ; x 30 Hz = 0.192 W ("about 0.19 W").
  EXPECT_NEAR(r.offchip_bytes, 40e6, 8.0);
  EXPECT_NEAR(r.energy_floor_J, 6.4e-3, 1e-8);
  EXPECT_NEAR(r.energy_floor_J * *r.rate_Hz, 0.192, 1e-6);
}

TEST(SeedNetworks, Fc2048Int8OnTheNpu) {
  const auto r = budget("seed_npu.yaml", "seed_fc2048_int8.yaml");
  // Ridge: 4 TOPS / 25 GB/s = 160 op/B.
  ASSERT_EQ(r.levels.size(), 1u);
  ASSERT_EQ(r.levels[0].ridge.size(), 1u);
  EXPECT_EQ(r.levels[0].ridge[0].first, model::Precision::int8);
  EXPECT_DOUBLE_EQ(r.levels[0].ridge[0].second, 160.0);
  ASSERT_EQ(r.kernels.size(), 1u);
  const auto& k = r.kernels[0];
  // F = 8,388,608; M = 4,194,304 + 2048 + 2048 = 4,198,400 B; I = 1.998.
  EXPECT_DOUBLE_EQ(k.time.intensity, 8388608.0 / 4198400.0);
  EXPECT_NEAR(k.time.intensity, 2.0, 0.01);
  EXPECT_EQ(k.time.limit, model::LimitKind::memory);
  // Bound: 4,198,400 B / 25 GB/s = 167.9 us; 1.25 % of the 4 TOPS peak.
  EXPECT_NEAR(k.time.bound_s, 167.9e-6, 0.05e-6);
  EXPECT_NEAR(k.fraction_of_peak, 0.0125, 0.0001);
}

namespace {
/// A YAML network of `blocks` residual blocks (conv, batchnorm, relu, add): 4 layers each.
std::string deep_network(int blocks) {
  std::string text = "name: deep\nprecision: fp16\ninputs:\n  x: [1, 32, 28, 28]\nlayers:\n";
  std::string prev = "x";
  for (int b = 0; b < blocks; ++b) {
    const std::string n = std::to_string(b);
    text += "  - {name: c" + n + ", op: conv2d, input: " + prev + ", out_channels: 32, kernel: 3, padding: 1}\n";
    text += "  - {name: b" + n + ", op: batchnorm, input: c" + n + "}\n";
    text += "  - {name: r" + n + ", op: relu, input: b" + n + "}\n";
    text += "  - {name: a" + n + ", op: add, inputs: [r" + n + ", " + prev + "]}\n";
    prev = "a" + n;
  }
  return text;
}
}  // namespace

TEST(Networks, ASixteenThousandLayerNetworkBudgetsInLinearTime) {
  // Reading and budgeting must not scan every layer per tensor (issue 9: 16,000 layers took 5.6 s). The time
  // of 4,000 and 16,000 layers: linear work grows 4x, quadratic 16x; allow 8x for noise. Each block is one
  // kernel (conv + folded batchnorm + relu + add). Ops per block: the conv's 2 x (32 x 28 x 28) x (32 x 9), the
  // batchnorm's scale and shift (2 per element), the relu's and the add's 1 per element, on 25,088 elements.
  using Clock = std::chrono::steady_clock;
  const auto hw = hardware("seed_reference.yaml");
  auto seconds_for = [&](int blocks, model::BudgetReport& report) {
    const auto start = Clock::now();
    const auto net = config::parse_network(deep_network(blocks), "deep.yaml");
    report = model::make_budget(hw, net, {});
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  model::BudgetReport small, big;
  const double t_small = seconds_for(1000, small);
  const double t_big = seconds_for(4000, big);
  std::cout << "budget of 4,000 layers " << t_small << " s, of 16,000 layers " << t_big << " s\n";
  EXPECT_EQ(big.layers, 16000);
  EXPECT_EQ(big.plan.kernels.size(), 4000u);
  EXPECT_DOUBLE_EQ(big.ops, 4000 * (2.0 * 32 * 28 * 28 * 32 * 9 + 4 * 25088.0));
  EXPECT_LT(t_big, 8 * std::max(t_small, 0.05));
  EXPECT_LT(t_big, 4.0);
}
