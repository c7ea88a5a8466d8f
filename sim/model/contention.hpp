// Contention below saturation: how much a master's memory time at a shared level grows with the traffic the
// other masters put on it. Max-min sharing (the engine's links) only slows a master once the summed demand
// passes the level's bandwidth; real LPDDR controllers slow every master well before that (queueing, bank and
// row-buffer conflicts, refresh). framesim states it as a per-level curve and a per-unit sensitivity:
//
//   rho_u   = (bytes/s of every other master on the level) / (the level's effective bandwidth), in [0, 1]
//   f(rho)  = the level's piecewise-linear curve through (0, 1) and its points, flat after the last
//   s_u     = 1 + sensitivity_u x (f(rho_u) - 1)                 the master's memory-time factor
//   B_u     = min(bandwidth x efficiency, outstanding_u / latency) / s_u      its private port's bandwidth
//
// so its memory time at the level is M / B_u: s_u times what it would be with the level's roofs alone, and a
// kernel slows only as far as that memory time binds (the roofline's overlap: a compute-bound kernel with
// slack is not slowed). The Little's-law term uses the loaded latency latency x s_u: the curve is the
// latency the others cause. Alone rho_u = 0 and s_u = 1: the budget is unchanged. Without a curve the level
// keeps today's behaviour: a unit with `outstanding` sees latency / (1 - rho_u) (loaded_latency_s), the
// others only max-min sharing.
#pragma once

#include <optional>

#include "model/hardware.hpp"

namespace framesim::model {

/// f(rho): the curve at the others' utilisation `others_utilisation` (clamped to [0, 1]); 1 at 0.
double curve_slowdown(const ContentionCurve& curve, double others_utilisation);

/// s_u: the factor by which `unit`'s memory time at `level` grows when the others use `others_utilisation` of
/// it (1 when the level has no curve).
double contention_factor(const MemoryLevelSpec& level, const ComputeUnitSpec& unit, double others_utilisation);

/// The bandwidth of `unit`'s private port to `level` at memory operating point `memory_point` when the others
/// use `others_utilisation` of the level: min(bandwidth x efficiency, outstanding / latency) / s_u with a
/// curve; outstanding / loaded_latency_s(latency, rho) without one; nullopt when the unit needs no port (no
/// curve and no `outstanding`). At rho = 0 it equals the unit's effective bandwidth at the level
/// (effective_bandwidths_Bps), so a master alone runs at the budget's roofs.
std::optional<double> port_bandwidth_Bps(const MemoryLevelSpec& level, const ComputeUnitSpec& unit,
                                         std::size_t memory_point, double others_utilisation);

}  // namespace framesim::model
