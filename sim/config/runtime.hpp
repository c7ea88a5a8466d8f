// runtimes/*.yaml (hardware/runtimes/) -> RuntimeProfile (model/runtime.hpp). Keys: config/schema_runtime.cpp.
#pragma once

#include <filesystem>
#include <string>

#include "model/runtime.hpp"

namespace framesim::config {

/// Loads and checks a runtime profile. Throws core::UserError listing every problem with file:line:column.
model::RuntimeProfile load_runtime(const std::filesystem::path& path);
/// The same from text (tests); `display_path` names it in messages.
model::RuntimeProfile parse_runtime(const std::string& text, const std::string& display_path);

/// The YAML of `profile` (what `framesim calibrate --write-runtime` writes), starting with its
/// yaml-language-server line; `schema_path` is the JSON Schema's path relative to where the file will be.
std::string runtime_yaml(const model::RuntimeProfile& profile, const std::string& schema_path);

}  // namespace framesim::config
