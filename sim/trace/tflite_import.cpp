// Placeholder until the tflite importer lands in this change.
#include "core/error.hpp"
#include "trace/import.hpp"

namespace framesim::trace {

ImportResult import_tflite(const std::filesystem::path& path, const ImportOptions&) {
  throw core::UserError(path.string() + ": tflite import is not built yet");
}

}  // namespace framesim::trace
