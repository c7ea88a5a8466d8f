#include "config/input_kind.hpp"

#include <vector>

#include "config/yaml.hpp"
#include "core/error.hpp"

namespace framesim::config {

std::string input_kind(const std::filesystem::path& path) {
  core::Diagnostics ignored;  // duplicate keys and the like: reported by the reader that checks the file
  const auto doc = Document::load(path, ignored);
  const YAML::Node& root = doc->root();
  if (root.IsMap()) {
    auto has = [&](const char* key) { return root[key].IsDefined(); };
    if (has("units") || has("memory")) return "hardware";
    if (has("layers")) return "network";
    if (has("axes")) return "sweep";
    if (has("objective")) return "map";
    if (has("stages") || has("sensors")) return "scenario";
  }
  throw core::UserError(std::vector<core::Diagnostic>{
      {{doc->display_path(), 0, 0},
       {},
       "cannot tell which kind of file this is (no units, layers, stages, axes or objective at the top level); "
       "give --kind hardware, network, scenario, sweep or map"}});
}

}  // namespace framesim::config
