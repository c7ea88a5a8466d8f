#include "model/budget.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "core/error.hpp"

namespace framesim::model {

std::string_view diagnosis_text(Diagnosis d) {
  switch (d) {
    case Diagnosis::below_bound:
      return "IMPOSSIBLE: faster than the bound at peak roofs: a wrong input (the timer, the network, the clock "
             "or the precision)";
    case Diagnosis::faster_than_estimate: return "faster than the estimate: the efficiencies are pessimistic";
    case Diagnosis::at_roof: return "at the roof (~1.2x): stop, there is little left to win here";
    case Diagnosis::uncounted_bytes: return "~3x: find the bytes you did not count (re-reads, spills, layout)";
    case Diagnosis::overhead: return "~20x: you are paying overhead (launch, dispatch, sync), not bandwidth";
  }
  return "";
}

std::string_view diagnosis_name(Diagnosis d) {
  switch (d) {
    case Diagnosis::below_bound: return "below_bound";
    case Diagnosis::faster_than_estimate: return "faster_than_estimate";
    case Diagnosis::at_roof: return "at_roof";
    case Diagnosis::uncounted_bytes: return "uncounted_bytes";
    case Diagnosis::overhead: return "overhead";
  }
  return "";
}

Diagnosis diagnose(double measured_over_estimate, double measured_over_bound) {
  // A relative tolerance of 1e-9 keeps a measurement equal to the bound (to rounding) from reading as impossible.
  if (measured_over_bound < 1.0 - 1e-9) return Diagnosis::below_bound;
  if (measured_over_estimate < 1.0) return Diagnosis::faster_than_estimate;
  if (measured_over_estimate < 2.0) return Diagnosis::at_roof;
  if (measured_over_estimate < 8.0) return Diagnosis::uncounted_bytes;
  return Diagnosis::overhead;
}

std::optional<std::size_t> find_kernel(const ExecutionPlan& plan, const NetworkSpec& net, std::string_view name) {
  for (std::size_t k = 0; k < plan.kernels.size(); ++k)
    if (plan.kernels[k].name == name) return k;
  if (auto layer = net.find_layer(name))
    return static_cast<std::size_t>(plan.kernel_of_layer[static_cast<std::size_t>(*layer)]);
  return std::nullopt;
}

std::vector<Precision> missing_roofs(const NetworkSpec& net, const ComputeUnitSpec& unit) {
  std::set<Precision> missing;
  for (const auto& layer : net.layers)
    if (layer.ops > 0 && !unit.peak_ops_per_s[layer.precision.compute]) missing.insert(layer.precision.compute);
  return {missing.begin(), missing.end()};
}

namespace {

std::string precision_mix(const NetworkSpec& net, const Kernel& k) {
  std::set<std::string> names;
  for (int l : k.layers) {
    const auto& layer = net.layers[static_cast<std::size_t>(l)];
    if (layer.kind == OpKind::reshape) continue;
    names.insert(layer_precision_name(layer.precision));
  }
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : "+") + n;
  return out.empty() ? "-" : out;
}

double offchip(const HardwareSpec& hw, const std::vector<double>& bytes) {
  double sum = 0;
  for (std::size_t lv = 0; lv < bytes.size(); ++lv)
    if (!is_on_chip(hw.memory[lv].kind)) sum += bytes[lv];
  return sum;
}

/// The peak rate of a kernel's precision mix: its ops over the time they would take at peak roofs.
double peak_rate(const Kernel& k, const ComputeUnitSpec& unit) {
  double t = 0;
  for (Precision p : kAllPrecisions) {
    const auto& ops = k.ops[p];
    if (ops && *ops > 0 && unit.peak_ops_per_s[p]) t += *ops / *unit.peak_ops_per_s[p];
  }
  return t > 0 ? k.total_ops / t : 0.0;
}

/// Step 1, the machine: the roofs of every precision and every level on the unit's path (streaming, Little's-law
/// cap, effective, ridge points).
void add_machine(BudgetReport& r, const HardwareSpec& hw, const ComputeUnitSpec& unit, const BudgetOptions& options,
                 const std::vector<double>& bandwidths) {
  for (Precision p : kAllPrecisions) {
    if (!unit.peak_ops_per_s[p]) continue;
    r.roofs.push_back({p, *unit.peak_ops_per_s[p], effective_compute_ops_per_s(unit, p, options.run)});
  }
  for (std::size_t lv : unit.memory_path) {
    const auto& level = hw.memory[lv];
    LevelRow row;
    row.level = lv;
    row.peak_Bps = level.bandwidth_Bps;
    const std::size_t mp = lv < options.run.memory_points.size() ? options.run.memory_points[lv] : 0;
    row.streaming_Bps = effective_level_bandwidth_Bps(level, mp);
    row.littles_cap_Bps = littles_cap_Bps(unit, level.latency_s);
    row.effective_Bps = bandwidths[lv];
    for (const auto& roof : r.roofs) {
      row.ridge.emplace_back(roof.precision, roof.effective_ops_per_s / row.effective_Bps);
      row.peak_ridge.emplace_back(roof.precision, roof.peak_ops_per_s / row.peak_Bps);
    }
    r.levels.push_back(row);
  }
}

/// Step 3, the floor kernel by kernel: each kernel's time at effective and peak roofs and its energy, the sums, what
/// binds the whole network. Returns the bytes per level over all kernels.
std::vector<double> add_floor(BudgetReport& r, const HardwareSpec& hw, const NetworkSpec& net,
                              const ComputeUnitSpec& unit, const BudgetOptions& options,
                              const std::vector<double>& bandwidths, const std::vector<double>& peak_bandwidths) {
  r.memory_s.assign(hw.memory.size(), 0.0);
  std::vector<double> total_bytes(hw.memory.size(), 0.0);
  r.energy.memory_J.assign(hw.memory.size(), 0.0);
  for (std::size_t k = 0; k < r.plan.kernels.size(); ++k) {
    const Kernel& kernel = r.plan.kernels[k];
    KernelRow row;
    row.kernel = k;
    row.time = kernel_time(kernel, unit, bandwidths, options.run);
    row.bound = kernel_time(kernel, unit, peak_bandwidths, options.run, Roofs::peak);
    row.energy = kernel_energy(kernel, hw, unit, options.run.operating_point, row.time.bound_s);
    row.offchip_bytes = offchip(hw, kernel.bytes);
    const double peak = peak_rate(kernel, unit);
    row.fraction_of_peak = peak > 0 && row.time.bound_s > 0 ? kernel.total_ops / row.time.bound_s / peak : 0.0;
    row.precision = precision_mix(net, kernel);
    r.compute_s += row.time.compute_s;
    for (std::size_t lv = 0; lv < hw.memory.size(); ++lv) {
      r.memory_s[lv] += row.time.memory_s[lv];
      total_bytes[lv] += kernel.bytes[lv];
      r.energy.memory_J[lv] += row.energy.memory_J[lv];
    }
    r.overhead_s += row.time.overhead_s;
    r.estimate_s += row.time.bound_s;
    r.bound_s += row.bound.bound_s;
    r.no_overlap_s += row.time.no_overlap_s;
    r.energy.compute_J += row.energy.compute_J;
    r.energy.static_J += row.energy.static_J;
    r.kernels.push_back(row);
  }
  for (const auto& k : r.plan.kernels) r.weight_read_bytes += k.weight_bytes;
  double stored = 0;
  for (double b : r.plan.weight_bytes_at) stored += b;
  r.weight_streamed_bytes = r.weight_read_bytes;  // a partial cache reads only the uncached share from the level
  if (r.plan.weight_level >= 0 && stored > 0)
    r.weight_streamed_bytes *= r.plan.weight_bytes_at[static_cast<std::size_t>(r.plan.weight_level)] / stored;
  if (r.plan.weight_level >= 0 && bandwidths[static_cast<std::size_t>(r.plan.weight_level)] > 0)
    r.weight_stream_s = r.weight_streamed_bytes / bandwidths[static_cast<std::size_t>(r.plan.weight_level)];
  double memory_max = 0;
  for (std::size_t lv = 0; lv < hw.memory.size(); ++lv) {
    if (r.memory_s[lv] > memory_max) {
      memory_max = r.memory_s[lv];
      r.limit_level = static_cast<int>(lv);
    }
  }
  r.model_floor_s = std::max(r.compute_s, memory_max);
  r.limit = memory_max > r.compute_s ? LimitKind::memory : LimitKind::compute;
  if (r.overhead_s > r.model_floor_s) r.limit = LimitKind::overhead;
  return total_bytes;
}

/// Step 5: the kernels by arithmetic intensity (those without bytes last), ties in execution order.
void sort_by_intensity(BudgetReport& r) {
  r.by_intensity.resize(r.kernels.size());
  std::iota(r.by_intensity.begin(), r.by_intensity.end(), 0);
  std::stable_sort(r.by_intensity.begin(), r.by_intensity.end(), [&](std::size_t a, std::size_t b) {
    const auto& ta = r.kernels[a].time;
    const auto& tb = r.kernels[b].time;
    const double ia = ta.has_bytes() ? ta.intensity : 1e300;
    const double ib = tb.has_bytes() ? tb.intensity : 1e300;
    return ia < ib;
  });
}

/// Fusion: the same network with every layer its own kernel, against the fused plan.
void add_fusion(BudgetReport& r, const HardwareSpec& hw, const NetworkSpec& net, const ComputeUnitSpec& unit,
                const BudgetOptions& options, const std::vector<double>& bandwidths) {
  const ExecutionPlan unfused = plan_network(net, hw, options.unit, PlanOptions{false});
  FusionSummary& f = r.fusion;
  for (const Kernel& k : unfused.kernels) {
    const KernelTime t = kernel_time(k, unit, bandwidths, options.run);
    f.traversals_before += k.traversals;
    f.bytes_before += k.total_bytes;
    f.offchip_bytes_before += offchip(hw, k.bytes);
    f.memory_s_before += t.limit_level >= 0 ? t.memory_s[static_cast<std::size_t>(t.limit_level)] : 0.0;
    f.traffic_s_before += std::accumulate(t.memory_s.begin(), t.memory_s.end(), 0.0);
    f.floor_s_before += t.bound_s;
  }
  for (std::size_t k = 0; k < r.plan.kernels.size(); ++k) {
    const Kernel& kernel = r.plan.kernels[k];
    const KernelTime& t = r.kernels[k].time;
    f.traversals_after += kernel.traversals;
    f.bytes_after += kernel.total_bytes;
    f.offchip_bytes_after += r.kernels[k].offchip_bytes;
    f.memory_s_after += t.limit_level >= 0 ? t.memory_s[static_cast<std::size_t>(t.limit_level)] : 0.0;
    f.traffic_s_after += std::accumulate(t.memory_s.begin(), t.memory_s.end(), 0.0);
    f.floor_s_after += t.bound_s;
    if (kernel.layers.size() + kernel.folded.size() > 1) {
      f.groups.push_back({k, kernel.traversals_unfused, kernel.traversals, kernel.tail_traversals_unfused,
                          kernel.tail_traversals, kernel.activation_bytes_unfused, kernel.activation_bytes});
    }
  }
}

/// --measured: by kernel name, or by layer names summed over a kernel; a whole-network time named after the
/// network or "total"; what matched nothing.
void add_measurements(BudgetReport& r, const NetworkSpec& net, const BudgetOptions& options) {
  r.has_measurements = true;
  std::map<std::string, double, std::less<>> by_name;
  for (const auto& m : options.measured) by_name[m.name] += m.time_s;
  std::set<std::string, std::less<>> used;
  for (std::size_t k = 0; k < r.plan.kernels.size(); ++k) {
    const Kernel& kernel = r.plan.kernels[k];
    std::optional<double> measured;
    if (auto it = by_name.find(kernel.name); it != by_name.end()) {
      measured = it->second;
      used.insert(it->first);
    } else {
      double sum = 0;
      bool any = false;
      for (int l : kernel.layers) {
        const auto& name = net.layers[static_cast<std::size_t>(l)].name;
        if (auto jt = by_name.find(name); jt != by_name.end()) {
          sum += jt->second;
          any = true;
          used.insert(jt->first);
        }
      }
      for (int l : kernel.folded) {
        const auto& name = net.layers[static_cast<std::size_t>(l)].name;
        if (auto jt = by_name.find(name); jt != by_name.end()) {
          sum += jt->second;
          used.insert(jt->first);
        }
      }
      if (any) measured = sum;
    }
    if (measured) {
      KernelRow& row = r.kernels[k];
      row.measured_s = measured;
      if (row.time.bound_s > 0) row.ratio = *measured / row.time.bound_s;
      if (row.bound.bound_s > 0) row.bound_ratio = *measured / row.bound.bound_s;
      if (row.ratio && row.bound_ratio) row.diagnosis = diagnose(*row.ratio, *row.bound_ratio);
    } else {
      r.unmeasured_kernels.push_back(kernel.name);
    }
  }
  // A whole-network measurement: named after the network, or "total".
  for (const std::string& total : {net.name, std::string("total")}) {
    auto it = by_name.find(total);
    if (it == by_name.end() || used.count(total) || r.measured_total_s) continue;
    r.measured_total_s = it->second;
    used.insert(total);
    if (r.estimate_s > 0 && r.bound_s > 0)
      r.total_diagnosis = diagnose(it->second / r.estimate_s, it->second / r.bound_s);
  }
  for (const auto& m : options.measured)
    if (!used.count(m.name) && std::find(r.unmatched_measurements.begin(), r.unmatched_measurements.end(), m.name) ==
                                   r.unmatched_measurements.end())
      r.unmatched_measurements.push_back(m.name);
}

}  // namespace

BudgetReport make_budget(const HardwareSpec& hw, const NetworkSpec& net, const BudgetOptions& options) {
  const ComputeUnitSpec& unit = hw.units.at(options.unit);
  BudgetReport r;
  r.hardware = hw.name;
  r.network = net.name;
  r.unit = options.unit;
  r.run = options.run;
  r.slice_s = options.slice_s;
  r.rate_Hz = options.rate_Hz;
  r.layers = static_cast<int>(net.layers.size());

  const std::vector<double> bandwidths = effective_bandwidths_Bps(hw, unit, options.run);
  const std::vector<double> peak_bandwidths = peak_bandwidths_Bps(hw, unit, options.run);
  add_machine(r, hw, unit, options, bandwidths);
  if (hw.thermal) r.sustained_power_W = hw.thermal->sustained_power_W();

  // 2. the model
  r.plan = plan_network(net, hw, options.unit);
  r.params = net.total_params();
  r.weight_bytes = net.total_weight_bytes();
  r.ops = net.total_ops();
  r.state_bytes = net.total_state_bytes();
  r.peak_activation_bytes = r.plan.peak_activation_bytes;
  r.footprint = r.plan.footprint;
  r.fits = r.plan.fits();

  const std::vector<double> total_bytes = add_floor(r, hw, net, unit, options, bandwidths, peak_bandwidths);

  sort_by_intensity(r);

  add_fusion(r, hw, net, unit, options, bandwidths);

  // 6. energy
  r.offchip_bytes = offchip(hw, total_bytes);
  for (std::size_t lv = 0; lv < hw.memory.size(); ++lv)
    if (!is_on_chip(hw.memory[lv].kind)) r.energy_floor_J += memory_energy_J(hw.memory[lv], total_bytes[lv]);

  for (const auto& [a, b] : options.compare) {
    auto ka = find_kernel(r.plan, net, a);
    auto kb = find_kernel(r.plan, net, b);
    FRAMESIM_ASSERT(ka && kb, "validated by the caller: compared names exist");
    r.comparisons.push_back({a, b, *ka, *kb});
  }

  if (!options.measured.empty()) add_measurements(r, net, options);
  return r;
}

}  // namespace framesim::model
