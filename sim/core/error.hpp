// User-facing errors: every problem in an input names its file, line, column and key path.
// Library code collects Diagnostics and throws UserError; only main() turns that into exit code 2.
// A bug in framesim itself is an assert (FRAMESIM_ASSERT), never a user message.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace framesim::core {

/// Where in an input file something was written. Lines and columns are 1-based; 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

/// One problem with the user's input: `file:line:col: key.path: message`.
struct Diagnostic {
  SourceLocation where;
  std::string key_path;
  std::string message;

  std::string to_string() const;
};

/// Thrown when input is invalid. Carries every problem found, in the order found.
class UserError : public std::runtime_error {
 public:
  explicit UserError(std::vector<Diagnostic> diagnostics);
  /// A single problem without a source position (e.g. a file that cannot be opened).
  explicit UserError(const std::string& message);

  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

/// Most problems one report keeps (README "Limits"): past it they are counted, not kept, so that a file of 200 000
/// mistakes is refused in a moment, ending in "... and N more problems".
inline constexpr std::size_t kMaxDiagnostics = 50;

/// Collects problems so that a whole file is checked before anything is reported.
class Diagnostics {
 public:
  void add(Diagnostic d) {
    if (items_.size() < kMaxDiagnostics) items_.push_back(std::move(d));
    else ++dropped_;
  }
  void add(const SourceLocation& where, std::string key_path, std::string message) {
    add(Diagnostic{where, std::move(key_path), std::move(message)});
  }
  bool empty() const { return items_.empty(); }
  /// Every problem added, kept or only counted.
  std::size_t size() const { return items_.size() + dropped_; }
  /// Whether no more problems are kept (a reader may stop looking for more).
  bool full() const { return items_.size() >= kMaxDiagnostics; }
  const std::vector<Diagnostic>& items() const { return items_; }
  /// Throws UserError with everything collected so far, if anything was (and how many more were only counted).
  void throw_if_any() const;

 private:
  std::vector<Diagnostic> items_;
  std::size_t dropped_ = 0;
};

/// What an internal error does before the process aborts (e.g. remove a half-written output); empty for nothing.
/// FRAMESIM_ASSERT and an uncaught exception (std::terminate, see main) run it.
void set_internal_error_cleanup(std::function<void()> cleanup);
/// Runs the cleanup set by set_internal_error_cleanup, once.
void run_internal_error_cleanup() noexcept;

[[noreturn]] void assertion_failed(const char* expr, const char* file, int line, const std::string& what);

}  // namespace framesim::core

/// Internal invariant: a failure is a framesim bug, reported with the source position and aborting.
#define FRAMESIM_ASSERT(cond, what)                                                   \
  do {                                                                                \
    if (!(cond)) ::framesim::core::assertion_failed(#cond, __FILE__, __LINE__, what); \
  } while (false)
