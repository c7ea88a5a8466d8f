#include "engine/ledger.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "model/contention.hpp"
#include "model/cost.hpp"

namespace framesim::engine {

Ledger::Ledger(const model::ScenarioSpec& spec, Platform& platform)
    : spec_(spec),
      platform_(platform),
      window_bytes_(platform.masters(), std::vector<double>(platform.levels.size(), 0.0)),
      sample_bytes_(window_bytes_),
      memory_energy_J_(platform.levels.size(), 0.0),
      level_bytes_(platform.levels.size(), 0.0),
      temperature_C_(spec.initial_temperature_C.value_or(spec.hardware.thermal ? ambient_C(0) : 25.0)) {
  now_.temperature_C = temperature_C_;
  for (const auto& u : platform_.units)
    now_.unit_frequency_Hz.push_back(u.spec->operating_points[u.pstate].frequency_Hz);
  before_last_tick_ = now_;
}

/// The ambient temperature at `time_s`: a replayed profile (steps), else the scenario's or the hardware's.
/// A step within kSameInstant_s of `time_s` has been reached: SimGrid may fire the tick at a step's time that
/// much early, and the step must not wait a whole governor period (examples/11_throttling/ambient.yaml).
double Ledger::ambient_C(double time_s) const {
  const auto& profile = spec_.ambient_profile_C;
  if (!profile.empty()) {
    auto it = std::upper_bound(profile.begin(), profile.end(), time_s + kSameInstant_s,
                               [](double t, const auto& point) { return t < point.first; });
    return it == profile.begin() ? profile.front().second : std::prev(it)->second;
  }
  if (spec_.ambient_C) return *spec_.ambient_C;
  return spec_.hardware.thermal ? spec_.hardware.thermal->ambient_C : 25.0;
}

void Ledger::track(Running& r) {
  r.id = next_id_++;
  running_.push_back(r);  // maybe before it starts: until then a tick sees no progress (state INITED)
}

/// Adds `bytes` (> 0) that `master` moved to `level` to every byte count; returns their energy, booked to the level.
double Ledger::add_bytes(std::size_t master, std::size_t level, double bytes) {
  window_bytes_[master][level] += bytes;
  sample_bytes_[master][level] += bytes;
  const double e = model::memory_energy_J(*platform_.levels[level].spec, bytes);
  memory_energy_J_[level] += e;
  level_bytes_[level] += bytes;
  return e;
}

void Ledger::book_bytes(std::size_t master, std::size_t level, double bytes, double* bucket) {
  if (bytes <= 0) return;
  const double e = add_bytes(master, level, bytes);
  window_dynamic_J_ += e;
  *bucket += e;
}

void Ledger::book(Running& r, double exec_progress) {
  const double progress = r.base + r.span * exec_progress;
  if (progress <= r.progress) return;
  double voltage2 = 0;
  if (r.master < platform_.units.size()) {
    // Progress made since the last booking ran at the current operating point: pstates change only at
    // governor ticks, and every running activity is booked at each tick before the governor acts.
    const UnitState& unit = platform_.units[r.master];
    voltage2 = model::dynamic_energy_scale(*unit.spec, unit.pstate);
  }
  double energy = 0;
  // The share of the kernel's work made since the last booking (progress past 1 by rounding books nothing more).
  const double fraction = std::min(1.0, progress) - std::max(0.0, r.progress);
  if (fraction > 0) {
    const KernelPlan& k = *r.kernels;
    if (r.master < platform_.units.size()) {
      const double compute = k.compute_energy_J * r.cycle_scale * fraction * voltage2;
      platform_.units[r.master].compute_energy_J += compute;
      energy += compute;
    }
    for (std::size_t lv = 0; lv < k.bytes.size(); ++lv) {
      const double b = k.bytes[lv] * r.byte_scale * fraction;
      if (b > 0) energy += add_bytes(r.master, lv, b);
    }
  }
  r.progress = progress;
  window_dynamic_J_ += energy;
  *r.bucket += energy;
}

/// Books every running activity up to its progress now.
void Ledger::book_running() {
  // Asking an activity for its remaining work is a simcall: while this actor waits for the answer, the
  // actor owning the activity may run, finish it and drop it (and erase its entry). So: hold a reference to
  // every activity, ask, then book only the entries still running (entries are in increasing id order).
  struct Probe {
    std::uint64_t id;
    sg4::ExecPtr exec;
    double remaining;
  };
  std::vector<Probe> probes;
  probes.reserve(running_.size());
  for (const auto& r : running_) probes.push_back({r.id, r.exec, 0.0});
  for (auto& p : probes) {
    const auto state = p.exec->get_state();
    p.remaining = state == sg4::Activity::State::STARTED    ? p.exec->get_remaining_ratio()
                  : state == sg4::Activity::State::FINISHED ? 0.0
                                                            : 1.0;  // not started, or cancelled: no progress
  }
  auto probe = probes.begin();
  for (auto& r : running_) {
    while (probe != probes.end() && probe->id < r.id) ++probe;
    if (probe != probes.end() && probe->id == r.id) book(r, 1.0 - probe->remaining);
  }
}

void Ledger::sample_contention(double now_s) {
  const double dt = now_s - last_sample_s_;
  if (dt <= 0) return;
  book_running();
  update_port_caps(sample_bytes_, dt);
  for (auto& master : sample_bytes_) std::fill(master.begin(), master.end(), 0.0);
  last_sample_s_ = now_s;
}

/// Integrates energy since the last tick, steps the RC model, lets the governor act, records a sample.
TickRecord Ledger::tick(double now, Governor governor) {
  const double dt = now - last_tick_s_;
  if (dt <= 0) return {};
  book_running();
  double static_J = 0;
  bool throttled = false;
  for (auto& u : platform_.units) {
    const double e = model::static_power_W(*u.spec, u.pstate) * dt;
    u.static_energy_J += e;
    static_J += e;
    if (u.pstate > u.spec->fastest_point) {  // slower than its cap (or nominal) allows: throttled
      u.throttled_s += dt;
      throttled = true;
    }
  }
  for (const auto& l : platform_.levels) throttled = throttled || l.pstate > 0;
  if (throttled) throttled_s_ += dt;
  static_energy_J_ += static_J;
  const double power = (window_dynamic_J_ + static_J) / dt;
  // Utilisation is against the bandwidth in force over the interval, before the governor moves a memory clock.
  std::vector<double> level_capacity_Bps;
  for (const auto& l : platform_.levels)
    level_capacity_Bps.push_back(model::effective_level_bandwidth_Bps(*l.spec, l.pstate));
  if (const auto& th = spec_.hardware.thermal) {
    // Exact step of C dT/dt = P - (T - Ta)/R with P constant over the interval.
    temperature_C_ = th->step_C(temperature_C_, ambient_C(last_tick_s_), power, dt);
    if (governor == Governor::acts) govern_step(*th);
  }
  TickRecord r;
  r.time_s = now;
  r.temperature_C = temperature_C_;
  r.power_W = power;
  r.dynamic_J = window_dynamic_J_;
  r.static_J = static_J;
  for (const auto& u : platform_.units) r.unit_frequency_Hz.push_back(u.spec->operating_points[u.pstate].frequency_Hz);
  r.level_bandwidth_Bps.assign(platform_.levels.size(), 0.0);
  for (const auto& master : window_bytes_)
    for (std::size_t lv = 0; lv < platform_.levels.size(); ++lv) r.level_bandwidth_Bps[lv] += master[lv] / dt;
  for (std::size_t lv = 0; lv < platform_.levels.size(); ++lv)
    r.level_utilisation.push_back(r.level_bandwidth_Bps[lv] / level_capacity_Bps[lv]);
  r.throttled = throttled;
  if (!separate_sampling_) {
    update_port_caps(window_bytes_, dt);
    for (auto& master : sample_bytes_) std::fill(master.begin(), master.end(), 0.0);
  }
  window_dynamic_J_ = 0;
  for (auto& master : window_bytes_) std::fill(master.begin(), master.end(), 0.0);
  last_tick_s_ = now;
  before_last_tick_ = now_;
  now_.temperature_C = temperature_C_;
  now_.unit_frequency_Hz = r.unit_frequency_Hz;
  return r;
}

void Ledger::govern_step(const model::ThermalSpec& th) {
  int step = 0;
  if (temperature_C_ >= th.trip_C) step = +1;          // slower
  else if (temperature_C_ <= th.release_C) step = -1;  // faster
  if (step == 0) return;
  const bool all_the_way = th.policy == model::GovernorPolicy::bang_bang;
  // The operating point after `pstate` for a part whose fastest allowed point is `first` (a clock cap, else 0)
  // and slowest `last`: never faster than the cap.
  auto next_point = [&](std::size_t pstate, std::size_t first, std::size_t last) -> std::size_t {
    if (step > 0) return all_the_way ? last : std::min(last, pstate + 1);
    return all_the_way || pstate <= first ? first : pstate - 1;
  };
  for (auto& u : platform_.units) {
    if (!u.throttleable) continue;
    const std::size_t next = next_point(u.pstate, u.spec->fastest_point, u.spec->operating_points.size() - 1);
    if (next != u.pstate) {
      u.pstate = next;
      u.host->set_pstate(static_cast<unsigned long>(next));
      if (listener_) listener_->unit_speed_changed(platform_.unit_index(u));
    }
  }
  for (auto& l : platform_.levels) {
    if (!l.throttleable) continue;
    const std::size_t next = next_point(l.pstate, 0, l.spec->operating_points.size() - 1);
    if (next != l.pstate) {
      l.pstate = next;
      l.link->set_bandwidth(model::effective_level_bandwidth_Bps(*l.spec, next));
      if (listener_) listener_->level_bandwidth_changed(static_cast<std::size_t>(&l - platform_.levels.data()));
    }
  }
}

/// Each port gets the bandwidth the cost model gives its unit when the other masters used the level as they did
/// over the last interval (model/contention.hpp): a Little's-law cap at the loaded latency, or the level's
/// contention curve. Traffic measured over one interval sets the ports for the next: the time resolution of
/// contention is that interval — the scenario's contention_period when it samples separately, else the tick.
void Ledger::update_port_caps(const std::vector<std::vector<double>>& window_bytes, double dt) {
  const auto& hw = spec_.hardware;
  std::vector<double> level_Bps(platform_.levels.size(), 0.0);
  for (const auto& master : window_bytes)
    for (std::size_t lv = 0; lv < level_Bps.size(); ++lv) level_Bps[lv] += master[lv] / dt;
  const double now_s = sg4::Engine::get_clock();
  if (now_s > platform_.others_utilisation_since_s + kSameInstant_s)
    platform_.others_utilisation_before = platform_.others_utilisation;
  platform_.others_utilisation_since_s = now_s;
  for (std::size_t u = 0; u < platform_.units.size(); ++u) {
    for (std::size_t lv = 0; lv < platform_.levels.size(); ++lv) {
      if (!platform_.ports[u][lv]) continue;
      const std::size_t point = platform_.levels[lv].pstate;
      const double capacity = model::effective_level_bandwidth_Bps(hw.memory[lv], point);
      const double others = level_Bps[lv] - window_bytes[u][lv] / dt;
      platform_.others_utilisation[u][lv] = others / capacity;
      const auto bandwidth = model::port_bandwidth_Bps(hw.memory[lv], hw.units[u], point, others / capacity);
      FRAMESIM_ASSERT(bandwidth.has_value(), "a port exists only where the cost model gives one");
      platform_.ports[u][lv]->set_bandwidth(*bandwidth);
      if (listener_) listener_->port_bandwidth_changed(u, lv, *bandwidth);
    }
  }
}

}  // namespace framesim::engine
