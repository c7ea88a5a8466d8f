// The SimGrid platform of a scenario (see README.md, "Mapping"): a host per compute unit with one pstate per
// operating point, a pseudo-host and a link per memory level (shared levels share the link: max-min fair),
// Little's-law port links per unit and level, dispatch links, and a host and port per background master.
// Plus the runtime state that goes with each part: operating point, energy and time booked, the scheduler.
#pragma once

#include <memory>
#include <vector>

#include <simgrid/s4u.hpp>

#include "engine/scheduler.hpp"
#include "model/scenario.hpp"

namespace framesim::engine {

namespace sg4 = simgrid::s4u;

/// A compute unit as it runs: its host, operating point, scheduler and what it has used.
struct UnitState {
  const model::ComputeUnitSpec* spec = nullptr;
  sg4::Host* host = nullptr;
  std::size_t pstate = 0;
  bool throttleable = false;  // the governor may move its operating point (between spec->fastest_point and the last)
  std::unique_ptr<UnitScheduler> scheduler;
  double static_energy_J = 0;
  double throttled_s = 0;
  double compute_energy_J = 0;
  double busy_core_s_at_tick = 0;  // the scheduler's busy core-seconds at the last tick
};

struct LevelState {
  const model::MemoryLevelSpec* spec = nullptr;
  sg4::Host* host = nullptr;  // the pseudo-host kernels send their bytes to
  sg4::Link* link = nullptr;  // its (effective) bandwidth: the shared resource
  std::size_t pstate = 0;
  bool throttleable = false;
};

struct Platform {
  std::vector<UnitState> units;
  std::vector<LevelState> levels;
  std::vector<std::vector<sg4::Link*>> ports;  // [unit][level]: its Little's-law cap, or null
  std::vector<bool> overhead_in_route;         // [unit]: its dispatch overhead is the latency of its routes
  /// [unit][level]: the others' utilisation its port was last loaded with (Ledger::update_port_caps); 0 alone.
  /// A kernel starting at the instant of a reload sees the values before it (`others_utilisation_before`), as a
  /// capture at a tick's time sees the state before the tick: both paths then agree whatever the actor order.
  std::vector<std::vector<double>> others_utilisation, others_utilisation_before;
  double others_utilisation_since_s = -1;  // when `others_utilisation` was last written
  std::vector<sg4::Host*> background_hosts;
  std::vector<sg4::Link*> background_ports;  // caps each background master at its rate

  std::size_t unit_index(const UnitState& u) const { return static_cast<std::size_t>(&u - units.data()); }
  /// Masters are units first, then background sources (window byte counts are kept per master).
  std::size_t masters() const { return units.size() + background_hosts.size(); }
};

/// A SimGrid engine set up as framesim needs it: quiet, the ptask_L07 model, no TCP window cap on route latency
/// (route latency is only ever a dispatch overhead), and surf/precision 1e-12 (at the default 1e-9 a sleep could
/// end half a nanosecond early, enough to tell apart two paths that must agree). One per process.
std::unique_ptr<sg4::Engine> start_engine();

/// Told when a part of the platform changes speed (the governor, loaded latency), for a model of the sharing kept
/// beside SimGrid's (the fluid executor, fluid_executor.cpp).
class PlatformListener {
 public:
  virtual ~PlatformListener() = default;
  virtual void unit_speed_changed(std::size_t unit) = 0;
  virtual void level_bandwidth_changed(std::size_t level) = 0;
  virtual void port_bandwidth_changed(std::size_t unit, std::size_t level, double bandwidth_Bps) = 0;
};

/// Builds the platform into the current SimGrid engine (which must use the ptask_L07 model). With
/// `overhead_as_route_latency`, a unit's dispatch overhead becomes the latency of links private to it (one activity
/// per kernel instead of a sleep and an activity) — except on units whose scheduler may stop a kernel mid-way
/// (preemptive, time_slice), where a resumed kernel must not pay its launch again. `owners`: how many stage and
/// task indices the schedulers keep busy time for.
Platform build_platform(const model::ScenarioSpec& spec, bool overhead_as_route_latency, std::size_t owners);

}  // namespace framesim::engine
