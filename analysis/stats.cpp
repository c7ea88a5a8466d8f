#include "stats.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace framesim::analysis {

namespace ba = boost::accumulators;

void Samples::add(double v) {
  values_.push_back(v);
  acc_(v);
  dirty_ = true;
}

const std::vector<double>& Samples::sorted() const {
  if (dirty_) {
    std::sort(values_.begin(), values_.end());
    dirty_ = false;
  }
  return values_;
}

double Samples::quantile(double p) const {
  FRAMESIM_ASSERT(!values_.empty(), "quantile of an empty sample");
  const auto& values = sorted();
  const double n = static_cast<double>(values.size());
  const auto rank = static_cast<std::size_t>(std::max(1.0, std::ceil(p * n - 1e-9)));
  return values[std::min(rank, values.size()) - 1];
}

Summary Samples::summary() const {
  Summary s;
  s.count = values_.size();
  if (values_.empty()) return s;
  s.mean = ba::mean(acc_);
  s.stddev = std::sqrt(std::max(0.0, ba::variance(acc_)));
  s.min = ba::min(acc_);
  s.max = ba::max(acc_);
  s.p50 = quantile(0.5);
  s.p90 = quantile(0.9);
  s.p99 = quantile(0.99);
  s.p999 = quantile(0.999);
  return s;
}

nlohmann::json summary_json(const Summary& s) {
  if (s.count == 0) return {{"count", 0}};
  return {{"count", s.count}, {"mean", s.mean}, {"stddev", s.stddev}, {"min", s.min},   {"p50", s.p50},
          {"p90", s.p90},     {"p99", s.p99},   {"p99_9", s.p999},    {"max", s.max}};
}

}  // namespace framesim::analysis
