#include "trace/import.hpp"

#include "core/error.hpp"

namespace framesim::trace {

ImportResult import_model(const std::filesystem::path& path, const ImportOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw core::UserError(path.generic_string() + ": no such file");
  if (std::filesystem::is_directory(path, ec))
    throw core::UserError(path.generic_string() + ": cannot open file: it is a directory");
  const auto ext = path.extension().string();
  if (ext == ".onnx") return import_onnx(path, options);
  if (ext == ".tflite") return import_tflite(path, options);
  throw core::UserError(path.string() + ": not a model framesim imports (expected .onnx or .tflite)");
}

}  // namespace framesim::trace
