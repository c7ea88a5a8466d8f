// The `efficiency` value of a unit (a number, or precisions, `all` and `by_op`), read the same way in hardware
// files and runtime profiles. Internal to config/.
#pragma once

#include "config/schema.hpp"
#include "config/yaml.hpp"
#include "model/hardware.hpp"

namespace framesim::config {

/// Reads `node` into unit.efficiency and unit.efficiency_by_op, checked against `table`'s declarations of
/// `units.<unit>.efficiency...`; when the unit has peaks, every precision named must have one.
void read_unit_efficiency(const Node& node, model::ComputeUnitSpec& unit, const schema::Table& table);

}  // namespace framesim::config
