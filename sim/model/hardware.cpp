#include "model/hardware.hpp"

#include <cmath>

namespace framesim::model {

std::string_view memory_kind_name(MemoryKind k) {
  switch (k) {
    case MemoryKind::registers: return "registers";
    case MemoryKind::sram: return "sram";
    case MemoryKind::cache: return "cache";
    case MemoryKind::dram: return "dram";
    case MemoryKind::flash: return "flash";
  }
  return "?";
}

double ThermalSpec::step_C(double temperature_C, double ambient, double power_W, double dt_s) const {
  const double steady_C = ambient + power_W * resistance_K_per_W;
  return steady_C + (temperature_C - steady_C) * std::exp(-dt_s / (resistance_K_per_W * capacitance_J_per_K));
}

std::string_view scheduling_policy_name(SchedulingPolicy p) { return kSchedulingPolicies[static_cast<std::size_t>(p)]; }

std::string_view unit_kind_name(UnitKind k) {
  switch (k) {
    case UnitKind::cpu: return "cpu";
    case UnitKind::gpu: return "gpu";
    case UnitKind::npu: return "npu";
    case UnitKind::dsp: return "dsp";
    case UnitKind::isp: return "isp";
    case UnitKind::mcu: return "mcu";
    case UnitKind::accelerator: return "accelerator";
  }
  return "?";
}

bool ComputeUnitSpec::has_efficiency_by_op() const {
  for (const auto& per : efficiency_by_op)
    if (per.any()) return true;
  return false;
}

std::string_view governor_policy_name(GovernorPolicy p) {
  switch (p) {
    case GovernorPolicy::step: return "step";
    case GovernorPolicy::bang_bang: return "bang_bang";
  }
  return "?";
}

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
