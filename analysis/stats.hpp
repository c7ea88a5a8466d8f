// Statistics of a sample: count, mean, min, max, standard deviation (Boost.Accumulators) and exact
// quantiles from the stored values (nearest rank: the smallest value with at least p of the sample at
// or below it). P-square estimates are not used: p99 of a latency distribution must be exact.
#pragma once

#include <cstddef>
#include <vector>

#include <boost/accumulators/accumulators.hpp>
#include <boost/accumulators/statistics/count.hpp>
#include <boost/accumulators/statistics/max.hpp>
#include <boost/accumulators/statistics/mean.hpp>
#include <boost/accumulators/statistics/min.hpp>
#include <boost/accumulators/statistics/stats.hpp>
#include <boost/accumulators/statistics/variance.hpp>
#include <nlohmann/json.hpp>

namespace framesim::analysis {

struct Summary {
  std::size_t count = 0;
  double mean = 0, stddev = 0, min = 0, max = 0;
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0;
};

class Samples {
 public:
  void add(double v);
  std::size_t count() const { return values_.size(); }
  bool empty() const { return values_.empty(); }
  /// Nearest-rank quantile, p in [0, 1]. Precondition: not empty.
  double quantile(double p) const;
  Summary summary() const;
  /// The values, in the order added until the first quantile or sorted() is asked for, sorted from then on.
  const std::vector<double>& values() const { return values_; }
  /// The values in ascending order (sorted in place: a copy would double the peak memory of a long run).
  const std::vector<double>& sorted() const;

 private:
  using Acc = boost::accumulators::accumulator_set<
      double, boost::accumulators::stats<boost::accumulators::tag::count, boost::accumulators::tag::mean,
                                         boost::accumulators::tag::min, boost::accumulators::tag::max,
                                         boost::accumulators::tag::variance>>;
  mutable std::vector<double> values_;  // every sample: quantiles are exact
  mutable bool dirty_ = false;
  Acc acc_;
};

/// {count, mean, stddev, min, p50, p90, p99, p99_9, max} in the sample's unit (null fields when empty).
nlohmann::json summary_json(const Summary& s);

}  // namespace framesim::analysis
