// report.html of a run: the verdict, the tables of the terminal summary, and every plot, in one offline file.
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "budget_report.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "html.hpp"
#include "html_run_sections.hpp"
#include "model/budget.hpp"
#include "report_format.hpp"
#include "run_analysis.hpp"
#include "svg.hpp"

namespace framesim::analysis {

using core::format_number;
using core::format_seconds;

namespace {

/// The verdict (the worst path's when there are several), each stage's slice, the estimate and bound alone, and the
/// misses (summary.json "verdict", "paths", "frames").
std::string verdict_section(const RunSummary& s, double deadline_s) {
  std::string b;
  const RunDetails& d = s.details.value();
  const VerdictDetails& v = d.verdict;
  b += html::heading("Verdict");
  if (d.paths.size() > 1 && v.worst_path) {
    // Several paths: the worst of them decides.
    const WorstPath& w = *v.worst_path;
    const double p99 = w.sustained_p99_s;
    const double deadline = w.deadline_s;
    const std::string at = w.at_confidence;
    const char* css = p99 > deadline ? "bad" : at == "met" ? "ok" : "maybe";
    std::string sentence;
    for (std::size_t i = 0; i < d.paths.size(); ++i)
      if (s.paths.at(i).name == w.name) {
        const PathVerdictDetails& pv = d.paths[i].verdict;
        sentence = confidence_sentence(pv.at_confidence, pv.sustained_p99, pv.confidence);
      }
    b += fmt::format(
        "<div class=\"verdict {}\" id=\"verdict\">{} paths, the worst decides: <b>{}</b>: sustained p99 {} against "
        "its {} deadline: {}<br>{}</div>\n",
        css, d.paths.size(), html::number("worst-path", w.name), html::number("sustained-p99", format_seconds(p99)),
        html::number("deadline", format_seconds(deadline)), p99 <= deadline ? "meets it at p99" : "MISSES it at p99",
        html::number("at-confidence", sentence));
  } else if (s.sustained_p99_s) {
    const double p99 = *s.sustained_p99_s;
    const std::string at = s.at_confidence.value();
    const char* css = at == "met" ? "ok" : at == "missed" ? "bad" : "maybe";
    b += fmt::format(
        "<div class=\"verdict {}\" id=\"verdict\">sustained p99 {} against the {} deadline: {}<br>{}</div>\n", css,
        html::number("sustained-p99", format_seconds(p99)), html::number("deadline", format_seconds(deadline_s)),
        p99 <= deadline_s ? "meets it at p99" : "MISSES it at p99",
        html::number("at-confidence", confidence_sentence(s.at_confidence, v.sustained_p99, v.confidence)));
  } else {
    b += "<div class=\"verdict bad\" id=\"verdict\">no frame completed in the sustained window</div>\n";
  }
  std::vector<std::vector<std::string>> slices;
  for (const auto& [name, sl] : v.stage_slices)
    slices.push_back({name, format_seconds(sl.slice_s), format_seconds(sl.estimate_alone_s),
                      format_seconds(sl.bound_alone_s), format_seconds(sl.sustained_mean_s),
                      format_seconds(sl.sustained_p99_s), sl.fits ? "fits" : "DOES NOT FIT"});
  if (!slices.empty())
    b += html::table({"stage slice", "slice", "estimate alone", "bound alone", "sustained mean", "sustained p99", ""},
                     slices);
  b += fmt::format(
      "<p>End to end alone on an idle SoC: estimate {} (effective roofs), bound {} (peak roofs, no "
      "overhead).</p>\n",
      format_seconds(*s.estimate_end_to_end_s), format_seconds(*s.bound_end_to_end_s));
  const Misses& m = s.all.misses;
  b += fmt::format(
      "<p>{} of {} counted frames missed the deadline ({} late, {} dropped), longest run of misses {}.</p>\n",
      html::number("misses", std::to_string(m.missed())), s.all.frames, m.late, m.dropped, *s.longest_miss_run);
  return b;
}

/// Where the time goes: the tail's critical path and mean parts, the worst frames stage by stage (summary.json "why").
std::string why_section(const WhyDetails& why) {
  std::string b;
  b += html::heading("Where the time goes");
  if (why.tail) {
    const TailDetails& t = *why.tail;
    b += fmt::format(
        "<p>The tail ({} at or above p99 {}): the critical path runs mostly through {} ({} of the "
        "time on the path). Mean parts of those frames:</p>\n",
        core::counted(static_cast<std::size_t>(t.frames), "frame"), format_seconds(t.p99_s),
        html::number("critical-stage", t.critical_stage), format_number(t.critical_share * 100, 3) + "%");
    std::vector<std::pair<std::string, double>> parts;
    for (const auto& [k, value] : t.mean_parts.by_key()) parts.emplace_back(k.substr(0, k.size() - 2), value);
    b += html::figure(stacked_bar_svg(parts, core::format_seconds), "tailparts");
    std::vector<std::vector<std::string>> per_stage;
    for (const auto& [name, st] : t.stages)
      per_stage.push_back({name, format_seconds(st.mean_on_path_s), std::to_string(st.dominant_in_frames)});
    b += html::table({"stage", "mean time on the critical path (tail)", "tail frames it dominates"}, per_stage);
  }
  std::vector<std::vector<std::string>> worst;
  for (const WorstFrame& fr : why.worst_frames) {
    for (const CriticalStep& step : fr.path)
      worst.push_back({fmt::format("frame {}", fr.frame), format_seconds(fr.latency_s), step.stage + " on " + step.unit,
                       format_resolved_s(step.parts.queue_s), format_resolved_s(step.parts.blocked_s),
                       format_resolved_s(step.parts.floor_s), format_resolved_s(step.parts.throttling_s),
                       format_resolved_s(step.parts.bus_s), format_resolved_s(step.parts.variability_s),
                       format_resolved_s(step.parts.gap_s)});
  }
  if (!worst.empty()) {
    b += "<p>The worst frames, stage by stage along their critical path:</p>\n";
    b += html::table(
        {"frame", "latency", "stage", "queue", "blocked", "floor", "throttling", "bus", "variability", "gap"}, worst);
  }
  b += "<p class=\"note\">" + html::escape(why.method) + "</p>\n";
  return b;
}

/// Units busy, levels utilised, queue depths, slowdowns against alone (summary.json "utilisation", "slowdown").
std::string utilisation_section(const RunSummary& s) {
  const RunDetails& d = s.details.value();
  std::string b;
  b += html::heading("Utilisation");
  std::vector<std::vector<std::string>> util;
  for (const auto& [u, busy] : s.unit_busy) {
    util.push_back({html::escape("unit " + u), html::bar(busy)});
    for (const auto& [who, frac] : d.utilisation.units.at(u).by)
      util.push_back({html::escape("  " + u + " / " + who), html::bar(frac)});
  }
  for (const auto& [level, entry] : d.utilisation.memory)
    util.push_back({html::escape("memory " + level), html::bar(entry.utilisation)});
  b += html::table({"", "busy / utilised"}, util, html::Cells::markup);
  std::vector<std::vector<std::string>> queues;
  for (const auto& [st, q] : d.utilisation.queues)
    queues.push_back({st, format_number(q.mean, 3), std::to_string(q.max), std::to_string(q.capacity)});
  b += html::table({"queue", "mean depth", "max", "capacity"}, queues);
  if (s.slowdown && !s.slowdown->empty()) {  // analysis/slowdown.hpp
    std::vector<std::vector<std::string>> slow;
    for (const auto& [st, sd] : *s.slowdown)
      slow.push_back({st, format_number(sd.slowdown, 4), format_number(sd.bus, 3), format_number(sd.handoff, 3),
                      format_number(sd.wait, 3), format_seconds(sd.alone_s)});
    b += html::table({"stage", "slowdown against alone", "bus", "hand-off", "wait", "alone"}, slow);
  }
  return b;
}

/// The framesim version, command line and input files with their hashes (summary.json "provenance").
std::string provenance_section(const std::optional<Provenance>& p) {
  std::string b;
  b += html::heading("Provenance");
  if (p) {
    std::string line;
    for (const auto& a : p->command_line) line += (line.empty() ? "" : " ") + a;
    b += fmt::format("<p>framesim {}: <code>{}</code></p>\n", html::escape(p->framesim_version), html::escape(line));
    std::vector<std::vector<std::string>> inputs;
    for (const InputFile& in : p->inputs) inputs.push_back({in.file, std::to_string(in.bytes), in.sha256});
    b += html::table({"input file", "bytes", "SHA-256"}, inputs);
  }
  return b;
}

}  // namespace

std::string RunAnalysis::html_report(const RunSummary& s) const {
  const RunDetails& d = s.details.value();
  const auto& hw = spec_.hardware;
  std::string b;
  b += fmt::format("<h1>framesim run: {} on {}</h1>\n", html::escape(spec_.name), html::escape(hw.name));
  b += fmt::format("<p class=\"note\">{} simulated, seed {}, warm-up {}, deadline {}; {} counted frames.</p>\n",
                   format_seconds(d.run.simulated_s), spec_.seed, format_seconds(spec_.warmup_s),
                   format_seconds(spec_.deadline_s), s.all.frames);

  b += verdict_section(s, spec_.deadline_s);

  b += notes_section(d);
  b += paths_section(s, svg_path_tails());

  // Latency
  b += html::heading("Latency (frames)");
  std::vector<std::vector<std::string>> rows{percentile_cells("end to end", s.all.latency_s)};
  rows.back()[4] = "";  // replaced by the marked-up cell below
  for (std::size_t st = 0; st < spec_.stages.size(); ++st) {
    const StageTimes& times = d.windows.all.stages.at(spec_.stages[st].name);
    const std::string& unit = hw.units[spec_.stages[st].unit].name;
    for (const auto& [part, stat] : {std::pair{"wait", &times.wait_s}, std::pair{"service", &times.service_s},
                                     std::pair{"blocked", &times.blocked_s}, std::pair{"response", &times.response_s}})
      rows.push_back(percentile_cells(fmt::format("{} on {}: {}", spec_.stages[st].name, unit, part), *stat));
  }
  for (auto& row : rows)
    for (auto& cell : row) cell = html::escape(cell);
  rows.front()[4] = html::number("p99", format_percentile_s(s.all.latency_s, &StatBlock::p99));
  b += html::table(percentile_header(""), rows, html::Cells::markup);
  b += "<p class=\"note\">" + html::escape(percentile_footnote()) + "</p>\n";
  std::vector<std::vector<std::string>> windows;
  for (const auto& [name, w, at] : {std::tuple{"cold", &s.cold.value(), &d.windows.cold},
                                    std::tuple{"sustained", &s.sustained, &d.windows.sustained}}) {
    std::vector<std::string> row = percentile_cells(
        fmt::format("{} {}-{}", name, format_seconds(at->from_s), format_seconds(at->to_s)), w->latency_s);
    row.push_back(std::to_string(w->misses.missed()));
    row.push_back(at->mean_temperature_C ? format_number(*at->mean_temperature_C, 3) + " C" : "-");
    windows.push_back(row);
  }
  auto window_header = percentile_header("window");
  window_header.insert(window_header.end(), {"missed", "temperature"});
  b += html::table(window_header, windows);
  b += html::figure(svg_latency_cdf(), "cdf",
                    "The tail of the end-to-end latency: all counted frames and the sustained window the verdict "
                    "judges, each with the 95% confidence band of its quantiles, and the deadline.");
  b += html::figure(svg_latency_over_time(), "overtime", "Latency per frame over the run.");

  b += why_section(d.why);

  b += utilisation_section(s);
  b += html::figure(svg_queue_depth(), "queuedepth", "Each stage's input queue over time.");
  b += little_section(d.little);
  b += staleness_section(s, svg_staleness_cdf());
  b += tasks_and_chains_section(d);
  b += energy_section(s);

  // Thermal, energy
  b += html::heading("Thermal, clocks and power");
  const StatBlock& per_frame = s.energy_per_frame_J;
  if (per_frame.count > 0)
    b += fmt::format("<p>Energy per frame: mean {}, p99 {}; mean power {}; throttled {} of the run.</p>\n",
                     html::number("energy-mean", core::format_joules(per_frame.mean.value())),
                     core::format_joules(per_frame.p99.value()), core::format_watts(s.mean_power_W),
                     format_number(s.throttled_fraction * 100, 3) + "%");
  b += html::figure(svg_thermal(), "thermal");

  // Rooflines of the networks the stages run
  std::set<std::pair<int, std::size_t>> done;
  std::string rooflines;
  for (const auto& st : spec_.stages) {
    if (st.work.kind != model::WorkSpec::Kind::network || !done.insert({st.work.network, st.unit}).second) continue;
    const auto& net = spec_.networks[static_cast<std::size_t>(st.work.network)].network;
    model::BudgetOptions options;
    options.unit = st.unit;
    const auto report = model::make_budget(hw, net, options);
    rooflines += html::figure(roofline_svg(report, hw, net), fmt::format("roofline{}", done.size()),
                              fmt::format("{} on {} (stage {}): every kernel at its bound; hover a point for its name.",
                                          net.name, hw.units[st.unit].name, st.name));
  }
  if (!rooflines.empty()) b += html::heading("Rooflines") + rooflines;

  b += provenance_section(s.provenance);
  return html::page("framesim run: " + spec_.name, b);
}

}  // namespace framesim::analysis
