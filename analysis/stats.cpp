#include "stats.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace framesim::analysis {

namespace ba = boost::accumulators;

void Samples::add(double v) {
  if (loaded_) release();
  buffer_.push_back(v);
  ++count_;
  acc_(v);
  if (buffer_.size() >= kChunk) spill();
}

void Samples::spill() {
  if (!file_) file_.reset(std::tmpfile());
  if (!file_) return;  // no temporary file to be had: the values stay in memory
  if (std::fwrite(buffer_.data(), sizeof(double), buffer_.size(), file_.get()) != buffer_.size())
    throw core::UserError("cannot write the statistics' temporary file (is the disk full?)");
  written_ += buffer_.size();
  buffer_.clear();
}

void Samples::load() const {
  if (loaded_) return;
  values_.clear();
  values_.reserve(count_);
  if (file_) {
    values_.resize(written_);
    std::rewind(file_.get());
    if (std::fread(values_.data(), sizeof(double), written_, file_.get()) != written_)
      throw core::UserError("cannot read the statistics' temporary file back");
    std::fseek(file_.get(), 0, SEEK_END);
  }
  values_.insert(values_.end(), buffer_.begin(), buffer_.end());
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
  const double n = static_cast<double>(values.size());
  const auto rank = static_cast<std::size_t>(std::max(1.0, std::ceil(p * n - 1e-9)));
  return values[std::min(rank, values.size()) - 1];
}

Summary Samples::summary() const {
  Summary s;
  s.count = count_;
  if (count_ == 0) return s;
  const bool held = loaded_;
  s.mean = ba::mean(acc_);
  s.stddev = std::sqrt(std::max(0.0, ba::variance(acc_)));
  s.min = ba::min(acc_);
  s.max = ba::max(acc_);
  s.p50 = quantile(0.5);
  s.p90 = quantile(0.9);
  s.p99 = quantile(0.99);
  s.p999 = quantile(0.999);
  if (!held) release();
  return s;
}

nlohmann::json summary_json(const Summary& s) {
  if (s.count == 0) return {{"count", 0}};
  return {{"count", s.count}, {"mean", s.mean}, {"stddev", s.stddev}, {"min", s.min},   {"p50", s.p50},
          {"p90", s.p90},     {"p99", s.p99},   {"p99_9", s.p999},    {"max", s.max}};
}

}  // namespace framesim::analysis
