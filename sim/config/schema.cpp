// The key declarations' machinery: names and parents of key paths, finding a concrete path's declaration,
// the one-line summary of a value. The tables themselves: schema_hardware.cpp, schema_network.cpp,
// schema_scenario.cpp.
#include "config/schema.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <stdexcept>

#include <fmt/format.h>

#include "config/sweep.hpp"
#include "core/text.hpp"
#include "model/hardware.hpp"
#include "model/network.hpp"
#include "model/op_class.hpp"
#include "model/precision.hpp"

namespace framesim::config {

std::string_view range_text(Range range) {
  switch (range) {
    case Range::any: return "";
    case Range::positive: return "positive";
    case Range::non_negative: return "not negative";
    case Range::unit_interval: return "in (0, 1]";
    case Range::fraction: return "in [0, 1]";
  }
  return "";
}

}  // namespace framesim::config

namespace framesim::config::schema {

using core::Dimension;

namespace {

std::vector<std::string> split(std::string_view pattern) {
  // "a.b[].c" -> {"a", "b", "[]", "c"}; "layers[3].op" -> {"layers", "[]", "op"} (an index is an item).
  std::vector<std::string> out;
  std::string current;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '.') {
      if (!current.empty()) out.push_back(current);
      current.clear();
    } else if (c == '[') {
      if (!current.empty()) out.push_back(current);
      current.clear();
      const auto close = pattern.find(']', i);
      out.emplace_back("[]");
      i = close == std::string_view::npos ? pattern.size() : close;
    } else {
      current += c;
    }
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

}  // namespace

std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::text: return "text";
    case Kind::path: return "path";
    case Kind::boolean: return "boolean";
    case Kind::integer: return "integer";
    case Kind::number: return "number";
    case Kind::quantity: return "quantity";
    case Kind::choice: return "choice";
    case Kind::distribution: return "distribution";
    case Kind::list: return "list";
    case Kind::map: return "mapping";
    case Kind::any: return "any value";
  }
  return "";
}

std::string_view Key::name() const {
  if (path.size() >= 2 && path.compare(path.size() - 2, 2, "[]") == 0)
    return std::string_view(path).substr(path.size() - 2);
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? std::string_view(path) : std::string_view(path).substr(dot + 1);
}

std::string_view Key::parent() const {
  const std::string_view p(path);
  if (p.size() >= 2 && p.substr(p.size() - 2) == "[]") return p.substr(0, p.size() - 2);
  const auto dot = p.rfind('.');
  return dot == std::string_view::npos ? std::string_view{} : p.substr(0, dot);
}

bool Key::named() const {
  const auto n = name();
  return n.size() > 2 && n.front() == '<' && n.back() == '>';
}

std::string Key::default_text() const {
  if (fallback.empty()) return default_note;
  if (default_note.empty()) return fallback;
  return fmt::format("{} ({})", fallback, default_note);
}

std::optional<double> fallback_value(const Key& key) {
  if (key.fallback.empty()) return std::nullopt;
  std::optional<double> value;
  switch (key.kind) {
    case Kind::quantity:
    case Kind::distribution: value = core::parse_quantity(key.fallback, key.dimension).value; break;
    case Kind::number:
    case Kind::integer: {
      double v = 0;
      std::size_t used = 0;
      try {
        v = std::stod(key.fallback, &used);
      } catch (const std::exception&) {
        return std::nullopt;
      }
      if (used != key.fallback.size()) return std::nullopt;
      if (key.kind == Kind::integer &&
          (v != std::floor(v) || v < static_cast<double>(key.min) || v > static_cast<double>(key.max)))
        return std::nullopt;
      value = v;
      break;
    }
    case Kind::boolean:
      if (key.fallback == "true") value = 1.0;
      else if (key.fallback == "false") value = 0.0;
      break;
    default: return std::nullopt;
  }
  if (!value || std::isnan(*value)) return std::nullopt;
  const double v = *value;
  const bool in_range = key.kind == Kind::integer || key.kind == Kind::boolean || [&] {
    switch (key.range) {
      case Range::any: return true;
      case Range::positive: return v > 0;
      case Range::non_negative: return v >= 0;
      case Range::unit_interval: return v > 0 && v <= 1;
      case Range::fraction: return v >= 0 && v <= 1;
    }
    return false;
  }();
  return in_range ? value : std::nullopt;
}

const Key* Table::find(std::string_view pattern) const {
  for (const auto& k : keys)
    if (k.path == pattern) return &k;
  return nullptr;
}

std::vector<const Key*> Table::children(std::string_view pattern) const {
  std::vector<const Key*> out;
  for (const auto& k : keys)
    if (k.parent() == pattern) out.push_back(&k);
  return out;
}

const std::vector<std::string>& Table::literal_child_names(std::string_view pattern) const {
  struct Known {
    const Table* table;
    std::string pattern;
    std::vector<std::string> names;
  };
  static std::deque<Known> known;  // a deque: the names handed out stay where they are as it grows
  for (const Known& k : known)
    if (k.table == this && k.pattern == pattern) return k.names;
  std::vector<std::string> names;
  for (const Key* k : children(pattern))
    if (!k->named() && k->name() != "[]") names.emplace_back(k->name());
  known.push_back({this, std::string(pattern), std::move(names)});
  return known.back().names;
}

std::optional<std::vector<std::string>> placeholder_names(std::string_view placeholder) {
  if (placeholder == "<precision>") return model::precision_names();
  if (placeholder == "<op_class>") return model::op_class_names();
  return std::nullopt;
}

std::string placeholder_example(std::string_view placeholder) {
  static const std::vector<std::pair<std::string_view, std::string_view>> examples{
      {"<level>", "dram"},       {"<unit>", "gpu"},
      {"<sensor>", "camera"},    {"<stage>", "detector"},
      {"<network>", "detector"}, {"<input>", "image"},
      {"<task>", "controller"},  {"<name>", "display"},
      {"<chain>", "perception"}, {"<key_path>", "sensors.camera.rate"},
      {"<precision>", "fp16"},   {"<op_class>", "depthwise"}};
  for (const auto& [p, e] : examples)
    if (p == placeholder) return std::string(e);
  return std::string(placeholder.substr(1, placeholder.size() - 2));
}

std::vector<const Table*> file_tables() {
  return {&hardware_table(), &network_table(), &scenario_table(), &sweep_table(), &runtime_table(), &map_table()};
}

std::vector<const Table*> fragment_tables() {
  return {&scheduler_table(), &distribution_table(), &work_table(), &repeat_table()};
}

const Table* file_table(std::string_view name) {
  for (const Table* t : file_tables())
    if (t->name == name) return t;
  return nullptr;
}

std::optional<Match> match(const Table& table, std::string_view concrete_path) {
  const Table* current = &table;
  std::string pattern;
  const Key* key = nullptr;
  const auto parts = split(concrete_path);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    // A `<key_path>` (a sweep axis) is itself a dotted path: it takes every component up to the axis' own keys.
    if (key && key->name() == "<key_path>" && part != "[]" && !current->find(key->path + "." + part)) continue;
    if (key && key->fragment && part != "[]") {
      current = key->fragment;
      pattern.clear();
    }
    const Key* next = nullptr;
    const Key* named = nullptr;
    for (const Key* child : current->children(pattern)) {
      if (child->name() == part) next = child;
      if (child->named() && part != "[]") {
        const auto allowed = placeholder_names(child->name());
        if (!allowed || std::find(allowed->begin(), allowed->end(), part) != allowed->end()) named = child;
      }
    }
    if (!next) next = named;
    // A mapping that may also be a list of such mappings (side_work): its items are the mapping.
    if (!next && part == "[]" && key && key->or_list) continue;
    if (!next) return std::nullopt;
    key = next;
    pattern = key->path;
  }
  if (!key) return std::nullopt;
  return Match{current, key};
}

std::string value_summary(const Key& key) {
  std::string out;
  switch (key.kind) {
    case Kind::quantity:
    case Kind::distribution:
      if (key.dimension == Dimension::Ratio) {
        out = "a number";
      } else {
        out = fmt::format("{} like \"{}\"", core::with_article(core::dimension_name(key.dimension)),
                          core::dimension_example(key.dimension));
      }
      if (key.kind == Kind::distribution) out += " or a distribution";
      break;
    case Kind::number: out = "a number"; break;
    case Kind::integer:
      if (key.min != INT64_MIN && key.max != INT64_MAX) out = fmt::format("an integer {}..{}", key.min, key.max);
      else if (key.min != INT64_MIN) out = fmt::format("an integer >= {}", key.min);
      else out = "an integer";
      break;
    case Kind::choice: out = "one of " + core::join_list(key.choices, ", "); break;
    case Kind::text: out = "text"; break;
    case Kind::path: out = "a file path"; break;
    case Kind::boolean: out = "true or false"; break;
    case Kind::list: out = "a list"; break;
    case Kind::map: out = key.or_list ? "a mapping or a list of mappings" : "a mapping"; break;
    case Kind::any: out = "any value"; break;
  }
  if ((key.kind == Kind::number || key.kind == Kind::quantity || key.kind == Kind::distribution) &&
      key.range != Range::any)
    out += fmt::format(", {}", range_text(key.range));
  return out;
}

std::vector<Flat> flatten(const Table& table) {
  std::vector<Flat> out;
  auto walk = [&](auto&& self, std::string_view pattern) -> void {
    for (const Key* k : table.children(pattern)) {
      out.push_back({k->path, k});
      self(self, k->path);
    }
  };
  walk(walk, "");
  return out;
}

}  // namespace framesim::config::schema
