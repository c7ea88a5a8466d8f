#include "model/corun.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "model/contention.hpp"
#include "model/cost.hpp"

namespace framesim::model {

namespace {

/// sum_k t_k of `kernels` on `unit` with `bandwidths_Bps` per level.
double network_time_s(const std::vector<Kernel>& kernels, const ComputeUnitSpec& unit,
                      const std::vector<double>& bandwidths_Bps) {
  double t = 0;
  for (const auto& k : kernels) t += kernel_time(k, unit, bandwidths_Bps).bound_s;
  return t;
}

bool uses_level(const ComputeUnitSpec& unit, std::size_t level) {
  return std::find(unit.memory_path.begin(), unit.memory_path.end(), level) != unit.memory_path.end();
}

double round_to(double v, int digits) {
  if (v == 0) return 0;
  const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * scale) / scale;
}

std::vector<double> row_predictions(const HardwareSpec& hw, const std::vector<CorunRow>& rows) {
  std::vector<double> out;
  for (const auto& r : rows) out.push_back(corun_slowdowns(hw, r.members)[r.measured]);
  return out;
}

double rms_log(const std::vector<double>& predicted, const std::vector<CorunRow>& rows) {
  double sum = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) sum += std::pow(std::log(predicted[r] / rows[r].measured_slowdown), 2);
  return std::sqrt(sum / static_cast<double>(rows.size()));
}

}  // namespace

std::vector<double> corun_slowdowns(const HardwareSpec& hw, const std::vector<CorunMember>& members) {
  const std::size_t n = members.size();
  std::vector<double> alone_s(n), together_s(n), bytes_total(hw.memory.size());
  std::vector<std::vector<double>> bytes(n, std::vector<double>(hw.memory.size(), 0.0));
  for (std::size_t i = 0; i < n; ++i) {
    const auto& unit = hw.units.at(members[i].unit);
    alone_s[i] = network_time_s(members[i].kernels, unit, effective_bandwidths_Bps(hw, unit));
    FRAMESIM_ASSERT(alone_s[i] > 0, "a network takes time");
    for (const auto& k : members[i].kernels)
      for (std::size_t l = 0; l < k.bytes.size() && l < hw.memory.size(); ++l) bytes[i][l] += k.bytes[l];
  }
  together_s = alone_s;
  // Damped fixed point: a member's time grows with the others' traffic, which falls as their times grow.
  for (int iteration = 0; iteration < 500; ++iteration) {
    double change = 0;
    std::vector<double> next(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& unit = hw.units[members[i].unit];
      std::vector<double> bw = effective_bandwidths_Bps(hw, unit);
      for (std::size_t l : unit.memory_path) {
        double others_Bps = 0;
        for (std::size_t j = 0; j < n; ++j)
          if (j != i && uses_level(hw.units[members[j].unit], l)) others_Bps += bytes[j][l] / together_s[j];
        const double rho = others_Bps / effective_level_bandwidth_Bps(hw.memory[l]);
        if (auto port = port_bandwidth_Bps(hw.memory[l], unit, 0, rho)) bw[l] = std::min(bw[l], *port);
      }
      next[i] = 0.5 * (together_s[i] + network_time_s(members[i].kernels, unit, bw));
      change = std::max(change, std::fabs(next[i] / together_s[i] - 1));
    }
    together_s = next;
    if (change < 1e-13) break;
  }
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = together_s[i] / alone_s[i];
  return out;
}

CorunFit fit_corun(const HardwareSpec& hw, const std::vector<CorunRow>& rows, const CorunOptions& options) {
  FRAMESIM_ASSERT(!rows.empty(), "callers check that something was measured");
  std::set<std::size_t> units;
  for (const auto& r : rows)
    for (const auto& m : r.members) units.insert(m.unit);
  CorunFit fit;
  fit.calibrated = hw;
  for (std::size_t u : units) fit.parameters.push_back({u, hw.units[u].contention_sensitivity, 1, true, false});

  HardwareSpec trial = hw;
  auto objective = [&](const std::vector<double>& sigma) {
    for (std::size_t p = 0; p < sigma.size(); ++p)
      trial.units[fit.parameters[p].unit].contention_sensitivity = sigma[p];
    const auto predicted = row_predictions(trial, rows);
    double j = std::pow(rms_log(predicted, rows), 2);
    for (std::size_t p = 0; p < sigma.size(); ++p)
      j += options.lambda * std::pow(sigma[p] - fit.parameters[p].prior, 2);
    return j;
  };
  std::vector<double> sigma;
  for (const auto& p : fit.parameters) sigma.push_back(std::clamp(p.prior, 0.0, options.max_sensitivity));

  // Identifiability: does any row's prediction move when sigma_u sweeps [0, max] (the others at their priors)?
  for (std::size_t p = 0; p < sigma.size(); ++p) {
    auto at = [&](double s) {
      std::vector<double> x = sigma;
      x[p] = s;
      for (std::size_t q = 0; q < x.size(); ++q) trial.units[fit.parameters[q].unit].contention_sensitivity = x[q];
      return row_predictions(trial, rows);
    };
    const auto low = at(0), high = at(options.max_sensitivity);
    bool moves = false;
    for (std::size_t r = 0; r < rows.size(); ++r) moves = moves || std::fabs(std::log(high[r] / low[r])) > 1e-9;
    fit.parameters[p].identifiable = moves;
  }

  // Coordinate descent: a grid along each identifiable coordinate, then golden section around the best point.
  constexpr int kGrid = 40;
  for (int sweep = 0; sweep < 50; ++sweep) {
    double moved = 0;
    for (std::size_t p = 0; p < sigma.size(); ++p) {
      if (!fit.parameters[p].identifiable) continue;
      auto along = [&](double s) {
        std::vector<double> x = sigma;
        x[p] = s;
        return objective(x);
      };
      const double step = options.max_sensitivity / kGrid;
      int best = 0;
      double best_j = along(0);
      for (int g = 1; g <= kGrid; ++g)
        if (const double j = along(g * step); j < best_j) best_j = j, best = g;
      double a = std::max(0.0, (best - 1) * step), b = std::min(options.max_sensitivity, (best + 1) * step);
      const double phi = (std::sqrt(5.0) - 1) / 2;
      double c = b - phi * (b - a), d = a + phi * (b - a), fc = along(c), fd = along(d);
      while (b - a > 1e-9 * options.max_sensitivity) {
        if (fc < fd) b = d, d = c, fd = fc, c = b - phi * (b - a), fc = along(c);
        else a = c, c = d, fc = fd, d = a + phi * (b - a), fd = along(d);
      }
      double s = (a + b) / 2;
      if (along(s) > along(sigma[p])) s = sigma[p];
      moved = std::max(moved, std::fabs(s - sigma[p]));
      sigma[p] = s;
    }
    if (moved < 1e-8) break;
  }

  for (std::size_t p = 0; p < sigma.size(); ++p) {
    auto& par = fit.parameters[p];
    par.fitted = par.identifiable ? round_to(sigma[p], options.significant_digits) : par.prior;
    par.at_bound = par.identifiable && (par.fitted <= 0 || par.fitted >= options.max_sensitivity);
    fit.calibrated.units[par.unit].contention_sensitivity = par.fitted;
  }
  fit.prior_slowdown = row_predictions(hw, rows);
  fit.predicted_slowdown = row_predictions(fit.calibrated, rows);
  fit.prior_rms_log = rms_log(fit.prior_slowdown, rows);
  fit.rms_log = rms_log(fit.predicted_slowdown, rows);
  return fit;
}

}  // namespace framesim::model
