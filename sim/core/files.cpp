#include "core/files.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.hpp"

namespace framesim::core {

namespace {

namespace fs = std::filesystem;

std::string display(const fs::path& p) { return p.lexically_normal().generic_string(); }

/// The reason of the last failed system call, or `fallback` when errno says nothing.
std::string reason(const char* fallback) { return errno != 0 ? std::strerror(errno) : fallback; }

/// The standard stream a user plainly means by `path` (`-`, /dev/stdout, /dev/stderr), or -1.
int stream_fd(const fs::path& path) {
  const std::string s = path.string();
  if (s == "-" || s == "/dev/stdout") return STDOUT_FILENO;
  if (s == "/dev/stderr") return STDERR_FILENO;
  return -1;
}

/// What a file type is called in a message ("a character device").
const char* type_name(fs::file_type t) {
  switch (t) {
    case fs::file_type::block: return "a block device";
    case fs::file_type::character: return "a character device";
    case fs::file_type::fifo: return "a FIFO (named pipe)";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::directory: return "a directory";
    default: return "not a regular file";
  }
}

/// Writes all of `content` to `fd`; false (errno set) on failure.
bool write_all(int fd, const std::string& content) {
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

/// The end of the chain of symbolic links starting at `path` (`path` itself when it is not a link).
fs::path link_target(const fs::path& path) {
  fs::path p = path;
  for (int hops = 0;; ++hops) {
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(p, ec);
    if (ec || st.type() != fs::file_type::symlink) return p;
    if (hops == 40) throw UserError(fmt::format("{}: cannot write: too many levels of symbolic links", display(path)));
    const fs::path t = fs::read_symlink(p, ec);
    if (ec) throw UserError(fmt::format("{}: {}", display(path), ec.message()));
    p = t.is_absolute() ? t : p.parent_path() / t;
  }
}

/// The files this process has read as inputs (device and inode, and the path as given): a write never replaces one.
struct InputFile {
  dev_t device;
  ino_t inode;
  std::string shown;
  fs::path canonical;  // where it is, links resolved
};
std::mutex inputs_mutex;
std::vector<InputFile>& inputs_read() {
  static std::vector<InputFile> inputs;
  return inputs;
}

/// Notes the regular file described by `st` (opened or checked as `path`) as an input of this process.
void note_input(const fs::path& path, const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return;
  const std::lock_guard lock(inputs_mutex);
  for (const InputFile& f : inputs_read())
    if (f.device == st.st_dev && f.inode == st.st_ino) return;
  std::error_code ec;
  inputs_read().push_back({st.st_dev, st.st_ino, display(path), fs::weakly_canonical(path, ec)});
}

/// Throws UserError when `target` (an existing regular file) is one of this process's inputs.
void refuse_input(const fs::path& target, const std::string& shown) {
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) return;
  const std::lock_guard lock(inputs_mutex);
  for (const InputFile& f : inputs_read())
    if (f.device == st.st_dev && f.inode == st.st_ino)
      throw UserError(
          fmt::format("{}: cannot write: it is an input of this command ({}); framesim never writes "
                      "over what it reads: give another path",
                      shown, f.shown));
}

/// A file written beside its target, removed again unless committed.
class Temporary {
 public:
  /// Creates `<target>.tmp.<pid>`; throws UserError naming `shown` (the path the user gave) on failure.
  Temporary(fs::path target, const std::string& shown) : target_(std::move(target)), shown_(shown) {
    remove_stale_temporaries(target_, ".tmp.");
    path_ = target_.string() + ".tmp." + std::to_string(::getpid());
    std::error_code ec;
    const fs::file_status st = fs::status(target_, ec);
    // A replaced file keeps its permissions (the umask applies to a new one).
    const auto mode = fs::is_regular_file(st) ? static_cast<mode_t>(st.permissions() & fs::perms::all) : 0666;
    for (int attempt = 0; attempt < 2 && fd_ < 0; ++attempt) {
      errno = 0;
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
      if (fd_ < 0 && errno == EEXIST) ::unlink(path_.c_str());  // left by an earlier process with this pid
      else if (fd_ < 0) break;
    }
    if (fd_ < 0 && errno == ENOENT && !target_.parent_path().empty() && !fs::exists(target_.parent_path(), ec))
      fail(fmt::format("the folder {} does not exist", display(target_.parent_path())));
    if (fd_ < 0) fail(reason("cannot create the file"));
  }
  ~Temporary() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;

  /// Writes `content` and closes the file; throws UserError (and removes it) on failure.
  void write(const std::string& content) {
    errno = 0;
    if (!write_all(fd_, content)) fail(reason("the write failed"));
    const int fd = fd_;
    fd_ = -1;
    errno = 0;
    if (::close(fd) != 0) fail(reason("the write failed"));
  }
  /// Renames the written file over its target.
  void commit() {
    if (::rename(path_.c_str(), target_.c_str()) != 0) fail(std::strerror(errno));
    committed_ = true;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw UserError(fmt::format("{}: cannot write: {}", shown_, why));
  }
  fs::path target_;
  std::string shown_;
  std::string path_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Where a write to `path` goes: its link target, checked to be a regular file or nothing yet. Throws UserError
/// for a folder, a device node, FIFO or socket.
fs::path writable_target(const fs::path& path) {
  fs::path target = link_target(path);
  std::error_code ec;
  const fs::file_status st = fs::status(target, ec);
  const std::string shown =
      target == path ? display(path) : fmt::format("{} (a link to {})", display(path), display(target));
  if (st.type() == fs::file_type::directory)
    throw UserError(fmt::format("{}: cannot write: it is a directory (give a file name)", shown));
  if (st.type() != fs::file_type::not_found && st.type() != fs::file_type::regular && !ec)
    throw UserError(
        fmt::format("{}: cannot write: it is {}, not a regular file: framesim does not write there "
                    "(give `-` for the standard output)",
                    shown, type_name(st.type())));
  if (st.type() == fs::file_type::regular) refuse_input(target, shown);
  return target;
}

}  // namespace

fs::path resolve_links(const fs::path& path) { return link_target(path); }

std::string input_within(const fs::path& folder) {
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(folder, ec);
  if (ec || root.empty()) return {};
  const std::lock_guard lock(inputs_mutex);
  for (const InputFile& f : inputs_read()) {
    const fs::path rel = f.canonical.lexically_relative(root);
    if (!f.canonical.empty() && !rel.empty() && *rel.begin() != "..") return f.shown;
  }
  return {};
}

void write_file_atomic(const fs::path& path, const std::string& content) {
  if (const int fd = stream_fd(path); fd >= 0) {
    std::fflush(nullptr);
    std::cout.flush();
    errno = 0;
    if (!write_all(fd, content))
      throw UserError(fmt::format("{}: cannot write: {}", path.string(), reason("the write failed")));
    return;
  }
  Temporary tmp(writable_target(path), display(path));
  tmp.write(content);
  tmp.commit();
}

void write_files_atomic(const std::vector<std::pair<fs::path, std::string>>& files) {
  std::vector<std::unique_ptr<Temporary>> written;
  for (const auto& [path, content] : files) {
    if (stream_fd(path) >= 0) {  // a stream cannot wait for the others: written last, after every file is in place
      continue;
    }
    written.push_back(std::make_unique<Temporary>(writable_target(path), display(path)));
    written.back()->write(content);
  }
  for (auto& t : written) t->commit();
  for (const auto& [path, content] : files)
    if (stream_fd(path) >= 0) write_file_atomic(path, content);
}

void write_files_atomic(const fs::path& folder, const std::vector<std::pair<std::string, std::string>>& files,
                        const std::string& option) {
  if (stream_fd(folder) >= 0)
    throw UserError(fmt::format("{}: {} is a stream; give a folder (it holds several files)", option, folder.string()));
  std::error_code ec;
  const fs::file_status st = fs::status(folder, ec);
  if (st.type() != fs::file_type::not_found && st.type() != fs::file_type::directory && !ec)
    throw UserError(fmt::format("{}: {} is {}; give a folder (it holds several files)", option, display(folder),
                                fs::is_regular_file(st) ? "a file" : type_name(st.type())));
  // The first folder on the way that does not exist yet: removed again if anything fails.
  fs::path created;
  for (fs::path p = folder; !p.empty() && !fs::exists(fs::symlink_status(p, ec)); p = p.parent_path()) {
    created = p;
    if (p == p.parent_path()) break;
  }
  fs::create_directories(folder, ec);
  if (ec) throw UserError(fmt::format("{}: cannot create {}: {}", option, display(folder), ec.message()));
  try {
    std::vector<std::pair<fs::path, std::string>> paths;
    for (const auto& [name, content] : files) paths.emplace_back(folder / name, content);
    write_files_atomic(paths);
  } catch (...) {
    if (!created.empty()) fs::remove_all(created, ec);
    throw;
  }
}

void create_folders(const fs::path& folder) {
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) throw UserError(fmt::format("{}: cannot create the folder: {}", display(folder), ec.message()));
}

std::string write_failure_reason(const fs::path& folder, int saved_errno) {
  if (saved_errno != 0) return std::strerror(saved_errno);
  const fs::path probe = folder / ".framesim-write-probe";
  try {
    Temporary t(probe, display(probe));
    t.write(std::string(64 << 10, '\n'));
  } catch (const UserError& e) {
    const std::string what = e.what();
    const auto colon = what.rfind("cannot write: ");
    return colon == std::string::npos ? what : what.substr(colon + std::strlen("cannot write: "));
  }
  return "the write failed";
}

namespace {

/// Throws UserError if `path` is a folder or a regular file larger than `max_bytes`.
void check_size(const fs::path& path, std::uintmax_t max_bytes) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw UserError(display(path) + ": cannot open file: it is a directory");
  if (!fs::is_regular_file(path, ec)) return;  // a device or FIFO: its size is known only by reading it
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > max_bytes)
    throw UserError(fmt::format("{}: the file is {} MiB; framesim reads files of at most {} MiB", display(path),
                                size >> 20, max_bytes >> 20));
}

/// Reads the whole file at `path` (at most `max_bytes`); notes it as an input of this process when `input`.
std::string read_whole(const fs::path& path, std::uintmax_t max_bytes, bool input);

}  // namespace

void check_input_file(const fs::path& path, std::uintmax_t max_bytes) {
  check_size(path, max_bytes);
  if (struct stat st{}; ::stat(path.c_str(), &st) == 0) note_input(path, st);
}

std::string read_file(const fs::path& path, std::uintmax_t max_bytes) { return read_whole(path, max_bytes, true); }

std::string read_own_file(const fs::path& path, std::uintmax_t max_bytes) { return read_whole(path, max_bytes, false); }

namespace {

std::string read_whole(const fs::path& path, std::uintmax_t max_bytes, bool input) {
  if (path == "-") {
    // Standard input, read once: every reader in the process (the kind's detection, the load) sees the same text.
    static const std::string piped = read_whole("/dev/stdin", max_bytes, false);
    return piped;
  }
  check_size(path, max_bytes);
  // O_NONBLOCK only for the open: a FIFO nobody writes to then reads as empty instead of hanging the open.
  errno = 0;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int why = errno;
    std::error_code ec;
    if (why == ENOENT || !fs::exists(path, ec)) throw UserError(display(path) + ": cannot open file: no such file");
    if (why == EACCES) throw UserError(display(path) + ": cannot open file: not readable (check its permissions)");
    throw UserError(fmt::format("{}: cannot open file: {}", display(path), std::strerror(why)));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  // A regular file is read straight into the text, sized by its length; then, as anything else (a file that grew,
  // /dev/zero, a FIFO: no size known beforehand), in pieces, so that reading stops at the limit.
  std::string out;
  auto fail = [&](int why) {
    ::close(fd);
    throw UserError(fmt::format("{}: cannot read: {}", display(path), std::strerror(why)));
  };
  auto too_long = [&] {
    ::close(fd);
    throw UserError(
        fmt::format("{}: longer than {} MiB (reading stopped there); framesim reads files of at most {} MiB",
                    display(path), max_bytes >> 20, max_bytes >> 20));
  };
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    if (input) note_input(path, st);
    if (static_cast<std::uintmax_t>(st.st_size) > max_bytes) too_long();
    out.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < out.size()) {
      const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(errno);
      if (n == 0) break;  // shorter than it was
      got += static_cast<std::size_t>(n);
    }
    out.resize(got);
  }
  char piece[1 << 12];
  for (;;) {
    const ssize_t n = ::read(fd, piece, sizeof piece);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(errno);
    if (n == 0) break;
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) too_long();
    out.append(piece, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace

void remove_stale_temporaries(const fs::path& target, const std::string& marker) {
  const std::filesystem::path parent = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  const std::string prefix = target.filename().string() + marker;
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::directory_entry& entry = *it;
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
