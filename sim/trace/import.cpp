#include "trace/import.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/text.hpp"
#include "trace/importers.hpp"

namespace framesim::trace {

namespace {

/// Names from a binary model are bytes, not text: each invalid UTF-8 byte becomes U+FFFD (reports and JSON need
/// text), and the first such name is said in a warning. A model larger than model::kMaxLayers is refused.
ImportResult checked(ImportResult result, const std::filesystem::path& path) {
  auto& net = result.network;
  if (net.layers.size() > model::kMaxLayers)
    throw core::UserError(fmt::format("{}: {} layers; framesim reads networks of at most {} layers",
                                      path.generic_string(), net.layers.size(), model::kMaxLayers));
  std::size_t fixed = 0;
  std::string first;
  auto fix = [&](std::string& name) {
    if (!core::invalid_utf8_offset(name)) return;
    name = core::to_valid_utf8(name);
    if (fixed++ == 0) first = name;
  };
  fix(net.name);
  for (auto& layer : net.layers) {
    fix(layer.name);
    fix(layer.source);
  }
  for (auto& tensor : net.tensors) fix(tensor.name);
  for (auto& w : result.warnings) w = core::to_valid_utf8(w);
  if (fixed > 0)
    result.warnings.push_back(fmt::format("{} name{} not valid UTF-8 (e.g. \"{}\"): invalid bytes shown as U+FFFD",
                                          fixed, fixed == 1 ? " is" : "s are", core::quote_capped(first)));
  return result;
}

}  // namespace

ImportResult import_model(const std::filesystem::path& path, const ImportOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw core::UserError(path.generic_string() + ": no such file");
  core::check_input_file(path, core::kMaxModelFileBytes);
  const auto ext = path.extension().string();
  if (ext == ".onnx") return checked(importers().import_onnx(path, options), path);
  if (ext == ".tflite") return checked(import_tflite(path, options), path);
  throw core::UserError(path.string() + ": not a model framesim imports (expected .onnx or .tflite)");
}

}  // namespace framesim::trace
