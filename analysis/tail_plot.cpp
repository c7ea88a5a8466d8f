#include "tail_plot.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "stats.hpp"

namespace framesim::analysis {

double tail_floor(std::size_t n) { return n > 0 ? std::min(1e-3, 0.5 / static_cast<double>(n)) : 1e-3; }

void add_latency_tail(Plot& plot, const std::vector<double>& sorted, int colour, const std::string& label) {
  const std::size_t n = sorted.size();
  if (n == 0) return;
  const double nd = static_cast<double>(n);
  const double floor = 0.5 / nd;
  // The band: at fractions from 1 down to 1/n (log-spaced), the interval of the (1 - fraction)-quantile.
  std::vector<std::pair<double, double>> lower, upper;
  const int levels = 120;
  for (int i = 0; i <= levels; ++i) {
    const double fraction = std::pow(1.0 / nd, static_cast<double>(i) / levels);
    const double p = 1 - fraction;
    if (p <= 0 || p >= 1) continue;
    const RankInterval r = quantile_rank_interval(n, p);
    lower.emplace_back(sorted[r.lower >= 1 ? r.lower - 1 : 0], fraction);
    upper.emplace_back(sorted[std::min(r.upper, n) - 1], fraction);
  }
  std::vector<std::pair<double, double>> polygon(lower.begin(), lower.end());
  polygon.insert(polygon.end(), upper.rbegin(), upper.rend());
  if (polygon.size() > 2)
    plot.band(std::move(polygon), colour, fmt::format("{} {}% CI", label, static_cast<int>(kConfidence * 100)));
  std::vector<std::pair<double, double>> pts;
  const std::size_t step = std::max<std::size_t>(1, n / 4000);
  for (std::size_t i = 0; i < n; i += step)
    pts.emplace_back(sorted[i], std::max(floor, 1.0 - static_cast<double>(i) / nd));
  pts.emplace_back(sorted.back(), floor);
  plot.line(std::move(pts), colour, fmt::format("{}, n = {}", label, n));
}

}  // namespace framesim::analysis
