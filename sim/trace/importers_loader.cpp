// The executable's side: loads framesim-importers.so, next to the running executable, the first time a reader in
// it is needed (importers.hpp).
#include <dlfcn.h>

#include <stdexcept>

#include "trace/importers.hpp"

namespace framesim::trace {

const Importers& importers() {
  static const Importers* entry = [] {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const auto path = (ec ? std::filesystem::path(".") : self.parent_path()) / "framesim-importers.so";
    void* handle = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (!handle) throw std::runtime_error("cannot load the importers " + path.string() + ": " + ::dlerror());
    void* table = ::dlsym(handle, "framesim_importer_entry_points");
    if (!table) throw std::runtime_error(path.string() + " has no framesim_importer_entry_points: " + ::dlerror());
    return static_cast<const Importers*>(table);
  }();
  return *entry;
}

}  // namespace framesim::trace
