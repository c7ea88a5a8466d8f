#include "config/input_kind.hpp"

#include <vector>

#include "config/yaml.hpp"
#include "core/error.hpp"

namespace framesim::config {

std::string input_kind(const std::filesystem::path& path) {
  // Duplicate keys and the like are reported by the reader that checks the file, which takes this parse.
  const auto doc = Document::peek(path);
  const YAML::Node& root = doc->root();
  if (root.IsMap()) {
    auto has = [&](const char* key) { return root[key].IsDefined(); };
    // A scenario may name a runtime profile (`runtime: FILE`) too: its stages or sensors make it a scenario.
    const bool scenario = has("stages") || has("sensors");
    if (has("runtime") && !scenario) return "runtime";
    if (has("units") || has("memory")) return "hardware";
    if (has("layers")) return "network";
    if (has("axes")) return "sweep";
    if (has("objective")) return "map";
    if (scenario) return "scenario";
  }
  throw core::UserError(std::vector<core::Diagnostic>{
      {{doc->display_path(), 0, 0},
       {},
       "cannot tell which kind of file this is (no units, layers, stages, axes, runtime or objective at the top "
       "level); give --kind hardware, network, scenario, sweep, runtime or map"}});
}

}  // namespace framesim::config
