#include "sweep_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "core/units.hpp"
#include "svg.hpp"
#include "table.hpp"

namespace framesim::analysis {

using nlohmann::json;

namespace {

double number(const json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? std::nan("") : it->get<double>();
}

/// The number a label starts with ("68 GB/s" -> 68e9), for rank correlations; nullopt when it is not one.
std::optional<double> numeric_label(const std::string& label) {
  for (auto d : {core::Dimension::BytesPerSecond, core::Dimension::Bytes, core::Dimension::Seconds,
                 core::Dimension::Hertz, core::Dimension::Watts, core::Dimension::Celsius, core::Dimension::OpsPerSecond,
                 core::Dimension::KelvinPerWatt, core::Dimension::Ratio}) {
    auto q = core::parse_quantity(label, d);
    if (q.value) return q.value;
  }
  return std::nullopt;
}

/// Ranks with ties sharing the mean rank.
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double mean = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = mean;
    i = j + 1;
  }
  return r;
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  const auto rx = ranks(x), ry = ranks(y);
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(rx.begin(), rx.end(), 0.0) / n, my = std::accumulate(ry.begin(), ry.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0.0;
}

}  // namespace

json point_metrics(const json& summary) {
  const auto& all = summary["windows"]["all"];
  const auto& lat = all["latency_s"];
  auto get = [](const json& j, const char* key) { return j.contains(key) ? j[key] : json(nullptr); };
  json staleness = nullptr;
  for (const auto& [name, s] : summary["staleness"].items())
    if (s["time_s"]["count"].get<std::size_t>() > 0) {
      staleness = s["time_s"]["p99"];
      break;
    }
  const auto& v = summary["verdict"];
  const double deadline = summary["scenario"]["deadline_s"].get<double>();
  const json p99 = get(lat, "p99");
  return {{"p50_s", get(lat, "p50")},
          {"p99_s", p99},
          {"p99_9_s", get(lat, "p99_9")},
          {"max_s", get(lat, "max")},
          {"sustained_p99_s", get(v, "sustained_p99_s")},
          {"frames", all["frames"]},
          {"missed", all["missed"]},
          {"dropped", all["dropped"]},
          {"miss_rate", all["miss_rate"]},
          {"longest_miss_run", summary["frames"]["longest_miss_run"]},
          {"staleness_p99_s", staleness},
          {"energy_mean_J", get(summary["energy"]["per_frame_J"], "mean")},
          {"energy_p99_J", get(summary["energy"]["per_frame_J"], "p99")},
          {"mean_power_W", summary["energy"]["mean_power_W"]},
          {"throttled_fraction", summary["thermal"]["throttled_fraction"]},
          {"estimate_s", get(v, "estimate_end_to_end_s")},
          {"bound_s", get(v, "bound_end_to_end_s")},
          {"deadline_s", deadline},
          {"meets_deadline", !p99.is_null() && p99.get<double>() <= deadline &&
                                 all["dropped"].get<std::int64_t>() == 0}};
}

SweepAnswers answer_sweep(const std::vector<SweepResult>& results, const std::vector<std::string>& axes) {
  SweepAnswers a;
  // Pareto: no other point is at least as good on both p99 and energy and better on one.
  std::vector<std::size_t> valid;
  for (std::size_t i = 0; i < results.size(); ++i)
    if (std::isfinite(number(results[i].metrics, "p99_s")) && std::isfinite(number(results[i].metrics, "energy_mean_J")))
      valid.push_back(i);
  for (std::size_t i : valid) {
    const double pi = number(results[i].metrics, "p99_s"), ei = number(results[i].metrics, "energy_mean_J");
    bool dominated = false;
    for (std::size_t j : valid) {
      const double pj = number(results[j].metrics, "p99_s"), ej = number(results[j].metrics, "energy_mean_J");
      if (pj <= pi && ej <= ei && (pj < pi || ej < ei)) dominated = true;
    }
    if (!dominated) a.pareto.push_back(i);
  }
  std::sort(a.pareto.begin(), a.pareto.end(), [&](std::size_t x, std::size_t y) {
    return number(results[x].metrics, "p99_s") < number(results[y].metrics, "p99_s");
  });
  for (std::size_t i : valid) {
    if (!results[i].metrics["meets_deadline"].get<bool>()) continue;
    if (!a.cheapest || number(results[i].metrics, "energy_mean_J") < number(results[*a.cheapest].metrics, "energy_mean_J"))
      a.cheapest = i;
  }
  // Sensitivity: p99 by each axis value (mean over the other axes), its spread, and a rank correlation.
  a.sensitivity = json::object();
  for (std::size_t k = 0; k < axes.size(); ++k) {
    std::map<std::string, std::pair<double, int>> by_value;
    std::vector<std::string> order;
    std::vector<double> xs, ys;
    bool numeric = true;
    for (std::size_t i : valid) {
      const auto& label = results[i].labels[k];
      if (!by_value.count(label)) order.push_back(label);
      auto& [sum, count] = by_value[label];
      sum += number(results[i].metrics, "p99_s");
      ++count;
      if (auto x = numeric_label(label)) {
        xs.push_back(*x);
        ys.push_back(number(results[i].metrics, "p99_s"));
      } else {
        numeric = false;
      }
    }
    json values = json::array();
    double lo = INFINITY, hi = -INFINITY;
    for (const auto& label : order) {
      const double mean = by_value[label].first / by_value[label].second;
      lo = std::min(lo, mean);
      hi = std::max(hi, mean);
      values.push_back({{"value", label}, {"mean_p99_s", mean}, {"points", by_value[label].second}});
    }
    json entry{{"by_value", values}, {"p99_range_s", order.empty() ? 0.0 : hi - lo}};
    if (numeric && xs.size() > 2) entry["spearman"] = spearman(xs, ys);
    a.sensitivity[axes[k]] = entry;
  }
  return a;
}

std::string sweep_csv(const std::vector<SweepResult>& results, const std::vector<std::string>& axes) {
  static const std::vector<std::string> kColumns{"p50_s",     "p99_s",        "p99_9_s",       "max_s",
                                                 "sustained_p99_s", "frames",  "missed",        "dropped",
                                                 "miss_rate", "longest_miss_run", "staleness_p99_s", "energy_mean_J",
                                                 "energy_p99_J", "mean_power_W", "throttled_fraction", "estimate_s", "bound_s",
                                                 "deadline_s", "meets_deadline"};
  auto quote = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  std::string out = "index";
  for (const auto& a : axes) out += "," + quote(a);
  for (const auto& c : kColumns) out += "," + c;
  out += "\n";
  for (const auto& r : results) {
    out += std::to_string(r.index);
    for (const auto& l : r.labels) out += "," + quote(l);
    for (const auto& c : kColumns) {
      const auto& v = r.metrics[c];
      out += ",";
      if (v.is_boolean()) out += v.get<bool>() ? "1" : "0";
      else if (v.is_number_integer()) out += std::to_string(v.get<std::int64_t>());
      else if (v.is_number()) out += fmt::format("{}", v.get<double>());
    }
    out += "\n";
  }
  return out;
}

json sweep_json(const json& sweep, const std::vector<SweepResult>& results, const std::vector<std::string>& axes,
                const SweepAnswers& answers) {
  json points = json::array();
  for (const auto& r : results) {
    json labels = json::object();
    for (std::size_t k = 0; k < axes.size(); ++k) labels[axes[k]] = r.labels[k];
    points.push_back({{"index", r.index}, {"axes", labels}, {"metrics", r.metrics}});
  }
  json pareto = json::array();
  for (auto i : answers.pareto) pareto.push_back(results[i].index);
  json cheapest = nullptr;
  if (answers.cheapest) {
    const auto& m = results[*answers.cheapest].metrics;
    cheapest = {{"index", results[*answers.cheapest].index},
                {"energy_mean_J", m["energy_mean_J"]},
                {"p99_s", m["p99_s"]},
                {"margin_s", m["deadline_s"].get<double>() - m["p99_s"].get<double>()}};
  }
  return {{"sweep", sweep}, {"points", points}, {"pareto", pareto}, {"cheapest_meeting_deadline", cheapest},
          {"sensitivity", answers.sensitivity}};
}

std::string sweep_svg(const std::string& title, const std::vector<SweepResult>& results, const SweepAnswers& answers) {
  double x_hi = 0, y_lo = INFINITY, y_hi = 0, deadline = 0;
  for (const auto& r : results) {
    const double x = number(r.metrics, "p99_s"), y = number(r.metrics, "energy_mean_J");
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    x_hi = std::max(x_hi, x);
    y_lo = std::min(y_lo, y);
    y_hi = std::max(y_hi, y);
    deadline = number(r.metrics, "deadline_s");
  }
  if (!std::isfinite(y_lo)) y_lo = 0, y_hi = 1;
  x_hi = std::max(x_hi, deadline) * 1.1;
  const double pad = (y_hi - y_lo) * 0.1 + y_hi * 1e-3;
  Plot plot(title, Axis{0, x_hi, false, "p99 end-to-end latency", "s"},
            Axis{std::max(0.0, y_lo - pad), y_hi + pad, false, "energy per frame", "J"});
  std::vector<bool> on_front(results.size(), false);
  for (auto i : answers.pareto) on_front[i] = true;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const double x = number(results[i].metrics, "p99_s"), y = number(results[i].metrics, "energy_mean_J");
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    std::string label = std::to_string(results[i].index);
    plot.point(x, y, on_front[i] ? 0 : 1, on_front[i] ? label : "");
  }
  std::vector<std::pair<double, double>> front;
  for (auto i : answers.pareto) front.emplace_back(number(results[i].metrics, "p99_s"), number(results[i].metrics, "energy_mean_J"));
  plot.line(front, 0, "Pareto front");
  if (deadline > 0) plot.reference(deadline, true, 2, fmt::format("deadline {}", core::format_seconds(deadline)));
  plot.marker_legend(0, "point on the front");
  plot.marker_legend(1, "point");
  return plot.render();
}

std::string sweep_text(const std::string& title, const std::vector<SweepResult>& results,
                       const std::vector<std::string>& axes, const SweepAnswers& answers) {
  std::string out = fmt::format("{}: {} points\n\n", title, results.size());
  std::vector<std::string> header{"point"};
  header.insert(header.end(), axes.begin(), axes.end());
  for (const char* h : {"p99", "energy/frame", "missed", "dropped"}) header.emplace_back(h);
  Table t(header);
  for (auto i : answers.pareto) {
    const auto& r = results[i];
    std::vector<std::string> row{std::to_string(r.index)};
    row.insert(row.end(), r.labels.begin(), r.labels.end());
    row.push_back(core::format_seconds(number(r.metrics, "p99_s")));
    row.push_back(core::format_joules(number(r.metrics, "energy_mean_J")));
    row.push_back(std::to_string(r.metrics["missed"].get<std::int64_t>()));
    row.push_back(std::to_string(r.metrics["dropped"].get<std::int64_t>()));
    t.add(row);
  }
  out += "Pareto front (p99 latency against energy per frame):\n" + t.render(2) + "\n";
  if (answers.cheapest) {
    const auto& r = results[*answers.cheapest];
    std::vector<std::string> parts;
    for (std::size_t k = 0; k < axes.size(); ++k) parts.push_back(axes[k] + " = " + r.labels[k]);
    out += fmt::format("cheapest point meeting the {} deadline at p99 (no drops): point {} ({})\n  {} per frame, p99 {}, "
                       "{} to spare\n\n",
                       core::format_seconds(number(r.metrics, "deadline_s")), r.index, fmt::join(parts, ", "),
                       core::format_joules(number(r.metrics, "energy_mean_J")), core::format_seconds(number(r.metrics, "p99_s")),
                       core::format_seconds(number(r.metrics, "deadline_s") - number(r.metrics, "p99_s")));
  } else {
    out += "no point meets the deadline at p99 without drops\n\n";
  }
  out += "sensitivity of p99 to each axis (spread of its mean over each axis' values):\n";
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& a : axes) ranked.emplace_back(answers.sensitivity[a]["p99_range_s"].get<double>(), a);
  std::sort(ranked.rbegin(), ranked.rend());
  for (const auto& [range, a] : ranked) {
    const auto& s = answers.sensitivity[a];
    std::vector<std::string> values;
    for (const auto& v : s["by_value"]) values.push_back(fmt::format("{}: {}", v["value"].get<std::string>(),
                                                                     core::format_seconds(v["mean_p99_s"].get<double>())));
    out += fmt::format("  {}: {}{} ({})\n", a, core::format_seconds(range),
                       s.contains("spearman") ? fmt::format(", rank correlation {}", core::format_number(s["spearman"].get<double>(), 2)) : "",
                       fmt::join(values, "; "));
  }
  return out;
}

}  // namespace framesim::analysis
