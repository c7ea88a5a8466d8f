// Placeholder until the onnx importer lands in this change.
#include "core/error.hpp"
#include "trace/import.hpp"

namespace framesim::trace {

ImportResult import_onnx(const std::filesystem::path& path, const ImportOptions&) {
  throw core::UserError(path.string() + ": onnx import is not built yet");
}

}  // namespace framesim::trace
