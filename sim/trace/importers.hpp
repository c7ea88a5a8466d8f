// The two readers that need large libraries (ONNX and protobuf for ONNX models, SQLite for Nsight Systems
// exports), reached through one table. The executable loads them as a module (framesim-importers.so, beside it) the
// first time a command reads such a file, so that every other command starts without relocating those libraries
// (about 4 ms of each process start); tests and fuzz targets link them in directly. Like the engine module
// (engine/module.hpp), the module resolves framesim's own symbols against the executable.
#pragma once

#include <filesystem>
#include <string>

#include "trace/import.hpp"
#include "trace/measured_formats.hpp"

namespace framesim::trace {

struct Importers {
  ImportResult (*import_onnx)(const std::filesystem::path& path, const ImportOptions& options);
  MeasuredTrace (*parse_nsys_sqlite)(const std::string& bytes, const std::string& path);
};

/// The readers: linked in (importers_direct.cpp), or loaded once from the module (importers_loader.cpp; throws
/// std::runtime_error, not an input error, when it cannot be loaded).
const Importers& importers();

}  // namespace framesim::trace

/// The readers' table, defined once with them (importers_entry.cpp): the module exports it under this C name, and
/// a binary that links the readers in returns it from importers() (importers_direct.cpp).
extern "C" const framesim::trace::Importers framesim_importer_entry_points;
