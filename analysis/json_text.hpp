// JSON as text, never throwing: a name that is not valid UTF-8 (it should have been refused or repaired where
// it was read) is written with U+FFFD rather than ending the process.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace framesim::analysis {

/// `j` as text, `indent` spaces per level (-1: one line).
inline std::string json_text(const nlohmann::json& j, int indent = 2) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace framesim::analysis
