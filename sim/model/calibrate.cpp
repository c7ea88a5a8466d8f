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

using Point = std::vector<double>;
using Function = std::function<double(const Point&)>;

/// A box in parameter space: every coordinate clamped to [lo, hi].
struct Box {
  Point lo, hi;
  Point clamp(Point x) const {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::clamp(x[i], lo[i], hi[i]);
    return x;
  }
};

/// Counts evaluations against a budget and remembers the best point seen.
class Counted {
 public:
  Counted(Function f, int budget) : f_(std::move(f)), budget_(budget) {}
  double operator()(const Point& x) {
    ++used_;
    const double v = f_(x);
    if (v < best_value_) {
      best_value_ = v;
      best_ = x;
    }
    return v;
  }
  bool exhausted() const { return used_ >= budget_; }
  int used() const { return used_; }
  const Point& best() const { return best_; }
  double best_value() const { return best_value_; }

 private:
  Function f_;
  int budget_;
  int used_ = 0;
  Point best_;
  double best_value_ = std::numeric_limits<double>::infinity();
};

/// Nelder-Mead on a box (points projected onto it), from `x0` with an initial simplex of edge `step`.
void nelder_mead(Counted& f, const Point& x0, double step, const Box& box) {
  const std::size_t n = x0.size();
  std::vector<Point> simplex{box.clamp(x0)};
  for (std::size_t i = 0; i < n; ++i) {
    Point x = simplex.front();
    x[i] += (x[i] + step <= box.hi[i]) ? step : -step;
    simplex.push_back(box.clamp(x));
  }
  std::vector<double> values;
  for (const auto& x : simplex) values.push_back(f(x));
  std::vector<std::size_t> order(n + 1);
  while (!f.exhausted()) {
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
    const std::size_t best = order.front(), worst = order.back(), second = order[n - 1];
    double diameter = 0;
    for (std::size_t i = 0; i <= n; ++i)
      for (std::size_t d = 0; d < n; ++d) diameter = std::max(diameter, std::fabs(simplex[i][d] - simplex[best][d]));
    if (diameter < 1e-11 || values[worst] - values[best] <= 1e-30) break;
    Point centroid(n, 0.0);
    for (std::size_t i = 0; i <= n; ++i)
      if (i != worst)
        for (std::size_t d = 0; d < n; ++d) centroid[d] += simplex[i][d] / static_cast<double>(n);
    auto along = [&](double t) {  // centroid + t (centroid - worst)
      Point x(n);
      for (std::size_t d = 0; d < n; ++d) x[d] = centroid[d] + t * (centroid[d] - simplex[worst][d]);
      return box.clamp(x);
    };
    const Point reflected = along(1.0);
    const double fr = f(reflected);
    if (fr < values[best]) {
      const Point expanded = along(2.0);
      const double fe = f(expanded);
      if (fe < fr) {
        simplex[worst] = expanded;
        values[worst] = fe;
      } else {
        simplex[worst] = reflected;
        values[worst] = fr;
      }
      continue;
    }
    if (fr < values[second]) {
      simplex[worst] = reflected;
      values[worst] = fr;
      continue;
    }
    const Point contracted = fr < values[worst] ? along(0.5) : along(-0.5);
    const double fc = f(contracted);
    if (fc < std::min(fr, values[worst])) {
      simplex[worst] = contracted;
      values[worst] = fc;
      continue;
    }
    for (std::size_t i = 0; i <= n; ++i) {  // shrink towards the best point
      if (i == best) continue;
      for (std::size_t d = 0; d < n; ++d) simplex[i][d] = simplex[best][d] + 0.5 * (simplex[i][d] - simplex[best][d]);
      values[i] = f(simplex[i]);
    }
  }
}

/// Compass search: move along each coordinate while that improves, halving the step down to `min_step`.
void compass(Counted& f, Point x, double step, double min_step, const Box& box) {
  double fx = f(x);
  while (step >= min_step && !f.exhausted()) {
    bool moved = false;
    for (std::size_t d = 0; d < x.size() && !f.exhausted(); ++d) {
      for (double sign : {1.0, -1.0}) {
        Point y = x;
        y[d] += sign * step;
        y = box.clamp(y);
        if (y[d] == x[d]) continue;
        const double fy = f(y);
        if (fy < fx) {
          x = y;
          fx = fy;
          moved = true;
          break;
        }
      }
    }
    if (!moved) step *= 0.5;
  }
}

double round_to(double v, int digits) {
  if (v == 0 || !std::isfinite(v)) return v;
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
  return std::strtod(buffer, nullptr);
}

constexpr double kOverheadFloor_s = 1e-12;  // below this the overhead is written as 0

}  // namespace

CalibrationResult calibrate(const HardwareSpec& hw, std::size_t unit, const std::vector<CalibrationSample>& samples,
                            const RunPoint& run, const CalibrationOptions& options) {
  FRAMESIM_ASSERT(!samples.empty(), "callers check that something was measured");
  for (const auto& s : samples) FRAMESIM_ASSERT(s.measured_s > 0, "zero times are left out by match_samples");

  CalibrationResult result;
  result.before = fit_error(hw, unit, samples, run);

  // The parameters the samples exercise.
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

  // The working copy the objective writes parameters into.
  HardwareSpec work = hw;
  auto apply = [&](HardwareSpec& spec, const std::vector<double>& values) {
    ComputeUnitSpec& u = spec.units[unit];
    for (std::size_t i = 0; i < params.size(); ++i) {
      switch (params[i].kind) {
        case ParameterKind::compute_efficiency: u.efficiency[params[i].precision] = values[i]; break;
        case ParameterKind::bandwidth_efficiency: spec.memory[params[i].level].efficiency = values[i]; break;
        case ParameterKind::dispatch_overhead: u.dispatch_overhead_s = values[i]; break;
      }
    }
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
  auto to_values = [&](const Point& x) {
    std::vector<double> v(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      v[i] = std::exp(x[i]);
      if (params[i].kind == ParameterKind::dispatch_overhead && x[i] <= overhead_lo) v[i] = 0.0;
    }
    return v;
  };
  Box box;
  for (const auto& p : params) {
    const bool overhead = p.kind == ParameterKind::dispatch_overhead;
    box.lo.push_back(overhead ? overhead_lo : std::log(1e-4));
    box.hi.push_back(0.0);  // log(1) for both kinds
  }
  Counted f([&](const Point& x) { return objective_at(to_values(x)); }, options.max_evaluations);

  // Starts: the file's values (an overhead of 0 starts at 1 us), and a neutral guess.
  Point start_file, start_mid;
  for (const auto& p : params) {
    if (p.kind == ParameterKind::dispatch_overhead) {
      start_file.push_back(std::log(p.before > kOverheadFloor_s ? p.before : 1e-6));
      start_mid.push_back(std::log(1e-6));
    } else {
      start_file.push_back(std::log(std::clamp(p.before, 1e-4, 1.0)));
      start_mid.push_back(std::log(0.5));
    }
  }
  for (const Point& start : {start_file, start_mid}) {
    nelder_mead(f, start, 0.5, box);
    // Restart from the best point until a fresh simplex no longer improves it.
    for (int restart = 0; restart < 40 && !f.exhausted(); ++restart) {
      const double before = f.best_value();
      nelder_mead(f, f.best(), 0.25, box);
      compass(f, f.best(), 0.25, 1e-12, box);
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
      fitted[i] = q.value ? *q.value : round_to(fitted[i], options.significant_digits);
    } else {
      fitted[i] = round_to(fitted[i], options.significant_digits);
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
    const ComputeUnitSpec& u = work.units[unit];
    const std::vector<double> bandwidths = effective_bandwidths_Bps(work, u, run);
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
          const auto& level = work.memory[p.level];
          const std::size_t mp = p.level < run.memory_points.size() ? run.memory_points[p.level] : 0;
          const double streaming = effective_level_bandwidth_Bps(level, mp);
          const auto cap = littles_cap_Bps(u, level.latency_s);
          if (!cap || streaming < *cap) ++binding[i];
        }
      }
    }
    return binding;
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

// ---- calibration from totals ----

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
  Box box;
  Point start;
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
  auto full = [&](const Point& y) {
    auto v = x;
    for (std::size_t a = 0; a < active.size(); ++a) v[active[a]] = y[a];
    return v;
  };
  Counted f(
      [&](const Point& y) {
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
  nelder_mead(f, start, 0.5, box);
  for (int restart = 0; restart < 10 && !f.exhausted(); ++restart) {
    const double before = f.best_value();
    nelder_mead(f, f.best(), 0.25, box);
    compass(f, f.best(), 0.25, 1e-9, box);
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

TotalsFit fit_totals(const HardwareSpec& hw, std::size_t unit, const std::vector<TotalSample>& samples,
                     const TotalsOptions& options) {
  FRAMESIM_ASSERT(!samples.empty(), "callers check that something was measured");
  const ComputeUnitSpec& given = hw.units.at(unit);
  // What the samples exercise: op classes (and their precisions), levels.
  std::set<Precision> precisions;
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
  std::vector<double> x;
  // A zero output cost starts the search at a probe value: on its log scale 0 is many steps from any real cost.
  for (const auto& p : params)
    x.push_back(to_search(p, p.kind == TotalParameterKind::output_cost && p.note.empty()
                                 ? std::max(p.prior, kOutputProbe_s)
                                 : std::clamp(p.prior, 0.0, 1e9)));
  for (std::size_t i = 0; i < params.size(); ++i)
    if (is_time_parameter(params[i].kind) && search_shift(params[i].kind) == 0)
      x[i] = std::clamp(x[i], std::log(kEfficiencyFloor), 0.0);

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
    std::vector<EnergyParts> parts;
    std::vector<double> base_static;  // static energy at the file's static power
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

  TotalsFit fit;
  auto values = values_of(x);
  for (auto& v : values) v = round_to(v, 4);  // as the written file will say it
  fit.calibrated = hw;
  apply_totals(fit.calibrated, hw, unit, params, values, precisions);
  double min_measured = samples.front().measured_s;
  for (const auto& s : samples) min_measured = std::min(min_measured, s.measured_s);
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto& p = params[i];
    p.fitted = values[i];
    if (p.kind == TotalParameterKind::dispatch_overhead) {
      p.at_bound = p.pinned && p.fitted <= 1e-9;
      if (p.pinned && p.fitted > 0.3 * min_measured)
        fit.warnings.push_back(
            fmt::format("dispatch overhead {} is over 30 % of the fastest sample ({}): the "
                        "overhead is absorbing what the roofline misses",
                        core::format_seconds(p.fitted), core::format_seconds(min_measured)));
    } else if (p.kind == TotalParameterKind::output_cost) {
      p.at_bound = p.pinned && (p.fitted <= 1e-12 || p.fitted >= kMaxOutputCost_s * 0.999);
    } else if (is_time_parameter(p.kind)) {
      p.at_bound = p.pinned && (p.fitted >= 0.999 || p.fitted <= kEfficiencyFloor * 1.01);
      if (p.pinned && p.fitted < 0.02)
        fit.warnings.push_back(
            fmt::format("{} {}: below 2 % of peak, an implausible roof (check the bytes and "
                        "where the tensors are placed)",
                        total_parameter_name(hw, p), core::format_number(p.fitted, 3)));
    } else {
      p.at_bound = p.pinned && (p.fitted <= 1.001e-3 || p.fitted >= 999);
    }
  }
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
