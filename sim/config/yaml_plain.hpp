// A quick reader for the plain YAML framesim's own files are written in, building the very nodes yaml-cpp would.
#pragma once

#include <optional>
#include <string_view>

#include <yaml-cpp/yaml.h>

namespace framesim::config {

/// The nodes of `text` exactly as `YAML::Load` builds them (types, scalars, tags, styles, marks, key order), when
/// `text` keeps to a plain subset of YAML: block mappings and sequences indented with spaces, one-line flow
/// mappings and sequences, one-line plain, single- and double-quoted scalars without escapes, and comments. Text
/// outside it (anchors, aliases, tags, block or multi-line scalars, escapes, empty values, document markers,
/// tabs, carriage returns, and every syntax error) gives nothing: the caller then parses it with yaml-cpp, which
/// also words the errors. yaml-cpp scans a text a character at a time through regular expressions; this reads it
/// about twenty times faster (most of the start-up of `validate` and `budget` on a 1,000-layer network).
/// `tests/config/yaml_plain_test.cpp` compares the two on every YAML file in the repository.
std::optional<YAML::Node> load_plain_yaml(std::string_view text);

}  // namespace framesim::config
