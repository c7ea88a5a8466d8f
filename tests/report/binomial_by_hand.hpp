// The order-statistic interval of a quantile by hand, for tests: the binomial tails summed term by term.
#pragma once

#include <cmath>
#include <cstddef>
#include <utility>

namespace framesim::testing {

/// P(B <= k), B ~ Binomial(n, p), summed from k = 0 with the binomial formula.
inline double binomial_cdf(std::size_t n, double p, long k) {
  double sum = 0;
  for (long i = 0; i <= k; ++i) {
    const double ln = std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(static_cast<double>(n) - i + 1.0) +
                      i * std::log(p) + (static_cast<double>(n) - i) * std::log(1 - p);
    sum += std::exp(ln);
  }
  return sum;
}

/// 1-based ranks (l, u): l the largest with P(B <= l - 1) <= tail (0: none), u the smallest with
/// P(B <= u - 1) >= 1 - tail (n + 1: none). tail = (1 - confidence) / 2.
inline std::pair<std::size_t, std::size_t> interval_ranks_by_hand(std::size_t n, double p, double tail = 0.025) {
  std::size_t lower = 0, upper = n + 1;
  for (std::size_t l = 1; l <= n; ++l)
    if (binomial_cdf(n, p, static_cast<long>(l) - 1) <= tail) lower = l;
  for (std::size_t u = n; u >= 1; --u)
    if (binomial_cdf(n, p, static_cast<long>(u) - 1) >= 1 - tail) upper = u;
  return {lower, upper};
}

/// The nearest-rank quantile by its definition: the smallest sample with at least p of the sample at or below it.
template <class Sorted>
double nearest_rank_by_definition(const Sorted& sorted, double p) {
  for (std::size_t i = 0; i < sorted.size(); ++i)
    if (static_cast<double>(i + 1) >= p * static_cast<double>(sorted.size()) - 1e-9) return sorted[i];
  return sorted.back();
}

}  // namespace framesim::testing
