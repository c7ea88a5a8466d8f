// Failures inside the simulation come back from simulate() instead of aborting the process, and a second
// simulation in one process is refused (SimGrid keeps global state). In-process: each test is its own process.
#include <gtest/gtest.h>

#include <stdexcept>

#include "config/scenario.hpp"
#include "engine/simulation.hpp"
#include "test_support.hpp"

using framesim::testing::Scratch;

namespace {

/// A record sink whose second stage record fails, as a full disk or a bad name would.
class FailingSink : public framesim::engine::RecordSink {
 public:
  void on_frame(const framesim::engine::FrameRecord&) override {}
  void on_stage(const framesim::engine::StageRecord&) override {
    if (++stages_ == 2) throw std::runtime_error("the disk is full");
  }
  void on_control(const framesim::engine::ControlRecord&) override {}
  void on_tick(const framesim::engine::TickRecord&) override {}
  void on_kernel(const framesim::engine::KernelRecord&) override {}
  void on_task(const framesim::engine::TaskRecord&) override {}
  void on_chain(const framesim::engine::ChainRecord&) override {}

 private:
  int stages_ = 0;
};

framesim::model::ScenarioSpec small_scenario(Scratch& s) {
  s.write("hw.yaml", R"(name: one
memory:
  dram: {kind: dram, capacity: "1 GiB", bandwidth: "10 GB/s"}
units:
  cpu: {kind: cpu, peak: {fp32: "1 GFLOP/s"}, memory: [dram]}
)");
  return framesim::config::load_scenario(s.write("s.yaml", R"(name: fails
hardware: hw.yaml
duration: "1 s"
sensors:
  camera: {rate: "10 Hz"}
stages:
  a: {unit: cpu, inputs: [camera], work: {time: "1 ms"}}
)"));
}

}  // namespace

TEST(EngineFailure, AnActorsErrorComesBackFromSimulate) {
  Scratch s;
  const auto spec = small_scenario(s);
  FailingSink sink;
  try {
    framesim::engine::simulate(spec, sink);
    FAIL() << "simulate() returned although an actor failed";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "the disk is full");
  }
}

TEST(EngineFailure, OneSimulationPerProcess) {
  Scratch s;
  const auto spec = small_scenario(s);
  FailingSink first;
  EXPECT_THROW(framesim::engine::simulate(spec, first), std::runtime_error);
  FailingSink second;
  EXPECT_THROW(framesim::engine::simulate(spec, second), std::logic_error);
}
