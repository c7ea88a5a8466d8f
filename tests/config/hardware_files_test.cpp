// The shipped hardware files (hardware/*.yaml): every file loads without error; key datasheet figures came
// through as written; and a budget runs on every unit of every file with a small network in a precision the
// unit has a roof for.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/hardware.hpp"
#include "config/network.hpp"
#include "model/budget.hpp"
#include "test_support.hpp"

namespace framesim {
namespace {

using model::Precision;

model::HardwareSpec load(const std::string& file) {
  return config::load_hardware(testing::source_path("hardware/" + file));
}

const model::MemoryLevelSpec& level(const model::HardwareSpec& hw, const std::string& name) {
  auto lv = hw.find_level(name);
  EXPECT_TRUE(lv.has_value()) << hw.name << ": no level " << name;
  return hw.memory.at(lv.value_or(0));
}

const model::ComputeUnitSpec& unit(const model::HardwareSpec& hw, const std::string& name) {
  auto u = hw.find_unit(name);
  EXPECT_TRUE(u.has_value()) << hw.name << ": no unit " << name;
  return hw.units.at(u.value_or(0));
}

double peak(const model::ComputeUnitSpec& u, Precision p) { return u.peak_ops_per_s[p].value_or(0.0); }

std::vector<std::string> path_names(const model::HardwareSpec& hw, const model::ComputeUnitSpec& u) {
  std::vector<std::string> names;
  for (std::size_t lv : u.memory_path) names.push_back(hw.memory[lv].name);
  return names;
}

/// A batch-1 linear layer (256 -> 256) in `precision`: small enough to fit the smallest part's memories.
model::NetworkSpec small_linear(Precision precision) {
  const std::string text =
      "name: small-linear\n"
      "precision: " +
      std::string(model::precision_name(precision)) +
      "\n"
      "inputs:\n"
      "  x: [1, 256]\n"
      "layers:\n"
      "  - {name: fc, op: linear, input: x, out_features: 256}\n";
  return config::parse_network(text, "small_linear.yaml");
}

/// The precision a unit's budget is run in: fp32 where it has it, else the first one it has.
Precision a_precision_of(const model::ComputeUnitSpec& u) {
  for (Precision p : {Precision::fp32, Precision::int8, Precision::fp16, Precision::int16, Precision::bf16,
                      Precision::int4, Precision::int32})
    if (u.peak_ops_per_s[p]) return p;
  ADD_FAILURE() << u.name << " has no roof at all";
  return Precision::fp32;
}

TEST(HardwareFiles, TheRealPartsAreShipped) {
  std::vector<std::string> names;
  for (const auto& f : testing::shipped_yaml_files("hardware")) names.push_back(f.filename().string());
  for (const char* expected :
       {"jetson_orin_nano_8gb.yaml", "jetson_orin_nx_16gb.yaml", "jetson_agx_orin_64gb.yaml", "raspberry_pi_5.yaml",
        "coral_edge_tpu.yaml", "stm32h7.yaml", "seed_reference.yaml", "seed_npu.yaml", "seed_68gbs.yaml"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
}

TEST(HardwareFiles, EveryFileLoadsWithoutError) {
  const auto files = testing::shipped_yaml_files("hardware");
  ASSERT_FALSE(files.empty());
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    model::HardwareSpec hw;
    ASSERT_NO_THROW(hw = config::load_hardware(f));
    EXPECT_FALSE(hw.name.empty());
    EXPECT_FALSE(hw.units.empty());
    EXPECT_FALSE(hw.memory.empty());
    for (const auto& u : hw.units) {
      EXPECT_FALSE(u.memory_path.empty()) << u.name;
      EXPECT_TRUE(u.peak_ops_per_s.any()) << u.name;
      // Operating points come highest first and the nominal one is the first.
      for (std::size_t i = 1; i < u.operating_points.size(); ++i)
        EXPECT_LT(u.operating_points[i].frequency_Hz, u.operating_points[i - 1].frequency_Hz) << u.name;
    }
  }
}

TEST(HardwareFiles, EveryRealPartHasAThermalEnvelopeAndEnergyFigures) {
  for (const auto& f : testing::shipped_yaml_files("hardware")) {
    if (f.filename().string().rfind("seed_", 0) == 0) continue;  // the seed's devices state no thermals
    SCOPED_TRACE(f.filename().string());
    const auto hw = config::load_hardware(f);
    ASSERT_TRUE(hw.thermal.has_value());
    EXPECT_GT(hw.thermal->sustained_power_W(), 0.0);
    for (const auto& u : hw.units) {
      EXPECT_GT(u.static_power_W, 0.0) << u.name;
      EXPECT_GT(u.dispatch_overhead_s, 0.0) << u.name;
      for (Precision p : model::kAllPrecisions) {
        if (u.peak_ops_per_s[p]) {
          EXPECT_TRUE(u.energy_per_op_J[p].has_value()) << u.name << " " << model::precision_name(p);
        }
      }
    }
    for (const auto& l : hw.memory) EXPECT_GT(l.energy_per_byte_J, 0.0) << l.name;
  }
}

TEST(HardwareFiles, OrinNano8gb) {
  const auto hw = load("jetson_orin_nano_8gb.yaml");
  const auto& dram = level(hw, "dram");
  EXPECT_DOUBLE_EQ(dram.bandwidth_Bps, 68e9);
  EXPECT_EQ(dram.kind, model::MemoryKind::dram);
  EXPECT_DOUBLE_EQ(dram.capacity_bytes, 8.0 * 1024 * 1024 * 1024);
  const auto& gpu = unit(hw, "gpu");
  // Dense figures: half of the headline 40 sparse INT8 TOPS.
  EXPECT_DOUBLE_EQ(peak(gpu, Precision::int8), 20.48e12);
  EXPECT_DOUBLE_EQ(peak(gpu, Precision::fp16), 10.24e12);
  EXPECT_DOUBLE_EQ(peak(gpu, Precision::fp32), 1.28e12);
  EXPECT_DOUBLE_EQ(gpu.nominal().frequency_Hz, 624.75e6);
  EXPECT_EQ(path_names(hw, gpu), (std::vector<std::string>{"gpu_l2", "dram"}));
  const auto& cpu = unit(hw, "cpu");
  EXPECT_EQ(cpu.cores, 6);
  EXPECT_FALSE(cpu.peak_ops_per_s[Precision::bf16].has_value());  // the A78AE has no BF16
  EXPECT_FALSE(hw.find_unit("dla0").has_value());                 // no DLA on the Orin Nano
  // The DRAM is shared by the CPU and the GPU: a contended level.
  EXPECT_TRUE(dram.shared());
  // The thermal envelope matches the 15 W power mode.
  ASSERT_TRUE(hw.thermal.has_value());
  EXPECT_NEAR(hw.thermal->sustained_power_W(), 15.0, 0.1);
}

TEST(HardwareFiles, OrinNx16gb) {
  const auto hw = load("jetson_orin_nx_16gb.yaml");
  EXPECT_DOUBLE_EQ(level(hw, "dram").bandwidth_Bps, 102.4e9);
  EXPECT_DOUBLE_EQ(peak(unit(hw, "gpu"), Precision::int8), 30.08e12);
  for (const char* dla : {"dla0", "dla1"}) {
    const auto& u = unit(hw, dla);
    EXPECT_EQ(u.kind, model::UnitKind::npu);
    EXPECT_DOUBLE_EQ(peak(u, Precision::int8), 10.07e12);
    EXPECT_FALSE(u.peak_ops_per_s[Precision::fp32].has_value());  // the DLA computes in int8 and fp16 only
    EXPECT_TRUE(u.peak_ops_per_s[Precision::fp16].has_value());
    EXPECT_DOUBLE_EQ(level(hw, path_names(hw, u).front()).capacity_bytes, 1024.0 * 1024);  // 1 MiB SRAM per DLA
  }
  // GPU + 2 DLAs, doubled for 2:4 sparsity, give the headline 100 TOPS.
  const double sparse = 2 * (peak(unit(hw, "gpu"), Precision::int8) + 2 * peak(unit(hw, "dla0"), Precision::int8));
  EXPECT_NEAR(sparse / 1e12, 100.0, 1.0);
  EXPECT_EQ(level(hw, "dram").users.size(), 4u);  // cpu, gpu, dla0, dla1 contend for it
  EXPECT_NEAR(hw.thermal->sustained_power_W(), 25.0, 0.1);
}

TEST(HardwareFiles, AgxOrin64gb) {
  const auto hw = load("jetson_agx_orin_64gb.yaml");
  EXPECT_DOUBLE_EQ(level(hw, "dram").bandwidth_Bps, 204.8e9);
  EXPECT_DOUBLE_EQ(level(hw, "gpu_l2").capacity_bytes, 4.0 * 1024 * 1024);
  EXPECT_EQ(unit(hw, "cpu").cores, 12);
  EXPECT_DOUBLE_EQ(peak(unit(hw, "gpu"), Precision::int8), 85.2e12);
  EXPECT_DOUBLE_EQ(peak(unit(hw, "dla1"), Precision::int8), 26.2e12);
  const double sparse = 2 * (peak(unit(hw, "gpu"), Precision::int8) + 2 * peak(unit(hw, "dla0"), Precision::int8));
  EXPECT_NEAR(sparse / 1e12, 275.0, 1.0);
  EXPECT_NEAR(hw.thermal->sustained_power_W(), 60.0, 0.5);
}

TEST(HardwareFiles, RaspberryPi5) {
  const auto hw = load("raspberry_pi_5.yaml");
  EXPECT_DOUBLE_EQ(level(hw, "dram").bandwidth_Bps, 17.07e9);
  EXPECT_DOUBLE_EQ(level(hw, "cpu_l2").capacity_bytes, 2.0 * 1024 * 1024);  // 4 x 512 KB
  EXPECT_DOUBLE_EQ(level(hw, "cpu_l3").capacity_bytes, 2.0 * 1024 * 1024);
  const auto& cpu = unit(hw, "cpu");
  EXPECT_EQ(cpu.cores, 4);
  EXPECT_DOUBLE_EQ(cpu.nominal().frequency_Hz, 2.4e9);
  EXPECT_DOUBLE_EQ(peak(cpu, Precision::fp32), 153.6e9);  // 4 cores x 16 flop/clock x 2.4 GHz
  EXPECT_EQ(path_names(hw, cpu), (std::vector<std::string>{"cpu_l2", "cpu_l3", "dram"}));
  ASSERT_TRUE(cpu.outstanding_bytes.has_value());
  EXPECT_DOUBLE_EQ(hw.thermal->trip_C, 80.0);  // Arm throttling starts at 80 C
}

TEST(HardwareFiles, CoralEdgeTpu) {
  const auto hw = load("coral_edge_tpu.yaml");
  const auto& tpu = unit(hw, "edgetpu");
  EXPECT_DOUBLE_EQ(peak(tpu, Precision::int8), 4e12);
  EXPECT_FALSE(tpu.peak_ops_per_s[Precision::fp32].has_value());
  EXPECT_FALSE(tpu.peak_ops_per_s[Precision::fp16].has_value());
  // 2 TOPS/W: busy_power 2 W, drawn when the unit runs at its effective roof (peak x efficiency).
  ASSERT_TRUE(tpu.energy_per_op_J[Precision::int8].has_value());
  EXPECT_NEAR(tpu.static_power_W + *tpu.energy_per_op_J[Precision::int8] * 4e12 * tpu.efficiency_for(Precision::int8),
              2.0, 1e-9);
  const auto& sram = level(hw, "tpu_sram");
  EXPECT_EQ(sram.kind, model::MemoryKind::sram);
  EXPECT_DOUBLE_EQ(sram.capacity_bytes, 8.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(level(hw, "host_link").bandwidth_Bps, 500e6);  // PCIe Gen2 x1
  EXPECT_EQ(path_names(hw, tpu), (std::vector<std::string>{"tpu_sram", "host_link"}));
  EXPECT_EQ(tpu.operating_points.size(), 4u);  // 500 / 250 / 125 / 62.5 MHz
  EXPECT_DOUBLE_EQ(tpu.operating_points.back().frequency_Hz, 62.5e6);
  EXPECT_DOUBLE_EQ(hw.thermal->trip_C, 85.0);
}

TEST(HardwareFiles, CoralWeightsStreamFromTheHostWhenTheyDoNotFitOnChip) {
  const auto hw = load("coral_edge_tpu.yaml");
  const std::size_t tpu = *hw.find_unit("edgetpu");
  auto net_of = [](int features) {
    const std::string f = std::to_string(features);
    return config::parse_network("name: fc\nprecision: int8\ninputs:\n  x: [1, " + f +
                                     "]\nlayers:\n  - {name: fc, op: linear, input: x, out_features: " + f + "}\n",
                                 "fc.yaml");
  };
  model::BudgetOptions options;
  options.unit = tpu;
  // 1024 x 1024 int8 = 1 MiB of weights: cached on chip.
  const auto small = model::make_budget(hw, net_of(1024), options);
  EXPECT_EQ(hw.memory[static_cast<std::size_t>(small.plan.weight_level)].name, "tpu_sram");
  // 4096 x 4096 int8 = 16 MiB of weights: streamed over PCIe every inference.
  const auto large = model::make_budget(hw, net_of(4096), options);
  EXPECT_EQ(hw.memory[static_cast<std::size_t>(large.plan.weight_level)].name, "host_link");
}

TEST(HardwareFiles, Stm32h7) {
  const auto hw = load("stm32h7.yaml");
  const auto& flash = level(hw, "flash");
  EXPECT_EQ(flash.kind, model::MemoryKind::flash);
  EXPECT_FALSE(model::is_writable(flash.kind));
  EXPECT_DOUBLE_EQ(flash.capacity_bytes, 2.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(level(hw, "dtcm").capacity_bytes, 128.0 * 1024);
  EXPECT_DOUBLE_EQ(level(hw, "axi_sram").capacity_bytes, 512.0 * 1024);
  const auto& m7 = unit(hw, "m7");
  EXPECT_EQ(m7.kind, model::UnitKind::mcu);
  EXPECT_DOUBLE_EQ(m7.nominal().frequency_Hz, 480e6);
  EXPECT_DOUBLE_EQ(peak(m7, Precision::int8), 1.92e9);
  EXPECT_FALSE(m7.peak_ops_per_s[Precision::fp16].has_value());  // FPv5: no fp16 arithmetic
  EXPECT_EQ(path_names(hw, m7), (std::vector<std::string>{"dtcm", "axi_sram", "flash"}));

  // TinyML placement: int8 weights that do not fit on chip with the activations stay in flash (read-only),
  // activations go to SRAM.
  const auto net = config::parse_network(
      "name: tiny\nprecision: int8\ninputs:\n  x: [1, 1024]\nlayers:\n"
      "  - {name: fc1, op: linear, input: x, out_features: 1024}\n"
      "  - {name: fc2, op: linear, input: fc1, out_features: 1024}\n",
      "tiny.yaml");  // 2 MiB of int8 weights: more than the 640 KiB of SRAM
  model::BudgetOptions options;
  options.unit = *hw.find_unit("m7");
  const auto r = model::make_budget(hw, net, options);
  EXPECT_EQ(hw.memory[static_cast<std::size_t>(r.plan.weight_level)].name, "flash");
  EXPECT_TRUE(model::is_writable(hw.memory[static_cast<std::size_t>(r.plan.activation_home)].kind));
  EXPECT_EQ(hw.memory[static_cast<std::size_t>(r.plan.activation_home)].name, "axi_sram");
}

TEST(HardwareFiles, ABudgetRunsOnEveryUnitOfEveryFile) {
  for (const auto& f : testing::shipped_yaml_files("hardware")) {
    const auto hw = config::load_hardware(f);
    for (std::size_t u = 0; u < hw.units.size(); ++u) {
      SCOPED_TRACE(f.filename().string() + " / " + hw.units[u].name);
      const Precision p = a_precision_of(hw.units[u]);
      const auto net = small_linear(p);
      ASSERT_TRUE(model::missing_roofs(net, hw.units[u]).empty());
      model::BudgetOptions options;
      options.unit = u;
      model::BudgetReport r;
      ASSERT_NO_THROW(r = model::make_budget(hw, net, options));
      EXPECT_TRUE(r.fits);
      EXPECT_GT(r.ops, 0.0);
      EXPECT_GT(r.estimate_s, 0.0);
      EXPECT_GT(r.energy.total_J(), 0.0);
      ASSERT_EQ(r.kernels.size(), 1u);
      EXPECT_GE(r.no_overlap_s, r.estimate_s);
    }
  }
}

TEST(HardwareFiles, ABudgetRunsAtEveryOperatingPoint) {
  // Lower clocks never make the floor faster.
  for (const auto& f : testing::shipped_yaml_files("hardware")) {
    const auto hw = config::load_hardware(f);
    for (std::size_t u = 0; u < hw.units.size(); ++u) {
      SCOPED_TRACE(f.filename().string() + " / " + hw.units[u].name);
      const auto net = small_linear(a_precision_of(hw.units[u]));
      double previous = 0;
      for (std::size_t op = 0; op < hw.units[u].operating_points.size(); ++op) {
        model::BudgetOptions options;
        options.unit = u;
        options.run.operating_point = op;
        const auto r = model::make_budget(hw, net, options);
        EXPECT_GE(r.estimate_s, previous) << hw.units[u].operating_points[op].name;
        previous = r.estimate_s;
      }
    }
  }
}

}  // namespace
}  // namespace framesim
