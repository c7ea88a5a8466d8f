// Calibration from whole-network totals (framesim validate, calibrate --totals): a total's estimate, bound and
// energy, and the search over a unit's efficiencies, overhead and output cost (the checks of a fit:
// calibrate_checks.cpp).
#include "model/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"
#include "model/search.hpp"

namespace framesim::model {

namespace {

constexpr double kOverheadShift_s = 1e-6;  // overhead searched as ln(o + 1 us): 0 is a reachable point
constexpr double kOutputShift_s = 1e-9;    // output cost searched as ln(c + 1 ns)
constexpr double kMaxOutputCost_s = 1e-6;  // per output element: a microsecond is already a slow epilogue
constexpr double kOutputProbe_s = 1e-8;    // where a zero output cost's search starts (tens of cycles at 1 GHz)
constexpr double kEfficiencyFloor = 1e-3;

bool is_time_parameter(TotalParameterKind k) {
  return k == TotalParameterKind::class_efficiency || k == TotalParameterKind::bandwidth_efficiency ||
         k == TotalParameterKind::dispatch_overhead || k == TotalParameterKind::output_cost;
}

/// The additive shift of a parameter searched on a log scale with 0 reachable (an overhead, an output cost).
double search_shift(TotalParameterKind k) {
  if (k == TotalParameterKind::dispatch_overhead) return kOverheadShift_s;
  if (k == TotalParameterKind::output_cost) return kOutputShift_s;
  return 0.0;
}

double to_search(const TotalParameter& p, double value) {
  const double shift = search_shift(p.kind);
  return shift > 0 ? std::log(value + shift) : std::log(std::max(value, 1e-300));
}
double from_search(const TotalParameter& p, double x) {
  const double shift = search_shift(p.kind);
  if (shift <= 0) return std::exp(x);
  const double v = std::exp(x) - shift;
  return v < shift * 1e-6 ? 0.0 : v;  // ln(0 + shift) comes back as 0, not as a rounding residue
}

/// Writes parameter values into `spec` (a copy of `base`): efficiencies of the classes for `precisions`.
void apply_totals(HardwareSpec& spec, const HardwareSpec& base, std::size_t unit,
                  const std::vector<TotalParameter>& params, const std::vector<double>& values,
                  const std::set<Precision>& precisions) {
  ComputeUnitSpec& u = spec.units[unit];
  const ComputeUnitSpec& b = base.units[unit];
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    switch (p.kind) {
      case TotalParameterKind::class_efficiency:
        for (Precision q : precisions) u.efficiency_by_op[static_cast<std::size_t>(p.op_class)][q] = values[i];
        break;
      case TotalParameterKind::bandwidth_efficiency: spec.memory[p.level].efficiency = values[i]; break;
      case TotalParameterKind::dispatch_overhead: u.dispatch_overhead_s = values[i]; break;
      case TotalParameterKind::output_cost: u.output_cost_s = values[i]; break;
      case TotalParameterKind::energy_per_op:
        for (Precision q : kAllPrecisions)
          if (b.energy_per_op_J[q]) u.energy_per_op_J[q] = *b.energy_per_op_J[q] * values[i];
        break;
      case TotalParameterKind::static_power:
        u.static_power_W = b.static_power_W * values[i];
        for (std::size_t k = 0; k < u.operating_points.size(); ++k)
          if (b.operating_points[k].static_power_W)
            u.operating_points[k].static_power_W = *b.operating_points[k].static_power_W * values[i];
        break;
    }
  }
}

struct EnergyParts {
  double arithmetic_J = 0, static_J = 0, memory_J = 0;
};

EnergyParts energy_parts(const HardwareSpec& hw, std::size_t unit, const TotalSample& s) {
  const ComputeUnitSpec& u = hw.units[unit];
  const auto bandwidths = effective_bandwidths_Bps(hw, u, s.run);
  EnergyParts e;
  for (const auto& k : s.kernels) {
    const Energy ke = kernel_energy(k, hw, u, s.run.operating_point, kernel_time(k, u, bandwidths, s.run).bound_s);
    e.arithmetic_J += ke.compute_J;
    e.static_J += ke.static_J;
    e.memory_J += std::accumulate(ke.memory_J.begin(), ke.memory_J.end(), 0.0);
  }
  return e;
}

/// Minimises `data(values) + lambda sum (x - x_prior)^2` over the parameters `active` (others held at `x`).
std::vector<double> search_totals(const std::vector<TotalParameter>& params, std::vector<double> x,
                                  const std::vector<std::size_t>& active,
                                  const std::function<double(const std::vector<double>&)>& data, double lambda,
                                  int budget) {
  if (active.empty()) return x;
  search::Box box;
  search::Point start;
  for (std::size_t i : active) {
    const auto& p = params[i];
    if (p.kind == TotalParameterKind::dispatch_overhead) {
      box.lo.push_back(std::log(kOverheadShift_s));
      box.hi.push_back(std::log(1.0 + kOverheadShift_s));
    } else if (p.kind == TotalParameterKind::output_cost) {
      box.lo.push_back(std::log(kOutputShift_s));
      box.hi.push_back(std::log(kMaxOutputCost_s + kOutputShift_s));
    } else if (is_time_parameter(p.kind)) {
      box.lo.push_back(std::log(kEfficiencyFloor));
      box.hi.push_back(0.0);
    } else {  // energy scales: a factor of 1000 either way
      box.lo.push_back(std::log(1e-3));
      box.hi.push_back(std::log(1e3));
    }
    start.push_back(x[i]);
  }
  auto full = [&](const search::Point& y) {
    auto v = x;
    for (std::size_t a = 0; a < active.size(); ++a) v[active[a]] = y[a];
    return v;
  };
  search::Counted f(
      [&](const search::Point& y) {
        const auto v = full(y);
        double penalty = 0;
        for (std::size_t a = 0; a < active.size(); ++a) {
          const auto& p = params[active[a]];
          if (search_shift(p.kind) > 0 && p.prior <= 0) continue;  // a zero overhead or output cost: no prior
          const double dx = y[a] - to_search(p, p.prior);
          penalty += dx * dx;
        }
        std::vector<double> values(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) values[i] = from_search(params[i], v[i]);
        return data(values) + lambda * penalty;
      },
      budget);
  search::nelder_mead(f, start, 0.5, box);
  for (int restart = 0; restart < 10 && !f.exhausted(); ++restart) {
    const double before = f.best_value();
    search::nelder_mead(f, f.best(), 0.25, box);
    search::compass(f, f.best(), 0.25, 1e-9, box);
    if (!(f.best_value() < before - 1e-12 * std::max(1.0, before))) break;
  }
  return full(f.best());
}

}  // namespace

double total_estimate_s(const HardwareSpec& hw, std::size_t unit, const TotalSample& s) {
  const ComputeUnitSpec& u = hw.units[unit];
  const auto bandwidths = effective_bandwidths_Bps(hw, u, s.run);
  double t = 0;
  for (const auto& k : s.kernels) t += kernel_time(k, u, bandwidths, s.run).bound_s;
  return t;
}

double total_bound_s(const HardwareSpec& hw, std::size_t unit, const TotalSample& s) {
  const ComputeUnitSpec& u = hw.units[unit];
  const auto bandwidths = peak_bandwidths_Bps(hw, u, s.run);
  double t = 0;
  for (const auto& k : s.kernels) t += kernel_time(k, u, bandwidths, s.run, Roofs::peak).bound_s;
  return t;
}

double total_energy_J(const HardwareSpec& hw, std::size_t unit, const TotalSample& s) {
  const EnergyParts e = energy_parts(hw, unit, s);
  return e.arithmetic_J + e.static_J + e.memory_J;
}

std::string total_parameter_name(const HardwareSpec& hw, const TotalParameter& p) {
  switch (p.kind) {
    case TotalParameterKind::class_efficiency: return std::string(op_class_name(p.op_class)) + " efficiency";
    case TotalParameterKind::bandwidth_efficiency: return hw.memory.at(p.level).name + " bandwidth efficiency";
    case TotalParameterKind::dispatch_overhead: return "dispatch overhead";
    case TotalParameterKind::output_cost: return "output cost";
    case TotalParameterKind::energy_per_op: return "energy per op (scale)";
    case TotalParameterKind::static_power: return "static power (scale)";
  }
  return "?";
}

namespace {

/// The parameters a set of totals can fit: what the samples exercise (each op class's efficiency, at its main
/// precision; each level's bandwidth efficiency), the dispatch overhead and output cost (left at the prior when the
/// totals cannot tell them apart), and with measured energy the energy-per-op and static-power scales.
/// `precisions` receives the precisions the samples compute in.
std::vector<TotalParameter> totals_parameters(const HardwareSpec& hw, std::size_t unit,
                                              const std::vector<TotalSample>& samples,
                                              std::set<Precision>& precisions) {
  const ComputeUnitSpec& given = hw.units.at(unit);
  // What the samples exercise: op classes (and their precisions), levels.
  std::vector<double> class_ops(kOpClassCount, 0.0);
  std::vector<Precision> class_main(kOpClassCount, Precision::fp32);
  std::vector<double> level_bytes(hw.memory.size(), 0.0);
  bool any_energy = false;
  for (const auto& s : samples) {
    any_energy = any_energy || s.measured_J.has_value();
    for (const auto& k : s.kernels) {
      for (OpClass c : kAllOpClasses)
        for (Precision p : kAllPrecisions)
          if (const auto& ops = k.ops_by_class[static_cast<std::size_t>(c)][p]; ops && *ops > 0) {
            precisions.insert(p);
            if (*ops > class_ops[static_cast<std::size_t>(c)]) class_main[static_cast<std::size_t>(c)] = p;
            class_ops[static_cast<std::size_t>(c)] += *ops;
          }
      for (std::size_t lv = 0; lv < k.bytes.size(); ++lv) level_bytes[lv] += k.bytes[lv];
    }
  }
  std::vector<TotalParameter> params;
  for (OpClass c : kAllOpClasses) {
    if (class_ops[static_cast<std::size_t>(c)] <= 0) continue;
    TotalParameter p;
    p.kind = TotalParameterKind::class_efficiency;
    p.op_class = c;
    p.prior = given.efficiency_for(class_main[static_cast<std::size_t>(c)], c);
    params.push_back(p);
  }
  for (std::size_t lv = 0; lv < hw.memory.size(); ++lv) {
    if (level_bytes[lv] <= 0) continue;
    TotalParameter p;
    p.kind = TotalParameterKind::bandwidth_efficiency;
    p.level = lv;
    p.prior = hw.memory[lv].efficiency;
    params.push_back(p);
  }
  const bool overhead_free = overhead_identifiable(samples);
  {
    TotalParameter p;
    p.kind = TotalParameterKind::dispatch_overhead;
    p.prior = given.dispatch_overhead_s;
    if (!overhead_free) {
      p.pinned = false;
      p.note =
          "not identifiable from these totals (one network, or networks with as many kernels): left at the "
          "prior";
    }
    params.push_back(p);
  }
  {
    // Per output element of the shaped layers: told apart from the compute roof only by networks whose
    // reductions differ (outputs per op), so never from one network.
    TotalParameter p;
    p.kind = TotalParameterKind::output_cost;
    p.prior = given.output_cost_s;
    if (!output_cost_identifiable(hw, unit, samples)) {
      p.pinned = false;
      p.note =
          "not identifiable from these totals (fewer than two compute-bound networks, or the same outputs per op): "
          "left at the prior";
    }
    params.push_back(p);
  }
  if (any_energy) {
    for (auto kind : {TotalParameterKind::energy_per_op, TotalParameterKind::static_power}) {
      TotalParameter p;
      p.kind = kind;
      p.prior = 1.0;
      params.push_back(p);
    }
  }
  return params;
}

/// Where the search starts: each parameter's prior on its search scale, a zero output cost at a probe value (on
/// its log scale 0 is many steps from any real cost), efficiencies within [floor, 1].
std::vector<double> search_start(const std::vector<TotalParameter>& params) {
  std::vector<double> x;
  for (const auto& p : params)
    x.push_back(to_search(p, p.kind == TotalParameterKind::output_cost && p.note.empty()
                                 ? std::max(p.prior, kOutputProbe_s)
                                 : std::clamp(p.prior, 0.0, 1e9)));
  for (std::size_t i = 0; i < params.size(); ++i)
    if (is_time_parameter(params[i].kind) && search_shift(params[i].kind) == 0)
      x[i] = std::clamp(x[i], std::log(kEfficiencyFloor), 0.0);
  return x;
}

/// Marks fitted values at the edge of their range and warns of implausible ones (an overhead over 30 % of the
/// fastest sample, an efficiency below 2 % of peak).
void check_fitted(std::vector<TotalParameter>& params, const std::vector<double>& values, const HardwareSpec& hw,
                  double min_measured, std::vector<std::string>& warnings) {
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto& p = params[i];
    p.fitted = values[i];
    if (p.kind == TotalParameterKind::dispatch_overhead) {
      p.at_bound = p.pinned && p.fitted <= 1e-9;
      if (p.pinned && p.fitted > 0.3 * min_measured)
        warnings.push_back(
            fmt::format("dispatch overhead {} is over 30 % of the fastest sample ({}): the "
                        "overhead is absorbing what the roofline misses",
                        core::format_seconds(p.fitted), core::format_seconds(min_measured)));
    } else if (p.kind == TotalParameterKind::output_cost) {
      p.at_bound = p.pinned && (p.fitted <= 1e-12 || p.fitted >= kMaxOutputCost_s * 0.999);
    } else if (is_time_parameter(p.kind)) {
      p.at_bound = p.pinned && (p.fitted >= 0.999 || p.fitted <= kEfficiencyFloor * 1.01);
      if (p.pinned && p.fitted < 0.02)
        warnings.push_back(
            fmt::format("{} {}: below 2 % of peak, an implausible roof (check the bytes and "
                        "where the tensors are placed)",
                        total_parameter_name(hw, p), core::format_number(p.fitted, 3)));
    } else {
      p.at_bound = p.pinned && (p.fitted <= 1.001e-3 || p.fitted >= 999);
    }
  }
}

}  // namespace

namespace {

/// Energy, with the time fixed (`work` holds the fitted time parameters): the two scales `energy` (energy per op,
/// static power) fitted to the measured energies; a scale the data cannot see stays at the file's figure.
void fit_energy(std::vector<TotalParameter>& params, std::vector<double>& x, const std::vector<std::size_t>& energy,
                const HardwareSpec& work, std::size_t unit, const std::vector<TotalSample>& samples,
                const TotalsOptions& options) {
  std::vector<EnergyParts> parts;
  for (const auto& s : samples) parts.push_back(energy_parts(work, unit, s));
  const std::size_t ia = energy[0], ib = energy[1];
  auto predict = [&](const EnergyParts& e, double a, double b) {
    return a * e.arithmetic_J + b * e.static_J + e.memory_J;
  };
  auto energy_data = [&](const std::vector<double>& values) {
    double sum = 0;
    int n = 0;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      if (!samples[i].measured_J) continue;
      const double d =
          std::log(std::max(predict(parts[i], values[ia], values[ib]), 1e-300)) - std::log(*samples[i].measured_J);
      sum += d * d;
      ++n;
    }
    return n ? sum / n : 0.0;
  };
  x = search_totals(params, x, energy, energy_data, options.lambda, options.max_evaluations);
  for (std::size_t i : energy) {
    double sum = 0;
    int n = 0;
    for (std::size_t s = 0; s < samples.size(); ++s) {
      if (!samples[s].measured_J) continue;
      const double e = predict(parts[s], from_search(params[ia], x[ia]), from_search(params[ib], x[ib]));
      const double share = i == ia ? from_search(params[ia], x[ia]) * parts[s].arithmetic_J
                                   : from_search(params[ib], x[ib]) * parts[s].static_J;
      sum += (share / e) * (share / e);  // d ln E / d ln scale
      ++n;
    }
    params[i].sensitivity = n ? std::sqrt(sum / n) : 0.0;
    if (params[i].sensitivity < options.min_sensitivity) {
      params[i].pinned = false;
      x[i] = 0.0;  // scale 1: the file's figure
    }
  }
}

}  // namespace

TotalsFit fit_totals(const HardwareSpec& hw, std::size_t unit, const std::vector<TotalSample>& samples,
                     const TotalsOptions& options) {
  FRAMESIM_ASSERT(!samples.empty(), "callers check that something was measured");
  std::set<Precision> precisions;
  std::vector<TotalParameter> params = totals_parameters(hw, unit, samples, precisions);
  std::vector<double> x = search_start(params);

  HardwareSpec work = hw;
  auto values_of = [&](const std::vector<double>& xs) {
    std::vector<double> v(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) v[i] = from_search(params[i], xs[i]);
    return v;
  };
  auto time_data = [&](const std::vector<double>& values) {
    apply_totals(work, hw, unit, params, values, precisions);
    double sum = 0;
    for (const auto& s : samples) {
      const double d = std::log(std::max(total_estimate_s(work, unit, s), 1e-300)) - std::log(s.measured_s);
      sum += d * d;
    }
    return sum / static_cast<double>(samples.size());
  };
  auto sensitivity = [&](std::size_t j, const std::vector<double>& xs) {
    const double h = 0.05;
    auto at = [&](double dx) {
      auto y = xs;
      // A cost fitted to (near) 0 is probed where it would matter: the data pin it at 0 when a probe cost moves
      // the prediction.
      if (params[j].kind == TotalParameterKind::output_cost)
        y[j] = std::max(y[j], to_search(params[j], kOutputProbe_s));
      y[j] += dx;
      apply_totals(work, hw, unit, params, values_of(y), precisions);
      std::vector<double> out;
      for (const auto& s : samples) out.push_back(std::log(std::max(total_estimate_s(work, unit, s), 1e-300)));
      return out;
    };
    const auto up = at(h), down = at(-h);
    double sum = 0;
    for (std::size_t i = 0; i < up.size(); ++i) {
      const double g = (up[i] - down[i]) / (2 * h);
      sum += g * g;
    }
    return std::sqrt(sum / static_cast<double>(up.size()));
  };

  // Time: fit, then leave the parameters the data cannot see at their priors and fit the rest again.
  std::vector<std::size_t> active;
  for (std::size_t i = 0; i < params.size(); ++i)
    if (is_time_parameter(params[i].kind) && params[i].note.empty()) active.push_back(i);
  x = search_totals(params, x, active, time_data, options.lambda, options.max_evaluations);
  std::vector<std::size_t> pinned;
  for (std::size_t i : active) {
    params[i].sensitivity = sensitivity(i, x);
    if (params[i].sensitivity < options.min_sensitivity) {
      params[i].pinned = false;
      x[i] = to_search(params[i], params[i].prior);
    } else {
      pinned.push_back(i);
    }
  }
  if (pinned.size() != active.size())
    x = search_totals(params, x, pinned, time_data, options.lambda, options.max_evaluations);

  // Energy, with the time fixed.
  std::vector<std::size_t> energy;
  for (std::size_t i = 0; i < params.size(); ++i)
    if (!is_time_parameter(params[i].kind)) energy.push_back(i);
  if (!energy.empty()) {
    apply_totals(work, hw, unit, params, values_of(x), precisions);
    fit_energy(params, x, energy, work, unit, samples, options);
  }

  TotalsFit fit;
  auto values = values_of(x);
  for (auto& v : values) v = search::round_to(v, 4);  // as the written file will say it
  fit.calibrated = hw;
  apply_totals(fit.calibrated, hw, unit, params, values, precisions);
  double min_measured = samples.front().measured_s;
  for (const auto& s : samples) min_measured = std::min(min_measured, s.measured_s);
  check_fitted(params, values, hw, min_measured, fit.warnings);
  fit.parameters = params;
  double sum = 0;
  for (const auto& s : samples) {
    const double t = total_estimate_s(fit.calibrated, unit, s);
    fit.predicted_s.push_back(t);
    fit.predicted_J.push_back(s.measured_J ? std::optional<double>(total_energy_J(fit.calibrated, unit, s))
                                           : std::nullopt);
    sum += std::pow(std::log(t / s.measured_s), 2);
  }
  fit.rms_log_s = std::sqrt(sum / static_cast<double>(samples.size()));
  return fit;
}

}  // namespace framesim::model
