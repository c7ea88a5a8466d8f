// Kernels as SimGrid activities (--exact): each kernel (or the rest of a stopped one) is one parallel task under
// ptask_L07 — the job's cores listed once per core with their cycles, the bytes from the first core to each
// level's pseudo-host through the unit's port and the level's link — and SimGrid shares them. The dispatcher
// waits for the first of them to end or for its next timer, whichever comes first. A background stream is an actor
// of its own here (stream_background_on_simgrid), its chunks SimGrid activities through its capped port.
#include <simgrid/s4u.hpp>

#include "core/error.hpp"
#include "engine/executor.hpp"
#include "engine/ledger.hpp"
#include "engine/platform.hpp"

namespace framesim::engine {

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

class ExactExecutor final : public Executor {
 public:
  ExactExecutor(Ledger& ledger, RunTotals& totals) : ledger_(ledger), totals_(totals) {}

  void start(RunJob& j) override {
    const KernelPlan& k = j.worker->kernels[j.next];
    const double left = 1.0 - j.kernel_done;
    std::vector<double> flops = k.flops;
    for (double& f : flops) f *= j.cycle_scale * left;
    std::vector<double> matrix = k.matrix;
    for (double& b : matrix) b *= j.byte_scale * left;
    j.exec = sg4::this_actor::exec_init(k.hosts, flops, matrix);
    j.booking.exec = j.exec;
    ledger_.track(j.booking);
    j.exec->start();
    j.exec_start_s = sg4::Engine::get_clock();
    ++totals_.activities;
    running_.push_back(&j);
  }

  double stop(RunJob& j) override {
    const double done = 1.0 - j.exec->get_remaining_ratio();
    j.exec->cancel();
    ledger_.book(j.booking, done);
    forget(j);
    return done;
  }

  double wait(double until_s, std::vector<RunJob*>& ended) override {
    const double now = sg4::Engine::get_clock();
    if (running_.empty()) {
      if (until_s == std::numeric_limits<double>::infinity()) return until_s;
      if (until_s > now) sg4::this_actor::sleep_until(until_s);
      return std::max(now, until_s);
    }
    execs_.clear();
    for (const RunJob* j : running_) execs_.push_back(j->exec);
    const double timeout = until_s == std::numeric_limits<double>::infinity() ? -1.0 : std::max(0.0, until_s - now);
    sg4::Exec::wait_any_for(execs_, timeout);
    // Every activity that ended at this time, not only the one wait_any reported. SimGrid may report a timeout or
    // one activity first while another, due within 1 ps (rounding), has not ended yet: that one ends at this
    // instant too (cancelled, booked in full), as on the fluid path.
    for (std::size_t i = 0; i < running_.size();) {
      RunJob* j = running_[i];
      const bool done_now = j->exec->get_state() == sg4::Activity::State::STARTED && remaining_s(*j) <= kInstant_s;
      if (done_now) j->exec->cancel();
      if (done_now || j->exec->get_state() == sg4::Activity::State::FINISHED || j->exec->test()) {
        ledger_.book(j->booking, 1.0);
        forget(*j);
        ended.push_back(j);
      } else {
        ++i;
      }
    }
    // The instant's time is on the engine's lattice (engine/instant.hpp): SimGrid's clock is brought there (a
    // fraction of a picosecond) before anything starts, so that no activity starts off it.
    const double t = on_lattice(sg4::Engine::get_clock());
    if (t > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(t);
    return sg4::Engine::get_clock();
  }

  /// The time `j`'s activity still needs at the rate it went at so far (its rate changes only at events).
  double remaining_s(const RunJob& j) const {
    const double left = j.exec->get_remaining_ratio();
    const double elapsed = sg4::Engine::get_clock() - j.exec_start_s;
    return left >= 1.0 ? std::numeric_limits<double>::infinity() : left / (1.0 - left) * elapsed;
  }

  double peek_s() override { return std::numeric_limits<double>::infinity(); }

  // The ledger probes the activities it tracks at every tick and contention sample.
  void book_in_flight() override {}
  void set_background_rate(std::size_t, double) override {}
  bool runs_launches(std::size_t) const override { return false; }  // the dispatcher's launch timers

 private:
  void forget(RunJob& j) {
    j.booking.unlink();
    j.exec = nullptr;
    j.booking.exec = nullptr;
    running_.erase(std::find(running_.begin(), running_.end(), &j));
  }

  Ledger& ledger_;
  RunTotals& totals_;
  std::vector<RunJob*> running_;
  std::vector<sg4::ExecPtr> execs_;
};

}  // namespace

void stream_background_on_simgrid(const model::ScenarioSpec& spec, std::size_t b, Platform& platform, Ledger& ledger,
                                  RunTotals& totals, const bool& stopping) {
  const auto& bg = spec.background[b];
  const std::size_t master = platform.units.size() + b;
  std::size_t step = 0;
  double rate = bg.profile.empty() ? bg.rate_Bps : bg.profile.front().second;
  auto clock = [] { return sg4::Engine::get_clock(); };
  auto next_change = [&] { return step + 1 < bg.profile.size() ? bg.profile[step + 1].first : kNever; };
  auto apply_steps = [&] {
    bool stepped = false;
    while (!bg.profile.empty() && clock() >= next_change()) {
      rate = bg.profile[++step].second;
      stepped = true;
    }
    if (stepped) platform.background_ports[b]->set_bandwidth(rate);
  };
  const std::size_t level = bg.level;
  while (!stopping) {
    apply_steps();
    if (rate <= 0) {
      if (next_change() >= kNever) return;
      sg4::this_actor::sleep_until(next_change());
      continue;
    }
    // Chunks of 10 ms at the current rate, cut at the next step.
    const double chunk = rate * std::min(0.01, std::max(1e-6, next_change() - clock()));
    KernelPlan kernel;
    kernel.name = bg.name;
    kernel.bytes.assign(platform.levels.size(), 0.0);
    kernel.bytes[level] = chunk;
    Running running;
    running.exec = sg4::this_actor::exec_init({platform.background_hosts[b], platform.levels[level].host}, {0.0, 0.0},
                                              {0.0, chunk, 0.0, 0.0});
    running.exec->start();
    ++totals.activities;
    running.master = master;
    running.kernels = &kernel;
    running.bucket = &totals.background_energy_J;
    ledger.track(running);
    while (true) {
      try {
        if (next_change() >= kNever) running.exec->wait();
        else running.exec->wait_until(next_change());
        break;
      } catch (const simgrid::TimeoutException&) {
        apply_steps();  // the chunk goes on at the new rate
      }
    }
    ledger.book(running, 1.0);
  }
}

std::unique_ptr<Executor> make_exact_executor(const model::ScenarioSpec&, Platform&, Ledger& ledger,
                                              RunTotals& totals) {
  return std::make_unique<ExactExecutor>(ledger, totals);
}

}  // namespace framesim::engine
