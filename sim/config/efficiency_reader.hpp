// The `efficiency` value of a unit (a number, or precisions, `all` and `by_op`), read the same way in hardware
// files and runtime profiles. Internal to config/.
#pragma once

#include <optional>

#include "config/schema.hpp"
#include "config/yaml.hpp"
#include "model/hardware.hpp"

namespace framesim::config {

/// Reads `node` into unit.efficiency and unit.efficiency_by_op, checked against `table`'s declarations of
/// `units.<unit>.efficiency...`; when the unit has peaks, every precision named must have one.
void read_unit_efficiency(const Node& node, model::ComputeUnitSpec& unit, const schema::Table& table);

/// `output_cost` of the mapping `m` (a hardware unit's or a runtime profile's): nothing when absent or refused
/// (over 1 us, reported at the key).
std::optional<double> read_output_cost(const MapReader& m);

}  // namespace framesim::config
