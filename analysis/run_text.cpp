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

namespace {

/// "where the time of the tail goes" and the worst frames, from summary.json's "why".
std::string why_text(const WhyDetails& why) {
  std::string out;
  auto parts_text = [](const std::map<std::string, double>& parts) {
    std::vector<std::string> items;
    for (const auto& [k, value] : parts) {
      if (std::abs(value) < 1e-9) continue;
      items.push_back(fmt::format("{} {}", k.substr(0, k.size() - 2), format_resolved_s(value)));
    }
    return fmt::format("{}", fmt::join(items, ", "));
  };
  if (why.tail) {
    const TailDetails& t = *why.tail;
    out += fmt::format(
        "why the tail (the {} at or above p99 {}): critical path mostly through {} ({} of the "
        "time on the path); mean {}\n",
        core::counted(static_cast<std::size_t>(t.frames), "frame"), format_seconds(t.p99_s), t.critical_stage,
        format_number(t.critical_share * 100, 3) + "%", parts_text(t.mean_parts.by_key()));
  }
  if (why.worst_frames.empty()) return out;
  Table w({"worst frames", "capture", "latency", "queue", "blocked", "floor", "throttling", "bus", "variability", "gap",
           "slowest stage"});
  std::size_t shown = 0;
  for (const WorstFrame& f : why.worst_frames) {
    if (++shown > 5) break;
    const LatencyParts& p = f.parts;
    std::string slowest = "-";
    double longest = -1;
    for (const CriticalStep& step : f.path) {
      const double time = step.end_s - step.start_s + step.parts.queue_s;
      if (time > longest) longest = time, slowest = step.stage;
    }
    w.add({fmt::format("frame {}", f.frame), format_seconds(f.capture_s), format_seconds(f.latency_s),
           format_resolved_s(p.queue_s), format_resolved_s(p.blocked_s), format_resolved_s(p.floor_s),
           format_resolved_s(p.throttling_s), format_resolved_s(p.bus_s), format_resolved_s(p.variability_s),
           format_resolved_s(p.gap_s), slowest});
  }
  return out + w.render(2);
}

/// Every path's latency, misses and verdict, one row each (summary.json "paths").
std::string paths_text(const RunSummary& s) {
  Table t({"path (sensor -> sink)", "deadline", "n", "p50", "p99", "max", "missed", "late", "dropped", "data age p99",
           "sustained p99", "verdict"});
  const auto& paths = s.details->paths;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const PathDetails& p = paths[i];
    const PathSummary& ps = s.paths.at(i);
    const StatBlock& lat = p.latency_s;
    const double deadline = p.deadline_s;
    std::string verdict = "no sample in the sustained window";
    if (ps.sustained_p99_s) {
      const double p99 = *ps.sustained_p99_s;
      verdict = p99 <= deadline ? "meets" : fmt::format("MISSES: needs {}x", format_number(p99 / deadline, 3));
      // Its p99 is over the samples that arrived: a path that drops them is faster than it is useful.
      if (p.dropped > 0)
        verdict +=
            fmt::format(" (drops {})",
                        format_number(static_cast<double>(p.dropped) / static_cast<double>(p.samples) * 100, 3) + "%");
    }
    t.add({ps.name + (p.via_side_input ? " (side input)" : ""), format_seconds(deadline), std::to_string(lat.count),
           format_percentile_s(lat, &StatBlock::p50), format_percentile_s(lat, &StatBlock::p99),
           format_percentile_s(lat, &StatBlock::max), fmt::format("{} of {}", p.missed, p.samples),
           std::to_string(p.late), std::to_string(p.dropped), format_percentile_s(p.data_age_s, &StatBlock::p99),
           ps.sustained_p99_s ? format_seconds(*ps.sustained_p99_s) : "-", verdict});
  }
  return t.render(0) +
         "  a path's latency: capture -> the first result of its sink that used the sample; missed = late + "
         "dropped (overtaken by a newer sample before reaching the sink); data age: sink result - capture of the "
         "sample behind it\n";
}

/// Per control task: how old the result it reads is (summary.json "staleness").
std::string staleness_text(const RunSummary& summary) {
  std::string out;
  for (const auto& [name, s] : summary.details->staleness) {
    const StatBlock& ts = summary.staleness_time_s.at(name);
    if (ts.count == 0) {
      out += fmt::format("staleness ({} reads {}): no result yet at any tick\n", name, s.reads);
      continue;
    }
    out += fmt::format("staleness ({} at {} reads {}): p50 {}, p99 {}, max {}", name, core::format_hertz(s.rate_Hz),
                       s.reads, format_seconds(ts.p50.value()), format_seconds(ts.p99.value()),
                       format_seconds(ts.max.value()));
    if (s.distance_m)
      out += fmt::format("; at {} m/s: p99 {} cm, max {} cm", format_number(s.speed_mps.value()),
                         format_number(s.distance_m->p99.value() * 100, 3),
                         format_number(s.distance_m->max.value() * 100, 3));
    out += "\n";
  }
  return out;
}

/// Cold against sustained: a row per window (summary.json "windows"), the clocks of units that have DVFS points.
std::string windows_text(const RunSummary& s, const model::HardwareSpec& hw) {
  std::string out;
  const WindowSummary& cold = s.cold.value();
  const WindowSummary& hot = s.sustained;
  if (cold.latency_s.count > 0 && hot.latency_s.count > 0) {
    Table w({"window", "frames", "p50", "p99", "max", "missed", "temperature", "clocks"});
    for (const auto& [win, at] : {std::pair{&cold, &s.details->windows.cold}, {&hot, &s.details->windows.sustained}}) {
      std::vector<std::string> clocks;
      for (const auto& [name, hz] : at->mean_frequency_Hz) {
        // A unit without DVFS points runs at a placeholder clock that cannot move: not a clock worth showing.
        const auto unit = std::find_if(hw.units.begin(), hw.units.end(),
                                       [&name = name](const model::ComputeUnitSpec& c) { return c.name == name; });
        if (unit != hw.units.end() && unit->operating_points.size() < 2) continue;
        clocks.push_back(name + " " + core::format_hertz(hz));
      }
      w.add({fmt::format("{} {}-{}", win == &cold ? "cold" : "sustained", format_seconds(at->from_s),
                         format_seconds(at->to_s)),
             std::to_string(win->frames), format_seconds(win->latency_s.p50.value()),
             format_seconds(win->latency_s.p99.value()), format_seconds(win->latency_s.max.value()),
             std::to_string(win->misses.missed()),
             at->mean_temperature_C ? format_number(*at->mean_temperature_C, 3) + " C" : "-",
             clocks.empty() ? std::string("fixed") : fmt::format("{}", fmt::join(clocks, ", "))});
    }
    out += "\n" + w.render(0);
  }
  return out;
}

/// The verdict: the worst path's when there are several, else end to end; then the estimate and bound alone and
/// each stage's slice (summary.json "verdict", "paths").
std::string verdict_text(const RunSummary& s, double deadline_s) {
  std::string out;
  const RunDetails& d = *s.details;
  const VerdictDetails& v = d.verdict;
  if (d.paths.size() > 1 && v.worst_path) {
    // Several paths: the verdict is the worst of them (the largest sustained p99 for its deadline).
    const WorstPath& w = *v.worst_path;
    const double p99 = w.sustained_p99_s;
    const double deadline = w.deadline_s;
    std::size_t failing = 0;
    for (const PathDetails& p : d.paths)
      failing += p.verdict.meets_deadline_at_p99 && !*p.verdict.meets_deadline_at_p99;
    out += fmt::format("\nverdict ({} paths, the worst decides): {}: sustained p99 {} against its {} deadline: {}\n",
                       d.paths.size(), w.name, format_seconds(p99), format_seconds(deadline),
                       p99 <= deadline ? fmt::format("meets it with {} to spare", format_seconds(deadline - p99))
                                       : fmt::format("MISSES it: needs a {}x speed-up ({} of {} paths miss)",
                                                     format_number(p99 / deadline, 3), failing, d.paths.size()));
    for (std::size_t i = 0; i < d.paths.size(); ++i)
      if (s.paths.at(i).name == w.name) {
        const PathVerdictDetails& pv = d.paths[i].verdict;
        out += "  " + confidence_sentence(pv.at_confidence, pv.sustained_p99, pv.confidence) + "\n";
      }
  } else if (s.sustained_p99_s) {
    const double p99 = *s.sustained_p99_s;
    out += fmt::format(
        "\nverdict: sustained p99 {} against the {} deadline: {}\n", format_seconds(p99), format_seconds(deadline_s),
        p99 <= deadline_s ? fmt::format("meets it with {} to spare", format_seconds(deadline_s - p99))
                          : fmt::format("MISSES it: needs a {}x speed-up", format_number(p99 / deadline_s, 3)));
    out += "  " + confidence_sentence(s.at_confidence, v.sustained_p99, v.confidence) + "\n";
  }
  out += fmt::format(
      "  end to end alone on an idle SoC: estimate {} (effective roofs), bound {} (peak roofs, no "
      "overhead){}\n",
      format_seconds(*s.estimate_end_to_end_s), format_seconds(*s.bound_end_to_end_s),
      *s.bound_end_to_end_s > deadline_s ? ": the bound exceeds the deadline, IMPOSSIBLE whatever the kernels reach"
                                         : "");
  for (const auto& [name, sl] : v.stage_slices) {
    const double slice = sl.slice_s;
    const double hot99 = sl.sustained_p99_s;
    const double floor = sl.estimate_alone_s;
    out += fmt::format(
        "  {}: estimate alone {} (bound {}); cold mean {} ({}x the estimate), sustained mean {} ({}x), sustained p99 "
        "{} against its {} slice: {}\n",
        name, format_seconds(floor), format_seconds(sl.bound_alone_s), format_seconds(sl.cold_mean_s),
        format_number(sl.cold_mean_s / floor, 3), format_seconds(sl.sustained_mean_s),
        format_number(sl.sustained_mean_s / floor, 3), format_seconds(hot99), format_seconds(slice),
        hot99 <= slice ? fmt::format("fits ({} headroom)", format_number((slice - hot99) / slice * 100, 3) + "%")
                       : fmt::format("DOES NOT FIT: needs a {}x speed-up", format_number(hot99 / slice, 3)));
  }
  return out;
}

/// Busy units, used levels and queue depths (summary.json "utilisation").
std::string utilisation_text(const RunSummary& s) {
  const UtilisationDetails& utilisation = s.details->utilisation;
  std::string out;
  std::vector<std::string> busy;
  for (const auto& [u, fraction] : s.unit_busy)
    busy.push_back(fmt::format("{} {}%", u, format_number(fraction * 100, 3)));
  for (const auto& [level, entry] : utilisation.memory)
    busy.push_back(fmt::format("{} {}%", level, format_number(entry.utilisation * 100, 3)));
  out += fmt::format("utilisation: {}\n", fmt::join(busy, ", "));
  std::vector<std::string> queues;
  for (const auto& [st, q] : utilisation.queues)
    queues.push_back(fmt::format("{} mean {} max {}/{}", st, format_number(q.mean, 3), q.max, q.capacity));
  if (!queues.empty()) out += fmt::format("queues: {}\n", fmt::join(queues, ", "));
  return out;
}

/// Periodic tasks' responses and cause-effect chains' data age and reaction (summary.json "tasks", "chains").
std::string responses_text(const RunDetails& d) {
  std::string out;
  for (const auto& [name, task] : d.tasks) {
    if (!task.response_s || task.response_s->count == 0) continue;
    const StatBlock& r = *task.response_s;
    out += fmt::format("task {} on {}: response p50 {}, p99 {}, max {}; {} of {} releases missed its {} deadline\n",
                       name, task.unit.value(), format_seconds(r.p50.value()), format_seconds(r.p99.value()),
                       format_seconds(r.max.value()), task.missed.value(), task.jobs.value(),
                       format_seconds(task.deadline_s));
  }
  for (const auto& [name, c] : d.chains) {
    const StatBlock& age = c.data_age_s;
    const StatBlock& reaction = c.reaction_s;
    if (age.count == 0) {
      out += fmt::format("chain {}: no actuation\n", name);
      continue;
    }
    out += fmt::format("chain {}: data age p50 {}, p99 {}, max {}", name, format_seconds(age.p50.value()),
                       format_seconds(age.p99.value()), format_seconds(age.max.value()));
    if (reaction.count > 0)
      out += fmt::format("; reaction p50 {}, p99 {}, max {}", format_seconds(reaction.p50.value()),
                         format_seconds(reaction.p99.value()), format_seconds(reaction.max.value()));
    out += "\n";
  }
  return out;
}

/// Measured frames against the simulated service (summary.json "measured_frames").
std::string measured_frames_text(const std::map<std::string, MeasuredFramesDetails>& measured) {
  std::string out;
  for (const auto& [name, m] : measured) {
    const StatBlock& meas = m.measured_s;
    const StatBlock& sim = m.simulated_service_s;
    if (meas.count == 0 || sim.count == 0) continue;
    out += fmt::format(
        "{}: {} measured frames ({}): p50 {}, p99 {}; simulated service p50 {}, p99 {} "
        "(measured_timeline.csv beside kernels.csv)\n",
        name, m.frames, m.file, format_seconds(meas.p50.value()), format_seconds(meas.p99.value()),
        format_seconds(sim.p50.value()), format_seconds(sim.p99.value()));
  }
  return out;
}

}  // namespace

std::string RunAnalysis::text(const RunSummary& s) const {
  const RunDetails& d = s.details.value();
  std::string out;
  out += fmt::format("framesim run: {} on {}: {} simulated in {} wall ({} kernels)\n\n", spec_.name,
                     spec_.hardware.name, format_seconds(d.run.simulated_s), format_seconds(wall_s_), d.run.kernels);
  Table t(percentile_header("latency (counted frames)"));
  t.add(percentile_cells("end to end", s.all.latency_s));
  for (std::size_t st = 0; st < spec_.stages.size(); ++st) {
    const StageTimes& times = d.windows.all.stages.at(spec_.stages[st].name);
    const std::string& unit = spec_.hardware.units[spec_.stages[st].unit].name;
    t.add(percentile_cells(fmt::format("  {} on {}: wait", spec_.stages[st].name, unit), times.wait_s));
    t.add(percentile_cells(fmt::format("  {} on {}: service", spec_.stages[st].name, unit), times.service_s));
  }
  out += t.render(0) + "  " + percentile_footnote() + "\n\n";

  const Misses& misses = s.all.misses;
  out +=
      fmt::format("deadline {}: {} of {} counted frames missed ({} late, {} dropped) = {}; longest run of misses {}\n",
                  format_seconds(spec_.deadline_s), misses.missed(), s.all.frames, misses.late, misses.dropped,
                  format_number(s.all.miss_rate * 100, 3) + "%", *s.longest_miss_run);
  if (!d.frames.drops_by.empty()) {
    std::vector<std::string> parts;
    for (const auto& [k, v] : d.frames.drops_by) parts.push_back(fmt::format("{} {}", k, v));
    out += fmt::format("  drops: {}\n", fmt::join(parts, ", "));
  }
  if (d.paths.size() > 1) out += "\n" + paths_text(s) + "\n";
  out += staleness_text(s);
  const EnergyBreakdown& breakdown = d.energy.breakdown_per_frame_J;
  std::vector<std::string> parts;
  for (const auto& [u, v] : breakdown.compute)
    if (v > 0) parts.push_back(fmt::format("{} compute {}", u, core::format_joules(v)));
  for (const auto& [l, v] : breakdown.memory)
    if (v > 0) parts.push_back(fmt::format("{} {}", l, core::format_joules(v)));
  parts.push_back("static " + core::format_joules(breakdown.static_J));
  const StatBlock& pf = s.energy_per_frame_J;
  if (pf.count > 0)
    out += fmt::format("energy per {} frame: mean {}, p99 {} = {}; mean power {}\n", spec_.sensors.front().name,
                       core::format_joules(pf.mean.value()), core::format_joules(pf.p99.value()),
                       fmt::join(parts, " + "), core::format_watts(s.mean_power_W));
  if (s.has_thermal_model) {
    const ThermalDetails& th = d.thermal;
    out += fmt::format("thermal: {} C -> max {} C (trip {} C), final {} C; throttled {} of the run\n",
                       format_number(th.initial_C, 3), format_number(*s.max_temperature_C, 3),
                       format_number(th.trip_C.value(), 3), format_number(th.final_C.value(), 3),
                       format_number(s.throttled_fraction * 100, 3) + "%");
  }
  out += windows_text(s, spec_.hardware);
  out += verdict_text(s, spec_.deadline_s);
  out += utilisation_text(s);
  if (s.slowdown) {
    bool slowed = false;
    for (const auto& [name, st] : *s.slowdown) slowed = slowed || std::fabs(st.slowdown - 1) > 1e-3;
    if (slowed) out += slowdown_text(*s.slowdown);
  }
  out += why_text(d.why);
  out += responses_text(d);
  out += measured_frames_text(d.measured_frames);
  const LittleDetails& l = d.little;
  // L and lambda W count the same frame times (an identity once every frame has left), so the line reports the
  // mean occupancy, not a check of the engine; the two differ only by frames still in the system at the end.
  out += fmt::format("frames in the system: L = {} on average = lambda {}/s x W {} (Little's law)\n",
                     format_number(l.L_frames, 4), format_number(l.lambda_per_s, 4), format_seconds(l.W_s));
  for (const auto& w : d.warnings) out += "warning: " + w + "\n";
  for (const auto& n : d.notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace framesim::analysis
