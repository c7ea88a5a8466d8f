#include "sweep_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "html.hpp"
#include "json_text.hpp"
#include "report_format.hpp"
#include "run_details.hpp"
#include "stats.hpp"
#include "summary_fields.hpp"
#include "svg.hpp"
#include "table.hpp"

namespace framesim::analysis {

using nlohmann::json;

namespace {

/// The number a label starts with ("68 GB/s" -> 68e9), for rank correlations; nullopt when it is not one.
std::optional<double> numeric_label(const std::string& label) {
  for (auto d : {core::Dimension::BytesPerSecond, core::Dimension::Bytes, core::Dimension::Seconds,
                 core::Dimension::Hertz, core::Dimension::Watts, core::Dimension::Celsius,
                 core::Dimension::OpsPerSecond, core::Dimension::KelvinPerWatt, core::Dimension::Ratio}) {
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

/// "p99 95% CI [a, b] from n frames" of a point's metrics (an open end "?").
std::string p99_interval_text(const json& m) {
  auto end = [](const json& v) { return v.is_null() ? std::string("?") : core::format_seconds(v.get<double>()); };
  if (!m.contains("p99_ci_lo_s")) return "";
  return fmt::format("p99 {}% CI [{}, {}] from {}{}", core::format_number(kConfidence * 100, 3), end(m["p99_ci_lo_s"]),
                     end(m["p99_ci_hi_s"]), core::counted(m["p99_count"].get<std::size_t>(), "frame"),
                     m["p99_few_samples"].get<bool>() ? " (too few to bound p99 from above)" : "");
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

json point_metrics(const RunSummary& s) {
  const StatBlock& lat = s.all.latency_s;
  auto put = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  json staleness = nullptr;
  for (const auto& [name, st] : s.staleness_time_s)
    if (st.count > 0) {
      staleness = put(st.p99);
      break;
    }
  return {{"p50_s", put(lat.p50)},
          {"p99_s", put(lat.p99)},
          {"p99_count", lat.count},
          {"p99_ci_lo_s", put(lat.p99_ci_lo())},
          {"p99_ci_hi_s", put(lat.p99_ci_hi())},
          {"p99_few_samples", lat.p99_few_samples()},
          {"deadline_at_confidence", put(s.at_confidence)},
          {"p99_9_s", put(lat.p99_9)},
          {"max_s", put(lat.max)},
          {"sustained_p99_s", put(s.sustained_p99_s)},
          {"frames", s.all.frames},
          {"late", s.all.misses.late},
          {"missed", s.all.misses.missed()},
          {"dropped", s.all.misses.dropped},
          {"miss_rate", s.all.miss_rate},
          {"longest_miss_run", put(s.longest_miss_run)},
          {"staleness_p99_s", staleness},
          {"energy_mean_J", put(s.energy_per_frame_J.mean)},
          {"energy_p99_J", put(s.energy_per_frame_J.p99)},
          {"mean_power_W", s.mean_power_W},
          {"throttled_fraction", s.throttled_fraction},
          {"max_temperature_C", s.has_thermal_model ? put(s.max_temperature_C) : json(nullptr)},
          {"estimate_s", put(s.estimate_end_to_end_s)},
          {"bound_s", put(s.bound_end_to_end_s)},
          {"deadline_s", s.scenario.deadline_s},
          {"meets_deadline", lat.p99 && *lat.p99 <= s.scenario.deadline_s && s.all.misses.dropped == 0}};
}

std::string point_output_text(const PointOutput& p) {
  json j = json::object();
  write_fields(j, p);
  return json_text(j, -1);
}

PointOutput read_point_output(const json& printed, const std::string& file) {
  PointOutput p;
  bool read = true;
  try {
    read_fields(printed, "", file, p);  // refuses a document without metrics, or a time that is not a number
  } catch (const core::UserError&) {
    read = false;
  }
  if (!read || !p.run.wall_s || !p.run.cpu_s)
    throw core::UserError(fmt::format("{}: not what `framesim run --point-metrics` prints", file));
  return p;
}

SweepAnswers answer_sweep(const std::vector<SweepResult>& results, const std::vector<std::string>& axes) {
  SweepAnswers a;
  // Pareto: no other point is at least as good on both p99 and energy (within the tolerance) and better on
  // one (by more than the tolerance).
  std::vector<std::size_t> valid;
  for (std::size_t i = 0; i < results.size(); ++i)
    if (std::isfinite(number_at(results[i].metrics, "p99_s")) &&
        std::isfinite(number_at(results[i].metrics, "energy_mean_J")))
      valid.push_back(i);
  auto no_worse = [](double x, double y) { return x <= y * (1 + kTieTolerance); };
  auto better = [](double x, double y) { return x < y * (1 - kTieTolerance); };
  for (std::size_t i : valid) {
    const double pi = number_at(results[i].metrics, "p99_s"), ei = number_at(results[i].metrics, "energy_mean_J");
    bool dominated = false;
    for (std::size_t j : valid) {
      const double pj = number_at(results[j].metrics, "p99_s"), ej = number_at(results[j].metrics, "energy_mean_J");
      if (no_worse(pj, pi) && no_worse(ej, ei) && (better(pj, pi) || better(ej, ei))) dominated = true;
    }
    if (!dominated) a.pareto.push_back(i);
  }
  std::stable_sort(a.pareto.begin(), a.pareto.end(), [&](std::size_t x, std::size_t y) {
    return number_at(results[x].metrics, "p99_s") < number_at(results[y].metrics, "p99_s");
  });
  // Cheapest: the least energy among points meeting the deadline; energies within the tolerance of it tie,
  // and among those the lowest p99 (the most margin) wins.
  std::vector<std::size_t> meeting;
  for (std::size_t i : valid)
    if (results[i].metrics["meets_deadline"].get<bool>()) meeting.push_back(i);
  double least = INFINITY;
  for (std::size_t i : meeting) least = std::min(least, number_at(results[i].metrics, "energy_mean_J"));
  for (std::size_t i : meeting) {
    if (!no_worse(number_at(results[i].metrics, "energy_mean_J"), least)) continue;
    if (a.cheapest) a.cheapest_ties.push_back(i);
    if (!a.cheapest || number_at(results[i].metrics, "p99_s") < number_at(results[*a.cheapest].metrics, "p99_s")) {
      if (a.cheapest) a.cheapest_ties.back() = *a.cheapest;
      a.cheapest = i;
    }
  }
  std::sort(a.cheapest_ties.begin(), a.cheapest_ties.end());
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
      sum += number_at(results[i].metrics, "p99_s");
      ++count;
      if (auto x = numeric_label(label)) {
        xs.push_back(*x);
        ys.push_back(number_at(results[i].metrics, "p99_s"));
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
    // Axes that move together in every point (a zipped sweep's) are confounded: this spread is theirs together,
    // and no sweep of these points can tell their effects apart.
    json confounded = json::array();
    for (std::size_t j = 0; j < axes.size(); ++j) {
      if (j == k || order.size() < 2) continue;
      std::map<std::string, std::string> forward, backward;
      bool together = true;
      for (std::size_t i : valid) {
        const auto& x = results[i].labels[k];
        const auto& y = results[i].labels[j];
        const auto [f, new_f] = forward.emplace(x, y);
        const auto [b, new_b] = backward.emplace(y, x);
        together = together && (new_f || f->second == y) && (new_b || b->second == x);
      }
      if (together) confounded.push_back(axes[j]);
    }
    if (!confounded.empty()) entry["confounded_with"] = confounded;
    a.sensitivity[axes[k]] = entry;
  }
  return a;
}

namespace {

/// Per axis: every label's value in SI base units, or nothing when some label of the axis is not a quantity.
std::vector<std::optional<std::vector<double>>> axis_values(const std::vector<SweepResult>& results,
                                                            const std::vector<std::string>& axes) {
  std::vector<std::optional<std::vector<double>>> out(axes.size());
  for (std::size_t k = 0; k < axes.size(); ++k) {
    std::vector<double> values;
    for (const auto& r : results) {
      const auto v = numeric_label(r.labels[k]);
      if (!v) break;
      values.push_back(*v);
    }
    if (values.size() == results.size()) out[k] = std::move(values);
  }
  return out;
}

const std::vector<std::string> kColumns{"p50_s",
                                        "p99_s",
                                        "p99_count",
                                        "p99_ci_lo_s",
                                        "p99_ci_hi_s",
                                        "p99_few_samples",
                                        "p99_9_s",
                                        "max_s",
                                        "sustained_p99_s",
                                        "frames",
                                        "missed",
                                        "dropped",
                                        "miss_rate",
                                        "longest_miss_run",
                                        "staleness_p99_s",
                                        "energy_mean_J",
                                        "energy_p99_J",
                                        "mean_power_W",
                                        "throttled_fraction",
                                        "estimate_s",
                                        "bound_s",
                                        "deadline_s",
                                        "meets_deadline",
                                        "deadline_at_confidence",
                                        "late",
                                        "max_temperature_C"};

}  // namespace

std::string sweep_csv(const std::vector<SweepResult>& results, const std::vector<std::string>& axes) {
  auto quote = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  const auto values = axis_values(results, axes);
  std::string out = "index";
  for (const auto& a : axes) out += "," + quote(a) + "," + quote(a + "_label");
  for (const auto& c : kColumns) out += "," + c;
  out += "\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    out += std::to_string(r.index);
    for (std::size_t k = 0; k < axes.size(); ++k)
      out += "," + (values[k] ? fmt::format("{}", (*values[k])[i]) : quote(r.labels[k])) + "," + quote(r.labels[k]);
    for (const auto& c : kColumns) {
      const auto it = r.metrics.find(c);
      out += ",";
      if (it == r.metrics.end()) continue;
      const auto& v = *it;
      if (v.is_boolean()) out += v.get<bool>() ? "1" : "0";
      else if (v.is_number_integer()) out += std::to_string(v.get<std::int64_t>());
      else if (v.is_number()) out += fmt::format("{}", v.get<double>());
      else if (v.is_string()) out += quote(v.get<std::string>());
    }
    out += "\n";
  }
  return out;
}

json sweep_json(const json& sweep, const std::vector<SweepResult>& results, const std::vector<std::string>& axes,
                const SweepAnswers& answers, const json& provenance) {
  const auto values = axis_values(results, axes);
  json points = json::array();
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    json labels = json::object(), numbers = json::object();
    for (std::size_t k = 0; k < axes.size(); ++k) {
      labels[axes[k]] = r.labels[k];
      if (values[k]) numbers[axes[k]] = (*values[k])[i];
    }
    points.push_back({{"index", r.index}, {"axes", labels}, {"values", numbers}, {"metrics", r.metrics}});
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
  json ties = json::array();
  for (auto i : answers.cheapest_ties) ties.push_back(results[i].index);
  if (answers.cheapest) cheapest["ties"] = ties;
  return {{"sweep", sweep},
          {"provenance", provenance},
          {"tie_tolerance", kTieTolerance},
          {"points", points},
          {"pareto", pareto},
          {"cheapest_meeting_deadline", cheapest},
          {"sensitivity", answers.sensitivity}};
}

std::string sweep_svg(const std::string& title, const std::vector<SweepResult>& results, const SweepAnswers& answers,
                      const std::vector<std::string>& axes) {
  double x_hi = 0, y_lo = INFINITY, y_hi = 0, deadline = 0;
  for (const auto& r : results) {
    const double x = number_at(r.metrics, "p99_s"), y = number_at(r.metrics, "energy_mean_J");
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    x_hi = std::max(x_hi, x);
    y_lo = std::min(y_lo, y);
    y_hi = std::max(y_hi, y);
    deadline = number_at(r.metrics, "deadline_s");
  }
  if (!std::isfinite(y_lo)) y_lo = 0, y_hi = 1;
  x_hi = std::max(x_hi, deadline) * 1.1;
  const double pad = (y_hi - y_lo) * 0.1 + y_hi * 1e-3;
  Plot plot(title, Axis{0, x_hi, false, "p99 end-to-end latency", "s"},
            Axis{std::max(0.0, y_lo - pad), y_hi + pad, false, "energy per frame", "J"});
  std::vector<bool> on_front(results.size(), false);
  for (auto i : answers.pareto) on_front[i] = true;
  bool any_drops = false;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const double x = number_at(results[i].metrics, "p99_s"), y = number_at(results[i].metrics, "energy_mean_J");
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    std::string tooltip = fmt::format("point {}: p99 {}, {} per frame", results[i].index, core::format_seconds(x),
                                      core::format_joules(y));
    for (std::size_t k = 0; k < axes.size() && k < results[i].labels.size(); ++k)
      tooltip += fmt::format("; {} = {}", axes[k], results[i].labels[k]);
    // A point that drops frames looks cheaper per frame and faster than it is (its p99 is over the frames that
    // finished): marked apart, its drops in the tooltip.
    const double dropped = number_at(results[i].metrics, "dropped"), frames = number_at(results[i].metrics, "frames");
    const bool drops = std::isfinite(dropped) && dropped > 0;
    if (drops) {
      tooltip += fmt::format("; DROPS {} of {} frames ({})", dropped, frames,
                             core::format_number(frames > 0 ? dropped / frames * 100 : 0, 3) + "%");
      any_drops = true;
    }
    plot.point(x, y,
               drops         ? 4
               : on_front[i] ? 0
                             : 1,
               std::to_string(results[i].index) + (drops ? " (drops)" : ""), tooltip);
  }
  std::vector<std::pair<double, double>> front;
  for (auto i : answers.pareto)
    front.emplace_back(number_at(results[i].metrics, "p99_s"), number_at(results[i].metrics, "energy_mean_J"));
  plot.line(front, 0, "Pareto front");
  if (deadline > 0)
    plot.reference(deadline, Line::vertical, 2, fmt::format("deadline {}", core::format_seconds(deadline)));
  plot.marker_legend(0, "point on the front");
  plot.marker_legend(1, "point");
  if (any_drops) plot.marker_legend(4, "point that drops frames");
  return plot.render();
}

namespace {

/// "confounded with X and Y: they move together in every point, ..."
std::string confounded_text(const json& with) {
  std::vector<std::string> names;
  for (const auto& n : with) names.push_back(n.get<std::string>());
  return fmt::format(
      "confounded with {}: they move together in every point (zipped), so this spread is theirs together and "
      "these points cannot tell their effects apart (a grid can)",
      core::join_list(names, ", "));
}

}  // namespace

std::string sweep_text(const std::string& title, const std::vector<SweepResult>& results,
                       const std::vector<std::string>& axes, const SweepAnswers& answers) {
  std::string out = fmt::format("{}: {}\n\n", title, core::counted(results.size(), "point"));
  std::vector<std::string> header{"point"};
  header.insert(header.end(), axes.begin(), axes.end());
  for (const char* h : {"p99", "energy/frame", "missed", "dropped"}) header.emplace_back(h);
  Table t(header);
  for (auto i : answers.pareto) {
    const auto& r = results[i];
    std::vector<std::string> row{std::to_string(r.index)};
    row.insert(row.end(), r.labels.begin(), r.labels.end());
    row.push_back(core::format_seconds(number_at(r.metrics, "p99_s")));
    row.push_back(core::format_joules(number_at(r.metrics, "energy_mean_J")));
    row.push_back(std::to_string(r.metrics["missed"].get<std::int64_t>()));
    row.push_back(std::to_string(r.metrics["dropped"].get<std::int64_t>()));
    t.add(row);
  }
  out += fmt::format("Pareto front (p99 latency against energy per frame; values within {}% count as ties):\n",
                     core::format_number(kTieTolerance * 100, 3)) +
         t.render(2) + "\n";
  if (answers.cheapest) {
    const auto& r = results[*answers.cheapest];
    std::vector<std::string> parts;
    for (std::size_t k = 0; k < axes.size(); ++k) parts.push_back(axes[k] + " = " + r.labels[k]);
    out += fmt::format(
        "cheapest point meeting the {} deadline at p99 (no drops): point {} ({})\n  {} per frame, p99 {}, "
        "{} to spare\n",
        core::format_seconds(number_at(r.metrics, "deadline_s")), r.index, fmt::join(parts, ", "),
        core::format_joules(number_at(r.metrics, "energy_mean_J")), core::format_seconds(number_at(r.metrics, "p99_s")),
        core::format_seconds(number_at(r.metrics, "deadline_s") - number_at(r.metrics, "p99_s")));
    out += "  " + p99_interval_text(r.metrics) + "\n\n";
    if (!answers.cheapest_ties.empty()) {
      std::vector<std::string> ties;
      for (auto i : answers.cheapest_ties) ties.push_back(std::to_string(results[i].index));
      out += fmt::format("  tied within {}% of its energy (it has the lowest p99 of them): points {}\n\n",
                         core::format_number(kTieTolerance * 100, 3), fmt::join(ties, ", "));
    }
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
    for (const auto& v : s["by_value"])
      values.push_back(
          fmt::format("{}: {}", v["value"].get<std::string>(), core::format_seconds(v["mean_p99_s"].get<double>())));
    out += fmt::format("  {}: {}{} ({})\n", a, core::format_seconds(range),
                       s.contains("spearman")
                           ? fmt::format(", rank correlation {}", core::format_number(s["spearman"].get<double>(), 2))
                           : "",
                       fmt::join(values, "; "));
    if (s.contains("confounded_with")) out += "    " + confounded_text(s["confounded_with"]) + "\n";
  }
  return out;
}

std::string sweep_html(const std::string& title, const std::vector<SweepResult>& results,
                       const std::vector<std::string>& axes, const SweepAnswers& answers, const json& provenance) {
  std::string b = "<h1>framesim " + html::escape(title) + "</h1>\n";
  b += fmt::format("<p class=\"note\">{} points; values within {}% of each other count as ties.</p>\n",
                   html::number("points", std::to_string(results.size())), core::format_number(kTieTolerance * 100, 3));
  b += html::heading("Answer");
  if (answers.cheapest) {
    const auto& r = results[*answers.cheapest];
    std::vector<std::string> parts;
    for (std::size_t k = 0; k < axes.size(); ++k) parts.push_back(axes[k] + " = " + r.labels[k]);
    b += fmt::format(
        "<div class=\"verdict ok\" id=\"verdict\">cheapest point meeting the {} deadline at p99: point {} "
        "({})<br>{} per frame, p99 {}; {}</div>\n",
        core::format_seconds(number_at(r.metrics, "deadline_s")), html::number("cheapest", std::to_string(r.index)),
        html::escape(fmt::format("{}", fmt::join(parts, ", "))),
        core::format_joules(number_at(r.metrics, "energy_mean_J")),
        html::number("cheapest-p99", core::format_seconds(number_at(r.metrics, "p99_s"))),
        html::escape(p99_interval_text(r.metrics)));
  } else {
    b += "<div class=\"verdict bad\" id=\"verdict\">no point meets the deadline at p99 without drops</div>\n";
  }
  b += html::figure(sweep_svg(title, results, answers, axes), "pareto",
                    "p99 latency against energy per frame; every point is labelled with its index, hover it for its "
                    "axis values.");
  b += html::heading("Sensitivity of p99 to each axis");
  std::vector<std::vector<std::string>> sens;
  for (const auto& a : axes) {
    const auto& e = answers.sensitivity[a];
    std::vector<std::string> values;
    for (const auto& v : e["by_value"])
      values.push_back(
          fmt::format("{}: {}", v["value"].get<std::string>(), core::format_seconds(v["mean_p99_s"].get<double>())));
    sens.push_back({a, core::format_seconds(e["p99_range_s"].get<double>()),
                    e.contains("spearman") ? core::format_number(e["spearman"].get<double>(), 2) : "-",
                    fmt::format("{}", fmt::join(values, "; ")),
                    e.contains("confounded_with") ? confounded_text(e["confounded_with"]) : ""});
  }
  b += html::table({"axis", "spread of mean p99", "rank correlation", "mean p99 by value", "confounded"}, sens);
  b += html::heading("Every point");
  std::vector<std::string> header{"point"};
  header.insert(header.end(), axes.begin(), axes.end());
  for (const char* h :
       {"p99", "p99 95% CI", "n", "energy/frame", "missed", "dropped", "throttled", "max temperature", "front"})
    header.emplace_back(h);
  std::vector<bool> on_front(results.size(), false);
  for (auto i : answers.pareto) on_front[i] = true;
  std::vector<std::vector<std::string>> rows;
  auto end = [](const json& v) { return v.is_null() ? std::string("?") : core::format_seconds(v.get<double>()); };
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    std::vector<std::string> row{std::to_string(r.index)};
    row.insert(row.end(), r.labels.begin(), r.labels.end());
    const auto& m = r.metrics;
    row.push_back(m["p99_s"].is_null() ? "-"
                                       : core::format_seconds(m["p99_s"].get<double>()) +
                                             (m.value("p99_few_samples", false) ? "*" : ""));
    row.push_back(m.contains("p99_ci_lo_s") ? fmt::format("[{}, {}]", end(m["p99_ci_lo_s"]), end(m["p99_ci_hi_s"]))
                                            : "-");
    row.push_back(m.contains("p99_count") ? std::to_string(m["p99_count"].get<std::size_t>()) : "-");
    row.push_back(std::isfinite(number_at(m, "energy_mean_J")) ? core::format_joules(number_at(m, "energy_mean_J"))
                                                               : "-");
    row.push_back(std::to_string(m["missed"].get<std::int64_t>()));
    row.push_back(std::to_string(m["dropped"].get<std::int64_t>()));
    row.push_back(m.contains("throttled_fraction") && m["throttled_fraction"].is_number()
                      ? core::format_number(m["throttled_fraction"].get<double>() * 100, 3) + "%"
                      : "-");
    row.push_back(m.contains("max_temperature_C") && m["max_temperature_C"].is_number()
                      ? core::format_number(m["max_temperature_C"].get<double>(), 3) + " C"
                      : "-");
    row.emplace_back(on_front[i] ? "yes" : "");
    rows.push_back(row);
  }
  b += html::table(header, rows);
  b += "<p class=\"note\">* too few frames to bound p99 from above at 95%.</p>\n";
  Provenance p;
  if (provenance.is_object()) read_fields(provenance, "/provenance", "the sweep's provenance", p);
  if (!p.framesim_version.empty()) {
    std::string line;
    for (const auto& a : p.command_line) line += (line.empty() ? "" : " ") + a;
    b += html::heading("Provenance") + "<p><code>" + html::escape(line) + "</code></p>\n";
    std::vector<std::vector<std::string>> inputs;
    for (const InputFile& in : p.inputs) inputs.push_back({in.file, in.sha256});
    b += html::table({"input file", "SHA-256"}, inputs);
  }
  return html::page("framesim " + title, b);
}

}  // namespace framesim::analysis
