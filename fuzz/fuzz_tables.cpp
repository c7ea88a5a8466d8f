// The whole-network tables: co-run measurements (trace/corun.hpp, units of the AGX Orin) and totals
// (trace/totals.hpp). Both name network files relative to the table, so the input is written into the scratch
// tree (tests/validation/contention/, where the shipped tables are) and read from there.
#include "fuzz_support.hpp"
#include "trace/corun.hpp"
#include "trace/totals.hpp"

using namespace framesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<std::string> units{"gpu", "cpu", "dla0", "dla1"};
  // A folder of the scratch tree beside which the shipped networks are reachable as ../networks/ and the like.
  static const std::filesystem::path folder = [] {
    const auto dir = fuzz::scratch_tree() / "tables";
    std::filesystem::create_directories(dir);
    return dir;
  }();
  const auto path = folder / "fuzz.csv";
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  fuzz::guarded([&] { (void)trace::read_corun(path, units, "hardware/jetson_agx_orin_64gb.yaml"); });
  fuzz::guarded([&] { (void)trace::read_totals(path); });
  return 0;
}
