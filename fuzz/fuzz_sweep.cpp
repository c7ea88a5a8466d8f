// The sweep YAML reader and the expansion of its points (not the scenario behind them: fuzz_scenario does that).
#include "config/sweep.hpp"
#include "fuzz_support.hpp"

using namespace framesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = fuzz::write_input("scenarios/sweeps/fuzz.yaml", data, size);
  return fuzz::guarded([&] { (void)config::expand_sweep(config::load_sweep(path)); });
}
