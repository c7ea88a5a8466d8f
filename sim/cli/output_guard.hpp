// Nothing half-written after a signal or a runaway run: while an OutputGuard lives, SIGINT, SIGTERM and SIGHUP,
// a wall-time limit, an internal error and an abort (a library giving up) each remove the temporary output
// before the process ends.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>

namespace framesim::cli {

/// Exit code of a run stopped by --wall-limit (README "Exit codes").
inline constexpr int kExitWallLimit = 3;

class OutputGuard {
 public:
  /// Guards `tmp` (a folder or file being written). `wall_limit_s` > 0 stops the process after that much wall
  /// time with exit code kExitWallLimit; a signal ends it with 128 + the signal's number. Each says so on stderr.
  /// Construct it before any other thread starts: it blocks the signals in the calling thread (a child a guarded
  /// process forks inherits the mask: unblock them in the child, see unblock_guarded_signals). `after_signal` is
  /// what the signal's message says of the output ("nothing was written").
  OutputGuard(std::filesystem::path tmp, double wall_limit_s, std::string option_name,
              std::string after_signal = "nothing was written");
  ~OutputGuard();
  OutputGuard(const OutputGuard&) = delete;
  OutputGuard& operator=(const OutputGuard&) = delete;

  /// Runs `publish` (the rename that makes the output visible) with the guard held off, so that a signal
  /// arriving then finds either the old output or the whole new one, never a mix.
  void publish(const std::function<void()>& publish);

 private:
  void watch();
  [[noreturn]] void stop(const std::string& message, int exit_code);

  std::filesystem::path tmp_;
  double wall_limit_s_;
  std::string option_name_;
  std::string after_signal_;
  sigset_t signals_{};
  sigset_t previous_mask_{};
  struct sigaction previous_abort_ {};
  std::mutex mutex_;
  std::atomic<bool> done_{false};
  std::atomic<bool> published_{false};
  std::thread watcher_;
};

/// In a child forked by a guarded process, before exec: the signals the guard blocked reach the child again.
void unblock_guarded_signals();

/// The file in a run folder listing what framesim wrote there, one name a line.
inline constexpr const char* kWrittenFilesList = ".framesim-files";

/// Writes kWrittenFilesList into `folder`, naming every entry in it (sorted).
void list_written_files(const std::filesystem::path& folder);

/// Refuses (core::UserError naming `option`) to replace `out` when it holds anything framesim did not write: an
/// entry neither in its kWrittenFilesList nor among `also_ours` (the names the new run writes: a folder from a
/// framesim that kept no list); with `force` only a file at `out` is refused. A folder holding one of the command's
/// inputs (core::input_within) is refused even with `force`. Nothing to check when `out` does not
/// exist. A folder without the list but with a summary.json passes when `also_ours` is empty (checked again once the
/// new run's names are known).
void check_replaceable(const std::filesystem::path& out, const std::vector<std::string>& also_ours,
                       const std::string& option, bool force);

/// Publishes the finished folder `tmp` as `out`: an existing `out` is swapped out atomically and then removed,
/// so a failure at any point leaves either the old run folder or the new one. Throws core::UserError.
void replace_folder(const std::filesystem::path& tmp, const std::filesystem::path& out);

}  // namespace framesim::cli
