// The ONNX Runtime session-profile reader (a JSON array of Chrome-trace events, through the format detection of
// parse_measured_trace), matched to the small ONNX network it profiles, frames included.
#include "fuzz_support.hpp"
#include "trace/import.hpp"
#include "trace/measured.hpp"

using namespace framesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const model::NetworkSpec net =
      trace::import_model(std::string(FRAMESIM_SOURCE_DIR) + "/tests/trace/fixtures/edge/tiny_convnet.onnx").network;
  const std::string text = fuzz::text_of(data, size);
  fuzz::guarded([&] {
    const auto trace = trace::parse_measured_trace(text, "fuzz.json");
    const auto matched = trace::match_measurements(trace, net);
    (void)trace::judge_match(trace, matched, net);
    (void)trace::to_measurements(trace);
  });
  return 0;
}
