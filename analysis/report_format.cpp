#include "report_format.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/text.hpp"
#include "core/units.hpp"
#include "stats.hpp"

namespace framesim::analysis {

double number_at(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? std::nan("") : it->get<double>();
}

namespace {

std::string end_text(const std::optional<double>& v) { return v ? core::format_seconds(*v) : "?"; }

/// Samples needed to bound the p-quantile from above at the confidence: 1 - p^n >= 1 - alpha/2.
long samples_needed(double p) { return static_cast<long>(std::ceil(std::log((1 - kConfidence) / 2) / std::log(p))); }

}  // namespace

std::string format_percentile_s(const StatBlock& s, std::optional<double> StatBlock::*which) {
  const std::optional<double>& v = s.*which;
  if (!v) return "-";
  const auto& few = s.few_samples;
  return core::format_seconds(*v) + (std::find(few.begin(), few.end(), percentile_name(which)) != few.end() ? "*" : "");
}

std::string format_interval_s(const StatBlock& s, std::optional<double> StatBlock::*which) {
  const auto ci = s.ci.find(percentile_name(which));
  if (ci == s.ci.end()) return "-";
  return fmt::format("[{}, {}]", end_text(ci->second.lo), end_text(ci->second.hi));
}

std::vector<std::string> percentile_cells(const std::string& name, const StatBlock& s) {
  if (s.count == 0) return {name, "0", "-", "-", "-", "-", "-", "-", "-"};
  return {name,
          std::to_string(s.count),
          format_percentile_s(s, &StatBlock::p50),
          format_percentile_s(s, &StatBlock::p90),
          format_percentile_s(s, &StatBlock::p99),
          format_interval_s(s, &StatBlock::p99),
          format_percentile_s(s, &StatBlock::p99_9),
          core::format_seconds(s.max.value()),
          core::format_seconds(s.mean.value())};
}

std::vector<std::string> percentile_header(const std::string& first) {
  return {first, "n", "p50", "p90", "p99", "p99 95% CI", "p99.9", "max", "mean"};
}

std::string percentile_footnote() {
  return fmt::format(
      "percentiles are nearest-rank over the counted frames, intervals {}% distribution-free (order "
      "statistics); * too few samples to bound it from above (p99 needs {}, p99.9 needs {})",
      core::format_number(kConfidence * 100, 3), samples_needed(0.99), samples_needed(0.999));
}

std::string format_resolved_s(double seconds) {
  const double rounded = std::round(seconds / kTimeResolution_s) * kTimeResolution_s;
  return core::format_seconds(rounded == 0 ? 0.0 : rounded);
}

std::string confidence_sentence(const std::optional<std::string>& at_confidence,
                                const std::optional<QuantileDetails>& sustained_p99,
                                const std::optional<double>& confidence) {
  if (!at_confidence || !sustained_p99 || !confidence) return "";
  const QuantileDetails& q = *sustained_p99;
  const std::string interval = fmt::format("[{}, {}]", end_text(q.ci.lo), end_text(q.ci.hi));
  const std::string percent = core::format_number(*confidence * 100, 3) + "%";
  const std::string& at = *at_confidence;
  const std::string n = core::counted(q.count, "frame");
  if (at == "met")
    return fmt::format("met at {} confidence: p99 {} from {} is below the deadline", percent, interval, n);
  if (at == "missed")
    return fmt::format("missed at {} confidence: p99 {} from {} is above the deadline", percent, interval, n);
  return fmt::format("undecided at {} confidence: the deadline lies within p99 {} from {}{}", percent, interval, n,
                     q.few_samples ? " (too few frames to bound p99 from above: run longer)" : "");
}

}  // namespace framesim::analysis
