#include "cli/output_guard.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace framesim::cli {

namespace fs = std::filesystem;

OutputGuard::OutputGuard(fs::path tmp, double wall_limit_s, std::string option_name, std::string after_signal)
    : tmp_(std::move(tmp)),
      wall_limit_s_(wall_limit_s),
      option_name_(std::move(option_name)),
      after_signal_(std::move(after_signal)) {
  sigemptyset(&signals_);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR2}) sigaddset(&signals_, s);
  pthread_sigmask(SIG_BLOCK, &signals_, &previous_mask_);
  core::set_internal_error_cleanup([this] {
    std::error_code ignored;
    fs::remove_all(tmp_, ignored);
  });
  // An abort inside a library (SimGrid's "Failed to allocate stack" calls abort()) removes the temporary too.
  struct sigaction on_abort {};
  on_abort.sa_handler = [](int) {
    core::run_internal_error_cleanup();
    ::signal(SIGABRT, SIG_DFL);
    ::raise(SIGABRT);
  };
  sigemptyset(&on_abort.sa_mask);
  sigaction(SIGABRT, &on_abort, &previous_abort_);
  watcher_ = std::thread([this] { watch(); });
}

OutputGuard::~OutputGuard() {
  done_ = true;
  pthread_kill(watcher_.native_handle(), SIGUSR2);
  watcher_.join();
  sigaction(SIGABRT, &previous_abort_, nullptr);
  core::set_internal_error_cleanup({});
  pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

void OutputGuard::watch() {
  const auto start = std::chrono::steady_clock::now();
  while (!done_) {
    timespec timeout{3600, 0};
    if (wall_limit_s_ > 0) {
      const double left_s =
          wall_limit_s_ - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (left_s <= 0)
        stop(fmt::format("framesim: stopped after {} of wall time ({}); nothing was written",
                         core::format_seconds(wall_limit_s_), option_name_),
             kExitWallLimit);
      timeout.tv_sec = static_cast<time_t>(left_s);
      timeout.tv_nsec = static_cast<long>((left_s - static_cast<double>(timeout.tv_sec)) * 1e9);
    }
    siginfo_t info{};
    const int s = sigtimedwait(&signals_, &info, &timeout);
    if (s < 0 || s == SIGUSR2) continue;  // a timeout, EINTR, or the destructor's wake-up
    stop(fmt::format("framesim: interrupted by SIG{}; {}", sigabbrev_np(s) ? sigabbrev_np(s) : "?", after_signal_),
         128 + s);
  }
}

void OutputGuard::stop(const std::string& message, int exit_code) {
  std::lock_guard lock(mutex_);  // never while publish() renames
  if (published_) {
    // The output is published already: the run finished; only the signal's exit code remains to give.
    std::fflush(stdout);
    std::_Exit(exit_code);
  }
  std::error_code ignored;
  fs::remove_all(tmp_, ignored);
  if (::isatty(STDERR_FILENO)) std::fputs("\r\033[K", stderr);  // a progress bar's line
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(exit_code);
}

void OutputGuard::publish(const std::function<void()>& publish) {
  std::lock_guard lock(mutex_);
  publish();
  published_ = true;
}

void unblock_guarded_signals() {
  sigset_t none;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, nullptr);
}

namespace {
std::vector<std::string> entry_names(const fs::path& folder) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  if (ec) throw core::UserError(fmt::format("{}: cannot list the folder: {}", folder.string(), ec.message()));
  std::sort(names.begin(), names.end());
  return names;
}
}  // namespace

void list_written_files(const fs::path& folder) {
  std::string text =
      "# written by framesim: what it wrote in this run folder. It replaces the folder on a rerun only "
      "when the folder holds nothing else (or with --force).\n";
  for (const auto& name : entry_names(folder))
    if (name != kWrittenFilesList) text += name + "\n";
  core::write_file_atomic(folder / kWrittenFilesList, text);
}

void check_replaceable(const fs::path& out, const std::vector<std::string>& also_ours, const std::string& option,
                       bool force) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return;
  if (!fs::is_directory(out, ec))
    throw core::UserError(fmt::format("{}: {} exists and is not a folder: not replacing it", option, out.string()));
  if (const std::string input = core::input_within(out); !input.empty())
    throw core::UserError(
        fmt::format("{}: {} holds {}, an input of this command: not replacing it, even with "
                    "--force; choose another folder",
                    option, out.string(), input));
  if (force) return;
  std::set<std::string> ours(also_ours.begin(), also_ours.end());
  ours.insert(kWrittenFilesList);
  if (fs::exists(out / kWrittenFilesList, ec)) {
    std::istringstream list(core::read_own_file(out / kWrittenFilesList));
    for (std::string line; std::getline(list, line);)
      if (!line.empty() && line.front() != '#') ours.insert(line);
  } else if (also_ours.empty() && fs::exists(out / "summary.json", ec)) {
    return;  // written by a framesim that kept no list: judged against the new run's names before publishing
  }
  std::vector<std::string> foreign;
  for (const auto& name : entry_names(out))
    if (!ours.count(name)) foreign.push_back(name);
  if (foreign.empty()) return;
  const std::size_t shown = std::min<std::size_t>(foreign.size(), 5);
  std::vector<std::string> names(foreign.begin(), foreign.begin() + static_cast<std::ptrdiff_t>(shown));
  throw core::UserError(
      fmt::format("{}: {} holds {} framesim did not write ({}{}): not replacing it; --force "
                  "replaces it anyway, or choose another folder",
                  option, out.string(), foreign.size() == 1 ? "a file" : core::counted(foreign.size(), "file"),
                  core::join_list(names, ", "), shown < foreign.size() ? ", ..." : ""));
}

void replace_folder(const fs::path& tmp, const fs::path& out) {
  std::error_code ec;
  if (!fs::exists(out, ec)) {
    fs::rename(tmp, out, ec);
    if (ec) throw core::UserError(fmt::format("-o: cannot create {}: {}", out.string(), ec.message()));
    return;
  }
  // Swap the two folders in one step, then remove the old one (now under the temporary name).
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, out.c_str(), RENAME_EXCHANGE) != 0)
    throw core::UserError(fmt::format("-o: cannot replace {}: {}", out.string(), std::strerror(errno)));
  fs::remove_all(tmp, ec);
}

}  // namespace framesim::cli
