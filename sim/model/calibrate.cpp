#include "model/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"
#include "model/search.hpp"

namespace framesim::model {

namespace {

/// Kernel layers that take time of their own (a free reshape does not need a measurement).
bool needs_time(const LayerSpec& layer) { return layer.kind != OpKind::reshape; }

}  // namespace

SampleSet match_samples(const HardwareSpec& hw, std::size_t unit, const NetworkSpec& net,
                        const std::vector<Measurement>& measured, const RunPoint& run) {
  BudgetOptions options;
  options.unit = unit;
  options.run = run;
  options.measured = measured;
  const BudgetReport report = make_budget(hw, net, options);

  std::set<std::string, std::less<>> names;
  for (const auto& m : measured) names.insert(m.name);

  SampleSet out;
  out.unmatched = report.unmatched_measurements;
  out.unmeasured = report.unmeasured_kernels;
  for (std::size_t k = 0; k < report.plan.kernels.size(); ++k) {
    const Kernel& kernel = report.plan.kernels[k];
    const KernelRow& row = report.kernels[k];
    if (!row.measured_s) continue;
    bool partial = false;
    if (!names.count(kernel.name)) {
      for (int l : kernel.layers) {
        const LayerSpec& layer = net.layers[static_cast<std::size_t>(l)];
        if (needs_time(layer) && !names.count(layer.name)) partial = true;
      }
    }
    if (partial) out.partial.push_back(kernel.name);
    if (*row.measured_s <= 0) {
      out.zero.push_back(kernel.name);
      continue;
    }
    out.samples.push_back({net.name, kernel.name, kernel, *row.measured_s, partial});
  }
  return out;
}

FitError fit_error(const HardwareSpec& hw, std::size_t unit, const std::vector<CalibrationSample>& samples,
                   const RunPoint& run) {
  FRAMESIM_ASSERT(!samples.empty(), "callers check that something was measured");
  const ComputeUnitSpec& u = hw.units.at(unit);
  const std::vector<double> bandwidths = effective_bandwidths_Bps(hw, u, run);
  FitError e;
  double sum_sq = 0, sum = 0, worst_abs = -1;
  for (const auto& s : samples) {
    const KernelTime t = kernel_time(s.work, u, bandwidths, run);
    KernelFit f;
    f.network = s.network;
    f.kernel = s.kernel;
    f.measured_s = s.measured_s;
    f.bound_s = t.bound_s;
    f.ratio = t.bound_s > 0 ? s.measured_s / t.bound_s : std::numeric_limits<double>::infinity();
    f.limit = t.limit;
    f.limit_level = t.limit_level;
    f.partial = s.partial;
    const double l = std::log(f.ratio);
    sum_sq += l * l;
    sum += l;
    if (std::fabs(l) > worst_abs) {
      worst_abs = std::fabs(l);
      e.worst = e.kernels.size();
      e.worst_ratio = f.ratio;
    }
    e.measured_total_s += f.measured_s;
    e.bound_total_s += f.bound_s;
    e.kernels.push_back(f);
  }
  const double n = static_cast<double>(samples.size());
  e.rms_log = std::sqrt(sum_sq / n);
  e.mean_log = sum / n;
  return e;
}

std::string parameter_name(const HardwareSpec& hw, const FittedParameter& p) {
  switch (p.kind) {
    case ParameterKind::compute_efficiency: return std::string(precision_name(p.precision)) + " compute efficiency";
    case ParameterKind::bandwidth_efficiency: return hw.memory.at(p.level).name + " bandwidth efficiency";
    case ParameterKind::dispatch_overhead: return "dispatch overhead";
  }
  return "?";
}

namespace {

constexpr double kOverheadFloor_s = 1e-12;  // below this the overhead is written as 0

/// The parameters `samples` exercise: the compute efficiency of each precision they compute in, the bandwidth
/// efficiency of each level they move bytes to, and the dispatch overhead when there are enough kernels to tell it
/// apart from the roofs.
std::vector<FittedParameter> calibration_parameters(const HardwareSpec& hw, std::size_t unit,
                                                    const std::vector<CalibrationSample>& samples) {
  std::vector<FittedParameter> params;
  const ComputeUnitSpec& given = hw.units.at(unit);
  for (Precision p : kAllPrecisions) {
    bool used = false;
    for (const auto& s : samples) used = used || (s.work.ops[p] && *s.work.ops[p] > 0);
    if (!used) continue;
    FittedParameter fp;
    fp.kind = ParameterKind::compute_efficiency;
    fp.precision = p;
    fp.before = given.efficiency_for(p);
    params.push_back(fp);
  }
  for (std::size_t lv = 0; lv < hw.memory.size(); ++lv) {
    bool used = false;
    for (const auto& s : samples) used = used || (lv < s.work.bytes.size() && s.work.bytes[lv] > 0);
    if (!used) continue;
    FittedParameter fp;
    fp.kind = ParameterKind::bandwidth_efficiency;
    fp.level = lv;
    fp.before = hw.memory[lv].efficiency;
    params.push_back(fp);
  }
  // A per-kernel cost is told apart from the roofs only by kernels of different sizes: with fewer than
  // kMinSamplesForOverhead measured kernels (one whole-network time given as one sample) it stays as the file says.
  if (samples.size() >= kMinSamplesForOverhead) {
    FittedParameter fp;
    fp.kind = ParameterKind::dispatch_overhead;
    fp.before = given.dispatch_overhead_s;
    params.push_back(fp);
  }

  return params;
}

/// Writes `values` of `params` into unit `unit` of `spec`.
void apply_parameters(HardwareSpec& spec, std::size_t unit, const std::vector<FittedParameter>& params,
                      const std::vector<double>& values) {
  ComputeUnitSpec& u = spec.units[unit];
  for (std::size_t i = 0; i < params.size(); ++i) {
    switch (params[i].kind) {
      case ParameterKind::compute_efficiency: u.efficiency[params[i].precision] = values[i]; break;
      case ParameterKind::bandwidth_efficiency: spec.memory[params[i].level].efficiency = values[i]; break;
      case ParameterKind::dispatch_overhead: u.dispatch_overhead_s = values[i]; break;
    }
  }
}

/// How many samples each parameter binds on `spec` (the fit applied): an overhead every one; an efficiency those
/// whose bound it sets (a level's only when its streaming roof, not a Little's-law cap, limits it).
std::vector<int> binding_counts(const HardwareSpec& spec, std::size_t unit, const std::vector<FittedParameter>& params,
                                const std::vector<CalibrationSample>& samples, const RunPoint& run) {
  const ComputeUnitSpec& u = spec.units[unit];
  const std::vector<double> bandwidths = effective_bandwidths_Bps(spec, u, run);
  std::vector<int> binding(params.size(), 0);
  for (const auto& s : samples) {
    const KernelTime t = kernel_time(s.work, u, bandwidths, run);
    for (std::size_t i = 0; i < params.size(); ++i) {
      const auto& p = params[i];
      if (p.kind == ParameterKind::dispatch_overhead) {
        ++binding[i];
      } else if (p.kind == ParameterKind::compute_efficiency) {
        if (s.work.ops[p.precision] && *s.work.ops[p.precision] > 0 &&
            t.compute_s >= *std::max_element(t.memory_s.begin(), t.memory_s.end()))
          ++binding[i];
      } else if (t.limit_level == static_cast<int>(p.level) && t.memory_s[p.level] >= t.compute_s) {
        // Only the streaming roof is fitted: a level capped by Little's law does not depend on it.
        const auto& level = spec.memory[p.level];
        const std::size_t mp = p.level < run.memory_points.size() ? run.memory_points[p.level] : 0;
        const double streaming = effective_level_bandwidth_Bps(level, mp);
        const auto cap = littles_cap_Bps(u, level.latency_s);
        if (!cap || streaming < *cap) ++binding[i];
      }
    }
  }
  return binding;
}

/// The search's starts (log scale): the file's values (an overhead of 0 starts at 1 us), and a neutral guess.
std::pair<search::Point, search::Point> search_starts(const std::vector<FittedParameter>& params) {
  search::Point start_file, start_mid;
  for (const auto& p : params) {
    if (p.kind == ParameterKind::dispatch_overhead) {
      start_file.push_back(std::log(p.before > kOverheadFloor_s ? p.before : 1e-6));
      start_mid.push_back(std::log(1e-6));
    } else {
      start_file.push_back(std::log(std::clamp(p.before, 1e-4, 1.0)));
      start_mid.push_back(std::log(0.5));
    }
  }
  return {start_file, start_mid};
}

}  // namespace

CalibrationResult calibrate(const HardwareSpec& hw, std::size_t unit, const std::vector<CalibrationSample>& samples,
                            const RunPoint& run, const CalibrationOptions& options) {
  FRAMESIM_ASSERT(!samples.empty(), "callers check that something was measured");
  for (const auto& s : samples) FRAMESIM_ASSERT(s.measured_s > 0, "zero times are left out by match_samples");

  CalibrationResult result;
  result.before = fit_error(hw, unit, samples, run);

  std::vector<FittedParameter> params = calibration_parameters(hw, unit, samples);

  // The working copy the objective writes parameters into.
  HardwareSpec work = hw;
  auto apply = [&](HardwareSpec& spec, const std::vector<double>& values) {
    apply_parameters(spec, unit, params, values);
  };
  std::vector<double> log_measured;
  for (const auto& s : samples) log_measured.push_back(std::log(s.measured_s));
  auto objective_at = [&](const std::vector<double>& values) {
    apply(work, values);
    const ComputeUnitSpec& u = work.units[unit];
    const std::vector<double> bandwidths = effective_bandwidths_Bps(work, u, run);
    double sum = 0;
    for (std::size_t k = 0; k < samples.size(); ++k) {
      const double t = std::max(kernel_time(samples[k].work, u, bandwidths, run).bound_s, 1e-300);
      const double d = std::log(t) - log_measured[k];
      sum += d * d;
    }
    return sum / static_cast<double>(samples.size());
  };
  // Search space: natural logarithms. Efficiencies in [1e-4, 1]; overhead in [1e-12 s, 1 s], with the floor
  // meaning "no overhead".
  const double overhead_lo = std::log(kOverheadFloor_s);
  auto to_values = [&](const search::Point& x) {
    std::vector<double> v(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      v[i] = std::exp(x[i]);
      if (params[i].kind == ParameterKind::dispatch_overhead && x[i] <= overhead_lo) v[i] = 0.0;
    }
    return v;
  };
  search::Box box;
  for (const auto& p : params) {
    const bool overhead = p.kind == ParameterKind::dispatch_overhead;
    box.lo.push_back(overhead ? overhead_lo : std::log(1e-4));
    box.hi.push_back(0.0);  // log(1) for both kinds
  }
  search::Counted f([&](const search::Point& x) { return objective_at(to_values(x)); }, options.max_evaluations);

  const auto [start_file, start_mid] = search_starts(params);
  for (const search::Point& start : {start_file, start_mid}) {
    search::nelder_mead(f, start, 0.5, box);
    // Restart from the best point until a fresh simplex no longer improves it.
    for (int restart = 0; restart < 40 && !f.exhausted(); ++restart) {
      const double before = f.best_value();
      search::nelder_mead(f, f.best(), 0.25, box);
      search::compass(f, f.best(), 0.25, 1e-12, box);
      if (!(f.best_value() < before - 1e-15 * std::max(1.0, before))) break;
    }
  }
  result.evaluations = f.used();

  // Round as the YAML will say it; an overhead below the floor is none.
  std::vector<double> fitted = to_values(f.best());
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i].kind == ParameterKind::dispatch_overhead) {
      // As a YAML file says it ("3 us"), so that the file and this report agree to the last bit.
      const auto q =
          core::parse_quantity(core::format_si(fitted[i], "s", options.significant_digits), core::Dimension::Seconds);
      fitted[i] = q.value ? *q.value : search::round_to(fitted[i], options.significant_digits);
    } else {
      fitted[i] = search::round_to(fitted[i], options.significant_digits);
    }
    if (params[i].kind != ParameterKind::dispatch_overhead) fitted[i] = std::min(fitted[i], 1.0);
  }
  const bool has_overhead = !params.empty() && params.back().kind == ParameterKind::dispatch_overhead;
  if (has_overhead && objective_at(fitted) >= objective_at([&] {  // no overhead at all fits as well: say so
                        auto v = fitted;
                        v.back() = 0.0;
                        return v;
                      }())) {
    fitted.back() = 0.0;
  }

  // Which parameters the data pin down: those setting the bound of some kernel at the fit.
  auto count_binding = [&](const std::vector<double>& values) {
    apply(work, values);
    return binding_counts(work, unit, params, samples, run);
  };
  std::vector<int> binding = count_binding(fitted);
  // A parameter that binds nothing is bounded from below only: keep the file's value when that binds nothing too.
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (binding[i] > 0) continue;
    params[i].constrained = false;
    auto with_given = fitted;
    with_given[i] = params[i].before;
    if (objective_at(with_given) <= objective_at(fitted) * (1 + 1e-12) + 1e-300) fitted[i] = params[i].before;
  }
  binding = count_binding(fitted);
  for (std::size_t i = 0; i < params.size(); ++i) {
    params[i].after = fitted[i];
    params[i].binding = binding[i];
    params[i].at_limit = params[i].kind != ParameterKind::dispatch_overhead && binding[i] > 0 && fitted[i] >= 1.0;
  }

  result.calibrated = hw;
  apply(result.calibrated, fitted);
  result.parameters = params;
  result.after = fit_error(result.calibrated, unit, samples, run);
  return result;
}

}  // namespace framesim::model
