// The run's plots: the latency tail, latency over time, and temperature / clocks / power.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/units.hpp"
#include "run_analysis.hpp"
#include "svg.hpp"
#include "tail_plot.hpp"

namespace framesim::analysis {

using core::format_number;
using core::format_seconds;

std::string RunAnalysis::svg_latency_cdf() const {
  // Both the counted run and the sustained window the verdict judges, each with its confidence band.
  const auto& all = all_.latency_s.sorted();
  const auto& hot = sustained_.latency_s.sorted();
  const double hi = std::max(all.empty() ? spec_.deadline_s : all.back(), spec_.deadline_s) * 1.1;
  Plot plot(fmt::format("Latency tail, {}", spec_.name), Axis{0, hi, false, "end-to-end latency", "s"},
            Axis{tail_floor(all.size()), 1, true, "fraction of frames slower", ""});
  plot.set_id("tail");
  add_latency_tail(plot, all, 1, "all counted");
  add_latency_tail(plot, hot, 4, "sustained");
  plot.reference(spec_.deadline_s, Line::vertical, 0, fmt::format("deadline {}", format_seconds(spec_.deadline_s)));
  if (!all.empty()) {
    plot.reference(0.01, Line::horizontal, 3, fmt::format("p99 {}", format_seconds(all_.latency_s.quantile(0.99))));
    plot.reference(0.001, Line::horizontal, 3, fmt::format("p99.9 {}", format_seconds(all_.latency_s.quantile(0.999))));
  }
  return plot.render();
}

std::string RunAnalysis::svg_latency_over_time() const {
  double hi = spec_.deadline_s;
  std::size_t most = 0;
  std::vector<std::pair<double, double>> maxima;
  for (const auto& b : latency_bins_) {
    if (b.frames == 0) continue;
    hi = std::max(hi, b.max_latency_s);
    most = std::max(most, b.frames);
    maxima.emplace_back(b.first_capture_s, b.max_latency_s);
  }
  Plot plot(fmt::format("Latency per frame over time, {}", spec_.name),
            Axis{spec_.warmup_s, spec_.duration_s, false, "capture time", "s"},
            Axis{0, hi * 1.1, false, "latency", "s"});
  plot.set_id("overtime");
  // At most 3000 points: per bin of capture time, the maximum (the tail is what matters).
  plot.line(maxima, 1,
            most > 1 ? fmt::format("max per {}", format_seconds((spec_.duration_s - spec_.warmup_s) / kLatencyBins))
                     : "every frame");
  plot.reference(spec_.deadline_s, Line::horizontal, 0, fmt::format("deadline {}", format_seconds(spec_.deadline_s)));
  return plot.render();
}

std::string RunAnalysis::svg_thermal() const {
  // Three panels on one time axis: die temperature, unit clocks, power.
  const double end = ticks_.empty() ? spec_.duration_s : ticks_.back().time_s;
  const int width = 900, height = 300;
  double t_lo = 1e9, t_hi = -1e9, p_max = 0, f_max = 0;
  for (std::size_t i = 0; i < ticks_.size(); ++i) {
    const auto& t = ticks_[i];
    t_lo = std::min(t_lo, t.temperature_C);
    t_hi = std::max(t_hi, t.temperature_C);
    if (full_period(i)) p_max = std::max(p_max, t.power_W);
    for (std::size_t u = 0; u < t.unit_frequency_Hz.size(); ++u)
      if (spec_.hardware.units[u].operating_points.size() >= 2) f_max = std::max(f_max, t.unit_frequency_Hz[u]);
  }
  if (ticks_.empty()) t_lo = 0, t_hi = 100;
  if (spec_.hardware.thermal) t_hi = std::max(t_hi, spec_.hardware.thermal->trip_C);
  const Axis time{0, end, false, "time", "s"};

  Plot temperature(fmt::format("Die temperature, {}", spec_.name), time,
                   Axis{t_lo - 2, t_hi + 2, false, "temperature (C)", ""}, width, height);
  temperature.set_id("temperature");
  std::vector<std::pair<double, double>> temp;
  for (const auto& t : ticks_) temp.emplace_back(t.time_s, t.temperature_C);
  temperature.line(temp, 0, "die temperature");
  if (spec_.hardware.thermal) {
    temperature.reference(spec_.hardware.thermal->trip_C, Line::horizontal, 0,
                          fmt::format("trip {} C", format_number(spec_.hardware.thermal->trip_C)));
    temperature.reference(spec_.hardware.thermal->release_C, Line::horizontal, 2,
                          fmt::format("release {} C", format_number(spec_.hardware.thermal->release_C)));
  }

  Plot clocks("Clocks", time, Axis{0, f_max * 1.1, false, "clock", "Hz"}, width, height);
  clocks.set_id("clocks");
  for (std::size_t u = 0; u < spec_.hardware.units.size(); ++u) {
    // A unit without DVFS points runs at a placeholder clock that cannot move: not a clock worth drawing.
    if (spec_.hardware.units[u].operating_points.size() < 2) continue;
    std::vector<std::pair<double, double>> f;
    // Steps: a clock set at a tick holds until the next.
    double before = spec_.hardware.units[u].fastest_allowed().frequency_Hz;
    f.emplace_back(0.0, before);
    for (const auto& t : ticks_) {
      f.emplace_back(t.time_s, before);
      f.emplace_back(t.time_s, before = t.unit_frequency_Hz[u]);
    }
    clocks.line(f, static_cast<int>(1 + u), spec_.hardware.units[u].name);
  }

  // Each period's average as a step over that period; the last, partial period (the run drains mid-period)
  // averages over a few milliseconds and is left out rather than drawn as a spike.
  // The axis reaches the sustained envelope too, so its line is drawn on the axis, not past it.
  const double envelope_W = spec_.hardware.thermal ? spec_.hardware.thermal->sustained_power_W() : 0.0;
  Plot power("Power (average over each full governor period)", time,
             Axis{0, std::max(p_max, envelope_W) * 1.15 + 1e-9, false, "power", "W"}, width, height);
  power.set_id("power");
  std::vector<std::pair<double, double>> p;
  double from = 0;
  for (std::size_t i = 0; i < ticks_.size(); ++i) {
    if (full_period(i)) {
      p.emplace_back(from, ticks_[i].power_W);
      p.emplace_back(ticks_[i].time_s, ticks_[i].power_W);
    }
    from = ticks_[i].time_s;
  }
  power.line(p, 3, "SoC power");
  if (spec_.hardware.thermal) {
    power.reference(envelope_W, Line::horizontal, 0,
                    fmt::format("sustained envelope {}", core::format_watts(envelope_W)));
  }
  return stack_svgs({temperature.render(), clocks.render(), power.render()}, width, height);
}

bool RunAnalysis::full_period(std::size_t tick) const {
  double longest = 0, previous = 0;
  for (const auto& t : ticks_) {
    longest = std::max(longest, t.time_s - previous);
    previous = t.time_s;
  }
  const double start = tick > 0 ? ticks_[tick - 1].time_s : 0.0;
  return ticks_[tick].time_s - start >= 0.5 * longest;
}

}  // namespace framesim::analysis
