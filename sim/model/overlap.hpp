// Imperfect compute/memory overlap: the part of a kernel's memory time its compute does not hide.
//
// Measured kernels do not overlap their arithmetic and their memory traffic perfectly: a convolution at 70 %
// of its compute roof still waits on DRAM now and then, and those waits grow with the loaded latency the other
// masters cause. With c = sum F/C (compute_time_s) and m = max_l M_l / B_l (the binding memory time) of one
// kernel on unit u, and o the unit's overlap for the kernel's op classes (ComputeUnitSpec::overlap_for):
//
//   alone     t = max(c, m) + (1 - o) min(c, m) + overhead                      (kernel_time: bound_s)
//   co-run    t = max(c', m') + (1 - o) min(c', m') + overhead,   m' = max_l M_l / B_l x s_ul
//
// with c' the compute time at the unit's clock and s_ul its memory factor at level l (memory_factor: the
// contention curve's s_u, the Little's-law term at the loaded latency, the memory clock). The engine's fluid
// model gives the max term (the port carries B_l / s_ul); the stall (1 - o) min(c', m') is a latency phase
// at kernel start (stall_s): the unit is held and nothing is consumed, as with dispatch overhead. o = 1 (the
// default) gives 0 and every result of the perfect-overlap roofline. At the bound (peak roofs) the overlap
// is perfect: no correct measurement beats max(c, m).
#pragma once

#include <cstddef>
#include <vector>

#include "model/hardware.hpp"
#include "model/plan.hpp"

namespace framesim::model {

/// 1 - o for `kernel` on `unit`: the op classes' (1 - overlap) weighted by their operations (ops no class
/// claims take the unit's `overlap`); 0 when the overlap is perfect.
double non_overlap(const Kernel& kernel, const ComputeUnitSpec& unit);

/// The stall (1 - o) x min(compute_s, max_l memory_s[l] x memory_factor[l]) in seconds: `non_overlap` is 1 - o,
/// `compute_s` the kernel's compute time at the unit's present clock, `memory_s` its memory time per level with
/// the level's roofs alone, `memory_factor` (same size, or empty: all 1) how much longer that time is now.
double stall_s(double non_overlap, double compute_s, const std::vector<double>& memory_s,
               const std::vector<double>& memory_factor);

/// How much longer unit `unit`'s memory time at `level` is at memory point `memory_point` with the others using
/// `others_utilisation` of the level than at the first point alone: the unit's bandwidth there alone
/// (min(bandwidth x efficiency, outstanding / latency)) over its bandwidth now (the private port of
/// port_bandwidth_Bps, or the level's bandwidth at that point when it has no port). 1 alone at the first point.
double memory_factor(const MemoryLevelSpec& level, const ComputeUnitSpec& unit, std::size_t memory_point,
                     double others_utilisation);

}  // namespace framesim::model
