#include "core/files.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <openssl/evp.h>
#include <unistd.h>

#include "core/error.hpp"

namespace framesim::core {

namespace {

std::string display(const std::filesystem::path& p) { return p.lexically_normal().generic_string(); }

/// The reason of the last failed system call, or `fallback` when errno says nothing.
std::string reason(const char* fallback) { return errno != 0 ? std::strerror(errno) : fallback; }

}  // namespace

void write_file_atomic(const std::filesystem::path& path, const std::string& content) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw UserError(fmt::format("{}: cannot write: it is a directory (give a file name)", display(path)));
  remove_stale_temporaries(path, ".tmp.");
  const std::filesystem::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw UserError(fmt::format("{}: cannot write: {}", display(path), reason("cannot create the file")));
    out << content;
    out.flush();
    if (!out) {
      const std::string why = reason("the write failed");
      std::filesystem::remove(tmp, ec);
      throw UserError(fmt::format("{}: cannot write: {}", display(path), why));
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw UserError(fmt::format("{}: cannot write: {}", display(path), ec.message()));
  }
}

void check_input_file(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw UserError(display(path) + ": cannot open file: it is a directory");
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes)
    throw UserError(fmt::format("{}: the file is {} MiB; framesim reads files of at most {} MiB", display(path),
                                size >> 20, max_bytes >> 20));
}

std::string read_file(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  check_input_file(path, max_bytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    const bool exists = std::filesystem::exists(path, ec);
    throw UserError(display(path) + (exists ? ": cannot open file: not readable (check its permissions)"
                                            : ": cannot open file: no such file"));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  const bool ok = EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) == 1;
  FRAMESIM_ASSERT(ok && length == 32, "SHA-256 failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

void remove_stale_temporaries(const std::filesystem::path& target, const std::string& marker) {
  const std::filesystem::path parent = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  const std::string prefix = target.filename().string() + marker;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    std::error_code ignored;
    std::filesystem::remove_all(entry.path(), ignored);
  }
}

}  // namespace framesim::core
