// A module beside the running executable (framesim-engine.so, framesim-importers.so), loaded on first use: what
// the executable does not need at every start (sim/README.md).
#pragma once

namespace framesim::core {

/// Loads `file` from the folder of the running executable (lazily bound, its symbols kept local) and returns the
/// address of its exported `symbol`. Throws std::runtime_error (not an input error) when either cannot be found,
/// naming the module as `what` ("the simulation engine").
const void* module_symbol(const char* file, const char* symbol, const char* what);

}  // namespace framesim::core
