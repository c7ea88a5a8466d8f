// The TensorRT readers: trtexec's --exportProfile JSON (through the format detection of parse_measured_trace)
// and its --exportLayerInfo JSON added to a valid profile, each matched to the small ONNX network they describe.
#include "fuzz_support.hpp"
#include "trace/import.hpp"
#include "trace/measured.hpp"

using namespace framesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string fixtures = std::string(FRAMESIM_SOURCE_DIR) + "/tests/trace/fixtures/edge/";
  static const model::NetworkSpec net = trace::import_model(fixtures + "tiny_convnet.onnx").network;
  static const trace::MeasuredTrace profile = trace::read_measured_trace(fixtures + "tiny_convnet_trt.profile.json");
  const std::string text = fuzz::text_of(data, size);
  fuzz::guarded([&] {
    const auto trace = trace::parse_measured_trace(text, "fuzz.profile.json");
    const auto matched = trace::match_measurements(trace, net);
    (void)trace::judge_match(trace, matched, net);
  });
  fuzz::guarded([&] {
    trace::MeasuredTrace with_info = profile;
    trace::add_tensorrt_layer_info(with_info, text, "fuzz.layers.json");
    (void)trace::match_measurements(with_info, net);
  });
  return 0;
}
