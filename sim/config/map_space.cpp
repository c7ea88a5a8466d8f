#include "config/map_space.hpp"

#include <fmt/format.h>

#include "config/schema.hpp"
#include "config/yaml.hpp"
#include "core/files.hpp"

namespace framesim::config {

namespace {

const schema::Table& kKeys = schema::map_table();

std::vector<std::string> texts(const std::optional<Node>& node) {
  std::vector<std::string> out;
  if (!node) return out;
  for (const Node& item : node->items())
    if (auto t = item.text()) out.push_back(*t);
  if (node->is_sequence() && out.empty()) node->error("needs at least one value (or leave the key out)");
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
    space.budget = static_cast<std::size_t>(m.integer("budget").value_or(50));
    space.strategy = m.choice("strategy").value_or("auto");
    if (auto d = m.get("duration")) {
      if (m.quantity("duration")) space.duration = d->text();
    }
    if (auto stages = m.required("stages")) {
      for (auto& [name, value] : stages->entries()) {
        MapReader s(value, kKeys, "stages.<stage>");
        MapStageChoices c;
        c.stage = name;
        c.origin = value.location();
        c.units = texts(s.get("units"));
        c.splits = texts(s.get("splits"));
        c.precisions = texts(s.get("precisions"));
        if (auto p = s.get("priorities")) {
          for (const Node& item : p->items())
            if (auto v = item.integer(*kKeys.find("stages.<stage>.priorities[]")))
              c.priorities.push_back(static_cast<int>(*v));
        }
        space.stages.push_back(std::move(c));
      }
      if (stages->is_map() && space.stages.empty()) stages->error("needs at least one stage");
    }
  }
  diagnostics.throw_if_any();
  return space;
}

std::string scenario_with_overrides(const std::filesystem::path& scenario, const std::vector<Override>& overrides,
                                    const std::filesystem::path& folder, const std::vector<std::string>& header) {
  core::Diagnostics diagnostics;
  auto doc = Document::load(scenario, diagnostics);
  for (const auto& o : overrides)
    if (o.path.rfind("hardware.", 0) != 0 && o.path.rfind("network.", 0) != 0)
      doc->apply_override(o.path, o.value_yaml, o.origin);
  diagnostics.throw_if_any();
  YAML::Node root = YAML::Clone(doc->root());
  rewrite_paths(root, "", schema::scenario_table(), doc->folder(), folder);
  YAML::Emitter out;
  out << root;
  // The original's schema line, its path made relative to the new folder.
  std::string text;
  const std::string original = core::read_file(scenario);
  const std::string schema_tag = "# yaml-language-server: $schema=";
  if (original.rfind(schema_tag, 0) == 0) {
    const std::string written = original.substr(schema_tag.size(), original.find('\n') - schema_tag.size());
    const auto absolute = std::filesystem::absolute(doc->folder() / written).lexically_normal();
    text = schema_tag + std::filesystem::relative(absolute, std::filesystem::absolute(folder)).generic_string() + "\n";
  }
  for (const auto& h : header) text += "# " + h + "\n";
  text += out.c_str();
  text += "\n";
  return text;
}

}  // namespace framesim::config
