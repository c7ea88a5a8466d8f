// fit_corun and leave_one_out (model/corun.hpp): a bounded, derivative-free least-squares fit of the co-run
// model's parameters in log slowdown, with a weak pull toward the file's values.
#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "model/corun.hpp"

namespace framesim::model {

namespace {

double round_to(double v, int digits) {
  if (v == 0) return 0;
  const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * scale) / scale;
}

bool same_corun(const CorunRow& a, const CorunRow& b) {
  if (a.members.size() != b.members.size()) return false;
  for (std::size_t i = 0; i < a.members.size(); ++i)
    if (a.members[i].unit != b.members[i].unit || a.members[i].network != b.members[i].network ||
        a.members[i].kernels.size() != b.members[i].kernels.size() ||
        a.members[i].reformat_in_bytes != b.members[i].reformat_in_bytes)
      return false;
  return true;
}

std::vector<double> row_predictions(const HardwareSpec& hw, const std::vector<CorunRow>& rows) {
  std::vector<double> out, slowdowns;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    // Rows of one co-run (each member's slowdown measured) share its steady state.
    if (r == 0 || !same_corun(rows[r], rows[r - 1])) slowdowns = corun_slowdowns(hw, rows[r].members);
    out.push_back(slowdowns[rows[r].measured]);
  }
  return out;
}

double rms_log(const std::vector<double>& predicted, const std::vector<CorunRow>& rows) {
  double sum = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) sum += std::pow(std::log(predicted[r] / rows[r].measured_slowdown), 2);
  return std::sqrt(sum / static_cast<double>(rows.size()));
}

/// Where a parameter lives in the hardware spec, its range and the scale of its prior pull.
struct Slot {
  CorunParameterKind kind;
  std::size_t unit;
  double low, high, scale;
  double& in(HardwareSpec& hw) const {
    auto& u = hw.units[unit];
    switch (kind) {
      case CorunParameterKind::sensitivity: return u.contention_sensitivity;
      case CorunParameterKind::overlap: return u.overlap;
      case CorunParameterKind::handoff_efficiency: return u.handoff->efficiency;
      case CorunParameterKind::handoff_launch: return u.handoff->launch_s;
    }
    FRAMESIM_ASSERT(false, "every kind is handled");
    return u.overlap;
  }
};

/// The parameters the rows' units have (see the header), sensitivities first.
std::vector<Slot> slots_of(const HardwareSpec& hw, const std::vector<CorunRow>& rows, const CorunOptions& o) {
  std::set<std::size_t> units;
  for (const auto& r : rows)
    for (const auto& m : r.members) units.insert(m.unit);
  std::vector<Slot> out;
  for (std::size_t u : units) out.push_back({CorunParameterKind::sensitivity, u, 0, o.max_sensitivity, 1});
  if (o.fit_overlap)
    for (std::size_t u : units) out.push_back({CorunParameterKind::overlap, u, 0, 1, 1});
  if (o.fit_handoff)
    for (std::size_t u : units)
      if (hw.units[u].handoff) {
        out.push_back({CorunParameterKind::handoff_efficiency, u, 0.05, 1, 1});
        out.push_back({CorunParameterKind::handoff_launch, u, 0, o.max_launch_s, 1e-3});
      }
  return out;
}

/// Numerical rank of the columns of `m` (rows x cols) by Gram-Schmidt with relative tolerance.
int column_rank(std::vector<std::vector<double>> cols) {
  int rank = 0;
  std::vector<std::vector<double>> basis;
  for (auto& c : cols) {
    double norm0 = 0;
    for (double x : c) norm0 += x * x;
    if (norm0 <= 1e-20) continue;
    for (const auto& b : basis) {
      double dot = 0;
      for (std::size_t i = 0; i < c.size(); ++i) dot += c[i] * b[i];
      for (std::size_t i = 0; i < c.size(); ++i) c[i] -= dot * b[i];
    }
    double norm = 0;
    for (double x : c) norm += x * x;
    if (norm <= 1e-8 * norm0) continue;
    norm = std::sqrt(norm);
    for (double& x : c) x /= norm;
    basis.push_back(c);
    ++rank;
  }
  return rank;
}

}  // namespace

std::string_view corun_parameter_key(CorunParameterKind k) {
  switch (k) {
    case CorunParameterKind::sensitivity: return "contention_sensitivity";
    case CorunParameterKind::overlap: return "overlap";
    case CorunParameterKind::handoff_efficiency: return "handoff.efficiency";
    case CorunParameterKind::handoff_launch: return "handoff.launch";
  }
  return "";
}

CorunFit fit_corun(const HardwareSpec& hw, const std::vector<CorunRow>& rows, const CorunOptions& options) {
  FRAMESIM_ASSERT(!rows.empty(), "callers check that something was measured");
  const auto slots = slots_of(hw, rows, options);
  CorunFit fit;
  fit.calibrated = hw;
  HardwareSpec trial = hw;
  std::vector<double> theta;
  for (const auto& s : slots) {
    const double prior = s.in(trial);
    fit.parameters.push_back({s.unit, s.kind, prior, prior, true, true, false});
    theta.push_back(std::clamp(prior, s.low, s.high));
  }
  auto set = [&](const std::vector<double>& x) {
    for (std::size_t p = 0; p < x.size(); ++p) slots[p].in(trial) = x[p];
  };
  auto predictions = [&](const std::vector<double>& x) {
    set(x);
    return row_predictions(trial, rows);
  };
  auto objective = [&](const std::vector<double>& x) {
    double j = std::pow(rms_log(predictions(x), rows), 2);
    for (std::size_t p = 0; p < x.size(); ++p)
      j += options.lambda * std::pow((x[p] - fit.parameters[p].prior) / slots[p].scale, 2);
    return j;
  };

  // Identifiability: does any row's prediction move when the parameter sweeps its range (the others where they
  // are: at the priors, then again after each descent, since one parameter can make another matter, as an
  // overlap below 1 makes a compute-bound unit's sensitivity show)?
  auto moves_rows = [&](std::size_t p) {
    std::vector<double> x = theta;
    x[p] = slots[p].low;
    const auto low = predictions(x);
    x[p] = slots[p].high;
    const auto high = predictions(x);
    bool moves = false;
    for (std::size_t r = 0; r < rows.size(); ++r) moves = moves || std::fabs(std::log(high[r] / low[r])) > 1e-9;
    return moves;
  };
  for (std::size_t p = 0; p < theta.size(); ++p) fit.parameters[p].identifiable = moves_rows(p);

  // Coordinate descent: a grid along each identifiable coordinate, then golden section around the best point.
  constexpr int kGrid = 40;
  for (int round = 0; round < 3; ++round) {
    for (int sweep = 0; sweep < 50; ++sweep) {
      double moved = 0;
      for (std::size_t p = 0; p < theta.size(); ++p) {
        if (!fit.parameters[p].identifiable) continue;
        const double lo = slots[p].low, hi = slots[p].high;
        auto along = [&](double v) {
          std::vector<double> x = theta;
          x[p] = v;
          return objective(x);
        };
        const double step = (hi - lo) / kGrid;
        int best = 0;
        double best_j = along(lo);
        for (int g = 1; g <= kGrid; ++g)
          if (const double j = along(lo + g * step); j < best_j) best_j = j, best = g;
        double a = std::max(lo, lo + (best - 1) * step), b = std::min(hi, lo + (best + 1) * step);
        const double phi = (std::sqrt(5.0) - 1) / 2;
        double c = b - phi * (b - a), d = a + phi * (b - a), fc = along(c), fd = along(d);
        while (b - a > 1e-9 * (hi - lo)) {
          if (fc < fd) b = d, d = c, fd = fc, c = b - phi * (b - a), fc = along(c);
          else a = c, c = d, fc = fd, d = a + phi * (b - a), fd = along(d);
        }
        double v = (a + b) / 2;
        if (along(v) > along(theta[p])) v = theta[p];
        moved = std::max(moved, std::fabs(v - theta[p]) / (hi - lo));
        theta[p] = v;
      }
      if (moved < 1e-8) break;
    }
    bool more = false;
    for (std::size_t p = 0; p < theta.size(); ++p)
      if (!fit.parameters[p].identifiable && moves_rows(p)) fit.parameters[p].identifiable = more = true;
    if (!more) break;
  }

  for (std::size_t p = 0; p < theta.size(); ++p) {
    auto& par = fit.parameters[p];
    par.fitted = par.identifiable
                     ? std::clamp(round_to(theta[p], options.significant_digits), slots[p].low, slots[p].high)
                     : par.prior;
    const double span = slots[p].high - slots[p].low;
    par.at_bound =
        par.identifiable && (par.fitted <= slots[p].low + 1e-6 * span || par.fitted >= slots[p].high - 1e-6 * span);
    slots[p].in(fit.calibrated) = par.fitted;
  }
  // Pinned: the column of d ln predicted / d theta (central differences at the fit, scaled by the range) is not
  // in the span of the other identifiable parameters' columns.
  std::vector<std::vector<double>> columns(theta.size());
  std::vector<double> at;
  for (const auto& par : fit.parameters) at.push_back(par.fitted);
  for (std::size_t p = 0; p < theta.size(); ++p) {
    if (!fit.parameters[p].identifiable) continue;
    const double span = slots[p].high - slots[p].low, h = 1e-4 * span;
    std::vector<double> up = at, down = at;
    up[p] = std::min(slots[p].high, at[p] + h);
    down[p] = std::max(slots[p].low, at[p] - h);
    const auto pu = predictions(up), pd = predictions(down);
    for (std::size_t r = 0; r < rows.size(); ++r)
      columns[p].push_back(std::log(pu[r] / pd[r]) / ((up[p] - down[p]) / span));
  }
  const int full = column_rank(columns);
  for (std::size_t p = 0; p < theta.size(); ++p) {
    if (!fit.parameters[p].identifiable) {
      fit.parameters[p].pinned = false;
      continue;
    }
    auto without = columns;
    without[p].clear();
    fit.parameters[p].pinned = column_rank(without) < full;
  }
  fit.prior_slowdown = row_predictions(hw, rows);
  fit.predicted_slowdown = row_predictions(fit.calibrated, rows);
  fit.prior_rms_log = rms_log(fit.prior_slowdown, rows);
  fit.rms_log = rms_log(fit.predicted_slowdown, rows);
  return fit;
}

std::vector<double> leave_one_out(const HardwareSpec& hw, const std::vector<CorunRow>& rows,
                                  const CorunOptions& options) {
  std::vector<double> out;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::vector<CorunRow> others;
    for (std::size_t q = 0; q < rows.size(); ++q)
      if (q != r) others.push_back(rows[q]);
    const HardwareSpec used = others.empty() ? hw : fit_corun(hw, others, options).calibrated;
    out.push_back(corun_slowdowns(used, rows[r].members)[rows[r].measured]);
  }
  return out;
}

}  // namespace framesim::model
