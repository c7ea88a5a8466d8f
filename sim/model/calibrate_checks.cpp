// What a totals fit can and cannot tell (model/calibrate.hpp): which costs the samples identify, leave one
// network (or runtime) out, and the held-out check that keeps the prior when a fit does not generalise.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "model/calibrate.hpp"

namespace framesim::model {

bool output_cost_identifiable(const HardwareSpec& hw, std::size_t unit, const std::vector<TotalSample>& samples) {
  // Per network: outputs and ops of its shaped layers, and the share of its estimate spent in compute-bound
  // kernels (where the compute roof shows).
  struct Totals {
    double outputs = 0, ops = 0, compute_s = 0, estimate_s = 0;
  };
  std::map<std::string, Totals> per_network;
  const ComputeUnitSpec& u = hw.units.at(unit);
  for (const auto& smp : samples) {
    auto& t = per_network[smp.network];
    const auto bandwidths = effective_bandwidths_Bps(hw, u, smp.run);
    for (const auto& k : smp.kernels) {
      for (const auto& sh : k.shapes) {
        t.outputs += sh.outputs;
        t.ops += sh.ops;
      }
      const KernelTime kt = kernel_time(k, u, bandwidths, smp.run);
      if (kt.limit == LimitKind::compute) t.compute_s += kt.compute_s;
    }
    t.estimate_s += total_estimate_s(hw, unit, smp);
  }
  double lo = 0, hi = 0;
  std::size_t counted = 0;
  for (const auto& [name, t] : per_network) {
    if (t.ops <= 0 || t.estimate_s <= 0 || t.compute_s < kMinComputeShare * t.estimate_s) continue;
    const double r = t.outputs / t.ops;
    lo = counted == 0 ? r : std::min(lo, r);
    hi = std::max(hi, r);
    ++counted;
  }
  return counted >= 2 && lo > 0 && hi / lo >= kMinKernelCountSpread;
}

bool overhead_identifiable(const std::vector<TotalSample>& samples) {
  std::set<std::string> networks;
  double lo = 0, hi = 0;
  for (const auto& smp : samples) {
    networks.insert(smp.network);
    const auto n = static_cast<double>(smp.kernels.size());
    lo = lo == 0 ? n : std::min(lo, n);
    hi = std::max(hi, n);
  }
  return networks.size() >= 2 && lo > 0 && hi / lo >= kMinKernelCountSpread;
}

namespace {

/// Geometric-mean |ln(predicted / measured)| over `left` with `spec`'s estimates, as a ratio - 1.
double held_out_error(const HardwareSpec& spec, std::size_t unit, const std::vector<TotalSample>& left) {
  double sum = 0;
  for (const auto& smp : left) sum += std::fabs(std::log(total_estimate_s(spec, unit, smp) / smp.measured_s));
  return std::exp(sum / static_cast<double>(left.size())) - 1.0;
}

std::vector<LeaveOneOut> leave_one_out(const HardwareSpec& hw, std::size_t unit,
                                       const std::vector<TotalSample>& samples, const TotalsOptions& options,
                                       std::string TotalSample::*key) {
  std::vector<std::string> groups;
  for (const auto& smp : samples)
    if (!(smp.*key).empty() && std::find(groups.begin(), groups.end(), smp.*key) == groups.end())
      groups.push_back(smp.*key);
  std::vector<LeaveOneOut> out;
  if (groups.size() < 2) return out;
  for (const auto& g : groups) {
    std::vector<TotalSample> rest, left;
    for (const auto& smp : samples) (smp.*key == g ? left : rest).push_back(smp);
    const TotalsFit fit = fit_totals(hw, unit, rest, options);
    out.push_back({g, left.size(), held_out_error(fit.calibrated, unit, left), held_out_error(hw, unit, left)});
  }
  return out;
}

}  // namespace

std::vector<LeaveOneOut> leave_one_network_out(const HardwareSpec& hw, std::size_t unit,
                                               const std::vector<TotalSample>& samples, const TotalsOptions& options) {
  return leave_one_out(hw, unit, samples, options, &TotalSample::network);
}

std::vector<LeaveOneOut> leave_one_runtime_out(const HardwareSpec& hw, std::size_t unit,
                                               const std::vector<TotalSample>& samples, const TotalsOptions& options) {
  return leave_one_out(hw, unit, samples, options, &TotalSample::runtime);
}

double mean_held_out_error(const std::vector<LeaveOneOut>& loo, bool prior) {
  if (loo.empty()) return 0.0;
  double sum = 0;
  for (const auto& l : loo) sum += std::log1p(prior ? l.prior_error : l.error);
  return std::exp(sum / static_cast<double>(loo.size())) - 1.0;
}

CheckedFit fit_totals_checked(const HardwareSpec& hw, std::size_t unit, const std::vector<TotalSample>& samples,
                              const TotalsOptions& options) {
  CheckedFit c;
  c.fit = fit_totals(hw, unit, samples, options);
  c.by_network = leave_one_network_out(hw, unit, samples, options);
  c.by_runtime = leave_one_runtime_out(hw, unit, samples, options);
  c.checked = !c.by_network.empty();
  if (!c.checked) {
    c.verdict = "one network: no held-out check of the fit is possible";
    return c;
  }
  const double fitted = mean_held_out_error(c.by_network), prior = mean_held_out_error(c.by_network, true);
  if (fitted > prior) {
    c.kept_prior = true;
    c.verdict = fmt::format(
        "KEPT THE PRIOR: the fit predicts left-out networks within {:.1f}%, the file's roofs within {:.1f}%: the "
        "data do not generalise, the file's values stand",
        fitted * 100, prior * 100);
    c.fit.calibrated = hw;
    c.fit.predicted_s.clear();
    c.fit.predicted_J.clear();
    double sum = 0;
    for (const auto& smp : samples) {
      const double t = total_estimate_s(hw, unit, smp);
      c.fit.predicted_s.push_back(t);
      c.fit.predicted_J.push_back(smp.measured_J ? std::optional<double>(total_energy_J(hw, unit, smp)) : std::nullopt);
      sum += std::pow(std::log(t / smp.measured_s), 2);
    }
    c.fit.rms_log_s = std::sqrt(sum / static_cast<double>(samples.size()));
    for (auto& p : c.fit.parameters) {
      if (p.pinned) p.note = "fitted, then not used: the held-out check kept the prior";
      p.fitted = p.prior;
      p.pinned = false;
      p.at_bound = false;
    }
  } else {
    c.verdict = fmt::format("held out: the fit predicts left-out networks within {:.1f}% (the file's roofs: {:.1f}%)",
                            fitted * 100, prior * 100);
  }
  return c;
}

}  // namespace framesim::model
