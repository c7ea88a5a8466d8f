// Statistics of a sample: count, mean, min, max, standard deviation (Boost.Accumulators) and exact
// quantiles from the stored values (nearest rank: the smallest value with at least p of the sample at
// or below it). P-square estimates are not used: p99 of a latency distribution must be exact.
#pragma once

#include <cstddef>
#include <cstdio>
#include <memory>
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
  bool empty() const { return count_ == 0; }
  /// Nearest-rank quantile, p in [0, 1]. Precondition: not empty. Reads the values back (kept until release()).
  double quantile(double p) const;
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
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  static constexpr std::size_t kChunk = 4096;
  void spill();
  void load() const;

  std::vector<double> buffer_;                  // not yet written
  std::unique_ptr<std::FILE, FileCloser> file_;  // what was written (null: nothing yet, or no temporary file)
  std::size_t written_ = 0;
  std::size_t count_ = 0;
  mutable std::vector<double> values_;  // read back
  mutable bool loaded_ = false;
  mutable bool sorted_ = false;
  Acc acc_;
};

/// {count, mean, stddev, min, p50, p90, p99, p99_9, max} in the sample's unit (null fields when empty).
nlohmann::json summary_json(const Summary& s);

}  // namespace framesim::analysis
