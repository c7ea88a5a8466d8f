// report.html of a run: the verdict, the tables of the terminal summary, and every plot, in one offline file.
#include <set>

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
using nlohmann::json;

namespace {

/// The verdict (the worst path's when there are several), each stage's slice, the estimate and bound alone, and the
/// misses (summary.json "verdict", "paths", "frames").
std::string verdict_section(const json& j, double deadline_s) {
  std::string b;
  const auto& v = j["verdict"];
  b += html::heading("Verdict");
  if (j["paths"].size() > 1 && !v["worst_path"].is_null()) {
    // Several paths: the worst of them decides.
    const auto& w = v["worst_path"];
    const double p99 = w["sustained_p99_s"].get<double>();
    const double deadline = w["deadline_s"].get<double>();
    const std::string at = w["at_confidence"].get<std::string>();
    const char* css = p99 > deadline ? "bad" : at == "met" ? "ok" : "maybe";
    std::string sentence;
    for (const auto& p : j["paths"])
      if (p["name"] == w["name"]) sentence = confidence_sentence(p["verdict"]);
    b += fmt::format(
        "<div class=\"verdict {}\" id=\"verdict\">{} paths, the worst decides: <b>{}</b>: sustained p99 {} against "
        "its {} deadline: {}<br>{}</div>\n",
        css, j["paths"].size(), html::number("worst-path", w["name"].get<std::string>()),
        html::number("sustained-p99", format_seconds(p99)), html::number("deadline", format_seconds(deadline)),
        p99 <= deadline ? "meets it at p99" : "MISSES it at p99", html::number("at-confidence", sentence));
  } else if (v.contains("sustained_p99_s")) {
    const double p99 = v["sustained_p99_s"].get<double>();
    const std::string at = v["at_confidence"].get<std::string>();
    const char* css = at == "met" ? "ok" : at == "missed" ? "bad" : "maybe";
    b += fmt::format(
        "<div class=\"verdict {}\" id=\"verdict\">sustained p99 {} against the {} deadline: {}<br>{}</div>\n", css,
        html::number("sustained-p99", format_seconds(p99)), html::number("deadline", format_seconds(deadline_s)),
        p99 <= deadline_s ? "meets it at p99" : "MISSES it at p99",
        html::number("at-confidence", confidence_sentence(v)));
  } else {
    b += "<div class=\"verdict bad\" id=\"verdict\">no frame completed in the sustained window</div>\n";
  }
  std::vector<std::vector<std::string>> slices;
  for (const auto& [name, s] : v["stage_slices"].items())
    slices.push_back(
        {name, format_seconds(s["slice_s"].get<double>()), format_seconds(s["estimate_alone_s"].get<double>()),
         format_seconds(s["bound_alone_s"].get<double>()), format_seconds(s["sustained_mean_s"].get<double>()),
         format_seconds(s["sustained_p99_s"].get<double>()), s["fits"].get<bool>() ? "fits" : "DOES NOT FIT"});
  if (!slices.empty())
    b += html::table({"stage slice", "slice", "estimate alone", "bound alone", "sustained mean", "sustained p99", ""},
                     slices);
  b += fmt::format(
      "<p>End to end alone on an idle SoC: estimate {} (effective roofs), bound {} (peak roofs, no "
      "overhead).</p>\n",
      format_seconds(v["estimate_end_to_end_s"].get<double>()), format_seconds(v["bound_end_to_end_s"].get<double>()));
  const auto& f = j["frames"];
  b += fmt::format(
      "<p>{} of {} counted frames missed the deadline ({} late, {} dropped), longest run of misses {}.</p>\n",
      html::number("misses", std::to_string(f["missed"].get<std::int64_t>())), f["counted"].get<std::int64_t>(),
      f["late"].get<std::int64_t>(), f["dropped"].get<std::int64_t>(), f["longest_miss_run"].get<int>());
  return b;
}

/// Where the time goes: the tail's critical path and mean parts, the worst frames stage by stage (summary.json "why").
std::string why_section(const json& why) {
  std::string b;
  b += html::heading("Where the time goes");
  if (why.contains("tail")) {
    const auto& t = why["tail"];
    b += fmt::format(
        "<p>The tail ({} at or above p99 {}): the critical path runs mostly through {} ({} of the "
        "time on the path). Mean parts of those frames:</p>\n",
        core::counted(t["frames"].get<std::size_t>(), "frame"), format_seconds(t["p99_s"].get<double>()),
        html::number("critical-stage", t["critical_stage"].get<std::string>()),
        format_number(t["critical_share"].get<double>() * 100, 3) + "%");
    std::vector<std::pair<std::string, double>> parts;
    for (const auto& [k, value] : t["mean_parts"].items()) parts.emplace_back(k.substr(0, k.size() - 2), value);
    b += html::figure(stacked_bar_svg(parts, core::format_seconds), "tailparts");
    std::vector<std::vector<std::string>> per_stage;
    for (const auto& [name, s] : t["stages"].items())
      per_stage.push_back({name, format_seconds(s["mean_on_path_s"].get<double>()),
                           std::to_string(s["dominant_in_frames"].get<std::int64_t>())});
    b += html::table({"stage", "mean time on the critical path (tail)", "tail frames it dominates"}, per_stage);
  }
  std::vector<std::vector<std::string>> worst;
  for (const auto& fr : why["worst_frames"]) {
    for (const auto& step : fr["path"])
      worst.push_back(
          {fmt::format("frame {}", fr["frame"].get<std::int64_t>()), format_seconds(fr["latency_s"].get<double>()),
           step["stage"].get<std::string>() + " on " + step["unit"].get<std::string>(),
           format_resolved_s(step["queue_s"].get<double>()), format_resolved_s(step["blocked_s"].get<double>()),
           format_resolved_s(step["floor_s"].get<double>()), format_resolved_s(step["throttling_s"].get<double>()),
           format_resolved_s(step["bus_s"].get<double>()), format_resolved_s(step["variability_s"].get<double>()),
           format_resolved_s(step["gap_s"].get<double>())});
  }
  if (!worst.empty()) {
    b += "<p>The worst frames, stage by stage along their critical path:</p>\n";
    b += html::table(
        {"frame", "latency", "stage", "queue", "blocked", "floor", "throttling", "bus", "variability", "gap"}, worst);
  }
  b += "<p class=\"note\">" + html::escape(why["method"].get<std::string>()) + "</p>\n";
  return b;
}

/// Units busy, levels utilised, queue depths, slowdowns against alone (summary.json "utilisation", "slowdown").
std::string utilisation_section(const json& j) {
  std::string b;
  b += html::heading("Utilisation");
  std::vector<std::vector<std::string>> util;
  for (const auto& [u, entry] : j["utilisation"]["units"].items()) {
    util.push_back({html::escape("unit " + u), html::bar(entry["busy"].get<double>())});
    for (const auto& [who, frac] : entry["by"].items())
      util.push_back({html::escape("  " + u + " / " + who), html::bar(frac.get<double>())});
  }
  for (const auto& [level, entry] : j["utilisation"]["memory"].items())
    util.push_back({html::escape("memory " + level), html::bar(entry["utilisation"].get<double>())});
  b += html::table({"", "busy / utilised"}, util, html::Cells::markup);
  std::vector<std::vector<std::string>> queues;
  for (const auto& [s, q] : j["utilisation"]["queues"].items())
    queues.push_back({s, format_number(q["mean"].get<double>(), 3), std::to_string(q["max"].get<int>()),
                      std::to_string(q["capacity"].get<int>())});
  b += html::table({"queue", "mean depth", "max", "capacity"}, queues);
  if (j.contains("slowdown") && !j["slowdown"].empty()) {  // analysis/slowdown.hpp
    std::vector<std::vector<std::string>> slow;
    for (const auto& [s, d] : j["slowdown"].items())
      slow.push_back({s, format_number(d["slowdown"].get<double>(), 4), format_number(d["bus"].get<double>(), 3),
                      format_number(d["handoff"].get<double>(), 3), format_number(d["wait"].get<double>(), 3),
                      format_seconds(d["alone_s"].get<double>())});
    b += html::table({"stage", "slowdown against alone", "bus", "hand-off", "wait", "alone"}, slow);
  }
  return b;
}

/// The framesim version, command line and input files with their hashes (summary.json "provenance").
std::string provenance_section(const json& p) {
  std::string b;
  b += html::heading("Provenance");
  if (p.is_object()) {
    std::string line;
    for (const auto& a : p["command_line"]) line += (line.empty() ? "" : " ") + a.get<std::string>();
    b += fmt::format("<p>framesim {}: <code>{}</code></p>\n", html::escape(p["framesim_version"].get<std::string>()),
                     html::escape(line));
    std::vector<std::vector<std::string>> inputs;
    for (const auto& in : p["inputs"])
      inputs.push_back({in["file"].get<std::string>(), std::to_string(in["bytes"].get<std::size_t>()),
                        in["sha256"].get<std::string>()});
    b += html::table({"input file", "bytes", "SHA-256"}, inputs);
  }
  return b;
}

}  // namespace

std::string RunAnalysis::html_report(const json& j) const {
  const auto& hw = spec_.hardware;
  std::string b;
  b += fmt::format("<h1>framesim run: {} on {}</h1>\n", html::escape(spec_.name), html::escape(hw.name));
  b += fmt::format("<p class=\"note\">{} simulated, seed {}, warm-up {}, deadline {}; {} counted frames.</p>\n",
                   format_seconds(j["run"]["simulated_s"].get<double>()), spec_.seed, format_seconds(spec_.warmup_s),
                   format_seconds(spec_.deadline_s), j["frames"]["counted"].get<std::int64_t>());

  b += verdict_section(j, spec_.deadline_s);

  b += notes_section(j);
  b += paths_section(j, svg_path_tails());

  // Latency
  b += html::heading("Latency (frames)");
  const auto& all = j["windows"]["all"];
  std::vector<std::vector<std::string>> rows{percentile_cells("end to end", all["latency_s"])};
  rows.back()[4] = "";  // replaced by the marked-up cell below
  for (std::size_t s = 0; s < spec_.stages.size(); ++s) {
    const auto& st = all["stages"][spec_.stages[s].name];
    const std::string& unit = hw.units[spec_.stages[s].unit].name;
    for (const char* part : {"wait_s", "service_s", "blocked_s", "response_s"})
      rows.push_back(percentile_cells(fmt::format("{} on {}: {}", spec_.stages[s].name, unit,
                                                  std::string(part).substr(0, std::string(part).size() - 2)),
                                      st[part]));
  }
  for (auto& row : rows)
    for (auto& cell : row) cell = html::escape(cell);
  rows.front()[4] = html::number("p99", format_percentile_s(all["latency_s"], "p99"));
  b += html::table(percentile_header(""), rows, html::Cells::markup);
  b += "<p class=\"note\">" + html::escape(percentile_footnote()) + "</p>\n";
  std::vector<std::vector<std::string>> windows;
  for (const char* name : {"cold", "sustained"}) {
    const auto& w = j["windows"][name];
    std::vector<std::string> row =
        percentile_cells(fmt::format("{} {}-{}", name, format_seconds(w["from_s"].get<double>()),
                                     format_seconds(w["to_s"].get<double>())),
                         w["latency_s"]);
    row.push_back(std::to_string(w["missed"].get<std::int64_t>()));
    row.push_back(w["mean_temperature_C"].is_null() ? "-"
                                                    : format_number(w["mean_temperature_C"].get<double>(), 3) + " C");
    windows.push_back(row);
  }
  auto window_header = percentile_header("window");
  window_header.insert(window_header.end(), {"missed", "temperature"});
  b += html::table(window_header, windows);
  b += html::figure(svg_latency_cdf(), "cdf",
                    "The tail of the end-to-end latency: all counted frames and the sustained window the verdict "
                    "judges, each with the 95% confidence band of its quantiles, and the deadline.");
  b += html::figure(svg_latency_over_time(), "overtime", "Latency per frame over the run.");

  b += why_section(j["why"]);

  b += utilisation_section(j);
  b += html::figure(svg_queue_depth(), "queuedepth", "Each stage's input queue over time.");
  b += little_section(j);
  b += staleness_section(j, svg_staleness_cdf());
  b += tasks_and_chains_section(j);
  b += energy_section(j);

  // Thermal, energy
  b += html::heading("Thermal, clocks and power");
  const auto& e = j["energy"];
  if (e["per_frame_J"]["count"].get<std::size_t>() > 0)
    b += fmt::format("<p>Energy per frame: mean {}, p99 {}; mean power {}; throttled {} of the run.</p>\n",
                     html::number("energy-mean", core::format_joules(e["per_frame_J"]["mean"].get<double>())),
                     core::format_joules(e["per_frame_J"]["p99"].get<double>()),
                     core::format_watts(e["mean_power_W"].get<double>()),
                     format_number(j["thermal"]["throttled_fraction"].get<double>() * 100, 3) + "%");
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

  b += provenance_section(j["provenance"]);
  return html::page("framesim run: " + spec_.name, b);
}

}  // namespace framesim::analysis
