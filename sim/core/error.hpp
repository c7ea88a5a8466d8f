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

/// Collects problems so that a whole file is checked before anything is reported.
class Diagnostics {
 public:
  void add(Diagnostic d) { items_.push_back(std::move(d)); }
  void add(const SourceLocation& where, std::string key_path, std::string message) {
    items_.push_back({where, std::move(key_path), std::move(message)});
  }
  bool empty() const { return items_.empty(); }
  std::size_t size() const { return items_.size(); }
  const std::vector<Diagnostic>& items() const { return items_; }
  /// Throws UserError with everything collected so far, if anything was.
  void throw_if_any() const;

 private:
  std::vector<Diagnostic> items_;
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
