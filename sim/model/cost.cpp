#include "model/cost.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "model/overlap.hpp"

namespace framesim::model {

double effective_compute_ops_per_s(const ComputeUnitSpec& unit, Precision p, const RunPoint& run) {
  const auto& peak = unit.peak_ops_per_s[p];
  if (!peak) return 0.0;
  const double f_scale = unit.operating_points[run.operating_point].frequency_Hz / unit.nominal().frequency_Hz;
  return *peak * unit.efficiency_for(p) * f_scale * run.core_fraction;
}

double effective_level_bandwidth_Bps(const MemoryLevelSpec& level, std::size_t memory_point) {
  return level.bandwidth_at_Bps(memory_point) * level.efficiency;
}

std::optional<double> littles_cap_Bps(const ComputeUnitSpec& unit, double latency_s) {
  if (!unit.outstanding_bytes || latency_s <= 0) return std::nullopt;
  return *unit.outstanding_bytes / latency_s;
}

std::vector<double> effective_bandwidths_Bps(const HardwareSpec& hw, const ComputeUnitSpec& unit, const RunPoint& run) {
  std::vector<double> out(hw.memory.size(), 0.0);
  for (std::size_t lv : unit.memory_path) {
    const auto& level = hw.memory[lv];
    const std::size_t mp = lv < run.memory_points.size() ? run.memory_points[lv] : 0;
    double b = effective_level_bandwidth_Bps(level, mp);
    if (auto cap = littles_cap_Bps(unit, level.latency_s)) b = std::min(b, *cap);
    out[lv] = b;
  }
  return out;
}

std::string_view roofs_name(Roofs r) { return r == Roofs::peak ? "bound (peak roofs)" : "estimate (effective roofs)"; }

std::vector<double> peak_bandwidths_Bps(const HardwareSpec& hw, const ComputeUnitSpec& unit, const RunPoint& run) {
  std::vector<double> out(hw.memory.size(), 0.0);
  for (std::size_t lv : unit.memory_path) {
    const std::size_t mp = lv < run.memory_points.size() ? run.memory_points[lv] : 0;
    out[lv] = hw.memory[lv].bandwidth_at_Bps(mp);
  }
  return out;
}

std::vector<double> bandwidths_Bps(const HardwareSpec& hw, const ComputeUnitSpec& unit, const RunPoint& run,
                                   Roofs roofs) {
  return roofs == Roofs::peak ? peak_bandwidths_Bps(hw, unit, run) : effective_bandwidths_Bps(hw, unit, run);
}

double shape_utilisation(const UnitGeometry& geometry, const ShapeOps& shape) {
  // Work that fills `tile` slots in whole tiles: n / (ceil(n / tile) x tile).
  auto fill = [](double n, int tile) {
    if (tile <= 0 || n <= 0) return 1.0;
    return n / (std::ceil(n / tile - 1e-9) * tile);
  };
  if (shape.op_class != OpClass::conv && shape.op_class != OpClass::depthwise && shape.op_class != OpClass::matmul)
    return 1.0;
  const bool depthwise = shape.op_class == OpClass::depthwise;
  double u = 1.0;
  if (geometry.array_rows > 0 && geometry.array_cols > 0)
    u *= fill(shape.reduction, geometry.array_rows) * fill(shape.channels, geometry.array_cols);
  if (geometry.lanes > 0) u *= depthwise ? fill(shape.channels, geometry.lanes) : fill(shape.reduction, geometry.lanes);
  return u;
}

namespace {

/// The extra time at effective roofs that shaped layers take over the same ops at the class's full roof:
/// sum over shapes of ops / C x (1 / utilisation - 1), plus outputs x output cost x f_nominal / f.
double shape_penalty_s(const Kernel& kernel, const ComputeUnitSpec& unit, const RunPoint& run) {
  if (!unit.geometry.any() && unit.output_cost_s <= 0) return 0.0;
  double t = 0;
  const double f_scale =
      unit.operating_points[run.operating_point].frequency_Hz / unit.nominal().frequency_Hz * run.core_fraction;
  for (const auto& s : kernel.shapes) {
    t += s.outputs * unit.output_cost_s / f_scale;
    const auto& peak = unit.peak_ops_per_s[s.precision];
    if (!peak || *peak <= 0 || s.ops <= 0) continue;
    const double u = shape_utilisation(unit.geometry, s);
    if (u >= 1.0) continue;
    t += s.ops / (*peak * f_scale * unit.efficiency_for(s.precision, s.op_class)) * (1.0 / u - 1.0);
  }
  return t;
}

}  // namespace

double compute_time_s(const Kernel& kernel, const ComputeUnitSpec& unit, const RunPoint& run, Roofs roofs) {
  double t = roofs == Roofs::peak ? 0.0 : shape_penalty_s(kernel, unit, run);
  for (Precision p : kAllPrecisions) {
    const auto& ops = kernel.ops[p];
    if (!ops || *ops <= 0) continue;
    const auto& peak = unit.peak_ops_per_s[p];
    FRAMESIM_ASSERT(peak && *peak > 0, "validated: the unit has a roof for every precision it computes in");
    const double roof = *peak * unit.operating_points[run.operating_point].frequency_Hz / unit.nominal().frequency_Hz *
                        run.core_fraction;
    double classified = 0;
    for (OpClass c : kAllOpClasses) {
      const auto& class_ops = kernel.ops_by_class[static_cast<std::size_t>(c)][p];
      if (!class_ops || *class_ops <= 0) continue;
      classified += *class_ops;
      t += *class_ops / (roof * (roofs == Roofs::peak ? 1.0 : unit.efficiency_for(p, c)));
    }
    const double rest = *ops - classified;
    if (rest > 1e-9 * *ops) t += rest / (roof * (roofs == Roofs::peak ? 1.0 : unit.efficiency_for(p)));
  }
  return t;
}

KernelTime kernel_time(const Kernel& kernel, const ComputeUnitSpec& unit, const std::vector<double>& bandwidths_Bps,
                       const RunPoint& run) {
  return kernel_time(kernel, unit, bandwidths_Bps, run, Roofs::effective);
}

KernelTime kernel_time(const Kernel& kernel, const ComputeUnitSpec& unit, const std::vector<double>& bandwidths_Bps,
                       const RunPoint& run, Roofs roofs) {
  KernelTime t;
  t.compute_s = compute_time_s(kernel, unit, run, roofs);
  // The bound reads the best case's traffic (weights on chip up to the declared capacity, plan.hpp).
  const std::vector<double>& bytes =
      roofs == Roofs::peak && kernel.bound_bytes.size() == kernel.bytes.size() ? kernel.bound_bytes : kernel.bytes;
  t.memory_s.assign(bytes.size(), 0.0);
  double memory_max_s = 0;
  double memory_sum_s = 0;
  for (std::size_t lv = 0; lv < bytes.size(); ++lv) {
    if (bytes[lv] <= 0) continue;
    FRAMESIM_ASSERT(bandwidths_Bps[lv] > 0, "bytes only at levels on the unit's path");
    t.memory_s[lv] = bytes[lv] / bandwidths_Bps[lv];
    memory_sum_s += t.memory_s[lv];
    if (t.limit_level < 0 || t.memory_s[lv] > memory_max_s) {
      memory_max_s = t.memory_s[lv];
      t.limit_level = static_cast<int>(lv);
    }
  }
  t.overhead_s = roofs == Roofs::peak ? 0.0 : unit.dispatch_overhead_s;
  const double overlap_s = std::max(t.compute_s, memory_max_s);
  if (roofs == Roofs::effective) t.stall_s = stall_s(non_overlap(kernel, unit), t.compute_s, t.memory_s, {});
  t.bound_s = overlap_s + t.stall_s + t.overhead_s;
  t.no_overlap_s = t.compute_s + memory_sum_s + t.overhead_s;
  if (t.overhead_s > overlap_s) t.limit = LimitKind::overhead;
  else t.limit = memory_max_s > t.compute_s ? LimitKind::memory : LimitKind::compute;
  if (t.limit_level >= 0) {
    const auto lv = static_cast<std::size_t>(t.limit_level);
    t.intensity = kernel.total_ops / bytes[lv];
    // The ridge of the kernel's mix of precisions: its ops over its compute time, per byte/s.
    const double c = t.compute_s > 0 ? kernel.total_ops / t.compute_s : 0.0;
    t.ridge = c / bandwidths_Bps[lv];
  }
  return t;
}

double Energy::total_J() const { return compute_J + std::accumulate(memory_J.begin(), memory_J.end(), 0.0) + static_J; }

double dynamic_energy_scale(const ComputeUnitSpec& unit, std::size_t op) {
  const double v = unit.operating_points[op].voltage_V / unit.nominal().voltage_V;
  return v * v;
}

std::optional<double> energy_per_op_J(const ComputeUnitSpec& unit, Precision p, std::size_t op) {
  const auto& e = unit.energy_per_op_J[p];
  if (!e) return std::nullopt;
  return *e * dynamic_energy_scale(unit, op);
}

double loaded_latency_s(double unloaded_latency_s, double others_utilisation) {
  const double rho = std::clamp(others_utilisation, 0.0, kMaxOtherUtilisation);
  return unloaded_latency_s / (1.0 - rho);
}

double static_power_W(const ComputeUnitSpec& unit, std::size_t op) {
  const auto& point = unit.operating_points[op];
  if (point.static_power_W) return *point.static_power_W;
  return unit.static_power_W * point.voltage_V / unit.nominal().voltage_V;
}

double memory_energy_J(const MemoryLevelSpec& level, double bytes) { return bytes * level.energy_per_byte_J; }

Energy kernel_energy(const Kernel& kernel, const HardwareSpec& hw, const ComputeUnitSpec& unit, std::size_t op,
                     double duration_s) {
  Energy e;
  for (Precision p : kAllPrecisions) {
    const auto& ops = kernel.ops[p];
    if (!ops || *ops <= 0) continue;
    e.compute_J += *ops * energy_per_op_J(unit, p, op).value_or(0.0);
  }
  e.memory_J.assign(kernel.bytes.size(), 0.0);
  for (std::size_t lv = 0; lv < kernel.bytes.size(); ++lv)
    e.memory_J[lv] = memory_energy_J(hw.memory[lv], kernel.bytes[lv]);
  e.static_J = static_power_W(unit, op) * duration_s;
  return e;
}

}  // namespace framesim::model
