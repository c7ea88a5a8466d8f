#include "engine/plans.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/text.hpp"
#include "core/units.hpp"
#include "engine/ledger.hpp"
#include "model/cost.hpp"
#include "model/overlap.hpp"
#include "model/plan.hpp"

namespace framesim::engine {

namespace {

/// What binds a kernel whatever the clocks and bus shares do (mark_runs): nothing for sure, its compute
/// (private levels only), or its bytes on one shared level.
struct Binding {
  enum class Kind { unsure, compute, shared_level };
  Kind kind = Kind::unsure;
  std::size_t level = 0;  // shared_level: which
  bool operator==(const Binding&) const = default;
};

/// Measured times for each kernel of a stage's network (by kernel name, or its layers' times summed);
/// what matches nothing, or is faster than its kernel's memory bound, is reported as a warning.
std::vector<std::optional<double>> replay_times(const model::ScenarioSpec& spec, const model::StageSpec& stage,
                                                const model::NetworkSpec& net, const model::ExecutionPlan& xplan,
                                                RunTotals& totals) {
  std::vector<std::optional<double>> out(xplan.kernels.size());
  if (stage.measured.empty()) return out;
  std::map<std::string, double, std::less<>> by_name;
  for (const auto& m : stage.measured) by_name[m.name] += m.time_s;
  std::set<std::string, std::less<>> used;
  const auto& unit = spec.hardware.units[stage.unit];
  const auto bandwidths = model::effective_bandwidths_Bps(spec.hardware, unit);
  std::size_t matched = 0;
  for (std::size_t k = 0; k < xplan.kernels.size(); ++k) {
    const auto& kernel = xplan.kernels[k];
    if (auto it = by_name.find(kernel.name); it != by_name.end()) {
      out[k] = it->second;
      used.insert(it->first);
    } else {
      double sum = 0;
      bool any = false;
      std::vector<int> members = kernel.layers;
      members.insert(members.end(), kernel.folded.begin(), kernel.folded.end());
      for (int l : members) {
        if (auto jt = by_name.find(net.layers[static_cast<std::size_t>(l)].name); jt != by_name.end()) {
          sum += jt->second;
          any = true;
          used.insert(jt->first);
        }
      }
      if (any) out[k] = sum;
    }
    if (!out[k]) continue;
    ++matched;
    const auto alone = model::kernel_time(kernel, unit, bandwidths);
    const double memory_s =
        alone.memory_s.empty() ? 0.0 : *std::max_element(alone.memory_s.begin(), alone.memory_s.end());
    if (*out[k] < memory_s)
      totals.warnings.push_back(
          fmt::format("stage \"{}\": measured {} for {} is faster than its memory bound {}: "
                      "the bus binds it",
                      stage.name, core::format_seconds(*out[k]), kernel.name, core::format_seconds(memory_s)));
  }
  std::vector<std::string> unused;
  for (const auto& [name, t] : by_name)
    if (!used.count(name)) unused.push_back(name);
  totals.notes.push_back(
      fmt::format("stage \"{}\": replayed {} of {} from {}{}", stage.name, matched,
                  core::counted(xplan.kernels.size(), "kernel"), stage.measured_file,
                  unused.empty() ? std::string()
                                 : fmt::format("; names matching no kernel or layer: {}", fmt::join(unused, ", "))));
  return out;
}

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

/// The parallel task of kernels [first, end) and the progress each kernel owns in it.
void make_run(std::vector<KernelPlan>& kernels, std::size_t first, std::size_t end, Binding binding,
              const Platform& platform, std::size_t unit_index, int cores) {
  KernelPlan& k = kernels[first];
  KernelPlan sum;
  sum.bytes.assign(platform.levels.size(), 0.0);
  std::vector<double> amounts;  // the binding amount of each kernel: cycles, or bytes at the shared level
  for (std::size_t i = first; i < end; ++i) {
    sum.cycles += kernels[i].cycles;
    for (std::size_t lv = 0; lv < platform.levels.size(); ++lv) sum.bytes[lv] += kernels[i].bytes[lv];
    amounts.push_back(binding.kind == Binding::Kind::compute ? kernels[i].cycles : kernels[i].bytes[binding.level]);
  }
  prepare(sum, platform.units[unit_index].host, cores, platform.levels);
  k.run_end = end;
  k.run_hosts = std::move(sum.hosts);
  k.run_flops = std::move(sum.flops);
  k.run_matrix = std::move(sum.matrix);
  k.run_breaks.assign(1, 0.0);
  double total = 0;
  for (double a : amounts) total += a;
  double running = 0;
  for (double a : amounts) {
    running += a;
    k.run_breaks.push_back(running / total);
  }
  k.run_breaks.back() = 1.0;
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
      const auto replayed = stage ? replay_times(spec, *stage, net, xplan, totals)
                                  : std::vector<std::optional<double>>(xplan.kernels.size());
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

/// Marks runs of consecutive kernels that can share one activity without changing any result. Kernels
/// [i, end) merge when the unit runs nothing else (no other stage, no task: no one waits at a kernel
/// boundary), none has a dispatch overhead (no idle gap), and every one of them stays bound by the same
/// resource whatever the clocks and the bus shares do during the run:
///   - memory-bound on the same shared level L (the only shared level it touches): even at the slowest
///     clock and with L to itself, its L bytes take longer than its compute and its private-level bytes at
///     their slowest. Then the run only ever draws its fair share of L, whose bytes simply add up.
///   - compute-bound with private levels only: even at the fastest clock, against its private levels at
///     their slowest. Then its cycles simply add up.
/// Energy and bytes of a merged run are still booked kernel by kernel along its progress (book()).
void mark_runs(std::vector<KernelPlan>& kernels, const model::ScenarioSpec& spec, const Platform& platform,
               std::size_t unit_index, int cores) {
  const auto& hw = spec.hardware;
  const UnitState& unit = platform.units[unit_index];
  const auto& levels = platform.levels;
  const auto& ops = unit.spec->operating_points;
  const double f_max = ops.front().frequency_Hz;
  const double f_min = unit.throttleable ? ops.back().frequency_Hz : f_max;
  std::vector<bool> shared(levels.size(), false);
  model::RunPoint slowest_clocks;  // every level the governor may slow at its slowest point
  for (std::size_t lv = 0; lv < levels.size(); ++lv) {
    shared[lv] = levels[lv].spec->shared();
    slowest_clocks.memory_points.push_back(levels[lv].throttleable ? levels[lv].spec->operating_points.size() - 1 : 0);
  }
  for (const auto& b : spec.background) shared[b.level] = true;
  // Bandwidths of the levels on the unit's path (the only ones its kernels move bytes to).
  const auto fastest = model::effective_bandwidths_Bps(hw, hw.units[unit_index]);
  const auto slowest = model::effective_bandwidths_Bps(hw, hw.units[unit_index], slowest_clocks);
  const Binding unsure;
  auto classify = [&](const KernelPlan& k) -> Binding {
    if (k.overhead_s > 0 || k.non_overlap > 0) return unsure;  // an idle gap (launch or stall) between kernels
    std::optional<std::size_t> level;
    for (std::size_t lv = 0; lv < k.bytes.size(); ++lv) {
      if (k.bytes[lv] <= 0 || !shared[lv]) continue;
      if (level) return unsure;  // two shared levels: either could bind
      level = lv;
    }
    if (!level) {
      if (k.cycles <= 0) return unsure;
      const double compute_fast = k.cycles / (cores * f_max);
      for (std::size_t lv = 0; lv < k.bytes.size(); ++lv)
        if (k.bytes[lv] > 0 && k.bytes[lv] / slowest[lv] > compute_fast) return unsure;
      return {Binding::Kind::compute, 0};
    }
    const double shared_fast = k.bytes[*level] / fastest[*level];
    if (k.cycles / (cores * f_min) > shared_fast) return unsure;
    for (std::size_t lv = 0; lv < k.bytes.size(); ++lv)
      if (k.bytes[lv] > 0 && !shared[lv] && k.bytes[lv] / slowest[lv] > shared_fast) return unsure;
    return {Binding::Kind::shared_level, *level};
  };
  for (std::size_t i = 0; i < kernels.size();) {
    const Binding binding = classify(kernels[i]);
    std::size_t end = i + 1;
    while (binding != unsure && end < kernels.size() && classify(kernels[end]) == binding) ++end;
    if (end - i >= 2) make_run(kernels, i, end, binding, platform, unit_index, cores);
    i = end;
  }
}

}  // namespace framesim::engine
