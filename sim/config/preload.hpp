// Parsing ahead of time, for a process that forks children each loading the same files (a sweep's points): see
// Document::prepare in yaml.hpp. Here without yaml-cpp, for the folders that may not include it.
#pragma once

#include <filesystem>

namespace framesim::config {

/// Parses the YAML file `path` now and keeps it for one later load of it (in this process or a child forked after
/// this call), taken only if the file's text is still the same. Throws core::UserError as loading it would.
void preload_yaml(const std::filesystem::path& path);

}  // namespace framesim::config
