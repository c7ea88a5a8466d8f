// The readers linked into the binary itself (tests, fuzz targets): importers.hpp.
#include "trace/importers.hpp"

namespace framesim::trace {

const Importers& importers() {
  static const Importers linked{&import_onnx, &parse_nsys_sqlite};
  return linked;
}

}  // namespace framesim::trace
