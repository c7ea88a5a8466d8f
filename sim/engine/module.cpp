// Loading side (in the executable, no SimGrid): finds framesim-engine.so next to the running executable.
#include "engine/module.hpp"

#include "core/module.hpp"

namespace framesim::engine {

const EntryPoints& engine_module() {
  static const auto* entry = static_cast<const EntryPoints*>(
      core::module_symbol("framesim-engine.so", "framesim_engine_entry_points", "the simulation engine"));
  return *entry;
}

}  // namespace framesim::engine
