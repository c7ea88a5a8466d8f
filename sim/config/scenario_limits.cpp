// The size of a run against framesim's limits (config/scenario.hpp): events per simulated second and per run,
// simulated processes, and whether a sensor's timestamp log covers the run.
#include <algorithm>

#include <fmt/format.h>

#include "config/scenario.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace framesim::config {

EventRate simulated_event_rate(const model::ScenarioSpec& spec) {
  // Kernels of one execution of `work`: a network's layers, else one.
  auto kernels = [&](const model::WorkSpec& w) {
    if (w.kind != model::WorkSpec::Kind::network || w.network < 0 ||
        static_cast<std::size_t>(w.network) >= spec.networks.size())
      return 1.0;
    return static_cast<double>(
        std::max<std::size_t>(1, spec.networks[static_cast<std::size_t>(w.network)].network.layers.size()));
  };
  EventRate r;
  auto add = [&](double per_second, std::vector<std::string> key) {
    r.per_second += per_second;
    if (!key.empty() && per_second > r.largest_per_second) {
      r.largest_per_second = per_second;
      r.largest_key = std::move(key);
    }
  };
  double per_frame = 0;
  for (const auto& st : spec.stages) per_frame += kernels(st.work);
  for (const auto& s : spec.sensors) add(s.rate_Hz * std::max(1.0, per_frame), {"sensors", s.name, "rate"});
  for (const auto& t : spec.tasks) add(t.rate_Hz * kernels(t.work), {"tasks", t.name, "rate"});
  add(1.0 / spec.sample_period_s, {"sample_period"});
  if (spec.hardware.thermal) add(1.0 / spec.hardware.thermal->governor_period_s, {});
  // A time-sliced unit that has work switches once a quantum while it is busy.
  for (std::size_t u = 0; u < spec.hardware.units.size(); ++u) {
    const auto& sched = spec.hardware.units[u].scheduler;
    const bool used = std::any_of(spec.stages.begin(), spec.stages.end(), [&](const auto& st) { return st.unit == u; });
    if (used && sched.policy == model::SchedulingPolicy::time_slice && sched.quantum_s > 0)
      add(1.0 / sched.quantum_s, {});
  }
  return r;
}

double simulated_events(const model::ScenarioSpec& spec) {
  return spec.duration_s * simulated_event_rate(spec).per_second;
}

std::optional<std::string> process_count_problem(const model::ScenarioSpec& spec) {
  const std::size_t n = spec.sensors.size() + spec.stages.size() + spec.tasks.size() + spec.background.size();
  if (n <= kMaxSimulatedProcesses) return std::nullopt;
  return fmt::format(
      "{} sensors, {} stages, {} tasks and {} background sources are {} simulated processes, each with its own "
      "stack; framesim simulates at most {} per run",
      spec.sensors.size(), spec.stages.size(), spec.tasks.size(), spec.background.size(), n, kMaxSimulatedProcesses);
}

std::optional<std::string> run_size_problem(const model::ScenarioSpec& spec) {
  const double events = simulated_events(spec);
  if (events <= kMaxSimulatedEvents) return std::nullopt;
  double sensors_Hz = 0;
  for (const auto& s : spec.sensors) sensors_Hz += s.rate_Hz;
  return fmt::format(
      "{} of simulated time at {} of sensor frames is about {:.3g} events (frames x kernels, task "
      "releases, samples); framesim simulates at most {:.0e} per run (shorten the duration or lower the "
      "rates)",
      core::format_seconds(spec.duration_s), core::format_hertz(sensors_Hz), events, kMaxSimulatedEvents);
}

std::optional<std::string> sensor_log_problem(const model::ScenarioSpec& spec) {
  for (const auto& s : spec.sensors) {
    const std::size_t n = s.timestamps_s.size();
    if (n < 2 || s.timestamps_s.back() <= 0) continue;  // reported where the log is named
    const double covered_s = s.timestamps_s.back() * static_cast<double>(n) / static_cast<double>(n - 1);
    if (spec.duration_s > covered_s * (1 + 1e-9))
      return fmt::format(
          "{} is longer than sensor {}'s timestamp log ({} over {}): the sensor would fall silent "
          "for the rest of the run; run at most {} or give a longer log",
          core::format_seconds(spec.duration_s), s.name, core::counted(n, "capture"), core::format_seconds(covered_s),
          core::format_seconds(covered_s));
  }
  return std::nullopt;
}

}  // namespace framesim::config
