// What is generated from the key declarations (config/schema.hpp): the reference `framesim keys` prints, the
// Markdown of docs/schema.md, the JSON Schemas of docs/schema/*.schema.json (editor completion and checks) and
// the commented templates `framesim init` writes.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "config/schema.hpp"

namespace framesim::cli {

/// Every key of `table` (and, after them, of the fragments it uses), one or two lines each.
std::string keys_text(const config::schema::Table& table);

/// One key in full: where it is declared, its value, range, default, example and description.
std::string key_text(const config::schema::Table& table, const config::schema::Key& key);

/// docs/schema.md: every kind of file and every fragment, as tables.
std::string keys_markdown();

/// The JSON Schema (draft-07) of a kind of file: every declared key with its type, unit pattern, bounds,
/// choices, required keys, and no other keys (`additionalProperties: false`).
nlohmann::json json_schema(const config::schema::Table& table);

/// A commented YAML template of a kind of file: every key with its value and description as a comment; the
/// required keys (and the keys marked in_template) filled with their examples, the others commented out.
std::string init_template(const config::schema::Table& table);

}  // namespace framesim::cli
