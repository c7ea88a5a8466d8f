// The roofline: the time and energy of one kernel on one unit at one operating point.
// Free functions over specs, shared by the budget, the engine and the tests.
//
// Two numbers, never confused (DESIGN.md):
//   the *estimate* at effective roofs: efficiency per precision and op class, Little's-law cap, dispatch overhead;
//   the *bound* at peak roofs: efficiency 1, no Little's-law cap (the outstanding-bytes figure is an assumption),
//   no dispatch overhead. Same clocks, same bytes per level (the plan's fusion and placement). No correct
//   measurement of that work at that clock can beat the bound.
//
//   C   = peak(precision) x efficiency(precision, op class) x f / f_nominal x (cores used / cores)
//   B_l = min(bandwidth_l x efficiency_l x memory clock scale, outstanding_bytes / latency_l)   (Little's law)
//   t   = max(sum_p F_p / C_p, max_l M_l / B_l) + dispatch overhead           (perfect overlap: the bound)
//         + (1 - o) min(sum_p F_p / C_p, max_l M_l / B_l) at effective roofs     (imperfect: model/overlap.hpp)
//   t+  = sum_p F_p / C_p + sum_l M_l / B_l + dispatch overhead               (no overlap: the bracket's top)
//   E   = sum_p F_p x e_op(p) x (V / V_nominal)^2 + sum_l M_l x e_byte(l) + static power x t
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/hardware.hpp"
#include "model/plan.hpp"

namespace framesim::model {

/// The unit's clock and share: which operating points, how many of its cores.
struct RunPoint {
  std::size_t operating_point = 0;         // index into ComputeUnitSpec::operating_points
  std::vector<std::size_t> memory_points;  // per memory level (empty: all at their first point)
  double core_fraction = 1.0;              // cores used / cores of the unit
};

/// Which roofs a time is computed at (see the header): the estimate's or the bound's.
enum class Roofs { effective, peak };
std::string_view roofs_name(Roofs r);  // "estimate (effective roofs)", "bound (peak roofs)"

/// Effective compute rate of `unit` in precision `p` at `run` (0 when the unit has no such datapath).
double effective_compute_ops_per_s(const ComputeUnitSpec& unit, Precision p, const RunPoint& run = {});

/// Streaming bandwidth of `level` at its memory operating point, after its efficiency (no Little's cap).
double effective_level_bandwidth_Bps(const MemoryLevelSpec& level, std::size_t memory_point = 0);

/// The most of a level's bandwidth the other masters are taken to use when loading its latency (loaded_latency_s).
inline constexpr double kMaxOtherUtilisation = 0.9;
/// Latency of a memory level under load, as one master sees it: L0 / (1 - rho), rho the share of the level's
/// bandwidth the *other* masters use, clamped to [0, kMaxOtherUtilisation] (at most ten times L0). It sets the
/// master's Little's-law cap outstanding / L; alone a master sees L0, so the engine matches the budget.
double loaded_latency_s(double unloaded_latency_s, double others_utilisation);

/// Little's-law cap of `unit` on a level with `latency_s`: outstanding bytes / latency (nullopt: no cap declared).
std::optional<double> littles_cap_Bps(const ComputeUnitSpec& unit, double latency_s);

/// What a kernel can use on `unit` at `run`: B_l per level (capped by Little's law at unloaded latency).
std::vector<double> effective_bandwidths_Bps(const HardwareSpec& hw, const ComputeUnitSpec& unit,
                                             const RunPoint& run = {});

/// Peak bandwidth of every level on the unit's path at its memory operating point: no efficiency, no Little's cap.
std::vector<double> peak_bandwidths_Bps(const HardwareSpec& hw, const ComputeUnitSpec& unit, const RunPoint& run = {});

/// Bandwidths at `roofs`: effective_bandwidths_Bps or peak_bandwidths_Bps.
std::vector<double> bandwidths_Bps(const HardwareSpec& hw, const ComputeUnitSpec& unit, const RunPoint& run,
                                   Roofs roofs);

/// The fraction of `geometry`'s datapath a layer of `shape` fills (hardware.hpp, UnitGeometry): 1 without a
/// declared geometry, for classes other than conv, depthwise and matmul, and for shapes that fill every tile.
/// A hard fact of the silicon, not a fitted figure; still only the estimate uses it (a compiler may remap a
/// shape better than this rule assumes: the bound cannot rely on it).
double shape_utilisation(const UnitGeometry& geometry, const ShapeOps& shape);

/// Time of the kernel's arithmetic, sum over precisions p and op classes c of F_pc / C_pc, at `roofs`. At
/// effective roofs a shaped layer's ops (Kernel::shapes) run at C_pc x shape_utilisation, and each of its output
/// elements costs the unit's output_cost x f_nominal / f on top.
double compute_time_s(const Kernel& kernel, const ComputeUnitSpec& unit, const RunPoint& run = {},
                      Roofs roofs = Roofs::effective);

enum class LimitKind { compute, memory, overhead };

struct KernelTime {
  double compute_s = 0;
  std::vector<double> memory_s;  // per level
  double overhead_s = 0;
  double stall_s = 0;       // (1 - o) min(compute, memory): what compute does not hide (0 at peak roofs)
  double bound_s = 0;       // max(compute, memory) + stall + overhead, at the roofs it was computed at (see Roofs)
  double no_overlap_s = 0;  // compute + sum(memory) + overhead
  LimitKind limit = LimitKind::compute;
  int limit_level = -1;  // the binding memory level when limit == memory, else the most loaded level
  /// Intensity at the binding (or most loaded) level: F / M_l, and that level's ridge C / B_l.
  double intensity = 0;
  double ridge = 0;
  bool has_bytes() const { return limit_level >= 0; }
};

/// The roofline time of a kernel with `bandwidths` (per level, B/s) on `unit` at `run`.
KernelTime kernel_time(const Kernel& kernel, const ComputeUnitSpec& unit, const std::vector<double>& bandwidths_Bps,
                       const RunPoint& run = {});
/// The same at `roofs`; `bandwidths_Bps` must be bandwidths_Bps(hw, unit, run, roofs). At peak roofs the
/// overhead is 0.
KernelTime kernel_time(const Kernel& kernel, const ComputeUnitSpec& unit, const std::vector<double>& bandwidths_Bps,
                       const RunPoint& run, Roofs roofs);

struct Energy {
  double compute_J = 0;
  std::vector<double> memory_J;  // per level
  double static_J = 0;
  double total_J() const;
};

/// (V / V_nominal)^2 at operating point `op`: what arithmetic energy at the nominal voltage is multiplied by there.
double dynamic_energy_scale(const ComputeUnitSpec& unit, std::size_t op);
/// Energy per op of `unit` in `p` at operating point `op` (scaled by (V/V_nominal)^2; nullopt: no figure).
std::optional<double> energy_per_op_J(const ComputeUnitSpec& unit, Precision p, std::size_t op);
/// Static (leakage) power of `unit` at operating point `op`.
double static_power_W(const ComputeUnitSpec& unit, std::size_t op);
/// Energy of `bytes` served by memory level `level`: its energy per byte, whatever its clock. The one definition
/// (the cost model, the budget's floor and the engine's ledger all book bytes through it).
double memory_energy_J(const MemoryLevelSpec& level, double bytes);

/// Energy of one kernel: its arithmetic, its bytes at every level, and the unit's static power over `duration_s`.
Energy kernel_energy(const Kernel& kernel, const HardwareSpec& hw, const ComputeUnitSpec& unit, std::size_t op,
                     double duration_s);

}  // namespace framesim::model
