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

bool few(const nlohmann::json& summary, const std::string& key) {
  const auto it = summary.find("few_samples");
  return it != summary.end() && std::find(it->begin(), it->end(), key) != it->end();
}

std::string end_text(const nlohmann::json& v) { return v.is_null() ? "?" : core::format_seconds(v.get<double>()); }

/// Samples needed to bound the p-quantile from above at the confidence: 1 - p^n >= 1 - alpha/2.
long samples_needed(double p) { return static_cast<long>(std::ceil(std::log((1 - kConfidence) / 2) / std::log(p))); }

}  // namespace

std::string format_percentile_s(const nlohmann::json& summary, const std::string& key) {
  if (!summary.contains(key) || summary[key].is_null()) return "-";
  return core::format_seconds(summary[key].get<double>()) + (few(summary, key) ? "*" : "");
}

std::string format_interval_s(const nlohmann::json& summary, const std::string& key) {
  if (!summary.contains("ci") || !summary["ci"].contains(key)) return "-";
  const auto& ci = summary["ci"][key];
  return fmt::format("[{}, {}]", end_text(ci[0]), end_text(ci[1]));
}

std::vector<std::string> percentile_cells(const std::string& name, const nlohmann::json& s) {
  if (s["count"].get<std::size_t>() == 0) return {name, "0", "-", "-", "-", "-", "-", "-", "-"};
  return {name,
          std::to_string(s["count"].get<std::size_t>()),
          format_percentile_s(s, "p50"),
          format_percentile_s(s, "p90"),
          format_percentile_s(s, "p99"),
          format_interval_s(s, "p99"),
          format_percentile_s(s, "p99_9"),
          core::format_seconds(s["max"].get<double>()),
          core::format_seconds(s["mean"].get<double>())};
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

std::string confidence_sentence(const nlohmann::json& verdict) {
  if (!verdict.contains("at_confidence")) return "";
  const auto& q = verdict["sustained_p99"];
  const std::string interval = fmt::format("[{}, {}]", end_text(q["ci"][0]), end_text(q["ci"][1]));
  const std::string percent = core::format_number(verdict["confidence"].get<double>() * 100, 3) + "%";
  const std::string at = verdict["at_confidence"].get<std::string>();
  const std::string n = core::counted(q["count"].get<std::size_t>(), "frame");
  if (at == "met")
    return fmt::format("met at {} confidence: p99 {} from {} is below the deadline", percent, interval, n);
  if (at == "missed")
    return fmt::format("missed at {} confidence: p99 {} from {} is above the deadline", percent, interval, n);
  return fmt::format("undecided at {} confidence: the deadline lies within p99 {} from {}{}", percent, interval, n,
                     q["few_samples"].get<bool>() ? " (too few frames to bound p99 from above: run longer)" : "");
}

}  // namespace framesim::analysis
