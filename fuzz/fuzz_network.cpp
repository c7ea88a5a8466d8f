// The network YAML reader, then the budget of the network on the seed reference device.
#include "config/hardware.hpp"
#include "config/network.hpp"
#include "fuzz_support.hpp"
#include "model/budget.hpp"

using namespace framesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const model::HardwareSpec hw =
      config::load_hardware(std::string(FRAMESIM_SOURCE_DIR) + "/hardware/seed_reference.yaml");
  return fuzz::guarded([&] {
    const model::NetworkSpec net = config::parse_network(fuzz::text_of(data, size), "fuzz.yaml");
    if (!model::missing_roofs(net, hw.units.front()).empty()) return;
    model::BudgetOptions options;
    options.unit = 0;
    (void)model::make_budget(hw, net, options);
  });
}
