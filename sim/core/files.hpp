// File input and output that never leaves a half-written file: write to a temporary beside the target, then
// rename; read whole files up to a stated size. A write never replaces what is not a regular file: it goes
// through a symbolic link to its target, through `-` and /dev/stdout to the standard output, and refuses a
// device node, FIFO or socket. Nor does it replace a file the process has read (read_file, check_input_file): an
// output path that is one of the command's inputs (`budget HW NET --svg HW`) is refused.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace framesim::core {

/// Largest text input framesim reads (YAML, CSV, JSON traces): 64 MiB (README "Limits").
inline constexpr std::uintmax_t kMaxTextFileBytes = 64u << 20;
/// Largest model file (ONNX, TFLite) framesim imports: 2 GiB, protobuf's own limit.
inline constexpr std::uintmax_t kMaxModelFileBytes = 2047u << 20;

/// Writes `content` to `path` atomically: to `<target>.tmp.<pid>` beside the target, then renamed over it, where
/// the target is `path` or, when `path` is a symbolic link, the file it points to (the link stays). `-`,
/// /dev/stdout and /dev/stderr are written through (the stream, never renamed over). Throws UserError naming the
/// path and the reason if it cannot (a folder, a device node, FIFO or socket, a file this process read as an input,
/// no permission, a full disk); the temporary is gone then.
void write_file_atomic(const std::filesystem::path& path, const std::string& content);
/// The end of the chain of symbolic links starting at `path` (`path` itself when it is not a link): where a write
/// to `path` lands. Throws UserError for a loop.
std::filesystem::path resolve_links(const std::filesystem::path& path);
/// The first input file this process has read (as the user named it) that lies inside `folder` (links resolved),
/// or "" when none does: a command that replaces a whole folder refuses one that holds its own input.
std::string input_within(const std::filesystem::path& folder);
/// Writes each (file name, content) of `files` into `folder` whole or not at all: every file to a temporary in
/// the folder first, renamed into place only once all are written. `folder` is created if missing (and removed
/// again on failure). `option` names the command-line option in messages ("-o"). Throws UserError.
void write_files_atomic(const std::filesystem::path& folder,
                        const std::vector<std::pair<std::string, std::string>>& files, const std::string& option);
/// Writes each (path, content) of `files` whole or not at all, as write_file_atomic does each one: every file to its
/// temporary first, renamed into place only once all are written (`budget --svg A --html B`). Throws UserError.
void write_files_atomic(const std::vector<std::pair<std::filesystem::path, std::string>>& files);
/// Creates `folder` and its missing parents. Throws UserError naming it and the reason (read-only, a full disk, a
/// file in the way).
void create_folders(const std::filesystem::path& folder);
/// Why writing into `folder` failed, for a file written as a stream whose error is known only as "failed": the
/// system's reason in `saved_errno` when it has one, else what writing a 64 KiB file there says now (a full disk, a
/// read-only folder), else "the write failed".
std::string write_failure_reason(const std::filesystem::path& folder, int saved_errno);
/// Reads a whole file of at most `max_bytes`. Throws UserError naming the path if it cannot, or if it is larger (a
/// file that is not regular, /dev/zero or a FIFO, is read up to `max_bytes` and refused past it).
std::string read_file(const std::filesystem::path& path, std::uintmax_t max_bytes = kMaxTextFileBytes);
/// read_file for framesim's own files (a run folder's list of what it wrote, a sweep's points and logs, a run's
/// summary.json read back): not inputs of the command, so a later write may replace them.
std::string read_own_file(const std::filesystem::path& path, std::uintmax_t max_bytes = kMaxTextFileBytes);
/// Throws UserError if `path` is a folder or larger than `max_bytes` (checked before reading it); notes it as an
/// input (a write never replaces it).
void check_input_file(const std::filesystem::path& path, std::uintmax_t max_bytes);

/// Removes the temporaries other framesim processes left beside `target` when they died: `<target><marker><pid>`
/// (marker ".tmp-" for run folders, ".tmp." for files) whose process no longer exists.
void remove_stale_temporaries(const std::filesystem::path& target, const std::string& marker);
/// The SHA-256 digest of `bytes` as 64 lowercase hex digits (FIPS 180-4; sha256.cpp).
std::string sha256_hex(const std::string& bytes);

}  // namespace framesim::core
