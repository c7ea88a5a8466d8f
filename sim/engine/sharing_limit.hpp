// The sharing limit of `framesim bench` (sharing_limit.cpp): a scenario's kernels through a minimal event loop of
// its own (a binary heap of events, max-min fair rates at every kernel start and end, no outputs).
#pragma once

#include "engine/plans.hpp"
#include "engine/records.hpp"
#include "model/scenario.hpp"

namespace framesim::engine {

/// The kernels the bare loop issues (run_bare_loop), shared max-min fair in a minimal loop; the totals (kernels,
/// simulated end, wall time).
RunTotals run_sharing_limit(const model::ScenarioSpec& spec);

/// The kernels both loops issue for one item of `spec`'s work: work given as a time is planned per second of it
/// (plans.hpp), so its cycles are scaled by the time, here the mean of its distribution (the bench scenarios give
/// a fixed time); a network's kernels as planned.
std::vector<KernelPlan> bench_work(std::vector<KernelPlan> work, const model::WorkSpec& spec);

}  // namespace framesim::engine
