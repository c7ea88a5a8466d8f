#include "core/error.hpp"

#include <cstdio>
#include <cstdlib>

namespace framesim::core {

std::string Diagnostic::to_string() const {
  std::string out;
  if (!where.file.empty()) {
    out += where.file;
    if (where.line > 0) out += ":" + std::to_string(where.line) + ":" + std::to_string(where.column);
    out += ": ";
  }
  if (!key_path.empty()) out += key_path + ": ";
  out += message;
  return out;
}

namespace {
std::string join(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) {
    if (!out.empty()) out += "\n";
    out += d.to_string();
  }
  return out;
}
}  // namespace

UserError::UserError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join(diagnostics)), diagnostics_(std::move(diagnostics)) {}

UserError::UserError(const std::string& message)
    : std::runtime_error(message), diagnostics_{Diagnostic{{}, {}, message}} {}

void Diagnostics::throw_if_any() const {
  if (items_.empty()) return;
  if (dropped_ == 0) throw UserError(items_);
  std::vector<Diagnostic> shown = items_;
  shown.push_back({{},
                   {},
                   "... and " + std::to_string(dropped_) + " more problems (the first " +
                       std::to_string(kMaxDiagnostics) + " are above)"});
  throw UserError(shown);
}

namespace {
std::function<void()>& internal_error_cleanup() {
  static std::function<void()> cleanup;
  return cleanup;
}
}  // namespace

void set_internal_error_cleanup(std::function<void()> cleanup) { internal_error_cleanup() = std::move(cleanup); }

void run_internal_error_cleanup() noexcept {
  auto cleanup = std::move(internal_error_cleanup());
  internal_error_cleanup() = nullptr;
  if (cleanup) {
    try {
      cleanup();
    } catch (...) {
    }
  }
}

void assertion_failed(const char* expr, const char* file, int line, const std::string& what) {
  run_internal_error_cleanup();
  std::fprintf(stderr, "framesim internal error (a bug, please report it): %s:%d: %s: %s\n", file, line, expr,
               what.c_str());
  std::abort();
}

}  // namespace framesim::core
