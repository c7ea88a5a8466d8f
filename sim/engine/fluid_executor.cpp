// Kernels in framesim's fluid system (fluid.hpp): each kernel a flow of work 1 whose elements are its core entries
// (cycles / cores each, bounded by one core's speed) and its bytes on its port and its level's bus, exactly the
// parallel task the exact path issues. Background masters are endless streams through their port and bus.
// SimGrid only keeps the clock: the dispatcher sleeps in SimGrid until its next timer when no kernel ends before
// it, and runs the fluid system forward between kernel ends without SimGrid seeing them.
#include <algorithm>
#include <functional>
#include <queue>

#include <simgrid/s4u.hpp>

#include "core/error.hpp"
#include "engine/executor.hpp"

namespace framesim::engine {

namespace {

constexpr std::uint64_t kBackground = std::numeric_limits<std::uint64_t>::max();
constexpr double kNever = std::numeric_limits<double>::infinity();

class FluidExecutor final : public Executor {
 public:
  FluidExecutor(const model::ScenarioSpec& spec, Platform& platform, Ledger& ledger, RunTotals& totals,
                Dispatcher& dispatcher)
      : spec_(spec), platform_(platform), ledger_(ledger), totals_(totals), dispatcher_(dispatcher) {
    for (const auto& u : platform_.units) {
      const double speed = u.spec->operating_points[u.pstate].frequency_Hz;
      unit_cpu_.push_back(fluid_.add_constraint(speed * u.spec->cores, speed, u.spec->cores));
      runs_launches_.push_back(!interrupts_holders(u.scheduler->spec()));
    }
    for (const auto& l : platform_.levels) level_bus_.push_back(fluid_.add_constraint(l.link->get_bandwidth()));
    const std::size_t levels = platform_.levels.size();
    unit_port_.assign(platform_.units.size() * levels, -1);
    for (std::size_t u = 0; u < platform_.units.size(); ++u)
      for (std::size_t lv = 0; lv < levels; ++lv)
        if (platform_.ports[u][lv])
          unit_port_[u * levels + lv] =
              static_cast<std::int64_t>(fluid_.add_constraint(platform_.ports[u][lv]->get_bandwidth()));
    elements_.resize(1 + 2 * levels);
    // A background master streams without end, one byte per unit of work, through its port and its level's bus.
    for (std::size_t b = 0; b < spec_.background.size(); ++b) {
      const auto& bg = spec_.background[b];
      const double rate = bg.profile.empty() ? bg.rate_Bps : bg.profile.front().second;
      background_port_.push_back(fluid_.add_constraint(std::max(0.0, rate)));
      FluidSystem::FlowSpec stream;
      stream.elements = {{background_port_.back(), 1.0}, {level_bus_[bg.level], 1.0}};
      stream.endless = true;
      background_flow_.push_back(fluid_.start(stream, kBackground));
      background_booked_.push_back(0.0);
    }
  }

  void start(RunJob& j) override {
    if (j.launch_left_s > 0) {
      // The unit held and idle until the launch has passed: its work starts at j.work_start_s, when the dispatcher's
      // launch timer would fire (Dispatcher::start_kernel sets it).
      FRAMESIM_ASSERT(j.work_start_s >= fluid_.now_s(), "a launch ends when the work starts, not before now");
      launches_.push({j.work_start_s, &j});
      j.launch_left_s = 0;
      return;
    }
    start_work(j);
  }

  void start_work(RunJob& j) {
    const KernelPlan& k = j.worker->kernels[j.next];
    const double left = 1.0 - j.kernel_done;
    FluidSystem::FlowSpec& f = scratch_;
    FluidSystem::Element* e = elements_.data();  // room for the cores and every level's port and bus
    f.cycles_per_entry = 0;
    const std::size_t unit = j.worker->unit;
    const double cycles = k.cycles * j.cycle_scale * left;
    if (cycles > 0) {
      *e++ = {unit_cpu_[unit], cycles / j.cores, static_cast<std::uint32_t>(j.cores)};  // per core
      f.cycles_per_entry = cycles / j.cores;
    }
    f.speed_of = unit_cpu_[unit];
    FRAMESIM_ASSERT(k.bytes.size() <= level_bus_.size(), "a kernel's bytes are per memory level");
    const std::int64_t* port = unit_port_.data() + unit * level_bus_.size();
    for (std::size_t lv = 0; lv < k.bytes.size(); ++lv) {
      const double bytes = k.bytes[lv] * j.byte_scale * left;
      if (bytes <= 0) continue;
      if (port[lv] >= 0) *e++ = {static_cast<std::size_t>(port[lv]), bytes};
      *e++ = {level_bus_[lv], bytes};
    }
    f.latency_s = 0;
    j.flow = fluid_.start(elements_.data(), static_cast<std::size_t>(e - elements_.data()), f, j.id);
    if (j.flow >= flow_job_.size()) flow_job_.resize(j.flow + 1, nullptr);
    flow_job_[j.flow] = &j;
  }

  double stop(RunJob& j) override {
    // Only a preemptive or time-sliced unit stops a kernel, and on those launches are the dispatcher's: a stopped
    // job's kernel is a flow, never a launch in progress here.
    FRAMESIM_ASSERT(j.flow < flow_job_.size() && flow_job_[j.flow] == &j, "a stopped kernel is a flow");
    const double done = fluid_.progress(j.flow);
    ledger_.book(j.booking, done);
    fluid_.stop(j.flow);
    flow_job_[j.flow] = nullptr;
    return done;
  }

  double wait(double until_s, std::vector<RunJob*>& ended) override {
    // Event by event up to until_s: a launch ending is the executor's own, and so is a kernel end alone in its
    // instant whose job goes straight on (go_on); anything else ends the wait and is the dispatcher's.
    auto on_end = [&](std::size_t flow, std::uint64_t owner) {
      if (owner == kBackground) return;  // background streams never end
      RunJob* j = flow_job_[flow];
      FRAMESIM_ASSERT(j && j->id == owner, "a flow ends for the job that started it");
      flow_job_[flow] = nullptr;
      ledger_.book(j->booking, 1.0);
      ended_.push_back(j);
    };
    while (true) {
      const double next = on_lattice(fluid_.next_event_s());  // timers (until_s) are on the lattice already
      const double launched = next_launch_s();
      const double t = std::min({next, launched, until_s});
      if (t == kNever) return t;
      // Kernel ends and timers are framesim's alone: no model code reads SimGrid's clock on this path, and the
      // only other actor here is the progress bar's. So SimGrid's clock is brought along only every thousandth of
      // the run (the progress bar moves in hundredths), not at every launch or tick.
      if (std::min(next, launched) > until_s && until_s >= synced_s_ + sync_every_s_ &&
          until_s > sg4::Engine::get_clock()) {
        sg4::this_actor::sleep_until(until_s);
        synced_s_ = until_s;
      }
      ended_.clear();
      fluid_.advance(t, on_end, kInstant_s);  // the ends of this instant, at its time
      // Launches ending in this instant: their kernels' work starts at its time, as after a launch timer.
      while (!launches_.empty() && launches_.top().t_s <= t + kInstant_s) {
        RunJob& j = *launches_.top().job;
        launches_.pop();
        start_work(j);
      }
      if (ended_.size() == 1 && t + kInstant_s < until_s && dispatcher_.go_on(*ended_.front(), t)) continue;
      ended.insert(ended.end(), ended_.begin(), ended_.end());
      if (!ended_.empty() || t >= until_s) return t;
    }
  }

  double peek_s() override { return std::min(fluid_.next_event_s(), next_launch_s()); }
  /// When the first launch in progress ends (kNever: none is).
  double next_launch_s() const { return launches_.empty() ? kNever : launches_.top().t_s; }

  void book_in_flight() override {
    for (RunJob* j : flow_job_)
      if (j) ledger_.book(j->booking, fluid_.progress(j->flow));
    for (std::size_t b = 0; b < background_flow_.size(); ++b) {
      const double done = fluid_.progress(background_flow_[b]);
      ledger_.book_bytes(platform_.units.size() + b, spec_.background[b].level, done - background_booked_[b],
                         &totals_.background_energy_J);
      background_booked_[b] = done;
    }
  }

  void set_background_rate(std::size_t background, double rate_Bps) override {
    book_in_flight();
    fluid_.set_capacity(background_port_[background], std::max(0.0, rate_Bps));
  }

  void unit_speed_changed(std::size_t unit) override {
    const auto& u = platform_.units[unit];
    fluid_.set_speed(unit_cpu_[unit], u.spec->operating_points[u.pstate].frequency_Hz);
  }
  void level_bandwidth_changed(std::size_t level) override {
    fluid_.set_capacity(level_bus_[level], platform_.levels[level].link->get_bandwidth());
  }
  bool runs_launches(std::size_t unit) const override { return runs_launches_[unit]; }

  void port_bandwidth_changed(std::size_t unit, std::size_t level, double bandwidth_Bps) override {
    const auto port = static_cast<std::size_t>(unit_port_[unit * level_bus_.size() + level]);
    if (fluid_.capacity(port) != bandwidth_Bps) fluid_.set_capacity(port, bandwidth_Bps);
  }

 private:
  const model::ScenarioSpec& spec_;
  Platform& platform_;
  Ledger& ledger_;
  RunTotals& totals_;
  Dispatcher& dispatcher_;
  FluidSystem fluid_;
  std::vector<RunJob*> ended_;  // the kernel ends of one advance
  /// Launches in progress (runs_launches), the first to end on top; those ending together start their work in
  /// declaration order (then release order), as the dispatcher's launch timers of one instant.
  struct Launch {
    double t_s;
    RunJob* job;
    bool operator>(const Launch& o) const {
      if (t_s != o.t_s) return t_s > o.t_s;
      if (job->declared != o.job->declared) return job->declared > o.job->declared;
      return job->id > o.job->id;
    }
  };
  std::priority_queue<Launch, std::vector<Launch>, std::greater<>> launches_;
  std::vector<bool> runs_launches_;  // by unit
  FluidSystem::FlowSpec scratch_;
  double synced_s_ = 0;  // SimGrid's clock was last brought to this time
  double sync_every_s_ = spec_.duration_s / 1000;
  std::vector<RunJob*> flow_job_;  // by flow id: the job whose kernel it is (null: none)
  std::vector<std::size_t> unit_cpu_;
  std::vector<std::size_t> level_bus_;
  std::vector<std::int64_t> unit_port_;         // [unit * levels + level]: its Little's-law port, or -1
  std::vector<FluidSystem::Element> elements_;  // a starting kernel's elements
  std::vector<std::size_t> background_port_;
  std::vector<std::size_t> background_flow_;
  std::vector<double> background_booked_;
};

}  // namespace

std::unique_ptr<Executor> make_fluid_executor(const model::ScenarioSpec& spec, Platform& platform, Ledger& ledger,
                                              RunTotals& totals, Dispatcher& dispatcher) {
  return std::make_unique<FluidExecutor>(spec, platform, ledger, totals, dispatcher);
}

}  // namespace framesim::engine
