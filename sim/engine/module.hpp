// The engine as the CLI sees it: a module (framesim-engine.so, beside the executable) loaded on first use, so that
// commands that simulate nothing (budget, import, validate, ...) never load SimGrid (about 14 ms of process start,
// with the ns-3 libraries it pulls in). The module exports one table of entry points; the executable exports
// framesim's own symbols to it (ENABLE_EXPORTS), so the two share one copy of every type.
#pragma once

#include "engine/records.hpp"
#include "engine/simulation.hpp"

namespace framesim::engine {

/// The table the module exports under the C name `framesim_engine_entry_points`.
struct EntryPoints {
  RunTotals (*simulate)(const model::ScenarioSpec& spec, RecordSink& sink, const RunOptions& options);
  RunTotals (*run_bare_loop)(const model::ScenarioSpec& spec);
  RunTotals (*run_sharing_limit)(const model::ScenarioSpec& spec);  // sharing_limit.hpp
};

/// The module's entry points, loaded once. Throws std::runtime_error (not an input error) when it cannot be loaded.
const EntryPoints& engine_module();

}  // namespace framesim::engine
