// TFLite import (flatbuffer verification, the op mapping).
#include "fuzz_support.hpp"
#include "trace/import.hpp"

using namespace framesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = fuzz::write_input("fuzz.tflite", data, size);
  return fuzz::guarded([&] { (void)trace::import_model(path); });
}
