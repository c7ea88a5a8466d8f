// The run's plots: the latency tail, latency over time, and temperature / clocks / power.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/units.hpp"
#include "run_analysis.hpp"
#include "svg.hpp"

namespace framesim::analysis {

using core::format_number;
using core::format_seconds;

std::string RunAnalysis::svg_latency_cdf() const {
  // The tail: the fraction of frames slower than each latency, on a log scale, so p99 sits at 10^-2 and
  // p99.9 at 10^-3, with the deadline across.
  const auto& sorted = all_.latency_s.sorted();
  const std::size_t n = sorted.size();
  const double floor = n > 0 ? 0.5 / static_cast<double>(n) : 1e-3;
  const double hi = std::max(n > 0 ? sorted.back() : spec_.deadline_s, spec_.deadline_s) * 1.1;
  Plot plot(fmt::format("Latency tail, {} ({} counted frames)", spec_.name, n), Axis{0, hi, false, "end-to-end latency", "s"},
            Axis{std::min(floor, 1e-3), 1, true, "fraction of frames slower", ""});
  std::vector<std::pair<double, double>> pts;
  const std::size_t step = std::max<std::size_t>(1, n / 4000);
  for (std::size_t i = 0; i < n; i += step)
    pts.emplace_back(sorted[i], std::max(floor, 1.0 - static_cast<double>(i) / static_cast<double>(n)));
  if (n > 0) pts.emplace_back(sorted.back(), floor);
  plot.line(pts, 1, "all counted frames");
  plot.reference(spec_.deadline_s, true, 0, fmt::format("deadline {}", format_seconds(spec_.deadline_s)));
  if (n > 0) {
    plot.reference(0.01, false, 3, fmt::format("p99 {}", format_seconds(all_.latency_s.quantile(0.99))));
    plot.reference(0.001, false, 4, fmt::format("p99.9 {}", format_seconds(all_.latency_s.quantile(0.999))));
  }
  return plot.render();
}

std::string RunAnalysis::svg_latency_over_time() const {
  double hi = spec_.deadline_s;
  for (const auto& p : latency_points_) hi = std::max(hi, p.latency_s);
  Plot plot(fmt::format("Latency per frame over time, {}", spec_.name),
            Axis{spec_.warmup_s, spec_.duration_s, false, "capture time", "s"}, Axis{0, hi * 1.1, false, "latency", "s"});
  // At most ~3000 points: per bin, the maximum (the tail is what matters).
  const std::size_t bins = 3000;
  const std::size_t per = std::max<std::size_t>(1, latency_points_.size() / bins);
  std::vector<std::pair<double, double>> maxima;
  for (std::size_t i = 0; i < latency_points_.size(); i += per) {
    double m = 0;
    for (std::size_t k = i; k < std::min(latency_points_.size(), i + per); ++k) m = std::max(m, latency_points_[k].latency_s);
    maxima.emplace_back(latency_points_[i].capture_s, m);
  }
  plot.line(maxima, 1, per > 1 ? fmt::format("max of every {} frames", per) : "every frame");
  plot.reference(spec_.deadline_s, false, 0, fmt::format("deadline {}", format_seconds(spec_.deadline_s)));
  return plot.render();
}

std::string RunAnalysis::svg_thermal() const {
  // Three panels on one time axis: die temperature, unit clocks, power.
  const double end = ticks_.empty() ? spec_.duration_s : ticks_.back().time_s;
  const int width = 900, height = 300;
  double t_lo = 1e9, t_hi = -1e9, p_max = 0, f_max = 0;
  for (const auto& t : ticks_) {
    t_lo = std::min(t_lo, t.temperature_C);
    t_hi = std::max(t_hi, t.temperature_C);
    p_max = std::max(p_max, t.power_W);
    for (double f : t.unit_frequency_Hz) f_max = std::max(f_max, f);
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
    temperature.reference(spec_.hardware.thermal->trip_C, false, 0,
                          fmt::format("trip {} C", format_number(spec_.hardware.thermal->trip_C)));
    temperature.reference(spec_.hardware.thermal->release_C, false, 2,
                          fmt::format("release {} C", format_number(spec_.hardware.thermal->release_C)));
  }

  Plot clocks("Clocks", time, Axis{0, f_max * 1.1, false, "clock", "Hz"}, width, height);
  clocks.set_id("clocks");
  for (std::size_t u = 0; u < spec_.hardware.units.size(); ++u) {
    std::vector<std::pair<double, double>> f;
    for (const auto& t : ticks_) f.emplace_back(t.time_s, t.unit_frequency_Hz[u]);
    clocks.line(f, static_cast<int>(1 + u), spec_.hardware.units[u].name);
  }

  Plot power("Power (average over each governor period)", time, Axis{0, p_max * 1.15 + 1e-9, false, "power", "W"},
             width, height);
  power.set_id("power");
  std::vector<std::pair<double, double>> p;
  for (const auto& t : ticks_) p.emplace_back(t.time_s, t.power_W);
  power.line(p, 3, "SoC power");
  if (spec_.hardware.thermal) {
    const double envelope = spec_.hardware.thermal->sustained_power_W();
    power.reference(envelope, false, 0, fmt::format("sustained envelope {}", core::format_watts(envelope)));
  }
  return stack_svgs({temperature.render(), clocks.render(), power.render()}, width, height);
}

}  // namespace framesim::analysis
