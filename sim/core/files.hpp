// File output that never leaves a half-written file: write to a temporary beside the target, then rename.
#pragma once

#include <filesystem>
#include <string>

namespace framesim::core {

/// Writes `content` to `path` atomically. Throws UserError naming the path if it cannot.
void write_file_atomic(const std::filesystem::path& path, const std::string& content);
/// Reads a whole file. Throws UserError naming the path if it cannot.
std::string read_file(const std::filesystem::path& path);
/// The SHA-256 digest of `bytes` as 64 lowercase hex digits (OpenSSL EVP).
std::string sha256_hex(const std::string& bytes);

}  // namespace framesim::core
