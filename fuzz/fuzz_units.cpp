// The one units parser: every dimension, then the formatters on what it accepted.
#include "core/units.hpp"
#include "fuzz_support.hpp"

using namespace framesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = fuzz::text_of(data, size);
  for (int d = 0; d <= static_cast<int>(core::Dimension::Ratio); ++d) {
    const auto parsed = core::parse_quantity(text, static_cast<core::Dimension>(d));
    if (!parsed.value) continue;
    (void)core::format_si(*parsed.value, "x");
    (void)core::format_capacity(*parsed.value);
    (void)core::format_number(*parsed.value);
  }
  return 0;
}
