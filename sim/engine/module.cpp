// Loading side (in the executable, no SimGrid): finds framesim-engine.so next to the running executable.
#include "engine/module.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>

namespace framesim::engine {

const EntryPoints& engine_module() {
  static const EntryPoints* entry = [] {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const auto path = (ec ? std::filesystem::path(".") : self.parent_path()) / "framesim-engine.so";
    void* handle = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (!handle) throw std::runtime_error("cannot load the simulation engine " + path.string() + ": " + ::dlerror());
    void* table = ::dlsym(handle, "framesim_engine_entry_points");
    if (!table) throw std::runtime_error(path.string() + " has no framesim_engine_entry_points: " + ::dlerror());
    return static_cast<const EntryPoints*>(table);
  }();
  return *entry;
}

}  // namespace framesim::engine
