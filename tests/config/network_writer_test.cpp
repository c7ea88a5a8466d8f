// The network YAML writer (what `framesim import -o` writes) round-trips every shipped network: written,
// read back, the same layers, shapes, ops, bytes and kernels.
#include <gtest/gtest.h>

#include "config/network.hpp"
#include "config/network_writer.hpp"
#include "test_support.hpp"

using namespace framesim;
namespace fst = framesim::testing;

TEST(NetworkWriter, EveryShippedNetworkRoundTrips) {
  int checked = 0;
  for (const auto& path : fst::shipped_yaml_files("scenarios/networks")) {
    const model::NetworkSpec original = config::load_network(path);
    const std::string yaml = config::network_to_yaml(original, {"round trip"});
    const model::NetworkSpec back = config::parse_network(yaml, path.filename().string() + " (written)");
    SCOPED_TRACE(path.filename().string());
    ASSERT_EQ(back.layers.size(), original.layers.size());
    for (std::size_t i = 0; i < original.layers.size(); ++i) {
      const auto& a = original.layers[i];
      const auto& b = back.layers[i];
      EXPECT_EQ(b.name, a.name);
      EXPECT_EQ(b.op, a.op);
      EXPECT_DOUBLE_EQ(b.ops, a.ops) << a.name;
      EXPECT_DOUBLE_EQ(b.weight_bytes, a.weight_bytes) << a.name;
      EXPECT_DOUBLE_EQ(b.weight_access.bytes, a.weight_access.bytes) << a.name;
      EXPECT_EQ(back.tensors[static_cast<std::size_t>(b.output)].shape,
                original.tensors[static_cast<std::size_t>(a.output)].shape)
          << a.name;
      EXPECT_EQ(model::layer_precision_name(b.precision), model::layer_precision_name(a.precision)) << a.name;
    }
    EXPECT_EQ(back.outputs.size(), original.outputs.size());
    EXPECT_EQ(back.fusion, original.fusion);
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

TEST(NetworkWriter, MixedPrecisionIsWrittenPartByPart) {
  fst::NetBuilder b;
  int x = b.input("x", {1, 64}, model::Precision::fp16);
  b.layer("linear", "fc", {x}, {{"out_features", std::int64_t{8}}},
          {model::Precision::bf16, model::Precision::fp16, model::Precision::fp16});
  const auto net = b.done();
  const std::string yaml = config::network_to_yaml(net);
  EXPECT_NE(yaml.find("weights: bf16"), std::string::npos) << yaml;
  const auto back = config::parse_network(yaml, "mixed.yaml");
  EXPECT_EQ(back.layers[0].precision.weights, model::Precision::bf16);
  EXPECT_EQ(back.layers[0].precision.activations, model::Precision::fp16);
}
