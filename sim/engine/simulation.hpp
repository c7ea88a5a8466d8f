// Runs a scenario on SimGrid 3.32 (see sim/engine/README.md for the mapping):
//   unit -> host with one pstate per operating point (speed = clock, work = cycles at the nominal clock);
//   memory level -> pseudo-host behind a link of the level's effective bandwidth (shared by every unit
//   whose path includes it: max-min fair contention); Little's-law cap -> a private port link per
//   unit and level (outstanding bytes / latency); kernel -> one parallel task (cycles on the unit's
//   cores, bytes to each level); governor + lumped-RC thermal model -> an actor; energy -> per-op and
//   per-byte energy counted from each kernel's progress, plus static power per operating point.
// One simulation per process: SimGrid keeps global state (README.md, "Limits").
#pragma once

#include <functional>

#include "engine/records.hpp"
#include "model/scenario.hpp"

namespace framesim::engine {

struct RunOptions {
  /// Called now and then with simulated progress in [0, 1] (a progress bar); may be empty.
  std::function<void(double fraction)> progress;
  /// Kernels run in framesim's fluid system (SimGrid's L07 sharing computed by framesim: no SimGrid activity per
  /// kernel). Off (`--exact`): every kernel is a SimGrid activity. Both follow the same dispatcher and rules.
  bool fluid = true;
};

/// The reference for `framesim bench`: the same platform and the same kernels of every stage (each its dispatch
/// overhead, then its parallel task), issued from one actor per stage at each capture of the first sensor, with
/// none of framesim's queues, scheduling, energy or records. Returns the totals (activities, simulated end, wall time).
RunTotals run_bare_loop(const model::ScenarioSpec& spec);

/// Simulates `spec`, streaming records to `sink`. A scenario that config/ validated always runs: a deadlock that
/// leaves frames unfinished is reported in totals.warnings, not thrown. What an actor throws while it runs (the
/// sink's core::UserError when a record file cannot be written) stops the run and is rethrown here; a second call
/// in one process throws std::logic_error (SimGrid keeps global state).
RunTotals simulate(const model::ScenarioSpec& spec, RecordSink& sink, const RunOptions& options = {});

}  // namespace framesim::engine
