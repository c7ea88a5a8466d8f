// The measured-trace readers (plain CSV, TFLite benchmark profile, PyTorch profiler JSON; by content), matched
// to a small network, and the time-series reader.
#include "config/network.hpp"
#include "fuzz_support.hpp"
#include "trace/measured.hpp"
#include "trace/series.hpp"

using namespace framesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const model::NetworkSpec net =
      config::load_network(std::string(FRAMESIM_SOURCE_DIR) + "/tests/trace/fixtures/three_layers.yaml");
  const std::string text = fuzz::text_of(data, size);
  fuzz::guarded([&] {
    const auto trace = trace::parse_measured_trace(text, "fuzz.csv");
    const auto matched = trace::match_measurements(trace, net);
    (void)trace::judge_match(trace, matched, net);
  });
  fuzz::guarded([&] {
    (void)trace::parse_series(text, "fuzz.csv",
                              trace::ValueColumn{"rate", core::Dimension::BytesPerSecond, {{"rate_Bps", 1.0}}});
  });
  return 0;
}
