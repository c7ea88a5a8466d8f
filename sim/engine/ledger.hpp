// Where energy, bytes and temperature are booked. Every activity in flight is tracked (Running) and its energy
// and bytes are booked in proportion to its progress, at every tick and when it ends, so every total is exact at
// any instant. Each tick also adds static energy, steps the lumped-RC die model exactly, lets the governor move
// operating points, and loads each Little's-law port with the latency the other masters cause.
#pragma once

#include <cstdint>
#include <vector>

#include <boost/intrusive/list.hpp>

#include "engine/plans.hpp"
#include "engine/platform.hpp"
#include "engine/records.hpp"

namespace framesim::engine {

/// Two events less than this apart happen at one instant: SimGrid's timers may fire that much early
/// (surf/precision) and its clock drifts by about as much from exact sums of its events.
inline constexpr double kSameInstant_s = 1e-9;

/// An activity in flight: the kernel it runs and where its energy goes. It lives on the stack of the actor
/// that waits for it and unlinks itself from the ledger when it goes.
struct Running : boost::intrusive::list_base_hook<boost::intrusive::link_mode<boost::intrusive::auto_unlink>> {
  std::uint64_t id = 0;  // increasing: the ledger's list stays sorted by id
  sg4::ExecPtr exec;
  std::size_t master = 0;               // units first, then background masters
  const KernelPlan* kernels = nullptr;  // the kernel it runs (one per activity)
  double cycle_scale = 1;
  double byte_scale = 1;
  /// The activity may run only the rest of a kernel (resumed after a preemption): its progress p is the
  /// kernel's progress base + span p.
  double base = 0;
  double span = 1;
  double* bucket = nullptr;  // where its energy is booked (a frame, the tasks, background)
  double progress = 0;       // of the kernel, booked so far
};

/// Whether the governor may change clocks at a tick: at the periodic ticks it acts; at the run's final tick (which
/// only books the last interval) it holds.
enum class Governor { acts, holds };

class Ledger {
 public:
  Ledger(const model::ScenarioSpec& spec, Platform& platform);

  /// Tracks `r` from now on (its exec may not have started yet).
  void track(Running& r);
  /// Books `r`'s energy and bytes up to its activity's progress `exec_progress` in [0, 1].
  void book(Running& r, double exec_progress);
  /// Books `bytes` that `master` moved to `level` (a stream on the fast path) into `*bucket`.
  void book_bytes(std::size_t master, std::size_t level, double bytes, double* bucket);

  /// Books everything up to `now_s`, steps the die temperature, lets the governor change clocks if `governor`
  /// says it acts, reloads the Little's-law ports; returns the interval's record (energy, temperature, clocks,
  /// bandwidth, utilisation of each memory level). Fields that belong to the scheduler and the queues are left for
  /// the caller. It asks activities for their progress, which yields to other actors: callers must not tick twice
  /// at once.
  TickRecord tick(double now_s, Governor governor);
  /// Books every running activity up to now, then reloads the ports from the traffic since the last sample
  /// (the contention period, see update_port_caps). Yields like tick(): callers must not run both at once.
  void sample_contention(double now_s);
  /// Ports are reloaded by sample_contention (a separate, finer period) instead of at every tick.
  void sample_contention_separately() { separate_sampling_ = true; }

  /// Who else must hear of the governor's and the ports' changes (may be null).
  void set_listener(PlatformListener* listener) { listener_ = listener; }

  double temperature_C() const { return temperature_C_; }
  /// The die temperature and unit clocks in force just before `t_s`: those of the last tick before it. A tick at
  /// `t_s` itself is not seen, whether or not it has run yet (the order of actors at one instant decides nothing);
  /// "at `t_s`" is within kSameInstant_s.
  struct State {
    double temperature_C = 0;
    std::vector<double> unit_frequency_Hz;
  };
  const State& state_before(double t_s) const { return last_tick_s_ < t_s - kSameInstant_s ? now_ : before_last_tick_; }
  const std::vector<double>& memory_energy_J() const { return memory_energy_J_; }
  double static_energy_J() const { return static_energy_J_; }
  double throttled_s() const { return throttled_s_; }
  /// Bytes each level served over the whole run.
  const std::vector<double>& level_bytes() const { return level_bytes_; }

 private:
  double ambient_C(double time_s) const;
  void govern_step(const model::ThermalSpec& th);
  void book_running();
  double add_bytes(std::size_t master, std::size_t level, double bytes);
  void update_port_caps(const std::vector<std::vector<double>>& window_bytes, double dt);

  const model::ScenarioSpec& spec_;
  Platform& platform_;
  boost::intrusive::list<Running, boost::intrusive::constant_time_size<false>> running_;
  std::uint64_t next_id_ = 0;
  double window_dynamic_J_ = 0;
  std::vector<std::vector<double>> window_bytes_;  // per master, per level, since the last tick
  std::vector<std::vector<double>> sample_bytes_;  // per master, per level, since the last contention sample
  double last_sample_s_ = 0;
  bool separate_sampling_ = false;
  std::vector<double> memory_energy_J_;
  std::vector<double> level_bytes_;
  double static_energy_J_ = 0;
  double throttled_s_ = 0;
  double last_tick_s_ = 0;
  double temperature_C_ = 25;
  State now_;               // since the last tick
  State before_last_tick_;  // until it
  PlatformListener* listener_ = nullptr;
};

}  // namespace framesim::engine
