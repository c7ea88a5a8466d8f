// The scenario YAML reader (with the hardware, networks and traces it names), then its static floors.
#include "config/scenario.hpp"
#include "fuzz_support.hpp"

using namespace framesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = fuzz::write_input("scenarios/fuzz.yaml", data, size);
  return fuzz::guarded([&] {
    const model::ScenarioSpec spec = config::load_scenario(path);
    (void)spec.floor_end_to_end_s(spec.stage_floors_s());
    (void)config::simulated_events(spec);
  });
}
