// HardwareSpec -> hardware YAML (the schema of hardware/README.md), e.g. for `framesim calibrate -o`.
// Round trip: parse_hardware(write_hardware_yaml(spec)) equals spec field by field (the file it came from
// aside). Every quantity is written with a unit, in the shortest form that parses back to the same double
// ("102.4 GB/s", "5 us"), falling back to the base unit with all digits when no prefixed form is exact.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "model/hardware.hpp"

namespace framesim::config {

struct HardwareYamlOptions {
  /// Comment lines at the top of the file (without the leading "# ").
  std::vector<std::string> header;
  /// Trailing comments by key path: "units.gpu.dispatch_overhead", "units.gpu.efficiency" (a single number) or
  /// "units.gpu.efficiency.fp32", "memory.dram.efficiency".
  std::map<std::string, std::string> comments;
};

/// The YAML text of `hw`, its `source:` texts included. Derived fields (memory users, busy_power as energy per op)
/// are written in their explicit form: a unit's busy_power becomes its energy_per_op.
std::string write_hardware_yaml(const model::HardwareSpec& hw, const HardwareYamlOptions& options = {});

/// True when every precision has the same compute efficiency on `unit`: the writer then writes one number
/// ("units.gpu.efficiency"), else one per precision ("units.gpu.efficiency.fp32").
bool single_efficiency(const model::ComputeUnitSpec& unit);

/// A quantity with a unit that parses back to exactly `value` (for `dimension`): "2 MiB", "918 MHz".
std::string exact_quantity(double value, core::Dimension dimension, bool float_ops = true);

}  // namespace framesim::config
