#include "config/map_space.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "config/schema.hpp"
#include "config/yaml.hpp"
#include "core/files.hpp"
#include "model/precision.hpp"

namespace framesim::config {

namespace {

const schema::Table& kKeys = schema::map_table();

/// The scalars of the list at `node`, each with its location; a value given twice is refused at its second
/// place (it would be one more simulation of the same mapping).
std::vector<std::string> texts(const std::optional<Node>& node, std::vector<core::SourceLocation>* where = nullptr) {
  std::vector<std::string> out;
  if (!node) return out;
  for (const Node& item : node->items()) {
    auto t = item.text();
    if (!t) continue;
    if (std::find(out.begin(), out.end(), *t) != out.end()) {
      item.error(fmt::format("\"{}\" is listed twice", *t));
      continue;
    }
    out.push_back(*t);
    if (where) where->push_back(item.location());
  }
  if (node->is_sequence() && out.empty() && node->items().empty())
    node->error("needs at least one value (or leave the key out)");
  return out;
}

/// Rewrites every path-valued scalar under `node` (declared Kind::path in `table` at `path`) from `from` to
/// `to`: each is resolved against `from` and written relative to `to`.
void rewrite_paths(YAML::Node node, const std::string& path, const schema::Table& table,
                   const std::filesystem::path& from, const std::filesystem::path& to) {
  if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = it->first.Scalar();
      rewrite_paths(it->second, path.empty() ? key : path + "." + key, table, from, to);
    }
    return;
  }
  if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i)
      rewrite_paths(node[i], fmt::format("{}[{}]", path, i), table, from, to);
    return;
  }
  if (!node.IsScalar()) return;
  const auto m = schema::match(table, path);
  if (!m || m->key->kind != schema::Kind::path) return;
  const std::filesystem::path written(node.Scalar());
  const auto absolute = written.is_absolute() ? written : std::filesystem::absolute(from / written);
  node = std::filesystem::relative(absolute.lexically_normal(), std::filesystem::absolute(to)).generic_string();
}

/// The `# yaml-language-server: $schema=...` first line of the file at `original` (in `original_folder`), its
/// path made relative to `folder`; empty when the file has none.
std::string schema_line(const std::filesystem::path& original, const std::filesystem::path& original_folder,
                        const std::filesystem::path& folder) {
  const std::string text = core::read_file(original);
  const std::string tag = "# yaml-language-server: $schema=";
  if (text.rfind(tag, 0) != 0) return "";
  const std::string written = text.substr(tag.size(), text.find('\n') - tag.size());
  const auto absolute = std::filesystem::absolute(original_folder / written).lexically_normal();
  return tag + std::filesystem::relative(absolute, std::filesystem::absolute(folder)).generic_string() + "\n";
}

}  // namespace

MapSpace load_map_space(const std::filesystem::path& path) {
  core::Diagnostics diagnostics;
  auto doc = Document::load(path, diagnostics);
  Node root(doc, doc->root(), "");
  MapSpace space;
  space.source_file = doc->display_path();
  MapReader m(root, kKeys, "");
  if (m.ok()) {
    space.name = m.text("name").value_or(path.stem().string());
    space.objective = m.choice("objective").value_or("energy");
    space.budget = static_cast<std::size_t>(m.integer_or_default("budget"));
    space.strategy = m.choice("strategy").value_or(m.declaration("strategy").fallback);
    space.seed = static_cast<std::uint64_t>(m.integer_or_default("seed"));
    if (auto d = m.get("duration")) {
      if (m.quantity("duration")) space.duration = d->text();
    }
    if (!m.get("stages") && !m.get("clock_caps"))
      root.error(
          "a map file needs `stages` (where the stages may run), `clock_caps` (the units' caps to try) or "
          "both");
    if (auto stages = m.get("stages")) {
      for (auto& [name, value] : stages->entries()) {
        MapReader s(value, kKeys, "stages.<stage>");
        MapStageChoices c;
        c.stage = name;
        c.origin = value.location();
        c.units = texts(s.get("units"));
        c.splits = texts(s.get("splits"), &c.split_origins);
        std::vector<core::SourceLocation> precision_origins;
        c.precisions = texts(s.get("precisions"), &precision_origins);
        for (std::size_t k = 0; k < c.precisions.size(); ++k)
          if (!model::parse_layer_precision(c.precisions[k]))
            diagnostics.add(precision_origins[k], fmt::format("stages.{}.precisions[{}]", name, k),
                            fmt::format("\"{}\" is not a precision", c.precisions[k]));
        if (auto p = s.get("priorities")) {
          for (const Node& item : p->items())
            if (auto v = item.integer(*kKeys.find("stages.<stage>.priorities[]"))) {
              if (std::find(c.priorities.begin(), c.priorities.end(), *v) != c.priorities.end())
                item.error(fmt::format("{} is listed twice", *v));
              else c.priorities.push_back(static_cast<int>(*v));
            }
        }
        space.stages.push_back(std::move(c));
      }
      if (stages->is_map() && space.stages.empty()) stages->error("needs at least one stage");
    }
    if (auto caps = m.get("clock_caps")) {
      for (auto& [unit, value] : caps->entries()) {
        MapClockCaps c;
        c.unit = unit;
        c.origin = value.location();
        c.points = texts(value, &c.point_origins);
        space.clock_caps.push_back(std::move(c));
      }
      if (caps->is_map() && space.clock_caps.empty()) caps->error("needs at least one unit (or leave the key out)");
    }
  }
  diagnostics.throw_if_any();
  return space;
}

WrittenScenario scenario_with_overrides(const std::filesystem::path& scenario, const std::vector<Override>& overrides,
                                        const std::filesystem::path& folder, const std::vector<std::string>& header,
                                        const std::string& hardware_name) {
  core::Diagnostics diagnostics;
  auto doc = Document::load(scenario, diagnostics);
  std::vector<Override> on_hardware;
  for (const auto& o : overrides) {
    if (o.path.rfind("network.", 0) == 0)
      throw core::UserError(fmt::format("{}: a written scenario cannot carry a network override", o.path));
    if (o.path.rfind("hardware.", 0) == 0) on_hardware.push_back({o.path.substr(9), o.value_yaml, o.origin});
    else doc->apply_override(o.path, o.value_yaml, o.origin);
  }
  diagnostics.throw_if_any();
  YAML::Node root = YAML::Clone(doc->root());
  rewrite_paths(root, "", schema::scenario_table(), doc->folder(), folder);
  WrittenScenario written;
  if (!on_hardware.empty() && root["hardware"].IsScalar()) {
    const auto path = resolve_path(*doc, doc->root()["hardware"].Scalar());
    auto hw = Document::load(path, diagnostics);
    for (const auto& o : on_hardware) hw->apply_override(o.path, o.value_yaml, o.origin);
    diagnostics.throw_if_any();
    YAML::Node hw_root = YAML::Clone(hw->root());
    rewrite_paths(hw_root, "", schema::hardware_table(), hw->folder(), folder);
    YAML::Emitter hw_out;
    hw_out << hw_root;
    written.hardware = schema_line(path, hw->folder(), folder) + "# " + path.generic_string() +
                       " with the mapping's changes (framesim map)\n" + hw_out.c_str() + "\n";
    root["hardware"] = hardware_name;
  }
  YAML::Emitter out;
  out << root;
  std::string text = schema_line(scenario, doc->folder(), folder);
  for (const auto& h : header) text += "# " + h + "\n";
  text += out.c_str();
  text += "\n";
  written.scenario = text;
  return written;
}

}  // namespace framesim::config
