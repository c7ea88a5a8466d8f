#include "html_run_sections.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/units.hpp"
#include "html.hpp"
#include "report_format.hpp"

namespace framesim::analysis {

using core::format_joules;
using core::format_number;
using core::format_seconds;

namespace {

std::string verdict_cell(const PathSummary& summary, const PathDetails& path) {
  if (!summary.sustained_p99_s) return "no sample in the sustained window";
  const double p99 = *summary.sustained_p99_s;
  const double deadline = path.deadline_s;
  std::string verdict = p99 <= deadline ? "meets" : fmt::format("MISSES: needs {}x", format_number(p99 / deadline, 3));
  // Its p99 is over the samples that arrived: a path that drops them is faster than it is useful.
  if (path.dropped > 0)
    verdict += fmt::format(
        " (drops {})",
        format_number(static_cast<double>(path.dropped) / static_cast<double>(path.samples) * 100, 3) + "%");
  return verdict;
}

}  // namespace

std::string stacked_bar_svg(const std::vector<std::pair<std::string, double>>& parts, std::string (*format)(double)) {
  static constexpr std::array<const char*, 8> kColours{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                                       "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  double total = 0;
  for (const auto& [name, v] : parts) total += std::max(0.0, v);
  const int rows = static_cast<int>(parts.size());
  const int height = 44 + 18 * rows;
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"{0}\" viewBox=\"0 0 900 {0}\" "
      "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n",
      height);
  double x = 10;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const double w = total > 0 ? std::max(0.0, parts[k].second) / total * 880 : 0;
    if (w > 0)
      s += fmt::format(
          "<rect x=\"{:.1f}\" y=\"8\" width=\"{:.1f}\" height=\"22\" fill=\"{}\"><title>{}: {}</title></rect>\n", x, w,
          kColours[k % kColours.size()], html::escape(parts[k].first), format(parts[k].second));
    x += w;
  }
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const int y = 44 + 18 * static_cast<int>(k);
    s += fmt::format("<rect x=\"10\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n", y - 10,
                     kColours[k % kColours.size()]);
    s += fmt::format("<text x=\"28\" y=\"{}\">{}: {} ({})</text>\n", y, html::escape(parts[k].first),
                     format(parts[k].second),
                     total > 0 ? format_number(std::max(0.0, parts[k].second) / total * 100, 3) + "%" : "-");
  }
  return s + "</svg>\n";
}

std::string paths_section(const RunSummary& s, const std::string& tails_svg) {
  std::string b = html::heading("Every path");
  std::vector<std::vector<std::string>> rows;
  const auto& paths = s.details.value().paths;
  for (std::size_t k = 0; k < paths.size(); ++k) {
    const PathDetails& p = paths[k];
    const PathSummary& ps = s.paths.at(k);
    const StatBlock& lat = p.latency_s;
    const std::string verdict = verdict_cell(ps, p);
    rows.push_back({html::escape(ps.name + (p.via_side_input ? " (side input)" : "")),
                    html::escape(format_seconds(p.deadline_s)), std::to_string(lat.count),
                    html::escape(format_percentile_s(lat, &StatBlock::p50)),
                    html::escape(format_percentile_s(lat, &StatBlock::p99)),
                    html::escape(format_percentile_s(lat, &StatBlock::max)),
                    fmt::format("{} of {} ({} late, {} dropped)", p.missed, p.samples, p.late, p.dropped),
                    html::escape(format_percentile_s(p.data_age_s, &StatBlock::p99)),
                    ps.sustained_p99_s ? html::escape(format_seconds(*ps.sustained_p99_s)) : "-",
                    html::number(fmt::format("path-verdict-{}", k), verdict)});
  }
  b += html::table({"path (sensor -> sink)", "deadline", "n", "p50", "p99", "max", "missed", "data age p99",
                    "sustained p99", "verdict"},
                   rows, html::Cells::markup);
  b += "<p class=\"note\">A path's latency: capture -> the end of the first result of its sink that used the sample. "
       "Missed = late + dropped (overtaken by a newer sample before it reached the sink). Data age: every sink "
       "result's end - the capture of the sample behind it. The overall verdict is the worst path's.</p>\n";
  b += html::figure(tails_svg, "pathtails",
                    "The tail of every path's latency (fraction of samples slower, log scale) with the 95% band of "
                    "its quantiles, and each deadline.");
  return b;
}

std::string staleness_section(const RunSummary& summary, const std::string& cdf_svg) {
  const auto& staleness = summary.details.value().staleness;
  if (staleness.empty()) return "";
  std::string b = html::heading("Staleness");
  std::vector<std::vector<std::string>> rows;
  for (const auto& [name, s] : staleness) {
    const StatBlock& t = summary.staleness_time_s.at(name);
    std::string distance = "-";
    if (s.distance_m)
      distance = fmt::format("p99 {} cm, max {} cm at {} m/s", format_number(s.distance_m->p99.value() * 100, 3),
                             format_number(s.distance_m->max.value() * 100, 3), format_number(s.speed_mps.value()));
    rows.push_back({name, s.reads, core::format_hertz(s.rate_Hz), std::to_string(t.count),
                    format_percentile_s(t, &StatBlock::p50), format_percentile_s(t, &StatBlock::p99),
                    format_percentile_s(t, &StatBlock::max), distance});
  }
  b += html::table({"task", "reads", "rate", "ticks", "p50", "p99", "max", "in distance"}, rows);
  b += html::figure(cdf_svg, "stalenesscdf",
                    "Staleness at every control tick after the warm-up: now - the capture of the newest result the "
                    "task uses, as a cumulative distribution.");
  return b;
}

std::string tasks_and_chains_section(const RunDetails& d) {
  std::string b;
  std::vector<std::vector<std::string>> tasks;
  for (const auto& [name, t] : d.tasks) {
    if (!t.response_s) continue;
    const StatBlock& r = *t.response_s;
    tasks.push_back({name, t.unit.value(), std::to_string(t.jobs.value()), format_percentile_s(r, &StatBlock::p50),
                     format_percentile_s(r, &StatBlock::p99), format_percentile_s(r, &StatBlock::max),
                     format_seconds(t.deadline_s), std::to_string(t.missed.value())});
  }
  if (!tasks.empty()) {
    b += html::heading("Tasks");
    b += html::table({"task", "unit", "releases", "response p50", "p99", "max", "deadline", "missed"}, tasks);
  }
  std::vector<std::vector<std::string>> chains;
  for (const auto& [name, c] : d.chains) {
    const StatBlock& age = c.data_age_s;
    const StatBlock& reaction = c.reaction_s;
    chains.push_back({name, fmt::format("{}", fmt::join(c.path, " -> ")), std::to_string(age.count),
                      format_percentile_s(age, &StatBlock::p50), format_percentile_s(age, &StatBlock::p99),
                      format_percentile_s(age, &StatBlock::max), format_percentile_s(reaction, &StatBlock::p50),
                      format_percentile_s(reaction, &StatBlock::p99), format_percentile_s(reaction, &StatBlock::max)});
  }
  if (!chains.empty()) {
    b += html::heading("Cause-effect chains");
    b += html::table({"chain", "path", "actuations", "data age p50", "p99", "max", "reaction p50", "p99", "max"},
                     chains);
    b += "<p class=\"note\">Data age: actuation - the capture of the sample behind it along the chain. Reaction: "
         "capture -> the first actuation that reflects that sample or a newer one.</p>\n";
  }
  return b;
}

std::string energy_section(const RunSummary& s) {
  const EnergyDetails& e = s.details.value().energy;
  std::string b = html::heading("Energy");
  const EnergyBreakdown& bd = e.breakdown_per_frame_J;
  std::vector<std::pair<std::string, double>> parts;
  for (const auto& [u, v] : bd.compute) parts.emplace_back(u + " compute", v);
  for (const auto& [l, v] : bd.memory) parts.emplace_back(l + " (memory)", v);
  parts.emplace_back("static", bd.static_J);
  const StatBlock& pf = s.energy_per_frame_J;
  if (pf.count > 0)
    b += fmt::format("<p>Energy per frame of the first sensor: mean {}, p99 {}; mean power {}.</p>\n",
                     html::number("energy-per-frame", format_joules(pf.mean.value())), format_joules(pf.p99.value()),
                     core::format_watts(s.mean_power_W));
  std::vector<std::vector<std::string>> rows;
  for (const auto& [name, v] : parts) rows.push_back({name, format_joules(v)});
  b += html::table({"part of the mean energy per frame", "energy"}, rows);
  b += html::figure(stacked_bar_svg(parts, core::format_joules), "energyparts",
                    "The mean energy per frame, part by part.");
  b += html::table({"the run's energy", "total"}, {{"frames (dynamic)", format_joules(e.frames_J)},
                                                   {"tasks (dynamic)", format_joules(e.tasks_J)},
                                                   {"background traffic", format_joules(e.background_J)},
                                                   {"static", format_joules(e.static_J)},
                                                   {"total", format_joules(e.total_J)}});
  return b;
}

std::string little_section(const LittleDetails& l) {
  return html::heading("Little's law") +
         fmt::format(
             "<p>Frames in the system over the run: L = {} on average = lambda {}/s x W {} (relative "
             "difference {}: frames still in the system at the end).</p>\n",
             html::number("little-L", format_number(l.L_frames, 4)), format_number(l.lambda_per_s, 4),
             format_seconds(l.W_s), format_number(l.relative_error, 3));
}

std::string notes_section(const RunDetails& d) {
  if (d.warnings.empty() && d.notes.empty()) return "";
  std::string b = html::heading("Notes and warnings") + "<ul id=\"notes\">\n";
  for (const auto& w : d.warnings) b += "<li><b>warning:</b> " + html::escape(w) + "</li>\n";
  for (const auto& n : d.notes) b += "<li>note: " + html::escape(n) + "</li>\n";
  return b + "</ul>\n";
}

}  // namespace framesim::analysis
