#include "model/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>

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
  {
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
  if (objective_at(fitted) >= objective_at([&] {  // no overhead at all fits as well: say so
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
