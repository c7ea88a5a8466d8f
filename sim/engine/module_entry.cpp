// Module side: the engine's entry points, exported under one C name (see module.hpp).
#include "engine/module.hpp"
#include "engine/sharing_limit.hpp"

extern "C" const framesim::engine::EntryPoints framesim_engine_entry_points{
    &framesim::engine::simulate, &framesim::engine::run_bare_loop, &framesim::engine::run_sharing_limit};
