#include "core/module.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace framesim::core {

const void* module_symbol(const char* file, const char* symbol, const char* what) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto path = (ec ? std::filesystem::path(".") : self.parent_path()) / file;
  void* handle = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (!handle) throw std::runtime_error(std::string("cannot load ") + what + " " + path.string() + ": " + ::dlerror());
  void* address = ::dlsym(handle, symbol);
  if (!address) throw std::runtime_error(path.string() + " has no " + symbol + ": " + ::dlerror());
  return address;
}

}  // namespace framesim::core
