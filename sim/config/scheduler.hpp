// Reads a unit's `scheduler:` (hardware file, or a scenario's `schedulers:` override): a policy name, or a map
// {policy, quantum, switch_cost}. See model::SchedulingPolicy for what each policy does.
#pragma once

#include "config/yaml.hpp"
#include "model/hardware.hpp"

namespace framesim::config {

/// The scheduler written at `node`; errors are reported at the node (file, line, column, key).
model::SchedulerSpec read_scheduler(const Node& node);

}  // namespace framesim::config
