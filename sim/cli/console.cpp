#include "cli/console.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/text.hpp"

namespace framesim::cli {

namespace {
std::atomic<Verbosity> g_verbosity{Verbosity::normal};
}  // namespace

void set_verbosity(Verbosity v) { g_verbosity = v; }
Verbosity verbosity() { return g_verbosity; }

void print_warnings(const std::vector<std::string>& lines) {
  if (is_quiet() || lines.empty()) return;
  const std::size_t shown = is_verbose() ? lines.size() : std::min(lines.size(), kWarningsShown);
  for (std::size_t i = 0; i < shown; ++i) std::cerr << lines[i] << "\n";
  if (shown < lines.size())
    std::cerr << fmt::format("... and {} more (-v shows every one)\n", core::counted(lines.size() - shown, "warning"));
}

void print_note(const std::string& line) {
  if (!is_quiet()) std::cerr << line << "\n";
}

std::string clock_text(double seconds) {
  const auto s = static_cast<long long>(std::max(0.0, std::floor(seconds)));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)),
      enabled_(!is_quiet() && ::isatty(STDERR_FILENO)),
      start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() { clear(); }

void ProgressBar::set_label(std::string label) {
  // Drawn by the next update(), whatever its throttle: drawing here would show the new label beside the old
  // fraction ("3/6 ... 33%") until the throttle let a redraw through.
  label_ = std::move(label);
  drawn_ = {};
}

void ProgressBar::update(double fraction, std::optional<double> left_s) {
  if (!enabled_) return;
  fraction_ = std::clamp(fraction, 0.0, 1.0);
  left_s_ = left_s;
  const auto now = std::chrono::steady_clock::now();
  if (shown_ && fraction_ < 1 && now - drawn_ < std::chrono::milliseconds(100)) return;
  draw();
}

void ProgressBar::draw() {
  const auto now = std::chrono::steady_clock::now();
  drawn_ = now;
  const double elapsed_s = std::chrono::duration<double>(now - start_).count();
  std::string left = "--:-- left";
  if (left_s_) left = fmt::format("about {} left", clock_text(*left_s_));
  else if (fraction_ >= 0.01) left = fmt::format("about {} left", clock_text(elapsed_s * (1 - fraction_) / fraction_));
  const std::string counts =
      fmt::format("] {:3d}%  {} elapsed, {}", static_cast<int>(fraction_ * 100), clock_text(elapsed_s), left);
  // One terminal line, never wrapped (a wrapped line could not be redrawn in place): the bar narrows from 30
  // characters to 10 first, then the label gives way.
  winsize size{};
  const int columns = ::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 ? size.ws_col : 80;
  const int room = columns - 1 - static_cast<int>(label_.size() + 2 + counts.size());
  const int width = std::clamp(room, 10, 30);
  const int done = static_cast<int>(fraction_ * width);
  const std::string tail = " [" + std::string(static_cast<std::size_t>(done), '#') +
                           std::string(static_cast<std::size_t>(width - done), ' ') + counts;
  const auto usable = static_cast<std::size_t>(std::max(columns - 1, 0));
  std::string line = label_.substr(0, usable > tail.size() ? usable - tail.size() : 0) + tail;
  line.resize(std::min(line.size(), usable));
  std::fprintf(stderr, "\r%s\033[K", line.c_str());
  std::fflush(stderr);
  shown_ = true;
}

void ProgressBar::clear() {
  if (!shown_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace framesim::cli
