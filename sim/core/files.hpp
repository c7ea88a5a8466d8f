// File input and output that never leaves a half-written file: write to a temporary beside the target, then
// rename; read whole files up to a stated size.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace framesim::core {

/// Largest text input framesim reads (YAML, CSV, JSON traces): 64 MiB (README "Limits").
inline constexpr std::uintmax_t kMaxTextFileBytes = 64u << 20;
/// Largest model file (ONNX, TFLite) framesim imports: 2 GiB, protobuf's own limit.
inline constexpr std::uintmax_t kMaxModelFileBytes = 2047u << 20;

/// Writes `content` to `path` atomically. Throws UserError naming the path if it cannot (a folder, no permission).
void write_file_atomic(const std::filesystem::path& path, const std::string& content);
/// Reads a whole file of at most `max_bytes`. Throws UserError naming the path if it cannot, or if it is larger.
std::string read_file(const std::filesystem::path& path, std::uintmax_t max_bytes = kMaxTextFileBytes);
/// Throws UserError if `path` is a folder or larger than `max_bytes` (checked before reading it).
void check_input_file(const std::filesystem::path& path, std::uintmax_t max_bytes);

/// Removes the temporaries other framesim processes left beside `target` when they died: `<target><marker><pid>`
/// (marker ".tmp-" for run folders, ".tmp." for files) whose process no longer exists.
void remove_stale_temporaries(const std::filesystem::path& target, const std::string& marker);
/// The SHA-256 digest of `bytes` as 64 lowercase hex digits (OpenSSL EVP).
std::string sha256_hex(const std::string& bytes);

}  // namespace framesim::core
