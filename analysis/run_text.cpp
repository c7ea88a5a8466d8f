// The terminal summary of a run, from its summary.json.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/text.hpp"
#include "core/units.hpp"
#include "report_format.hpp"
#include "run_analysis.hpp"
#include "table.hpp"

namespace framesim::analysis {

using core::format_number;
using core::format_seconds;
using nlohmann::json;

namespace {

/// "where the time of the tail goes" and the worst frames, from summary.json's "why".
std::string why_text(const json& why) {
  std::string out;
  auto parts_text = [](const json& parts) {
    std::vector<std::string> items;
    for (const auto& [k, v] : parts.items()) {
      const double value = v.get<double>();
      if (std::abs(value) < 1e-9) continue;
      items.push_back(fmt::format("{} {}", k.substr(0, k.size() - 2), format_resolved_s(value)));
    }
    return fmt::format("{}", fmt::join(items, ", "));
  };
  if (why.contains("tail")) {
    const auto& t = why["tail"];
    out += fmt::format(
        "why the tail (the {} at or above p99 {}): critical path mostly through {} ({} of the "
        "time on the path); mean {}\n",
        core::counted(t["frames"].get<std::size_t>(), "frame"), format_seconds(t["p99_s"].get<double>()),
        t["critical_stage"].get<std::string>(), format_number(t["critical_share"].get<double>() * 100, 3) + "%",
        parts_text(t["mean_parts"]));
  }
  if (why["worst_frames"].empty()) return out;
  Table w({"worst frames", "capture", "latency", "queue", "blocked", "floor", "throttling", "bus", "variability", "gap",
           "slowest stage"});
  std::size_t shown = 0;
  for (const auto& f : why["worst_frames"]) {
    if (++shown > 5) break;
    const auto& p = f["parts"];
    std::string slowest = "-";
    double longest = -1;
    for (const auto& step : f["path"]) {
      const double time = step["end_s"].get<double>() - step["start_s"].get<double>() + step["queue_s"].get<double>();
      if (time > longest) longest = time, slowest = step["stage"].get<std::string>();
    }
    w.add({fmt::format("frame {}", f["frame"].get<std::int64_t>()), format_seconds(f["capture_s"].get<double>()),
           format_seconds(f["latency_s"].get<double>()), format_resolved_s(p["queue_s"].get<double>()),
           format_resolved_s(p["blocked_s"].get<double>()), format_resolved_s(p["floor_s"].get<double>()),
           format_resolved_s(p["throttling_s"].get<double>()), format_resolved_s(p["bus_s"].get<double>()),
           format_resolved_s(p["variability_s"].get<double>()), format_resolved_s(p["gap_s"].get<double>()), slowest});
  }
  return out + w.render(2);
}

/// Every path's latency, misses and verdict, one row each (summary.json "paths").
std::string paths_text(const json& paths) {
  Table t({"path (sensor -> sink)", "deadline", "n", "p50", "p99", "max", "missed", "late", "dropped", "data age p99",
           "sustained p99", "verdict"});
  for (const auto& p : paths) {
    const auto& lat = p["latency_s"];
    const auto& v = p["verdict"];
    const double deadline = p["deadline_s"].get<double>();
    std::string verdict = "no sample in the sustained window";
    if (v.contains("sustained_p99_s")) {
      const double p99 = v["sustained_p99_s"].get<double>();
      verdict = p99 <= deadline ? "meets" : fmt::format("MISSES: needs {}x", format_number(p99 / deadline, 3));
      // Its p99 is over the samples that arrived: a path that drops them is faster than it is useful.
      if (p["dropped"].get<std::int64_t>() > 0)
        verdict += fmt::format(" (drops {})",
                               format_number(p["dropped"].get<double>() / p["samples"].get<double>() * 100, 3) + "%");
    }
    t.add({p["name"].get<std::string>() + (p["via_side_input"].get<bool>() ? " (side input)" : ""),
           format_seconds(deadline), std::to_string(lat["count"].get<std::size_t>()), format_percentile_s(lat, "p50"),
           format_percentile_s(lat, "p99"), format_percentile_s(lat, "max"),
           fmt::format("{} of {}", p["missed"].get<std::int64_t>(), p["samples"].get<std::int64_t>()),
           std::to_string(p["late"].get<std::int64_t>()), std::to_string(p["dropped"].get<std::int64_t>()),
           format_percentile_s(p["data_age_s"], "p99"),
           v.contains("sustained_p99_s") ? format_seconds(v["sustained_p99_s"].get<double>()) : "-", verdict});
  }
  return t.render(0) +
         "  a path's latency: capture -> the first result of its sink that used the sample; missed = late + "
         "dropped (overtaken by a newer sample before reaching the sink); data age: sink result - capture of the "
         "sample behind it\n";
}

/// Per control task: how old the result it reads is (summary.json "staleness").
std::string staleness_text(const json& staleness) {
  std::string out;
  for (const auto& [name, s] : staleness.items()) {
    const auto& ts = s["time_s"];
    if (ts["count"].get<std::size_t>() == 0) {
      out += fmt::format("staleness ({} reads {}): no result yet at any tick\n", name, s["reads"].get<std::string>());
      continue;
    }
    out += fmt::format("staleness ({} at {} reads {}): p50 {}, p99 {}, max {}", name,
                       core::format_hertz(s["rate_Hz"].get<double>()), s["reads"].get<std::string>(),
                       format_seconds(ts["p50"].get<double>()), format_seconds(ts["p99"].get<double>()),
                       format_seconds(ts["max"].get<double>()));
    if (s.contains("distance_m"))
      out += fmt::format("; at {} m/s: p99 {} cm, max {} cm", format_number(s["speed_mps"].get<double>()),
                         format_number(s["distance_m"]["p99"].get<double>() * 100, 3),
                         format_number(s["distance_m"]["max"].get<double>() * 100, 3));
    out += "\n";
  }
  return out;
}

/// Cold against sustained: a row per window (summary.json "windows"), the clocks of units that have DVFS points.
std::string windows_text(const json& windows, const model::HardwareSpec& hw) {
  std::string out;
  const auto& cold = windows["cold"];
  const auto& hot = windows["sustained"];
  if (cold["latency_s"]["count"].get<std::size_t>() > 0 && hot["latency_s"]["count"].get<std::size_t>() > 0) {
    Table w({"window", "frames", "p50", "p99", "max", "missed", "temperature", "clocks"});
    for (const auto* win : {&cold, &hot}) {
      std::vector<std::string> clocks;
      for (const auto& item : (*win)["mean_frequency_Hz"].items()) {
        const std::string& name = item.key();
        // A unit without DVFS points runs at a placeholder clock that cannot move: not a clock worth showing.
        const auto unit = std::find_if(hw.units.begin(), hw.units.end(),
                                       [&name](const model::ComputeUnitSpec& c) { return c.name == name; });
        if (unit != hw.units.end() && unit->operating_points.size() < 2) continue;
        clocks.push_back(name + " " + core::format_hertz(item.value().get<double>()));
      }
      w.add({fmt::format("{} {}-{}", win == &cold ? "cold" : "sustained",
                         format_seconds((*win)["from_s"].get<double>()), format_seconds((*win)["to_s"].get<double>())),
             std::to_string((*win)["frames"].get<std::int64_t>()),
             format_seconds((*win)["latency_s"]["p50"].get<double>()),
             format_seconds((*win)["latency_s"]["p99"].get<double>()),
             format_seconds((*win)["latency_s"]["max"].get<double>()),
             std::to_string((*win)["missed"].get<std::int64_t>()),
             (*win)["mean_temperature_C"].is_null()
                 ? "-"
                 : format_number((*win)["mean_temperature_C"].get<double>(), 3) + " C",
             clocks.empty() ? std::string("fixed") : fmt::format("{}", fmt::join(clocks, ", "))});
    }
    out += "\n" + w.render(0);
  }
  return out;
}

/// The verdict: the worst path's when there are several, else end to end; then the estimate and bound alone and
/// each stage's slice (summary.json "verdict", "paths").
std::string verdict_text(const json& j, double deadline_s) {
  std::string out;
  const auto& v = j["verdict"];
  if (j["paths"].size() > 1 && !v["worst_path"].is_null()) {
    // Several paths: the verdict is the worst of them (the largest sustained p99 for its deadline).
    const auto& w = v["worst_path"];
    const double p99 = w["sustained_p99_s"].get<double>();
    const double deadline = w["deadline_s"].get<double>();
    std::size_t failing = 0;
    for (const auto& p : j["paths"])
      failing += p["verdict"].contains("meets_deadline_at_p99") && !p["verdict"]["meets_deadline_at_p99"].get<bool>();
    out += fmt::format("\nverdict ({} paths, the worst decides): {}: sustained p99 {} against its {} deadline: {}\n",
                       j["paths"].size(), w["name"].get<std::string>(), format_seconds(p99), format_seconds(deadline),
                       p99 <= deadline ? fmt::format("meets it with {} to spare", format_seconds(deadline - p99))
                                       : fmt::format("MISSES it: needs a {}x speed-up ({} of {} paths miss)",
                                                     format_number(p99 / deadline, 3), failing, j["paths"].size()));
    for (const auto& p : j["paths"])
      if (p["name"] == w["name"]) out += "  " + confidence_sentence(p["verdict"]) + "\n";
  } else if (v.contains("sustained_p99_s")) {
    const double p99 = v["sustained_p99_s"].get<double>();
    out += fmt::format(
        "\nverdict: sustained p99 {} against the {} deadline: {}\n", format_seconds(p99), format_seconds(deadline_s),
        p99 <= deadline_s ? fmt::format("meets it with {} to spare", format_seconds(deadline_s - p99))
                          : fmt::format("MISSES it: needs a {}x speed-up", format_number(p99 / deadline_s, 3)));
    out += "  " + confidence_sentence(v) + "\n";
  }
  out += fmt::format(
      "  end to end alone on an idle SoC: estimate {} (effective roofs), bound {} (peak roofs, no "
      "overhead){}\n",
      format_seconds(v["estimate_end_to_end_s"].get<double>()), format_seconds(v["bound_end_to_end_s"].get<double>()),
      v["bound_end_to_end_s"].get<double>() > deadline_s
          ? ": the bound exceeds the deadline, IMPOSSIBLE whatever the kernels reach"
          : "");
  for (const auto& [name, s] : v["stage_slices"].items()) {
    const double slice = s["slice_s"].get<double>();
    const double hot99 = s["sustained_p99_s"].get<double>();
    const double floor = s["estimate_alone_s"].get<double>();
    out += fmt::format(
        "  {}: estimate alone {} (bound {}); cold mean {} ({}x the estimate), sustained mean {} ({}x), sustained p99 "
        "{} against its {} slice: {}\n",
        name, format_seconds(floor), format_seconds(s["bound_alone_s"].get<double>()),
        format_seconds(s["cold_mean_s"].get<double>()), format_number(s["cold_mean_s"].get<double>() / floor, 3),
        format_seconds(s["sustained_mean_s"].get<double>()),
        format_number(s["sustained_mean_s"].get<double>() / floor, 3), format_seconds(hot99), format_seconds(slice),
        hot99 <= slice ? fmt::format("fits ({} headroom)", format_number((slice - hot99) / slice * 100, 3) + "%")
                       : fmt::format("DOES NOT FIT: needs a {}x speed-up", format_number(hot99 / slice, 3)));
  }
  return out;
}

/// Busy units, used levels and queue depths (summary.json "utilisation").
std::string utilisation_text(const json& utilisation) {
  std::string out;
  std::vector<std::string> busy;
  for (const auto& [u, entry] : utilisation["units"].items())
    busy.push_back(fmt::format("{} {}%", u, format_number(entry["busy"].get<double>() * 100, 3)));
  for (const auto& [level, entry] : utilisation["memory"].items())
    busy.push_back(fmt::format("{} {}%", level, format_number(entry["utilisation"].get<double>() * 100, 3)));
  out += fmt::format("utilisation: {}\n", fmt::join(busy, ", "));
  std::vector<std::string> queues;
  for (const auto& [s, q] : utilisation["queues"].items())
    queues.push_back(fmt::format("{} mean {} max {}/{}", s, format_number(q["mean"].get<double>(), 3),
                                 q["max"].get<int>(), q["capacity"].get<int>()));
  if (!queues.empty()) out += fmt::format("queues: {}\n", fmt::join(queues, ", "));
  return out;
}

/// Periodic tasks' responses and cause-effect chains' data age and reaction (summary.json "tasks", "chains").
std::string responses_text(const json& tasks, const json& chains) {
  std::string out;
  for (const auto& [name, task] : tasks.items()) {
    if (!task.contains("response_s") || task["response_s"]["count"].get<std::size_t>() == 0) continue;
    const auto& r = task["response_s"];
    out += fmt::format("task {} on {}: response p50 {}, p99 {}, max {}; {} of {} releases missed its {} deadline\n",
                       name, task["unit"].get<std::string>(), format_seconds(r["p50"].get<double>()),
                       format_seconds(r["p99"].get<double>()), format_seconds(r["max"].get<double>()),
                       task["missed"].get<std::int64_t>(), task["jobs"].get<std::int64_t>(),
                       format_seconds(task["deadline_s"].get<double>()));
  }
  for (const auto& [name, c] : chains.items()) {
    const auto& age = c["data_age_s"];
    const auto& reaction = c["reaction_s"];
    if (age["count"].get<std::size_t>() == 0) {
      out += fmt::format("chain {}: no actuation\n", name);
      continue;
    }
    out += fmt::format("chain {}: data age p50 {}, p99 {}, max {}", name, format_seconds(age["p50"].get<double>()),
                       format_seconds(age["p99"].get<double>()), format_seconds(age["max"].get<double>()));
    if (reaction["count"].get<std::size_t>() > 0)
      out += fmt::format("; reaction p50 {}, p99 {}, max {}", format_seconds(reaction["p50"].get<double>()),
                         format_seconds(reaction["p99"].get<double>()), format_seconds(reaction["max"].get<double>()));
    out += "\n";
  }
  return out;
}

/// Measured frames against the simulated service (summary.json "measured_frames").
std::string measured_frames_text(const json& measured) {
  std::string out;
  for (const auto& [name, m] : measured.items()) {
    const auto& meas = m["measured_s"];
    const auto& sim = m["simulated_service_s"];
    if (meas["count"].get<std::size_t>() == 0 || sim["count"].get<std::size_t>() == 0) continue;
    out += fmt::format(
        "{}: {} measured frames ({}): p50 {}, p99 {}; simulated service p50 {}, p99 {} "
        "(measured_timeline.csv beside kernels.csv)\n",
        name, m["frames"].get<std::size_t>(), m["file"].get<std::string>(), format_seconds(meas["p50"].get<double>()),
        format_seconds(meas["p99"].get<double>()), format_seconds(sim["p50"].get<double>()),
        format_seconds(sim["p99"].get<double>()));
  }
  return out;
}

}  // namespace

std::string RunAnalysis::text(const json& j) const {
  std::string out;
  const auto& run = j["run"];
  out += fmt::format("framesim run: {} on {}: {} simulated in {} wall ({} kernels)\n\n", spec_.name,
                     spec_.hardware.name, format_seconds(run["simulated_s"].get<double>()), format_seconds(wall_s_),
                     run["kernels"].get<std::int64_t>());
  const auto& all = j["windows"]["all"];
  Table t(percentile_header("latency (counted frames)"));
  t.add(percentile_cells("end to end", all["latency_s"]));
  for (std::size_t s = 0; s < spec_.stages.size(); ++s) {
    const auto& st = all["stages"][spec_.stages[s].name];
    const std::string& unit = spec_.hardware.units[spec_.stages[s].unit].name;
    t.add(percentile_cells(fmt::format("  {} on {}: wait", spec_.stages[s].name, unit), st["wait_s"]));
    t.add(percentile_cells(fmt::format("  {} on {}: service", spec_.stages[s].name, unit), st["service_s"]));
  }
  out += t.render(0) + "  " + percentile_footnote() + "\n\n";

  const auto& frames = j["frames"];
  out += fmt::format(
      "deadline {}: {} of {} counted frames missed ({} late, {} dropped) = {}; longest run of misses {}\n",
      format_seconds(spec_.deadline_s), frames["missed"].get<std::int64_t>(), frames["counted"].get<std::int64_t>(),
      frames["late"].get<std::int64_t>(), frames["dropped"].get<std::int64_t>(),
      format_number(frames["miss_rate"].get<double>() * 100, 3) + "%", frames["longest_miss_run"].get<int>());
  if (!frames["drops_by"].empty()) {
    std::vector<std::string> parts;
    for (const auto& [k, v] : frames["drops_by"].items())
      parts.push_back(fmt::format("{} {}", k, v.get<std::int64_t>()));
    out += fmt::format("  drops: {}\n", fmt::join(parts, ", "));
  }
  if (j["paths"].size() > 1) out += "\n" + paths_text(j["paths"]) + "\n";
  out += staleness_text(j["staleness"]);
  const auto& e = j["energy"];
  std::vector<std::string> parts;
  for (const auto& [u, v] : e["breakdown_per_frame_J"]["compute"].items())
    if (v.get<double>() > 0) parts.push_back(fmt::format("{} compute {}", u, core::format_joules(v.get<double>())));
  for (const auto& [l, v] : e["breakdown_per_frame_J"]["memory"].items())
    if (v.get<double>() > 0) parts.push_back(fmt::format("{} {}", l, core::format_joules(v.get<double>())));
  parts.push_back("static " + core::format_joules(e["breakdown_per_frame_J"]["static"].get<double>()));
  const auto& pf = e["per_frame_J"];
  if (pf["count"].get<std::size_t>() > 0)
    out += fmt::format("energy per {} frame: mean {}, p99 {} = {}; mean power {}\n", spec_.sensors.front().name,
                       core::format_joules(pf["mean"].get<double>()), core::format_joules(pf["p99"].get<double>()),
                       fmt::join(parts, " + "), core::format_watts(e["mean_power_W"].get<double>()));
  const auto& th = j["thermal"];
  if (th["has_thermal_model"].get<bool>()) {
    out += fmt::format("thermal: {} C -> max {} C (trip {} C), final {} C; throttled {} of the run\n",
                       format_number(th["initial_C"].get<double>(), 3), format_number(th["max_C"].get<double>(), 3),
                       format_number(th["trip_C"].get<double>(), 3), format_number(th["final_C"].get<double>(), 3),
                       format_number(th["throttled_fraction"].get<double>() * 100, 3) + "%");
  }
  out += windows_text(j["windows"], spec_.hardware);
  out += verdict_text(j, spec_.deadline_s);
  out += utilisation_text(j["utilisation"]);
  if (j.contains("slowdown")) {
    bool slowed = false;
    for (const auto& [name, st] : j["slowdown"].items())
      slowed = slowed || std::fabs(st["slowdown"].get<double>() - 1) > 1e-3;
    if (slowed) out += slowdown_text(j["slowdown"]);
  }
  out += why_text(j["why"]);
  out += responses_text(j["tasks"], j["chains"]);
  out += measured_frames_text(j["measured_frames"]);
  const auto& l = j["little"];
  // L and lambda W count the same frame times (an identity once every frame has left), so the line reports the
  // mean occupancy, not a check of the engine; the two differ only by frames still in the system at the end.
  out += fmt::format("frames in the system: L = {} on average = lambda {}/s x W {} (Little's law)\n",
                     format_number(l["L_frames"].get<double>(), 4), format_number(l["lambda_per_s"].get<double>(), 4),
                     format_seconds(l["W_s"].get<double>()));
  for (const auto& w : j["warnings"]) out += "warning: " + w.get<std::string>() + "\n";
  for (const auto& n : j["notes"]) out += "note: " + n.get<std::string>() + "\n";
  return out;
}

}  // namespace framesim::analysis
