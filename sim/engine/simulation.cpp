// The actors of a run and how they share units: sensors capture frames, stages take items from their queues
// and run their kernels as jobs on their unit's scheduler, periodic tasks release jobs and read results, the
// background masters stream bytes, the ticker books energy and drives thermal and the governor, and the
// controller ends the run when the pipeline has drained. See README.md for the map of the engine's parts.
#include "engine/simulation.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <deque>
#include <exception>
#include <limits>
#include <memory>

#include <fmt/format.h>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>

#include "core/error.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "engine/fast_path.hpp"
#include "engine/frames.hpp"
#include "engine/ledger.hpp"
#include "engine/plans.hpp"
#include "engine/platform.hpp"
#include "engine/scheduler.hpp"
#include "model/cost.hpp"

namespace framesim::engine {

namespace {

using model::ScenarioSpec;
constexpr double kNoCapture = std::numeric_limits<double>::quiet_NaN();
constexpr double kNever = std::numeric_limits<double>::infinity();

/// What travels through queues: a frame, and for each cause-effect chain the capture time of the chain's sensor
/// sample behind it along the chain's path (NaN where the item is not on that path).
struct Item {
  std::int64_t frame = 0;
  double capture_s = 0;
  double enqueue_s = 0;
  std::vector<double> chain_capture_s;
};

/// The time-average and the maximum of a queue's depth.
struct QueueGauge {
  std::size_t depth = 0;
  std::size_t max = 0;
  double since_s = 0;
  double integral = 0;         // depth x seconds, whole run
  double window_integral = 0;  // since the last tick
  void set(double now_s, std::size_t new_depth) {
    const double area = static_cast<double>(depth) * (now_s - since_s);
    integral += area;
    window_integral += area;
    since_s = now_s;
    depth = new_depth;
    max = std::max(max, depth);
  }
};

/// A job as the engine runs it: the scheduler's view plus what is needed to stop and resume it.
struct JobSlot : Job {
  sg4::SemaphorePtr granted = sg4::Semaphore::create(0);  // released once per grant of cores
  sg4::ExecPtr exec;                                      // the kernel activity while it runs
  double stop_ratio = 1;                                  // the remaining ratio of `exec` when it was stopped
  bool stopped = false;                                   // `exec` was cancelled by a preemption
};

/// One entry of a stage's side work (model::SideWorkSpec): its kernels on the other unit and the job it runs as.
struct SideJob {
  const model::SideWorkSpec* spec = nullptr;
  UnitState* unit = nullptr;
  std::vector<KernelPlan> kernels;
  std::mt19937_64 rng;
  JobSlot slot;
};

struct Stage {
  const model::StageSpec* spec = nullptr;
  std::size_t index = 0;
  UnitState* unit = nullptr;
  int cores = 1;
  std::vector<std::deque<Item>> queues;                      // one per input edge
  std::vector<std::optional<Item>> last_side;                // `latest`: the side input last used
  std::vector<std::pair<std::size_t, std::size_t>> outputs;  // (consumer stage, its input edge)
  std::vector<KernelPlan> kernels;
  std::vector<SideJob> side;  // its side work on other units
  sg4::ConditionVariablePtr cv;
  sg4::MutexPtr mutex;
  std::mt19937_64 rng;
  std::optional<Item> latest_result;  // newest finished item (what a control loop reads)
  QueueGauge queue;
  JobSlot slot;
};

struct Task {
  const model::TaskSpec* spec = nullptr;
  std::size_t index = 0;
  UnitState* unit = nullptr;
  int cores = 1;
  std::vector<KernelPlan> kernels;
  std::mt19937_64 rng;
  JobSlot slot;
};

/// When a job first held its cores and how long it was without them afterwards.
struct JobTimes {
  double start_s = 0;
  double blocked_s = 0;
};

CoreMask core_mask(const std::vector<int>& cores) {
  CoreMask m = 0;
  for (int c : cores) m |= CoreMask{1} << c;
  return m;
}

class Simulation {
 public:
  Simulation(const ScenarioSpec& spec, RecordSink& sink, const RunOptions& options)
      : spec_(spec), sink_(sink), options_(options), frames_(sink) {}

  RunTotals run() {
    const auto wall_start = std::chrono::steady_clock::now();
    const auto engine = start_engine();
    platform_ = build_platform(spec_, options_.merge_kernels, spec_.stages.size() + spec_.tasks.size());
    ledger_ = std::make_unique<Ledger>(spec_, platform_);
    if (options_.fluid && FastPath::eligible(spec_)) {
      fast_ = std::make_unique<FastPath>(spec_, platform_, *ledger_, sink_, totals_);
      ledger_->set_listener(fast_.get());
      totals_.fast_path = true;
    }
    plan_work();
    start_actors();
    engine->run();
    if (error_) std::rethrow_exception(error_);
    finish();
    totals_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return totals_;
  }

 private:
  // ---------------------------------------------------------------- setup
  void plan_work() {
    stages_.resize(spec_.stages.size());
    for (std::size_t s = 0; s < spec_.stages.size(); ++s) {
      const auto& ss = spec_.stages[s];
      Stage& st = stages_[s];
      st.spec = &ss;
      st.index = s;
      st.unit = &platform_.units[ss.unit];
      st.cores = ss.cores > 0        ? ss.cores
                 : ss.pinned.empty() ? st.unit->spec->cores
                                     : static_cast<int>(ss.pinned.size());
      st.queues.resize(ss.inputs.size());
      st.last_side.resize(ss.inputs.size());
      st.kernels = plan_kernels(spec_, platform_, ss.work, ss.unit, st.cores, &ss, totals_);
      const bool exclusive =
          std::count_if(spec_.stages.begin(), spec_.stages.end(), [&](const auto& o) { return o.unit == ss.unit; }) ==
              1 &&
          std::none_of(spec_.tasks.begin(), spec_.tasks.end(), [&](const auto& t) { return t.unit == ss.unit; }) &&
          !receives_side_work(ss.unit);
      if (exclusive && options_.merge_kernels && !fast_) mark_runs(st.kernels, spec_, platform_, ss.unit, st.cores);
      st.cv = sg4::ConditionVariable::create();
      st.mutex = sg4::Mutex::create();
      st.rng.seed(spec_.seed * 1000003ULL + 17 * s + 1);
      static_cast<Job&>(st.slot) = job_for(s, ss.priority, st.cores, ss.pinned);
      plan_side_work(st);
    }
    for (std::size_t s = 0; s < spec_.stages.size(); ++s) {
      const auto& ss = spec_.stages[s];
      for (std::size_t e = 0; e < ss.inputs.size(); ++e) {
        const auto& in = ss.inputs[e];
        if (in.sensor) sensor_outputs_.resize(std::max(sensor_outputs_.size(), in.index + 1));
        if (in.sensor) sensor_outputs_[in.index].emplace_back(s, e);
        else stages_[in.index].outputs.emplace_back(s, e);
      }
    }
    sensor_outputs_.resize(spec_.sensors.size());
    tasks_.resize(spec_.tasks.size());
    for (std::size_t t = 0; t < spec_.tasks.size(); ++t) {
      const auto& ts = spec_.tasks[t];
      Task& task = tasks_[t];
      task.spec = &ts;
      task.index = t;
      if (ts.unit) {
        task.unit = &platform_.units[*ts.unit];
        task.cores = ts.cores > 0        ? ts.cores
                     : ts.pinned.empty() ? task.unit->spec->cores
                                         : static_cast<int>(ts.pinned.size());
        task.kernels = plan_kernels(spec_, platform_, ts.work, *ts.unit, task.cores, nullptr, totals_);
        static_cast<Job&>(task.slot) = job_for(spec_.stages.size() + t, ts.priority, task.cores, ts.pinned);
      }
      task.rng.seed(spec_.seed * 7919ULL + 31 * t + 2);
    }
    drained_cv_ = sg4::ConditionVariable::create();
    drained_mutex_ = sg4::Mutex::create();
    tick_mutex_ = sg4::Mutex::create();
  }

  /// True when some stage places side work on unit `unit`.
  bool receives_side_work(std::size_t unit) const {
    return std::any_of(spec_.stages.begin(), spec_.stages.end(), [&](const model::StageSpec& o) {
      return std::any_of(o.side_work.begin(), o.side_work.end(), [&](const auto& w) { return w.unit == unit; });
    });
  }

  /// Plans a stage's side work: each entry's kernels on its unit (all of its cores), a job owned by the stage.
  void plan_side_work(Stage& st) {
    const auto& ss = *st.spec;
    st.side.resize(ss.side_work.size());
    for (std::size_t i = 0; i < ss.side_work.size(); ++i) {
      SideJob& side = st.side[i];
      side.spec = &ss.side_work[i];
      side.unit = &platform_.units[side.spec->unit];
      const int cores = side.unit->spec->cores;
      side.kernels = plan_kernels(spec_, platform_, side.spec->work, side.spec->unit, cores, nullptr, totals_);
      side.rng.seed(spec_.seed * 104729ULL + 13 * st.index + 7 * i + 3);
      static_cast<Job&>(side.slot) = job_for(st.index, ss.priority, cores, {});
    }
  }

  static Job job_for(std::size_t owner, int priority, int cores, const std::vector<int>& pinned) {
    Job j;
    j.owner = owner;
    j.priority = priority;
    j.cores = cores;
    j.pinned = core_mask(pinned);
    return j;
  }

  // ---------------------------------------------------------------- actors
  /// Creates an actor whose failure (an exception) stops the run and comes back from run() instead of aborting.
  sg4::ActorPtr spawn(const std::string& name, sg4::Host* host, std::function<void()> body) {
    return sg4::Actor::create(name, host, [this, body = std::move(body)] {
      // Only std::exception: SimGrid unwinds an actor it kills with an exception of its own, which must pass.
      try {
        body();
      } catch (const std::exception&) {
        if (!error_) error_ = std::current_exception();
        sg4::Actor::kill_all();
      }
    });
  }

  void start_actors() {
    sg4::Host* anywhere = platform_.units.front().host;
    for (std::size_t s = 0; s < spec_.sensors.size(); ++s) {
      ++sensors_running_;
      spawn("sensor:" + spec_.sensors[s].name, anywhere, [this, s] { sensor_loop(s); });
    }
    for (auto& st : stages_) spawn("stage:" + st.spec->name, st.unit->host, [this, &st] { stage_loop(st); });
    for (auto& t : tasks_)
      spawn("task:" + t.spec->name, t.unit ? t.unit->host : anywhere, [this, &t] { task_loop(t); })->daemonize();
    for (std::size_t b = 0; b < spec_.background.size(); ++b)
      spawn("background:" + spec_.background[b].name, platform_.background_hosts[b], [this, b] {
        background_loop(b);
      })->daemonize();
    spawn("ticker", anywhere, [this] { tick_loop(); })->daemonize();
    if (fast_) spawn("fluid", anywhere, [this] { fast_->drive(); })->daemonize();
    if (const double period = contention_period(); period > 0) {
      ledger_->sample_contention_separately();
      spawn("contention", anywhere, [this, period] { contention_loop(period); })->daemonize();
    }
    spawn("controller", anywhere, [this] { controller(); });
    if (options_.progress) {
      spawn("progress", anywhere, [this] {
        for (int i = 1; i <= 100; ++i) {
          sg4::this_actor::sleep_until(spec_.duration_s * i / 100);
          options_.progress(i / 100.0);
        }
      })->daemonize();
    }
  }

  void sensor_loop(std::size_t s) {
    const auto& sensor = spec_.sensors[s];
    std::mt19937_64 rng(spec_.seed * 104729ULL + 13 * s + 3);
    double last = 0;
    for (std::int64_t i = 0;; ++i) {
      double t = 0;
      if (!sensor.timestamps_s.empty()) {  // a timestamp log, replayed as it is
        if (i >= static_cast<std::int64_t>(sensor.timestamps_s.size())) break;
        t = sensor.timestamps_s[static_cast<std::size_t>(i)];
      } else {
        t = std::max(last, sensor.phase_s + static_cast<double>(i) / sensor.rate_Hz + sensor.jitter_s.sample(rng));
      }
      if (t >= spec_.duration_s) break;
      last = t;
      sg4::this_actor::sleep_until(t);
      capture(s, t);
    }
    --sensors_running_;
    notify_controller();
  }

  void capture(std::size_t sensor, double t) {
    const Ledger::State& state = ledger_->state_before(t);
    const std::int64_t id = frames_.capture(sensor, t, state.temperature_C, state.unit_frequency_Hz);
    ++totals_.frames_captured;
    Item item{id, t, t, {}};
    if (!spec_.chains.empty()) {
      item.chain_capture_s.assign(spec_.chains.size(), kNoCapture);
      for (std::size_t c = 0; c < spec_.chains.size(); ++c) {
        if (spec_.chains[c].sensor != sensor) continue;
        item.chain_capture_s[c] = t;
      }
    }
    for (const auto& [stage, edge] : sensor_outputs_[sensor]) {
      frames_.add_copy(id);
      push(stages_[stage], edge, item);
    }
    release_copy(id);
  }

  static double now() { return sg4::Engine::get_clock(); }

  void release_copy(std::int64_t id) {
    if (frames_.release_copy(id, now())) notify_controller();
  }

  void drop(std::int64_t id, std::size_t stage, DropReason reason) {
    if (frames_.drop(id, stage, reason, now())) notify_controller();
  }

  std::size_t queue_depth(const Stage& st) const {
    std::size_t depth = 0;
    for (const auto& q : st.queues) depth = std::max(depth, q.size());
    return depth;
  }

  void push(Stage& st, std::size_t edge, Item item) {
    auto& q = st.queues[edge];
    item.enqueue_s = now();
    if (static_cast<int>(q.size()) >= st.spec->queue_depth) {
      if (st.spec->overflow == model::Overflow::drop_newest) {
        drop(item.frame, st.index, DropReason::queue_full);
        return;
      }
      const std::int64_t oldest = q.front().frame;
      q.pop_front();
      drop(oldest, st.index, DropReason::queue_full);
    }
    q.push_back(std::move(item));
    st.queue.set(now(), queue_depth(st));
    st.cv->notify_all();
  }

  /// Whether `st` can take a set of inputs now; discards what can never be used.
  bool ready(Stage& st) {
    const auto& ins = st.spec->inputs;
    if (st.spec->policy == model::InputPolicy::latest) {
      if (st.queues[0].empty()) return false;
      for (std::size_t e = 1; e < ins.size(); ++e)
        if (st.queues[e].empty() && !st.last_side[e]) return false;
      return true;
    }
    // all: the same frame at the head of every queue; older heads have lost their partner.
    while (true) {
      std::int64_t newest = -1;
      for (const auto& q : st.queues) {
        if (q.empty()) return false;
        newest = std::max(newest, q.front().frame);
      }
      bool aligned = true;
      for (auto& q : st.queues) {
        while (!q.empty() && q.front().frame < newest) {
          const std::int64_t id = q.front().frame;
          q.pop_front();
          drop(id, st.index, DropReason::unmatched);
          aligned = false;
        }
      }
      st.queue.set(now(), queue_depth(st));
      if (aligned) return true;
    }
  }

  /// Takes the inputs of one execution and returns the trigger item (its frame is the one processed), carrying
  /// for each chain through this stage the capture behind the input it took from the chain's previous element.
  Item take(Stage& st) {
    std::vector<const Item*> used(st.queues.size(), nullptr);  // the item taken from each edge
    Item trigger;
    std::vector<Item> joined;  // `all`: the copies merged into the trigger
    if (st.spec->policy == model::InputPolicy::latest) {
      auto& q = st.queues[0];
      while (q.size() > 1) {
        const std::int64_t id = q.front().frame;
        q.pop_front();
        drop(id, st.index, DropReason::superseded);
      }
      trigger = std::move(q.front());
      q.pop_front();
      for (std::size_t e = 1; e < st.queues.size(); ++e) {
        auto& side = st.queues[e];
        while (!side.empty()) {
          st.last_side[e] = std::move(side.front());
          side.pop_front();
          release_copy(st.last_side[e]->frame);  // used (or passed over): its lineage ends here
        }
        used[e] = st.last_side[e] ? &*st.last_side[e] : nullptr;
      }
    } else {
      trigger = std::move(st.queues[0].front());
      for (std::size_t e = 1; e < st.queues.size(); ++e) {
        joined.push_back(std::move(st.queues[e].front()));
        st.queues[e].pop_front();
        release_copy(trigger.frame);  // the copies merge into the one processed
      }
      st.queues[0].pop_front();
      for (std::size_t e = 1; e < st.queues.size(); ++e) used[e] = &joined[e - 1];
    }
    used[0] = &trigger;
    st.queue.set(now(), queue_depth(st));
    if (!spec_.chains.empty()) {
      std::vector<double> captures(spec_.chains.size(), kNoCapture);
      for (std::size_t c = 0; c < spec_.chains.size(); ++c) {
        const auto& chain = spec_.chains[c];
        const auto at = std::find(chain.stages.begin(), chain.stages.end(), st.index);
        if (at == chain.stages.end()) continue;
        const Item* from = used[chain.input_edges[static_cast<std::size_t>(at - chain.stages.begin())]];
        if (from && !from->chain_capture_s.empty()) captures[c] = from->chain_capture_s[c];
      }
      trigger.chain_capture_s = std::move(captures);
    }
    return trigger;
  }

  void stage_loop(Stage& st) {
    while (true) {
      Item item;
      {
        std::unique_lock lock(*st.mutex);
        while (!stopping_ && !ready(st)) st.cv->wait(lock);
        if (stopping_) break;
        item = take(st);
      }
      const double scale = std::max(0.0, st.spec->work.scale.sample(st.rng));
      const double energy_before = frames_.at(item.frame).energy_J;
      const double taken = now();
      SideTimes side;
      const double side_before_s = run_side_work(st, false, item.frame, side);
      const double released = now();
      JobTimes times = run_job(*st.unit, st.slot, st.kernels, work_amount(st.spec->work, st.rng) * scale, scale,
                               static_cast<int>(st.index), -1, item.frame, &frames_.at(item.frame).energy_J);
      const double unit_wait_s = times.start_s - released + times.blocked_s;
      if (side_before_s >= 0) times.start_s = side_before_s;
      run_side_work(st, true, item.frame, side);
      const double end = now();
      Frame& done = frames_.at(item.frame);
      StageRecord record{item.frame,
                         st.index,
                         item.capture_s,
                         item.enqueue_s,
                         times.start_s,
                         end,
                         times.blocked_s,
                         done.energy_J - energy_before,
                         static_cast<int>(st.kernels.size())};
      record.taken_s = taken;
      record.unit_wait_s = unit_wait_s;
      record.side_wait_s = side.wait_s;
      record.side_run_s = side.run_s;
      sink_.on_stage(record);
      for (std::size_t c = 0; c < spec_.chains.size(); ++c) {
        const auto& chain = spec_.chains[c];
        if (!chain.task && chain.stages.back() == st.index && !std::isnan(item.chain_capture_s[c]))
          sink_.on_chain({c, end, item.chain_capture_s[c]});
      }
      st.latest_result = item;
      if (st.outputs.empty()) {
        done.reached_sink = true;
      } else {
        for (const auto& [consumer, edge] : st.outputs) {
          frames_.add_copy(item.frame);
          push(stages_[consumer], edge, item);
        }
      }
      release_copy(item.frame);
    }
  }

  /// The time side jobs spent waiting for their units (release -> hold, and blocked) and running.
  struct SideTimes {
    double wait_s = 0, run_s = 0;
  };

  /// Runs the stage's side work that goes `after` (or before) its own kernels, one job after the other on their
  /// units' schedulers, its energy booked to the frame and its times added to `times`. Returns when the first
  /// of them started (-1: none ran).
  double run_side_work(Stage& st, bool after, std::int64_t frame, SideTimes& times) {
    double first_start_s = -1;
    for (SideJob& side : st.side) {
      if (side.spec->after != after || side.kernels.empty()) continue;
      const double scale = std::max(0.0, side.spec->work.scale.sample(side.rng));
      const double released = now();
      const JobTimes t = run_job(*side.unit, side.slot, side.kernels, work_amount(side.spec->work, side.rng) * scale,
                                 scale, static_cast<int>(st.index), -1, frame, &frames_.at(frame).energy_J);
      times.wait_s += t.start_s - released + t.blocked_s;
      times.run_s += now() - t.start_s - t.blocked_s;
      if (first_start_s < 0) first_start_s = t.start_s;
    }
    return first_start_s;
  }

  /// The work multiplier of one item: sampled seconds for time work, 1 otherwise.
  static double work_amount(const model::WorkSpec& work, std::mt19937_64& rng) {
    if (work.kind == model::WorkSpec::Kind::time) return std::max(0.0, work.time_s.sample(rng));
    return 1.0;
  }

  void task_loop(Task& t) {
    const auto& ts = *t.spec;
    for (std::int64_t i = 0;; ++i) {
      const double release = ts.phase_s + static_cast<double>(i) / ts.rate_Hz;
      if (release >= spec_.duration_s || stopping_) return;
      sg4::this_actor::sleep_until(release);
      std::optional<Item> read;
      if (ts.reads_stage) {
        read = stages_[*ts.reads_stage].latest_result;
        ControlRecord r{release, t.index, std::nullopt, -1};
        if (read) {
          r.staleness_s = release - read->capture_s;
          r.frame = read->frame;
        }
        sink_.on_control(r);
      }
      if (t.unit && !t.kernels.empty()) {
        const double scale = std::max(0.0, ts.work.scale.sample(t.rng));
        double energy_J = 0;
        const JobTimes times = run_job(*t.unit, t.slot, t.kernels, work_amount(ts.work, t.rng) * scale, scale, -1,
                                       static_cast<int>(t.index), -1, &energy_J);
        totals_.tasks_energy_J += energy_J;
        sink_.on_task({t.index, i, release, times.start_s, now(), times.blocked_s, energy_J});
      }
      for (std::size_t c = 0; c < spec_.chains.size(); ++c) {
        if (spec_.chains[c].task != t.index || !read || read->chain_capture_s.empty()) continue;
        if (!std::isnan(read->chain_capture_s[c])) sink_.on_chain({c, now(), read->chain_capture_s[c]});
      }
    }
  }

  // ---------------------------------------------------------------- jobs on units
  /// Wakes the jobs the scheduler granted cores to.
  static void wake(const std::vector<Job*>& granted) {
    for (Job* g : granted) static_cast<JobSlot*>(g)->granted->release();
  }

  /// Stops the kernels of jobs that lost their cores to a preemption (those between kernels notice by themselves).
  void stop(const std::vector<Job*>& preempted) {
    for (Job* p : preempted) {
      JobSlot& v = *static_cast<JobSlot*>(p);
      // Asking an activity anything is a simcall, during which its owner may run, finish it and let it go: keep
      // a reference, and stop it only if it is still the owner's and still running.
      const sg4::ExecPtr exec = v.exec;
      if (!exec || v.stopped || exec->get_state() != sg4::Activity::State::STARTED) continue;
      const double ratio = exec->get_remaining_ratio();
      if (v.exec != exec || v.stopped || exec->get_state() != sg4::Activity::State::STARTED) continue;
      v.stop_ratio = ratio;
      v.stopped = true;
      exec->cancel();
    }
  }

  /// Blocks until the job holds its cores, then idles the switch cost it owes (it may lose them meanwhile).
  void hold(UnitState& unit, JobSlot& slot, JobTimes& times) {
    while (true) {
      const double from = now();
      while (slot.state != Job::State::holding) slot.granted->acquire();
      times.blocked_s += now() - from;
      if (!slot.owes_switch) return;
      slot.owes_switch = false;
      const double switch_from = now();
      sg4::this_actor::sleep_for(unit.scheduler->spec().switch_cost_s);
      times.blocked_s += now() - switch_from;
      if (slot.state == Job::State::holding) return;
    }
  }

  /// Runs kernels as one job on `unit`: `cycle_scale` multiplies compute, `byte_scale` memory traffic. Their
  /// energy is booked into `*bucket` as they progress. The scheduler decides when the job holds the unit's
  /// cores: at its release, at every kernel boundary, mid-kernel (preemption, quantum).
  JobTimes run_job(UnitState& unit, JobSlot& slot, const std::vector<KernelPlan>& kernels, double cycle_scale,
                   double byte_scale, int stage, int task, std::int64_t frame, double* bucket) {
    UnitScheduler& sched = *unit.scheduler;
    const std::size_t unit_index = platform_.unit_index(unit);
    JobTimes times;
    std::vector<Job*> changed;
    const double released = now();
    sched.release(slot, released, changed);
    stop(changed);
    hold(unit, slot, times);
    times.start_s = now();
    times.blocked_s = 0;  // the wait before the first start is the job's wait, not its blocking
    if (fast_) {          // alone on its unit: the fluid system runs every kernel
      fast_->run_job(unit_index, slot.cores, kernels, cycle_scale, byte_scale, stage, task, frame, bucket);
      changed.clear();
      sched.finish(slot, now(), changed);
      wake(changed);
      return times;
    }
    for (std::size_t i = 0; i < kernels.size();) {
      const KernelPlan& k = kernels[i];
      if (i > 0) {
        changed.clear();
        const bool keeps = sched.boundary(slot, now(), changed);
        wake(changed);
        if (!keeps) hold(unit, slot, times);
      }
      const double dispatch_start = now();
      const bool traced = dispatch_start < spec_.kernel_trace_s - kSameInstant_s;  // one at its end is out
      const std::size_t end = k.run_end > i + 1 && !traced ? k.run_end : i + 1;
      // A kernel that moves bytes pays its overhead as the latency of its route (see platform.cpp).
      const bool in_route =
          k.overhead_s > 0 && platform_.overhead_in_route[unit_index] && !k.matrix.empty() && byte_scale > 0;
      // The launch, and the memory stall its compute will not hide (model/overlap.hpp): the unit held, idle.
      const double launch_s = (in_route ? 0.0 : k.overhead_s) +
                              stall_at_start_s(k, platform_, unit_index, slot.cores, cycle_scale, byte_scale);
      if (launch_s > 0) {
        sg4::this_actor::sleep_for(launch_s);
        ++totals_.dispatch_sleeps;
        if (slot.state != Job::State::holding) hold(unit, slot, times);  // preempted while launching
      }
      const double start = in_route ? now() + k.overhead_s : now();
      if (!kernels[i].empty(cycle_scale) || end > i + 1)
        execute(unit, slot, times, kernels, i, end, cycle_scale, byte_scale, bucket);
      totals_.kernels += static_cast<std::int64_t>(end - i);
      if (traced) sink_.on_kernel({unit_index, stage, task, k.name, frame, start, now(), start - dispatch_start});
      i = end;
    }
    changed.clear();
    sched.finish(slot, now(), changed);
    wake(changed);
    return times;
  }

  /// Runs kernels [first, end) as one parallel task (the unit's cores compute, bytes flow to each memory level)
  /// until done: a kernel stopped mid-way (preempted, or switched out at the end of its quantum) resumes its
  /// remaining work when the job holds its cores again.
  void execute(UnitState& unit, JobSlot& slot, JobTimes& times, const std::vector<KernelPlan>& kernels,
               std::size_t first, std::size_t end, double cycle_scale, double byte_scale, double* bucket) {
    const KernelPlan& k = kernels[first];
    const bool merged = end > first + 1;
    const auto& hosts = merged ? k.run_hosts : k.hosts;
    const auto& base_flops = merged ? k.run_flops : k.flops;
    const auto& base_matrix = merged ? k.run_matrix : k.matrix;
    const bool sliced = unit.scheduler->spec().policy == model::SchedulingPolicy::time_slice;
    double done = 0;  // of the kernel(s), before this activity
    while (true) {
      const double left = 1.0 - done;
      std::vector<double> flops = base_flops;
      for (double& f : flops) f *= cycle_scale * left;
      std::vector<double> matrix = base_matrix;
      for (double& b : matrix) b *= byte_scale * left;
      Running running;
      running.exec = sg4::this_actor::exec_init(hosts, flops, matrix);
      running.master = platform_.unit_index(unit);
      running.kernels = &k;
      running.count = end - first;
      running.breaks = merged ? &k.run_breaks : &kWholeKernel;
      running.cycle_scale = cycle_scale;
      running.byte_scale = byte_scale;
      running.base = done;
      running.span = left;
      running.progress = done;
      running.bucket = bucket;
      ++totals_.activities;
      ledger_->track(running);
      running.exec->start();
      slot.exec = running.exec;
      slot.stopped = false;
      bool finished = false;
      if (slot.state != Job::State::holding) {  // preempted while it was being issued: it never ran
        slot.stop_ratio = 1.0;
        slot.stopped = true;
        running.exec->cancel();
      } else {
        try {
          if (!sliced) {
            running.exec->wait();
            finished = true;
          }
          while (sliced && !finished) {
            try {
              running.exec->wait_for(std::max(0.0, slot.slice_end_s - now()));
              finished = true;
            } catch (const simgrid::TimeoutException&) {
              std::vector<Job*> granted;
              if (unit.scheduler->quantum_expired(slot, now(), granted)) {
                slot.stop_ratio = running.exec->get_remaining_ratio();
                slot.stopped = true;
                running.exec->cancel();
                wake(granted);
                break;
              }
            }
          }
        } catch (const simgrid::CancelException&) {
          FRAMESIM_ASSERT(slot.stopped, "only a preemption cancels a kernel");
        }
      }
      slot.exec = nullptr;
      if (finished) {
        ledger_->book(running, 1.0);
        return;
      }
      FRAMESIM_ASSERT(!merged, "merged kernels run on a unit nobody else uses: they are never stopped");
      ++totals_.preemptions;
      ledger_->book(running, 1.0 - slot.stop_ratio);
      done += left * (1.0 - slot.stop_ratio);
      if (done >= 1.0) return;  // it had just ended
      hold(unit, slot, times);
    }
  }

  void background_loop(std::size_t b) {
    const auto& bg = spec_.background[b];
    const std::size_t master = platform_.units.size() + b;
    // Continuous traffic: the port link caps the rate, the shared bus may give it less. With a profile, the rate
    // steps at each of its times, also in the middle of a chunk (the port link follows; a zero rate stalls it).
    // On the fast path the stream lives in the fluid system: this actor only applies the steps.
    std::size_t step = 0;
    double rate = bg.profile.empty() ? bg.rate_Bps : bg.profile.front().second;
    auto next_change = [&] { return step + 1 < bg.profile.size() ? bg.profile[step + 1].first : kNever; };
    auto apply_steps = [&] {
      bool stepped = false;
      while (!bg.profile.empty() && now() >= next_change()) {
        rate = bg.profile[++step].second;
        stepped = true;
      }
      if (!stepped) return;
      if (fast_) fast_->set_background_rate(b, rate);
      else platform_.background_ports[b]->set_bandwidth(rate);
    };
    if (fast_) {
      while (!stopping_ && next_change() < kNever) {
        sg4::this_actor::sleep_until(next_change());
        apply_steps();
      }
      return;
    }
    const std::size_t level = bg.level;
    while (!stopping_) {
      apply_steps();
      if (rate <= 0) {
        if (next_change() >= kNever) return;
        sg4::this_actor::sleep_until(next_change());
        continue;
      }
      // Chunks of 10 ms at the current rate, cut at the next step.
      const double chunk = rate * std::min(0.01, std::max(1e-6, next_change() - now()));
      KernelPlan kernel;
      kernel.name = bg.name;
      kernel.bytes.assign(platform_.levels.size(), 0.0);
      kernel.bytes[level] = chunk;
      Running running;
      running.exec = sg4::this_actor::exec_init({platform_.background_hosts[b], platform_.levels[level].host},
                                                {0.0, 0.0}, {0.0, chunk, 0.0, 0.0});
      running.exec->start();
      ++totals_.activities;
      running.master = master;
      running.kernels = &kernel;
      running.bucket = &totals_.background_energy_J;
      ledger_->track(running);
      while (true) {
        try {
          if (next_change() >= kNever) running.exec->wait();
          else running.exec->wait_until(next_change());
          break;
        } catch (const simgrid::TimeoutException&) {
          apply_steps();  // the chunk goes on at the new rate
        }
      }
      ledger_->book(running, 1.0);
    }
  }

  // ---------------------------------------------------------------- ticks and the end of the run
  double tick_period() const {
    return spec_.hardware.thermal ? spec_.hardware.thermal->governor_period_s : spec_.sample_period_s;
  }

  /// How often the ports are reloaded from the traffic of the other masters, when that is finer than the tick
  /// (0: at every tick): the scenario's contention_period, else 10 ms on hardware with a contention curve.
  double contention_period() const {
    const bool curves = std::any_of(spec_.hardware.memory.begin(), spec_.hardware.memory.end(),
                                    [](const auto& l) { return l.contention.has_value(); });
    const double period = spec_.contention_period_s.value_or(curves ? model::kDefaultContentionPeriod_s : 0.0);
    return period > 0 && period < tick_period() ? period : 0.0;
  }

  void contention_loop(double period) {
    for (std::int64_t i = 1; !stopping_; ++i) {
      sg4::this_actor::sleep_until(static_cast<double>(i) * period);
      if (stopping_) return;
      std::unique_lock guard(*tick_mutex_);
      if (fast_) fast_->sync(now());
      ledger_->sample_contention(now());
    }
  }

  void tick_loop() {
    const double period = tick_period();
    for (std::int64_t i = 1; !stopping_; ++i) {
      sg4::this_actor::sleep_until(static_cast<double>(i) * period);
      if (stopping_) return;
      tick(now(), Governor::acts);
    }
  }

  /// One sample of the run: the ledger's energy and thermal step, plus the units' busy fraction and the stages'
  /// queue depths over the interval.
  void tick(double t, Governor governor) {
    // The ledger's tick yields to other actors: the controller's final tick must not run inside the ticker's
    // (it would book and record the same interval twice).
    std::unique_lock guard(*tick_mutex_);
    const double dt = t - last_tick_s_;
    if (dt <= kSameInstant_s) return;  // the instant of the last tick (the run's end falling on a tick)
    if (fast_) fast_->sync(t);
    TickRecord r = ledger_->tick(t, governor);
    for (auto& u : platform_.units) {
      const double busy = u.scheduler->busy_core_s(t);
      r.unit_busy.push_back((busy - u.busy_core_s_at_tick) / (dt * u.spec->cores));
      u.busy_core_s_at_tick = busy;
    }
    for (auto& st : stages_) {
      st.queue.set(t, st.queue.depth);
      r.stage_queue_depth.push_back(st.queue.window_integral / dt);
      st.queue.window_integral = 0;
    }
    sink_.on_tick(r);
    last_tick_s_ = t;
  }

  void notify_controller() { drained_cv_->notify_all(); }

  bool drained() const { return sensors_running_ == 0 && frames_.empty(); }

  /// Waits for the sensors to stop, the duration to pass and the pipeline to drain (or a drain limit), then
  /// ends the run.
  void controller() {
    std::unique_lock lock(*drained_mutex_);
    while (sensors_running_ > 0) drained_cv_->wait(lock);
    // The run lasts at least its duration (the time series covers it), then until the pipeline drains.
    if (now() < spec_.duration_s) {
      lock.unlock();
      sg4::this_actor::sleep_until(spec_.duration_s);
      lock.lock();
    }
    const double limit = now() + drain_limit_s();
    while (!drained()) {
      release_unusable_side_inputs();
      if (drained()) break;
      if (drained_cv_->wait_until(lock, limit) == std::cv_status::timeout) break;
    }
    lock.unlock();
    tick(now(), Governor::holds);  // the final interval: booked, no clock changes after the end
    totals_.end_s = now();
    if (!drained()) report_stuck();
    stopping_ = true;
    if (fast_) fast_->stop();
    for (auto& st : stages_) st.cv->notify_all();
  }

  double drain_limit_s() const { return std::max(2.0, 20 * spec_.deadline_s); }

  /// After the sensors stopped: when every copy of a frame still in the pipeline waits as a side input of a
  /// `latest` stage, no trigger can come to use it, so its lineage ends as a side input passed over at a trigger
  /// would (take()) — outcome side_input, not a stuck pipeline. Stages are all waiting then (a copy being
  /// processed is outstanding too), and actors do not interleave within this call, so no queue lock is needed.
  void release_unusable_side_inputs() {
    std::size_t side_items = 0;
    for (const auto& st : stages_)
      if (st.spec->policy == model::InputPolicy::latest)
        for (std::size_t e = 1; e < st.queues.size(); ++e) side_items += st.queues[e].size();
    if (side_items == 0 || frames_.outstanding_copies() != side_items) return;
    for (auto& st : stages_) {
      if (st.spec->policy != model::InputPolicy::latest) continue;
      for (std::size_t e = 1; e < st.queues.size(); ++e) {
        auto& side = st.queues[e];
        while (!side.empty()) {
          st.last_side[e] = std::move(side.front());
          side.pop_front();
          release_copy(st.last_side[e]->frame);
        }
      }
      st.queue.set(now(), queue_depth(st));
    }
  }

  /// The pipeline did not drain: say where frames are stuck and why (totals.stuck, and a warning).
  void report_stuck() {
    StuckReport report;
    report.drain_limit_s = drain_limit_s();
    report.unfinished_frames = frames_.in_flight();
    std::vector<std::string> where;
    for (const auto& st : stages_) {
      StuckStage stuck{st.spec->name, 0, {}};
      for (const auto& q : st.queues) stuck.queued += q.size();
      if (stuck.queued == 0) continue;
      for (std::size_t e = 0; e < st.queues.size(); ++e) {
        const bool empty = st.queues[e].empty() && !(e > 0 && st.last_side[e]);
        if (empty) stuck.waiting_for.push_back(st.spec->input_names[e]);
      }
      where.push_back(stuck.waiting_for.empty()
                          ? fmt::format("stage \"{}\" holds {} queued item(s)", stuck.stage, stuck.queued)
                          : fmt::format("stage \"{}\" holds {} queued item(s) waiting for input {}", stuck.stage,
                                        stuck.queued, core::join_list(stuck.waiting_for, ", ", true)));
      report.stages.push_back(std::move(stuck));
    }
    totals_.warnings.push_back(
        fmt::format("the pipeline did not drain within {} after the sensors stopped: {} frame(s) unfinished{}{}",
                    core::format_seconds(report.drain_limit_s), report.unfinished_frames, where.empty() ? "" : "; ",
                    fmt::join(where, "; ")));
    totals_.stuck = std::move(report);
  }

  void finish() {
    totals_.notes.insert(totals_.notes.begin(), spec_.notes.begin(), spec_.notes.end());
    frames_.finish(totals_.end_s);
    totals_.frames_energy_J = frames_.frames_energy_J();
    totals_.in_system_integral = frames_.in_system_integral();
    for (auto& u : platform_.units) {
      totals_.compute_energy_J.push_back(u.compute_energy_J);
      totals_.unit_static_energy_J.push_back(u.static_energy_J);
      totals_.unit_throttled_s.push_back(u.throttled_s);
      totals_.unit_busy_core_s.push_back(u.scheduler->busy_core_s(totals_.end_s));
    }
    totals_.stage_busy_core_s.assign(stages_.size(), 0.0);
    totals_.task_busy_core_s.assign(tasks_.size(), 0.0);
    for (const auto& u : platform_.units) {
      const auto& per_owner = u.scheduler->owner_core_s();
      for (std::size_t s = 0; s < stages_.size(); ++s) totals_.stage_busy_core_s[s] += per_owner[s];
      for (std::size_t t = 0; t < tasks_.size(); ++t) totals_.task_busy_core_s[t] += per_owner[stages_.size() + t];
    }
    totals_.memory_energy_J = ledger_->memory_energy_J();
    totals_.level_bytes = ledger_->level_bytes();
    totals_.static_energy_J = ledger_->static_energy_J();
    totals_.throttled_s = ledger_->throttled_s();
    for (auto& st : stages_) {
      st.queue.set(totals_.end_s, st.queue.depth);
      totals_.stage_queue_mean.push_back(totals_.end_s > 0 ? st.queue.integral / totals_.end_s : 0.0);
      totals_.stage_queue_max.push_back(static_cast<int>(st.queue.max));
      for (std::size_t e = 1; e < st.spec->inputs.size(); ++e)
        if (st.spec->policy == model::InputPolicy::latest && !st.last_side[e])
          totals_.warnings.push_back(
              fmt::format("stage \"{}\" never received input \"{}\"", st.spec->name, st.spec->input_names[e]));
    }
  }

  const ScenarioSpec& spec_;
  RecordSink& sink_;
  const RunOptions& options_;
  RunTotals totals_;
  Platform platform_;
  std::unique_ptr<Ledger> ledger_;
  std::unique_ptr<FastPath> fast_;  // null: every kernel is a SimGrid activity
  FrameBook frames_;
  std::vector<Stage> stages_;
  std::vector<Task> tasks_;
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> sensor_outputs_;

  int sensors_running_ = 0;
  bool stopping_ = false;
  sg4::ConditionVariablePtr drained_cv_;
  sg4::MutexPtr drained_mutex_;
  sg4::MutexPtr tick_mutex_;
  double last_tick_s_ = 0;
  std::exception_ptr error_;
};

/// SimGrid keeps global state: one simulation per process (notes/simgrid-3.32.md).
std::atomic<bool> simulated{false};

void claim_process() {
  if (simulated.exchange(true))
    throw std::logic_error("framesim runs one simulation per process (SimGrid keeps global state)");
}

}  // namespace

RunTotals simulate(const model::ScenarioSpec& spec, RecordSink& sink, const RunOptions& options) {
  claim_process();
  Simulation sim(spec, sink, options);
  return sim.run();
}

}  // namespace framesim::engine
