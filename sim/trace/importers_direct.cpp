// The readers linked into the binary itself (tests, fuzz targets): importers.hpp.
#include "trace/importers.hpp"

namespace framesim::trace {

const Importers& importers() { return framesim_importer_entry_points; }

}  // namespace framesim::trace
