// The work a stage or task does, as SimGrid amounts: one KernelPlan per kernel (fusion group) of its network,
// or one for fixed work. The cost model (model/) decides what each kernel costs; this turns it into the
// parallel task the engine issues (one activity, or one fluid flow, per kernel).
#pragma once

#include <string>
#include <vector>

#include "engine/platform.hpp"
#include "engine/records.hpp"

namespace framesim::engine {

/// One kernel of a piece of work, ready to run on a unit: SimGrid amounts at the nominal clock.
struct KernelPlan {
  std::string name;
  double cycles = 0;            // core-cycles at the nominal clock (all entries together)
  std::vector<double> bytes;    // per memory level
  double compute_energy_J = 0;  // arithmetic energy at the nominal voltage
  double overhead_s = 0;
  // Imperfect overlap (model/overlap.hpp): 1 - o of the kernel on its unit (0: perfect, no stall), and the unit's
  // bandwidth per level alone at the nominal clocks, from which its memory times follow. The stall is a latency
  // phase at kernel start (stall_at_start_s), like the dispatch overhead: the unit is held, nothing is consumed.
  double non_overlap = 0;
  std::vector<double> alone_Bps;
  // The parallel task for the cores it runs on, at scale 1: one host entry per core, then one per level
  // with bytes; flops per entry; the bytes matrix (from the first core to each level).
  std::vector<sg4::Host*> hosts;
  std::vector<double> flops;
  std::vector<double> matrix;

  /// Whether it has anything for SimGrid to do at these scales.
  bool empty(double cycle_scale) const { return cycles * cycle_scale <= 0 && matrix.empty(); }
};

/// The kernels of `work` on unit `unit_index` using `cores` cores, with their parallel tasks prepared. For a stage
/// with measured layer times (`stage`), matched kernels run in their measured time; what was replayed, and what
/// could not be, goes into `totals` (notes, warnings).
std::vector<KernelPlan> plan_kernels(const model::ScenarioSpec& spec, const Platform& platform,
                                     const model::WorkSpec& work, std::size_t unit_index, int cores,
                                     const model::StageSpec* stage, RunTotals& totals);

/// The non-overlapped stall of kernel `k` of a job on unit `unit` (`cores` cores, scales as the job's) if it
/// starts now: model::stall_s with the kernel's compute time at the unit's present clock, its memory time per
/// level alone, and each level's memory factor now (model::memory_factor at the level's clock and the others'
/// utilisation the ledger last loaded the unit's port with). The one hook both paths call at kernel start.
double stall_at_start_s(const KernelPlan& k, const Platform& platform, std::size_t unit, int cores, double cycle_scale,
                        double byte_scale, double now_s);

}  // namespace framesim::engine
