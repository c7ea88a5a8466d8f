// One statistic block of summary.json (count, mean, percentiles, their intervals), as every output file writes
// a statistic.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "stats.hpp"

namespace framesim::analysis {

/// One statistic block of summary.json, in the sample's unit: only `count` when it holds no samples.
struct StatBlock {
  /// A percentile's confidence interval; an end is empty when the sample cannot bound it.
  struct Interval {
    std::optional<double> lo, hi;
  };
  std::int64_t count = 0;
  std::optional<double> mean, stddev, min, p50, p90, p99, p99_9, max;
  std::map<std::string, Interval> ci;    // per percentile ("p50", "p90", "p99", "p99_9"), when given
  std::optional<double> confidence;      // of those intervals
  std::vector<std::string> few_samples;  // statistics with too few samples to bound from above
  bool p99_few_samples() const;
  std::optional<double> p99_ci_lo() const;
  std::optional<double> p99_ci_hi() const;
};

/// The name summary.json gives the statistic `which` of a block ("p99" for &StatBlock::p99): its key, and how
/// its interval (`ci`) and `few_samples` name it.
const char* percentile_name(std::optional<double> StatBlock::*which);

/// The block of a summary: {count, mean, stddev, min, p50, p90, p99, p99_9, max, ci, confidence, few_samples}.
StatBlock stat_block(const Summary& s);
/// `s` as summary.json writes every statistic (only {"count": 0} when empty).
nlohmann::json stat_json(const StatBlock& s);
/// stat_json(stat_block(s)): how every statistic of every output file is written.
nlohmann::json summary_json(const Summary& s);

}  // namespace framesim::analysis
