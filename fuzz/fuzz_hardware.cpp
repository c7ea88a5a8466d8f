// The hardware YAML reader, then the budget of a fixed network on the first unit (what `budget` does).
#include "config/hardware.hpp"
#include "config/network.hpp"
#include "fuzz_support.hpp"
#include "model/budget.hpp"

using namespace framesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const model::NetworkSpec net =
      config::load_network(std::string(FRAMESIM_SOURCE_DIR) + "/scenarios/networks/seed_matmuls.yaml");
  return fuzz::guarded([&] {
    const model::HardwareSpec hw = config::parse_hardware(fuzz::text_of(data, size), "fuzz.yaml");
    if (hw.units.empty() || !model::missing_roofs(net, hw.units.front()).empty()) return;
    model::BudgetOptions options;
    options.unit = 0;
    (void)model::make_budget(hw, net, options);
  });
}
