#include "stats.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace framesim::analysis {

namespace ba = boost::accumulators;

std::size_t nearest_rank(std::size_t n, double p) {
  const auto rank = static_cast<std::size_t>(std::max(1.0, std::ceil(p * static_cast<double>(n) - 1e-9)));
  return std::min(rank, n);
}

RankInterval quantile_rank_interval(std::size_t n, double p, double confidence) {
  FRAMESIM_ASSERT(n > 0 && p > 0 && p < 1 && confidence > 0 && confidence < 1, "quantile interval of bad arguments");
  const double tail = (1 - confidence) / 2;
  // The binomial probabilities P(B = k), B ~ Bin(n, p), walked outwards from the mode: terms far in the
  // tails are below 1e-30 of the mode's and change no rank.
  const double nd = static_cast<double>(n);
  const auto mode = static_cast<std::size_t>(std::min(nd, std::floor((nd + 1) * p)));
  auto log_pmf = [&](double k) {
    return std::lgamma(nd + 1) - std::lgamma(k + 1) - std::lgamma(nd - k + 1) + k * std::log(p) +
           (nd - k) * std::log1p(-p);
  };
  const double at_mode = std::exp(log_pmf(static_cast<double>(mode)));
  const double ratio = p / (1 - p);
  std::size_t first = mode, last = mode;
  std::vector<double> below{at_mode};  // pmf(mode), pmf(mode - 1), ...
  for (double v = at_mode; first > 0 && v > at_mode * 1e-30;) {
    v *= static_cast<double>(first) / (nd - static_cast<double>(first) + 1) / ratio;  // pmf(first - 1)
    --first;
    below.push_back(v);
  }
  std::vector<double> above;  // pmf(mode + 1), ...
  for (double v = at_mode; last < n && v > at_mode * 1e-30;) {
    v *= (nd - static_cast<double>(last)) / (static_cast<double>(last) + 1) * ratio;  // pmf(last + 1)
    ++last;
    above.push_back(v);
  }
  // pmf over [first, last], ascending k; the mass outside is negligible.
  std::vector<double> pmf(below.rbegin(), below.rend());
  pmf.insert(pmf.end(), above.begin(), above.end());
  double total = 0;
  for (double v : pmf) total += v;
  // cdf_below(k) = P(B < k) = P(B <= k - 1).
  RankInterval r{0, n + 1};
  double cumulative = 0;  // P(B < k) for k = first
  for (std::size_t k = first; k <= last + 1; ++k) {
    // Lower: the largest rank l >= 1 with P(B < l) <= tail.
    if (k >= 1 && cumulative / total <= tail) r.lower = k;
    // Upper: the smallest rank u <= n with P(B < u) >= 1 - tail.
    if (k >= 1 && k <= n && cumulative / total >= 1 - tail && r.upper == n + 1) r.upper = k;
    if (k <= last) cumulative += pmf[k - first];
  }
  if (r.lower > n) r.lower = n;
  return r;
}

Quantile quantile_of_sorted(const std::vector<double>& sorted, double p, double confidence) {
  FRAMESIM_ASSERT(!sorted.empty(), "quantile of an empty sample");
  const std::size_t n = sorted.size();
  Quantile q;
  q.p = p;
  q.count = n;
  q.value = sorted[nearest_rank(n, p) - 1];
  const RankInterval r = quantile_rank_interval(n, p, confidence);
  if (r.lower >= 1) q.lo = sorted[r.lower - 1];
  if (r.upper <= n) q.hi = sorted[r.upper - 1];
  return q;
}

void Samples::add(double v) {
  if (loaded_) release();
  store_.append(&v);
  ++count_;
  acc_(v);
}

void Samples::load() const {
  if (loaded_) return;
  values_.clear();
  values_.reserve(count_);
  store_.for_each([&](const double* v) { values_.push_back(*v); });
  loaded_ = true;
  sorted_ = false;
}

void Samples::release() const {
  std::vector<double>().swap(values_);
  loaded_ = false;
  sorted_ = false;
}

const std::vector<double>& Samples::values() const {
  load();
  return values_;
}

const std::vector<double>& Samples::sorted() const {
  load();
  if (!sorted_) {
    std::sort(values_.begin(), values_.end());
    sorted_ = true;
  }
  return values_;
}

double Samples::quantile(double p) const {
  FRAMESIM_ASSERT(count_ > 0, "quantile of an empty sample");
  const auto& values = sorted();
  return values[nearest_rank(values.size(), p) - 1];
}

double Samples::max() const { return ba::max(acc_); }

Quantile Samples::quantile_ci(double p, double confidence) const { return quantile_of_sorted(sorted(), p, confidence); }

Summary Samples::summary() const {
  Summary s;
  s.count = count_;
  if (count_ == 0) return s;
  const bool held = loaded_;
  s.mean = ba::mean(acc_);
  s.stddev = std::sqrt(std::max(0.0, ba::variance(acc_)));
  s.min = ba::min(acc_);
  s.max = ba::max(acc_);
  s.q50 = quantile_ci(0.5);
  s.q90 = quantile_ci(0.9);
  s.q99 = quantile_ci(0.99);
  s.q999 = quantile_ci(0.999);
  s.p50 = s.q50.value;
  s.p90 = s.q90.value;
  s.p99 = s.q99.value;
  s.p999 = s.q999.value;
  if (!held) release();
  return s;
}

Summary scaled(Summary s, double k) {
  for (double* v : {&s.mean, &s.stddev, &s.min, &s.max, &s.p50, &s.p90, &s.p99, &s.p999}) *v *= k;
  for (Quantile* q : {&s.q50, &s.q90, &s.q99, &s.q999}) {
    q->value *= k;
    if (q->lo) *q->lo *= k;
    if (q->hi) *q->hi *= k;
  }
  return s;
}

}  // namespace framesim::analysis
