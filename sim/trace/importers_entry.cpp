// The readers' table (importers.hpp): exported by the module (framesim-importers.so), read by importers_loader.cpp;
// returned directly where the readers are linked in (importers_direct.cpp).
#include "trace/importers.hpp"

extern "C" __attribute__((visibility("default"))) const framesim::trace::Importers framesim_importer_entry_points{
    &framesim::trace::import_onnx, &framesim::trace::parse_nsys_sqlite};
