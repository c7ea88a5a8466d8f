#include "model/search.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace framesim::model::search {

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

}  // namespace framesim::model::search
