// Scenario YAML (scenarios/*.yaml) -> ScenarioSpec, with its hardware and networks resolved relative
// to the scenario file. See scenarios/README.md for the schema.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "config/override.hpp"
#include "model/scenario.hpp"

namespace framesim::config {

/// Most events one run may simulate (README "Limits"): frames of every sensor times the kernels of the stages they
/// pass, task releases times their kernels, and samples of the time series. At the engine's 0.3-0.5 M events per
/// second this is minutes of wall time; a billion would be hours.
inline constexpr double kMaxSimulatedEvents = 1e8;

/// Most events one simulated second may hold (README "Limits"): a thousand times a 30 Hz camera through a
/// 300-layer network. A rate past it is a typo (a sensor at 1 THz), and even a 1-second run would take hours.
inline constexpr double kMaxEventsPerSimulatedSecond = 1e7;
/// Most simulated processes (SimGrid actors: a sensor, a stage, a task, a background source each) one run may
/// have (README "Limits"). Each gets its own stack (8 MiB of address space by SimGrid's default): 512 of them are
/// 4 GiB, what a process is often allowed, and more would end in SimGrid's "Failed to allocate stack" abort.
inline constexpr std::size_t kMaxSimulatedProcesses = 256;

/// The events `spec` would simulate over its duration (an estimate from rates, stages and sample periods).
double simulated_events(const model::ScenarioSpec& spec);
/// The same per simulated second, and the key path of the rate making most of them ("sensors.camera.rate",
/// "tasks.control.rate", "sample_period"; empty for the governor and time slices, set in the hardware file).
struct EventRate {
  double per_second = 0;
  std::vector<std::string> largest_key;
  double largest_per_second = 0;
};
EventRate simulated_event_rate(const model::ScenarioSpec& spec);
/// A message when the simulated processes of `spec` exceed kMaxSimulatedProcesses; nothing otherwise.
std::optional<std::string> process_count_problem(const model::ScenarioSpec& spec);
/// A message when simulated_events(spec) exceeds kMaxSimulatedEvents, naming what makes it so; nothing otherwise.
std::optional<std::string> run_size_problem(const model::ScenarioSpec& spec);
/// A message when a sensor's timestamp log ends before the run does (the sensor would fall silent and the
/// verdict, the windows and the energy per frame would describe an idle machine); nothing otherwise. A log of n
/// captures over T seconds covers T n / (n - 1): its last capture plus one mean period.
std::optional<std::string> sensor_log_problem(const model::ScenarioSpec& spec);

/// Loads and validates a scenario and every file it refers to, after applying `overrides` (see Override for the
/// key paths). Throws core::UserError listing every problem.
model::ScenarioSpec load_scenario(const std::filesystem::path& path, const std::vector<Override>& overrides = {});

}  // namespace framesim::config
