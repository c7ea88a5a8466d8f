// The module's side (framesim-importers.so): its one exported table, read by importers_loader.cpp.
#include "trace/importers.hpp"

extern "C" __attribute__((visibility("default"))) const framesim::trace::Importers framesim_importer_entry_points{
    &framesim::trace::import_onnx, &framesim::trace::parse_nsys_sqlite};
