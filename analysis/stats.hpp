// Statistics of a sample: count, mean, min, max, standard deviation (Boost.Accumulators) and exact
// quantiles from the stored values. Quantile method: nearest rank, the smallest value with at least p of
// the sample at or below it (x_(ceil(p n)); numpy's method="inverted_cdf"). P-square estimates are not
// used: p99 of a latency distribution must be exact.
//
// Every quantile carries a distribution-free confidence interval from order statistics: the number of
// samples at or below the true p-quantile is Binomial(n, p), so [x_(l), x_(u)] covers it with probability
// at least P(l <= B < u). l and u are the ranks at the two tails of that binomial (alpha/2 each). When u
// would be above n the sample cannot bound the quantile from above at that confidence: the interval is
// open (its upper end null) and the quantile is flagged as estimated from too few samples (p99 needs at
// least 368 samples at 95 %, p99.9 at least 3 688). The interval assumes independent samples; frames of
// a pipeline are correlated in time, so read it as a lower bound on the uncertainty.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <boost/accumulators/accumulators.hpp>
#include <boost/accumulators/statistics/count.hpp>
#include <boost/accumulators/statistics/max.hpp>
#include <boost/accumulators/statistics/mean.hpp>
#include <boost/accumulators/statistics/min.hpp>
#include <boost/accumulators/statistics/stats.hpp>
#include <boost/accumulators/statistics/variance.hpp>
#include <nlohmann/json.hpp>

#include "spill.hpp"

namespace framesim::analysis {

/// The confidence of every interval framesim reports.
inline constexpr double kConfidence = 0.95;

/// 1-based ranks of the order statistics bounding the p-quantile of n samples at `confidence`: lower 0 when
/// no sample bounds it from below, upper n + 1 when none bounds it from above.
struct RankInterval {
  std::size_t lower = 0, upper = 0;
};
RankInterval quantile_rank_interval(std::size_t n, double p, double confidence = kConfidence);
/// The nearest rank of the p-quantile of n samples (1-based): ceil(p n), at least 1.
std::size_t nearest_rank(std::size_t n, double p);

/// A quantile with its sample count and confidence interval (lo/hi empty when open on that side).
struct Quantile {
  double p = 0;
  double value = 0;
  std::size_t count = 0;
  std::optional<double> lo, hi;
  /// Too few samples to bound this quantile from above at the confidence (hi is open).
  bool few_samples() const { return !hi.has_value(); }
};

struct Summary {
  std::size_t count = 0;
  double mean = 0, stddev = 0, min = 0, max = 0;
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0;
  Quantile q50, q90, q99, q999;  // the same four with their intervals
};

/// The values of one statistic over a run, kept exactly for quantiles. So that memory stays flat however long the
/// run, they are written to an anonymous temporary file in chunks and read back (one statistic at a time) only when
/// a quantile is asked for; count, mean, min, max and variance are accumulated as they come.
class Samples {
 public:
  Samples() = default;
  Samples(Samples&&) noexcept = default;
  Samples& operator=(Samples&&) noexcept = default;

  void add(double v);
  std::size_t count() const { return count_; }
  /// The largest value (accumulated: no read-back). Precondition: not empty.
  double max() const;
  bool empty() const { return count_ == 0; }
  /// Nearest-rank quantile, p in [0, 1]. Precondition: not empty. Reads the values back (kept until release()).
  double quantile(double p) const;
  /// The quantile with its interval at `confidence`. Precondition: not empty.
  Quantile quantile_ci(double p, double confidence = kConfidence) const;
  /// Every figure at once; reads the values back only for as long as it needs them (unless they are held).
  Summary summary() const;
  /// The values (read back and kept until release(), or the next add()), in no promised order.
  const std::vector<double>& values() const;
  /// The values in ascending order (read back and kept until release(), or the next add()).
  const std::vector<double>& sorted() const;
  /// Forgets the values read back (they stay on disk).
  void release() const;

 private:
  using Acc = boost::accumulators::accumulator_set<
      double, boost::accumulators::stats<boost::accumulators::tag::count, boost::accumulators::tag::mean,
                                         boost::accumulators::tag::min, boost::accumulators::tag::max,
                                         boost::accumulators::tag::variance>>;
  void load() const;

  RecordSpill store_{1};  // every value, in the order added
  std::size_t count_ = 0;
  mutable std::vector<double> values_;  // read back
  mutable bool loaded_ = false;
  mutable bool sorted_ = false;
  Acc acc_;
};

/// The quantile of ascending `sorted` values with its interval (nearest rank). Precondition: not empty.
Quantile quantile_of_sorted(const std::vector<double>& sorted, double p, double confidence = kConfidence);

/// What missed its deadline among `counted` frames (or a path's samples): the one definition of a miss, late
/// (completed after the deadline) or dropped (never completed).
struct Misses {
  std::int64_t late = 0, dropped = 0;
  std::int64_t missed() const { return late + dropped; }
  /// Missed as a fraction of `counted` (0 when nothing was counted).
  double rate(std::int64_t counted) const {
    return counted > 0 ? static_cast<double>(missed()) / static_cast<double>(counted) : 0.0;
  }
};
/// Multiplies every value of a summary by `k` (> 0): a summary in other units.
Summary scaled(Summary s, double k);

}  // namespace framesim::analysis
