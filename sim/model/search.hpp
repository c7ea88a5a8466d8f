// The derivative-free minimisers the calibrations search with (calibrate.cpp, calibrate_totals.cpp): Nelder-Mead
// and compass search on a box, under a budget of evaluations that remembers the best point seen.
#pragma once

#include <algorithm>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

namespace framesim::model::search {

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
void nelder_mead(Counted& f, const Point& x0, double step, const Box& box);
/// Compass search: move along each coordinate while that improves, halving the step down to `min_step`.
void compass(Counted& f, Point x, double step, double min_step, const Box& box);
/// `v` rounded to `digits` significant digits (as "%.*g" prints it).
double round_to(double v, int digits);

}  // namespace framesim::model::search
