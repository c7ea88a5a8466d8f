#include "engine/plans.hpp"

#include <optional>

#include "engine/ledger.hpp"
#include "model/cost.hpp"
#include "model/overlap.hpp"
#include "model/plan.hpp"
#include "model/replay.hpp"

namespace framesim::engine {

namespace {

/// Fills in the SimGrid amounts of kernel `k` for `cores` cores of `unit`.
void prepare(KernelPlan& k, sg4::Host* unit_host, int cores, const std::vector<LevelState>& levels) {
  k.hosts.assign(static_cast<std::size_t>(cores), unit_host);
  std::vector<std::size_t> level_of;
  for (std::size_t lv = 0; lv < k.bytes.size(); ++lv) {
    if (k.bytes[lv] <= 0) continue;
    k.hosts.push_back(levels[lv].host);
    level_of.push_back(lv);
  }
  const std::size_t n = k.hosts.size();
  k.flops.assign(n, 0.0);
  for (int c = 0; c < cores; ++c) k.flops[static_cast<std::size_t>(c)] = k.cycles / cores;
  k.matrix.clear();
  if (!level_of.empty()) {
    k.matrix.assign(n * n, 0.0);
    for (std::size_t j = 0; j < level_of.size(); ++j)
      k.matrix[static_cast<std::size_t>(cores) + j] = k.bytes[level_of[j]];
  }
}

}  // namespace

std::vector<KernelPlan> plan_kernels(const model::ScenarioSpec& spec, const Platform& platform,
                                     const model::WorkSpec& work, std::size_t unit_index, int cores,
                                     const model::StageSpec* stage, RunTotals& totals) {
  const auto& hw = spec.hardware;
  const auto& unit = hw.units[unit_index];
  const double f_nominal = unit.nominal().frequency_Hz;
  const double n = unit.cores;
  std::vector<KernelPlan> out;
  auto arithmetic_energy = [&](model::Precision p, double ops) {
    return ops * model::energy_per_op_J(unit, p, 0).value_or(0.0);
  };
  switch (work.kind) {
    case model::WorkSpec::Kind::none: break;
    case model::WorkSpec::Kind::network: {
      const auto& net = spec.networks[static_cast<std::size_t>(work.network)].network;
      const auto xplan = model::plan_network(net, hw, unit_index);
      std::vector<std::optional<double>> replayed(xplan.kernels.size());
      if (stage && !stage->measured.empty()) {
        auto replay = model::replay_measured(hw, *stage, net, xplan);
        replayed = std::move(replay.times_s);
        totals.warnings.insert(totals.warnings.end(), replay.warnings.begin(), replay.warnings.end());
        totals.notes.push_back(std::move(replay.note));
      }
      for (std::size_t ki = 0; ki < xplan.kernels.size(); ++ki) {
        const auto& k = xplan.kernels[ki];
        KernelPlan kp;
        kp.name = k.name;
        kp.cycles = model::compute_time_s(k, unit) * f_nominal * n;  // per precision and op class
        for (model::Precision p : model::kAllPrecisions) {
          const auto& ops = k.ops[p];
          if (ops && *ops > 0) kp.compute_energy_J += arithmetic_energy(p, *ops);
        }
        // A measured time replaces the roofline: alone, at the nominal clock, on the stage's cores, the
        // kernel computes for exactly that long; it still moves its bytes, so it can only be slower under
        // contention (or if the measurement beats its own memory bound).
        if (replayed[ki]) kp.cycles = *replayed[ki] * f_nominal * cores;
        kp.bytes = k.bytes;
        // A measured time already holds whatever the kernel stalled alone: no stall on top of it.
        if (!replayed[ki]) kp.non_overlap = model::non_overlap(k, unit);
        kp.overhead_s = unit.dispatch_overhead_s;
        out.push_back(std::move(kp));
      }
      break;
    }
    case model::WorkSpec::Kind::time: {
      KernelPlan kp;
      kp.name = "work";
      kp.cycles = f_nominal * cores;  // per second of work: scaled by the sampled time
      kp.bytes.assign(hw.memory.size(), 0.0);
      // Busy at the unit's top rate: the energy of its first precision with an energy figure.
      for (model::Precision p : model::kAllPrecisions) {
        if (unit.peak_ops_per_s[p] && unit.energy_per_op_J[p]) {
          kp.compute_energy_J = arithmetic_energy(p, model::effective_compute_ops_per_s(unit, p)) * cores / n;
          break;
        }
      }
      kp.overhead_s = 0;
      out.push_back(std::move(kp));
      break;
    }
    case model::WorkSpec::Kind::ops: {
      KernelPlan kp;
      kp.name = "work";
      if (work.ops > 0) kp.cycles = work.ops / model::effective_compute_ops_per_s(unit, work.precision) * f_nominal * n;
      kp.compute_energy_J = arithmetic_energy(work.precision, work.ops);
      kp.bytes = work.bytes_per_level;
      kp.overhead_s = unit.dispatch_overhead_s;
      kp.non_overlap = 1.0 - unit.overlap;
      out.push_back(std::move(kp));
      break;
    }
  }
  const auto alone_Bps = model::effective_bandwidths_Bps(hw, unit);
  for (KernelPlan& k : out) {
    prepare(k, platform.units[unit_index].host, cores, platform.levels);
    if (k.non_overlap > 0) k.alone_Bps = alone_Bps;
  }
  return out;
}

double stall_at_start_s(const KernelPlan& k, const Platform& platform, std::size_t unit, int cores, double cycle_scale,
                        double byte_scale, double now_s) {
  if (k.non_overlap <= 0 || k.cycles <= 0) return 0.0;
  const UnitState& u = platform.units[unit];
  const bool reloaded_now = now_s < platform.others_utilisation_since_s + kSameInstant_s;
  const auto& others = reloaded_now ? platform.others_utilisation_before : platform.others_utilisation;
  const double compute_s = k.cycles * cycle_scale / (cores * u.spec->operating_points[u.pstate].frequency_Hz);
  // Called at every launch of a kernel that stalls: the scratch is kept (the engine runs on one thread).
  static std::vector<double> memory_s, factor;
  memory_s.assign(k.bytes.size(), 0.0);
  factor.assign(k.bytes.size(), 1.0);
  for (std::size_t lv = 0; lv < k.bytes.size(); ++lv) {
    if (k.bytes[lv] <= 0) continue;
    memory_s[lv] = k.bytes[lv] * byte_scale / k.alone_Bps[lv];
    factor[lv] = model::memory_factor(*platform.levels[lv].spec, *u.spec, platform.levels[lv].pstate, others[unit][lv]);
  }
  return model::stall_s(k.non_overlap, compute_s, memory_s, factor);
}

}  // namespace framesim::engine
