// MapReader: the keys of one mapping read against their declarations (config/schema.hpp).
#include <fmt/format.h>

#include "config/yaml.hpp"
#include "core/text.hpp"

namespace framesim::config {

MapReader::MapReader(const Node& node, const schema::Table& table, std::string_view pattern,
                     const std::vector<std::string>& extra)
    : node_(node), table_(&table), pattern_(pattern), extra_(extra) {
  if (!pattern_.empty()) {
    const schema::Key* key = table.find(pattern_);
    FRAMESIM_ASSERT(key != nullptr, "MapReader of an undeclared mapping: " + pattern_);
    if (key->fragment) {
      table_ = key->fragment;
      pattern_.clear();
    }
  }
  declared_ = &table_->literal_child_names(pattern_);
  if (!extra_.empty()) {
    combined_ = *declared_;
    combined_.insert(combined_.end(), extra_.begin(), extra_.end());
  }
  const std::vector<std::string>& allowed = this->allowed();
  if (!node_.is_map()) {
    node_.error(fmt::format("expected a mapping with keys {}, got {}", core::join_list(allowed, ", "),
                            node_.is_null()       ? std::string("nothing")
                            : node_.is_sequence() ? std::string("a list")
                                                  : "\"" + core::quote_capped(node_.yaml().Scalar()) + "\""));
    ok_ = false;
    return;
  }
  // Each entry taken once (yaml-cpp builds the pair of nodes anew at every `it->`).
  for (const auto& entry : node_.yaml()) {
    const YAML::Node& key_node = entry.first;
    if (!key_node.IsScalar()) continue;  // reported when the file was loaded
    const std::string& key = key_node.Scalar();
    entries_.emplace_back(key, entry.second);
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    if (node_.document().diagnostics().full()) {  // counted only: no did-you-mean to work out
      node_.document().diagnostics().add(core::Diagnostic{});
      ok_ = false;
      continue;
    }
    std::string message = fmt::format("unknown key \"{}\"", core::quote_capped(key));
    if (auto near = core::closest_match(key, allowed)) {
      message += fmt::format(" (did you mean \"{}\"?)", *near);
      suggested_.emplace_back(*near);
    } else {
      message += fmt::format("; allowed keys: {}", core::join_list(allowed, ", "));
    }
    const std::string path =
        node_.path().empty() ? core::quote_capped(key) : node_.path() + "." + core::quote_capped(key);
    const auto mark = key_node.Mark();
    const auto origin = node_.document().override_origin(entry.second);  // a key an override added
    node_.document().diagnostics().add(origin ? *origin : location_of(node_.document().display_path(), mark), path,
                                       message);
  }
}

const schema::Key& MapReader::declaration(std::string_view key) const {
  const std::string path = pattern_.empty() ? std::string(key) : pattern_ + "." + std::string(key);
  const schema::Key* k = table_->find(path);
  FRAMESIM_ASSERT(k != nullptr, "MapReader: undeclared key " + path + " in the " + table_->name + " keys");
  return *k;
}

bool MapReader::has(std::string_view key) const {
  return ok_ && std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == key; });
}

std::optional<Node> MapReader::get(std::string_view key) const {
  FRAMESIM_ASSERT(std::find(allowed().begin(), allowed().end(), key) != allowed().end(),
                  "MapReader::get of an undeclared key: " + std::string(key));
  if (!ok_) return std::nullopt;
  // As node[key], whose lookup converts every key of the mapping to a string to compare it: the keys were read
  // once, by the constructor.
  for (const auto& [name, value] : entries_)
    if (name == key) return node_.child(name, value);
  return std::nullopt;
}

std::optional<Node> MapReader::required(std::string_view key) const {
  auto n = get(key);
  // A misspelt key was already reported with this one as its correction: one message, not two.
  const bool misspelt = std::find(suggested_.begin(), suggested_.end(), key) != suggested_.end();
  if (!n && ok_ && !misspelt) {
    const std::string path = node_.path().empty() ? std::string(key) : node_.path() + "." + std::string(key);
    std::string message = "missing required key";
    const std::string pattern = pattern_.empty() ? std::string(key) : pattern_ + "." + std::string(key);
    if (const schema::Key* k = table_->find(pattern); k != nullptr && !k->example.empty()) {
      // `framesim keys` takes the kinds of file, not the fragments (scheduler, work, ...) their keys share.
      const bool kind_of_file = schema::file_table(table_->name) == table_;
      message += kind_of_file ? fmt::format(" (for example {}: {}; `framesim keys {} {}` explains it)", key, k->example,
                                            table_->name, k->path)
                              : fmt::format(" (for example {}: {})", key, k->example);
    }
    node_.document().diagnostics().add(node_.location(), path, message);
  }
  return n;
}

std::optional<Node> MapReader::fetch(std::string_view key, schema::Kind kind, Need need) const {
  const schema::Key& k = declaration(key);
  FRAMESIM_ASSERT(k.kind == kind || (kind == schema::Kind::text && k.kind == schema::Kind::path),
                  "MapReader: " + k.path + " is declared a " + std::string(schema::kind_name(k.kind)) + ", read as a " +
                      std::string(schema::kind_name(kind)));
  return k.required || need == Need::required ? required(key) : get(key);
}

std::optional<std::string> MapReader::text(std::string_view key, Need need) const {
  auto n = fetch(key, schema::Kind::text, need);
  return n ? n->text() : std::nullopt;
}

std::optional<std::int64_t> MapReader::integer(std::string_view key, Need need) const {
  auto n = fetch(key, schema::Kind::integer, need);
  if (!n) return std::nullopt;
  const auto& k = declaration(key);
  return n->integer(k.min, k.max);
}

std::optional<double> MapReader::number(std::string_view key, Need need) const {
  auto n = fetch(key, schema::Kind::number, need);
  return n ? n->number(declaration(key).range) : std::nullopt;
}

std::optional<bool> MapReader::boolean(std::string_view key) const {
  auto n = fetch(key, schema::Kind::boolean, Need::declared);
  return n ? n->boolean() : std::nullopt;
}

std::optional<double> MapReader::quantity(std::string_view key, Need need) const {
  auto n = fetch(key, schema::Kind::quantity, need);
  if (!n) return std::nullopt;
  const auto& k = declaration(key);
  return n->quantity(k.dimension, k.range);
}

std::optional<std::string> MapReader::choice(std::string_view key, Need need) const {
  auto n = fetch(key, schema::Kind::choice, need);
  return n ? n->choice(declaration(key).choices) : std::nullopt;
}

double MapReader::fallback_of(std::string_view key) const {
  const auto value = schema::fallback_value(declaration(key));
  FRAMESIM_ASSERT(value.has_value(), "MapReader: " + std::string(key) + " is declared without a fallback that reads");
  return *value;
}

double MapReader::quantity_or_default(std::string_view key) const {
  if (auto v = quantity(key)) return *v;
  return fallback_of(key);
}

double MapReader::number_or_default(std::string_view key) const {
  if (auto v = number(key)) return *v;
  return fallback_of(key);
}

std::int64_t MapReader::integer_or_default(std::string_view key) const {
  if (auto v = integer(key)) return *v;
  return static_cast<std::int64_t>(fallback_of(key));
}

}  // namespace framesim::config
