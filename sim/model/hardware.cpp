#include "model/hardware.hpp"

#include <cmath>

#include "core/units.hpp"

namespace framesim::model {

std::string_view memory_kind_name(MemoryKind k) { return kMemoryKinds.name(k); }

double ThermalSpec::step_C(double temperature_C, double ambient, double power_W, double dt_s) const {
  const double steady_C = ambient + power_W * resistance_K_per_W;
  return steady_C + (temperature_C - steady_C) * std::exp(-dt_s / (resistance_K_per_W * capacitance_J_per_K));
}

std::string_view scheduling_policy_name(SchedulingPolicy p) { return kSchedulingPolicies.name(p); }

std::string_view unit_kind_name(UnitKind k) { return kUnitKinds.name(k); }

std::optional<std::size_t> ComputeUnitSpec::find_operating_point(std::string_view text) const {
  for (std::size_t i = 0; i < operating_points.size(); ++i)
    if (operating_points[i].name == text) return i;
  const auto hz = core::parse_quantity(text, core::Dimension::Hertz);
  if (!hz.value) return std::nullopt;
  for (std::size_t i = 0; i < operating_points.size(); ++i)
    if (std::fabs(operating_points[i].frequency_Hz / *hz.value - 1) < 0.005) return i;
  return std::nullopt;
}

bool ComputeUnitSpec::has_efficiency_by_op() const {
  for (const auto& per : efficiency_by_op)
    if (per.any()) return true;
  return false;
}

std::string_view governor_policy_name(GovernorPolicy p) { return kGovernorPolicies.name(p); }

double MemoryLevelSpec::bandwidth_at_Bps(std::size_t op) const {
  if (operating_points.empty() || op == 0) return bandwidth_Bps;
  return bandwidth_Bps * operating_points[op].frequency_Hz / operating_points.front().frequency_Hz;
}

std::optional<std::size_t> HardwareSpec::find_unit(std::string_view unit_name) const {
  for (std::size_t i = 0; i < units.size(); ++i)
    if (units[i].name == unit_name) return i;
  return std::nullopt;
}

std::optional<std::size_t> HardwareSpec::find_level(std::string_view level_name) const {
  for (std::size_t i = 0; i < memory.size(); ++i)
    if (memory[i].name == level_name) return i;
  return std::nullopt;
}

}  // namespace framesim::model
