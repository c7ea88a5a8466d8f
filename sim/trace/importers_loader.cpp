// The executable's side: loads framesim-importers.so, next to the running executable, the first time a reader in
// it is needed (importers.hpp).
#include "core/module.hpp"
#include "trace/importers.hpp"

namespace framesim::trace {

const Importers& importers() {
  static const auto* entry = static_cast<const Importers*>(core::module_symbol(
      "framesim-importers.so", "framesim_importer_entry_points", "the ONNX and Nsight Systems readers"));
  return *entry;
}

}  // namespace framesim::trace
