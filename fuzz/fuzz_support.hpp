// Shared by the libFuzzer targets (README.md here): a bad input must end in core::UserError, never in a
// crash, an abort, a hang or another exception. Each target calls guarded() around the code under test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <unistd.h>

#include "core/error.hpp"

namespace framesim::fuzz {

/// The input as text.
inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Runs `f`; a user error is the expected outcome of most inputs. Anything else escapes and libFuzzer reports it.
template <typename F>
int guarded(F&& f) {
  try {
    f();
  } catch (const core::UserError&) {
  }
  return 0;
}

/// A private scratch folder laid out like the source tree (hardware/, scenarios/ with networks/ and sweeps/),
/// its shipped files linked in, so that a fuzzed scenario or sweep written into it finds the files it names.
inline const std::filesystem::path& scratch_tree() {
  static const std::filesystem::path root = [] {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("framesim-fuzz-" + std::to_string(::getpid()));
    const fs::path source = FRAMESIM_SOURCE_DIR;
    std::error_code ec;
    fs::create_directories(dir / "scenarios" / "sweeps", ec);
    fs::create_directory_symlink(source / "hardware", dir / "hardware", ec);
    fs::create_directory_symlink(source / "tests", dir / "tests", ec);
    for (const auto& e : fs::directory_iterator(source / "scenarios"))
      if (e.path().filename() != "sweeps") fs::create_symlink(e.path(), dir / "scenarios" / e.path().filename(), ec);
    std::atexit([] {
      std::error_code ignored;
      fs::remove_all(fs::temp_directory_path() / ("framesim-fuzz-" + std::to_string(::getpid())), ignored);
    });
    return dir;
  }();
  return root;
}

/// Writes the input to `relative` inside scratch_tree() and returns its path.
inline std::filesystem::path write_input(const std::string& relative, const std::uint8_t* data, std::size_t size) {
  const auto path = scratch_tree() / relative;
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

}  // namespace framesim::fuzz
