#include "cli/output_guard.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "core/error.hpp"
#include "core/units.hpp"

namespace framesim::cli {

namespace fs = std::filesystem;

OutputGuard::OutputGuard(fs::path tmp, double wall_limit_s, std::string option_name)
    : tmp_(std::move(tmp)), wall_limit_s_(wall_limit_s), option_name_(std::move(option_name)) {
  sigemptyset(&signals_);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR2}) sigaddset(&signals_, s);
  pthread_sigmask(SIG_BLOCK, &signals_, &previous_mask_);
  core::set_internal_error_cleanup([this] {
    std::error_code ignored;
    fs::remove_all(tmp_, ignored);
  });
  watcher_ = std::thread([this] { watch(); });
}

OutputGuard::~OutputGuard() {
  done_ = true;
  pthread_kill(watcher_.native_handle(), SIGUSR2);
  watcher_.join();
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
    stop(fmt::format("framesim: interrupted by SIG{}; nothing was written", sigabbrev_np(s) ? sigabbrev_np(s) : "?"),
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
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(exit_code);
}

void OutputGuard::publish(const std::function<void()>& publish) {
  std::lock_guard lock(mutex_);
  publish();
  published_ = true;
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
