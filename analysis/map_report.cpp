#include "map_report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/text.hpp"
#include "core/units.hpp"
#include "html.hpp"
#include "report_format.hpp"
#include "summary_fields.hpp"

namespace framesim::analysis {

using nlohmann::json;

namespace {

std::string seconds(double s) { return std::isfinite(s) ? core::format_seconds(s) : std::string("-"); }
std::string joules(double j) { return std::isfinite(j) ? core::format_joules(j) : std::string("-"); }

std::vector<SweepResult> results_of(const MapReport& r) {
  std::vector<SweepResult> out;
  for (const auto& row : r.rows) out.push_back(row.result);
  return out;
}

std::string verdict_of(const json& m) {
  if (m.value("meets_deadline", false)) return "meets";
  if (m.value("dropped", 0) > 0) return fmt::format("misses ({} dropped)", m["dropped"].get<std::int64_t>());
  return "misses";
}

/// Seconds of a part of the tail's mean parts, 0 without a tail.
double part(const std::optional<TailDetails>& tail, double LatencyParts::*which) {
  return tail ? tail->mean_parts.*which : 0;
}

/// Seconds per item the stages' hand-off side work (reformats, launches on a host: model/handoff.hpp) took
/// beyond its time alone, summed over the stages (handoff x alone_s), 0 without a slowdown.
double handoff_excess(const std::optional<std::map<std::string, StageSlowdown>>& slowdown) {
  double s = 0;
  if (!slowdown) return 0;
  for (const auto& [name, st] : *slowdown) s += st.handoff * st.alone_s;
  return s;
}

}  // namespace

SweepAnswers map_answers(const MapReport& r) { return answer_sweep(results_of(r), r.stages); }

std::vector<std::string> why_wins(const MapRow& winner, const MapRow& baseline) {
  std::vector<std::string> out;
  const auto& w = winner.result.metrics;
  const auto& b = baseline.result.metrics;
  out.push_back(fmt::format("against {} ({}): worst-path p99 {} vs {}, energy per frame {} vs {}, {} vs {}",
                            baseline.role, baseline.label, seconds(number_at(w, "p99_s")),
                            seconds(number_at(b, "p99_s")), joules(number_at(w, "energy_mean_J")),
                            joules(number_at(b, "energy_mean_J")), verdict_of(w), verdict_of(b)));
  const auto& wt = winner.why.tail;
  const auto& bt = baseline.why.tail;
  struct Named {
    double LatencyParts::*part;
    const char* what;
  };
  std::vector<std::pair<double, std::string>> changes;
  for (const Named& n :
       {Named{&LatencyParts::queue_s, "queueing"}, Named{&LatencyParts::blocked_s, "blocking by higher priorities"},
        Named{&LatencyParts::floor_s, "the floor (work at full clocks: nominal, or the clock cap)"},
        Named{&LatencyParts::throttling_s, "throttling"}, Named{&LatencyParts::bus_s, "the bus (memory contention)"},
        Named{&LatencyParts::gap_s, "gaps between stages"}}) {
    const double dw = part(wt, n.part), db = part(bt, n.part);
    changes.emplace_back(db - dw, fmt::format("{}: {} -> {}", n.what, seconds(db), seconds(dw)));
  }
  std::stable_sort(changes.begin(), changes.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  if (wt && bt) {
    std::vector<std::string> lines;
    for (const auto& [gain, text] : changes)
      if (std::abs(gain) > 1e-9) lines.push_back(text);
    if (!lines.empty())
      out.push_back(
          "in the sustained window's tail (its frames at or above its p99: the window the metric judges), "
          "per frame, largest saving first: " +
          core::join_list(lines, "; "));
    const double hw = handoff_excess(winner.why.slowdown), hb = handoff_excess(baseline.why.slowdown);
    if (hw > 0 || hb > 0)
      out.push_back(fmt::format(
          "hand-offs (reformats, launches on a host) waiting beyond their time alone, summed over the stages per "
          "item: {} -> {}",
          seconds(hb), seconds(hw)));
    out.push_back(fmt::format("the stage that dominates the tail: {} -> {}", bt->critical_stage, wt->critical_stage));
  }
  const double thw = winner.why.throttled_fraction, thb = baseline.why.throttled_fraction;
  if (thw > 0 || thb > 0)
    out.push_back(fmt::format("time throttled over the whole run: {:.1f} % -> {:.1f} %", 100 * thb, 100 * thw));
  return out;
}

std::string map_text(const MapReport& r, const SweepAnswers& answers) {
  std::string t = fmt::format("framesim {}\n\n", r.title);
  t += fmt::format(
      "   space: {} mappings; the static pass kept {}; simulated {} ({}){}\n", core::format_number(r.space_size, 6),
      r.static_kept, r.simulations, r.strategy,
      static_cast<double>(r.simulations) < r.space_size
          ? fmt::format(": {} of the space",
                        core::format_number(100 * static_cast<double>(r.simulations) / r.space_size, 3) + " %")
          : std::string());
  t += fmt::format("   objective: {}\n\n", r.objective == "energy"
                                               ? "least energy per frame with every path's sustained p99 within the "
                                                 "deadline, no drops"
                                               : "least worst-path sustained p99");
  t += fmt::format("   {:<22} {:>11} {:>13}  {:<10} {}\n", "", "worst p99", "energy/frame", "verdict", "mapping");
  auto row_line = [&](const MapRow& row, const std::string& role) {
    const auto& m = row.result.metrics;
    return fmt::format("   {:<22} {:>11} {:>13}  {:<10} {}\n", role, seconds(number_at(m, "p99_s")),
                       joules(number_at(m, "energy_mean_J")), verdict_of(m), row.label);
  };
  if (r.best) t += row_line(r.rows[*r.best], "best");
  for (const auto& [role, i] : r.baselines) t += row_line(r.rows[i], role);
  if (r.best) {
    t += "\n   why it wins:\n";
    for (const auto& w : r.why) t += "     " + w + "\n";
  }
  t += fmt::format("\n   Pareto front (worst-path p99 against energy per frame): {} mapping{}\n", answers.pareto.size(),
                   answers.pareto.size() == 1 ? "" : "s");
  for (auto i : answers.pareto) t += row_line(r.rows[i], fmt::format("#{}", r.rows[i].result.index));
  if (!r.best_file.empty()) t += fmt::format("\n   best mapping written to {}{}\n", r.best_file, r.reproduced);
  return t;
}

json map_json(const MapReport& r, const SweepAnswers& answers) {
  json rows = json::array();
  for (const auto& row : r.rows) {
    json metrics = row.result.metrics;
    write_fields(metrics, row.why);
    rows.push_back({{"index", row.result.index},
                    {"mapping", row.label},
                    {"role", row.role},
                    {"choices", row.result.labels},
                    {"run", row.run},
                    {"metrics", metrics}});
  }
  json front = json::array();
  for (auto i : answers.pareto) front.push_back(r.rows[i].result.index);
  return {{"title", r.title},
          {"objective", r.objective},
          {"space_size", r.space_size},
          {"static_kept", r.static_kept},
          {"simulations", r.simulations},
          {"strategy", r.strategy},
          {"stages", r.stages},
          {"best", r.best ? json(r.rows[*r.best].result.index) : json(nullptr)},
          {"best_file", r.best_file},
          {"why", r.why},
          {"pareto", front},
          {"mappings", rows},
          {"provenance", r.provenance}};
}

std::string map_csv(const MapReport& r) {
  std::string out = "index,role";
  for (const auto& s : r.stages) out += "," + s;
  out += ",worst_p99_s,energy_mean_J,dropped,meets_deadline,max_utilisation,worst_path_floor_s,static_energy_J\n";
  for (const auto& row : r.rows) {
    const auto& m = row.result.metrics;
    out += fmt::format("{},\"{}\"", row.result.index, row.role);  // roles are joined by ", "
    for (const auto& l : row.result.labels) out += "," + l;
    auto cell = [&](const char* key) {
      const double v = number_at(m, key);
      return std::isfinite(v) ? fmt::format("{}", v) : std::string();
    };
    const json st = m.value("static", json::object());
    out += fmt::format(",{},{},{},{},{},{},{}\n", cell("p99_s"), cell("energy_mean_J"), m.value("dropped", 0),
                       m.value("meets_deadline", false) ? "true" : "false", number_at(st, "max_utilisation"),
                       number_at(st, "worst_path_floor_s"), number_at(st, "energy_per_frame_J"));
  }
  return out;
}

std::string map_html(const MapReport& r, const SweepAnswers& answers) {
  std::string b = "<h1>framesim " + html::escape(r.title) + "</h1>\n";
  b += fmt::format(
      "<p class=\"note\">{} mappings in the space; the static pass (utilisation at most 1 per unit, every path's "
      "floor within the deadline) kept {}; {} simulated ({}).</p>\n",
      html::number("space", core::format_number(r.space_size, 6)), r.static_kept,
      html::number("simulations", std::to_string(r.simulations)), html::escape(r.strategy));
  b += html::heading("Answer");
  if (r.best) {
    const auto& row = r.rows[*r.best];
    b += fmt::format("<div class=\"verdict {}\" id=\"verdict\">best: {}<br>worst-path p99 {}, {} per frame; {}</div>\n",
                     row.result.metrics.value("meets_deadline", false) ? "ok" : "bad", html::escape(row.label),
                     html::number("best-p99", seconds(number_at(row.result.metrics, "p99_s"))),
                     joules(number_at(row.result.metrics, "energy_mean_J")), html::escape(r.best_file));
    std::string why = "<ul>";
    for (const auto& w : r.why) why += "<li>" + html::escape(w) + "</li>";
    b += why + "</ul>\n";
  }
  b += html::heading("Baselines side by side");
  std::vector<std::vector<std::string>> base;
  auto add = [&](const MapRow& row, const std::string& role) {
    base.push_back({role, row.label, seconds(number_at(row.result.metrics, "p99_s")),
                    joules(number_at(row.result.metrics, "energy_mean_J")), verdict_of(row.result.metrics)});
  };
  if (r.best) add(r.rows[*r.best], "best");
  for (const auto& [role, i] : r.baselines) add(r.rows[i], role);
  b += html::table({"", "mapping", "worst-path p99", "energy/frame", "verdict"}, base);
  b += html::figure(sweep_svg(r.title, results_of(r), answers, r.stages), "pareto",
                    "worst-path sustained p99 against energy per frame; every mapping is labelled with its index, "
                    "hover it for its choices.");
  b += html::heading("Every mapping simulated");
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> front(r.rows.size(), false);
  for (auto i : answers.pareto) front[i] = true;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const auto& m = r.rows[i].result.metrics;
    std::vector<std::string> cells{std::to_string(r.rows[i].result.index), r.rows[i].role};
    for (const auto& l : r.rows[i].result.labels) cells.push_back(l);
    cells.insert(cells.end(), {seconds(number_at(m, "p99_s")), joules(number_at(m, "energy_mean_J")), verdict_of(m),
                               front[i] ? "yes" : ""});
    rows.push_back(cells);
  }
  std::vector<std::string> header{"#", "role"};
  header.insert(header.end(), r.stages.begin(), r.stages.end());
  for (const char* h : {"worst p99", "energy/frame", "verdict", "front"}) header.emplace_back(h);
  b += html::table(header, rows);
  return html::page(r.title, b);
}

}  // namespace framesim::analysis
