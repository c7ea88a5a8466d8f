// Replayed measured times: which kernels of a stage's network a measured file gives a time for, and what a reader
// should be told about it. Pure: the engine (engine/plans.cpp) runs the matched kernels in these times, and
// `framesim validate` of a scenario prints the same warnings without running anything.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/hardware.hpp"
#include "model/network.hpp"
#include "model/plan.hpp"
#include "model/scenario.hpp"

namespace framesim::model {

struct Replay {
  /// Per kernel of the plan: its measured time (by kernel name, or its layers' and folded layers' times summed),
  /// none when the file names nothing of it.
  std::vector<std::optional<double>> times_s;
  /// A measured time below its kernel's memory bound alone (the bus binds it: it cannot run that fast).
  std::vector<std::string> warnings;
  /// How many kernels were replayed from which file, and the names that matched nothing (empty: nothing measured).
  std::string note;
};

/// The replay of `stage`'s measured times over `plan`, the plan of network `net` on the stage's unit of `hw`.
/// A stage without measurements replays nothing (every time none, no warning, no note).
Replay replay_measured(const HardwareSpec& hw, const StageSpec& stage, const NetworkSpec& net,
                       const ExecutionPlan& plan);

}  // namespace framesim::model
