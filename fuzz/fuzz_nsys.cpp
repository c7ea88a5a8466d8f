// The Nsight Systems readers: the SQLite export (binary: a database read from memory, every cell type checked)
// and the cuda_gpu_trace CSV report, through the format detection of parse_measured_trace, matched to a small
// ONNX network built from the same kernels.
#include "fuzz_support.hpp"
#include "trace/import.hpp"
#include "trace/measured.hpp"

using namespace framesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const model::NetworkSpec net =
      trace::import_model(std::string(FRAMESIM_SOURCE_DIR) + "/tests/trace/fixtures/edge/tiny_convnet.onnx").network;
  const std::string bytes = fuzz::text_of(data, size);
  fuzz::guarded([&] {
    // A SQLite database starts with its 16-byte header: the same bytes are also tried as the CSV report.
    const auto trace = trace::parse_measured_trace(bytes, "fuzz.sqlite");
    const auto matched = trace::match_measurements(trace, net);
    (void)trace::judge_match(trace, matched, net);
  });
  return 0;
}
