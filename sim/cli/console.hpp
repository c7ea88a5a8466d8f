// What framesim says on the terminal besides its result: how much (-q / -v, the same on every command), warnings,
// and the progress bar of long commands.
//   -q, --quiet    only errors and the final result: no progress, no notes, no warnings (--strict makes them errors)
//   (default)      progress on a terminal, notes, warnings (at most kWarningsShown, then how many more)
//   -v, --verbose  every warning, and timings on stderr
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace framesim::cli {

enum class Verbosity { quiet, normal, verbose };

/// Set once by main from the -q and -v flags (-q wins when both are given).
void set_verbosity(Verbosity v);
Verbosity verbosity();
inline bool is_quiet() { return verbosity() == Verbosity::quiet; }
inline bool is_verbose() { return verbosity() == Verbosity::verbose; }

/// Warnings printed without -v; the rest are counted in one line.
inline constexpr std::size_t kWarningsShown = 10;

/// Prints `lines` (each a whole warning, "warning: " included) on stderr as the verbosity says.
void print_warnings(const std::vector<std::string>& lines);

/// An informational line on stderr (what was written where, what a command is about to do): not under -q.
void print_note(const std::string& line);

/// A duration for people: "0:07", "3:25", "1:02:03" (hours:minutes:seconds, rounded down to the second).
std::string clock_text(double seconds);

/// One line on stderr redrawn in place: `label [#####     ]  42%  0:12 elapsed, about 0:17 left`. Shown only
/// when stderr is a terminal and not under -q; cleared by clear() (call it before printing anything else) and
/// by the destructor.
class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  /// `fraction` done in [0, 1]; `left_s` the time left when the caller knows better than elapsed x (1 - f) / f.
  /// Redraws at most ten times a second (and always at 1).
  void update(double fraction, std::optional<double> left_s = std::nullopt);
  /// The new label shows at the next update(), which then redraws even within the throttle.
  void set_label(std::string label);
  /// Erases the line; the next update() draws it again.
  void clear();
  bool enabled() const { return enabled_; }

 private:
  void draw();
  std::string label_;
  bool enabled_;
  bool shown_ = false;
  double fraction_ = 0;
  std::optional<double> left_s_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point drawn_;
};

}  // namespace framesim::cli
