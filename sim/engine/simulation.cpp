// A run: the platform and the ledger, the workers (stages, their side work, periodic tasks) and what happens at
// each of the dispatcher's timers — sensors capture frames, stages take their inputs and run as jobs, tasks
// release jobs and read results, ticks book energy and drive thermal and the governor — until the pipeline has
// drained. Every decision about who runs where is the dispatcher's (dispatcher.hpp); the queues and joins are
// the pipeline's (pipeline.hpp). See README.md for the map of the engine's parts.
#include "engine/simulation.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <simgrid/s4u.hpp>

#include "core/error.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "engine/dispatcher.hpp"
#include "engine/executor.hpp"
#include "engine/frames.hpp"
#include "engine/ledger.hpp"
#include "engine/pipeline.hpp"
#include "engine/plans.hpp"
#include "engine/platform.hpp"
#include "engine/streams.hpp"
#include "model/cost.hpp"

namespace framesim::engine {

namespace {

using model::ScenarioSpec;
constexpr double kNever = std::numeric_limits<double>::infinity();

/// A stage: its own worker, its side-work entries, and the execution in progress.
struct Stage {
  const model::StageSpec* spec = nullptr;
  Worker main;
  std::vector<Worker> side;  // one per side-work entry, on the entry's unit
  // The execution in progress: its steps are the side work before, its own kernels, the side work after.
  bool busy = false;
  Taken current;
  std::size_t step = 0;
  double scale = 1, amount = 1;
  double energy_J = 0;  // of its jobs so far
  double start_s = -1, blocked_s = 0;
  // Where the item's time went (StageRecord): when it took its inputs, when the current step was released, its
  // own job's wait for the unit, its side jobs' waits and runs.
  double taken_s = 0, step_released_s = 0, unit_wait_s = 0, side_wait_s = 0, side_run_s = 0;
};

struct Task {
  const model::TaskSpec* spec = nullptr;
  Worker worker;
  bool runs = false;  // it has work on a unit
  std::int64_t in_flight = 0;
  std::map<std::int64_t, double> pending;  // released jobs not done yet: job number -> release time
};

CoreMask core_mask(const std::vector<int>& cores) {
  CoreMask m = 0;
  for (int c : cores) m |= CoreMask{1} << c;
  return m;
}

/// The work multiplier of one item: sampled seconds for time work, 1 otherwise.
double work_amount(const model::WorkSpec& work, std::mt19937_64& rng) {
  if (work.kind == model::WorkSpec::Kind::time) return std::max(0.0, work.time_s.sample(rng));
  return 1.0;
}

class Simulation {
 public:
  Simulation(const ScenarioSpec& spec, RecordSink& sink, const RunOptions& options)
      : spec_(spec), sink_(sink), options_(options), frames_(sink) {}

  RunTotals run() {
    const auto wall_start = std::chrono::steady_clock::now();
    const auto engine = start_engine();
    platform_ = build_platform(spec_, false, spec_.stages.size() + spec_.tasks.size());
    ledger_ = std::make_unique<Ledger>(spec_, platform_);
    dispatcher_ = std::make_unique<Dispatcher>(spec_, platform_, *ledger_, sink_, totals_, options_.fluid);
    if (options_.fluid) ledger_->set_listener(dispatcher_->listener());
    totals_.fast_path = options_.fluid;
    pipeline_ = std::make_unique<Pipeline>(spec_, frames_);
    plan_work();
    schedule();
    start_actors();
    engine->run();
    if (error_) std::rethrow_exception(error_);
    finish();
    totals_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return totals_;
  }

 private:
  // ---------------------------------------------------------------- setup
  Worker worker(std::size_t unit, int cores, const std::vector<int>& pinned, int priority, std::size_t owner,
                std::uint64_t declared, std::uint64_t seed) const {
    Worker w;
    w.unit = unit;
    const auto& us = spec_.hardware.units[unit];
    w.cores = cores > 0 ? cores : pinned.empty() ? us.cores : static_cast<int>(pinned.size());
    w.pinned = core_mask(pinned);
    w.priority = priority;
    w.owner = owner;
    w.declared = declared;
    w.rng.seed(seed);
    return w;
  }

  /// Declaration order (the last tie-break of every scheduler): the stages in file order, each followed by its
  /// side-work entries, then the tasks.
  void plan_work() {
    stages_.resize(spec_.stages.size());
    std::vector<std::size_t> in_file(spec_.stages.size());  // stage indices in file order
    for (std::size_t s = 0; s < in_file.size(); ++s) in_file[s] = s;
    std::sort(in_file.begin(), in_file.end(),
              [&](std::size_t a, std::size_t b) { return spec_.stages[a].declared < spec_.stages[b].declared; });
    std::uint64_t declared = 0;
    for (const std::size_t s : in_file) {
      const auto& ss = spec_.stages[s];
      Stage& st = stages_[s];
      st.spec = &ss;
      st.main = worker(ss.unit, ss.cores, ss.pinned, ss.priority, s, declared++,
                       stream_seed(spec_.seed, StreamKind::stage_work, s));
      st.main.stage = static_cast<int>(s);
      st.main.kernels = plan_kernels(spec_, platform_, ss.work, ss.unit, st.main.cores, &ss, totals_);
      for (std::size_t i = 0; i < ss.side_work.size(); ++i) {
        const auto& sw = ss.side_work[i];
        Worker w =
            worker(sw.unit, 0, {}, ss.priority, s, declared++, stream_seed(spec_.seed, StreamKind::side_work, s, i));
        w.stage = static_cast<int>(s);
        w.kernels = plan_kernels(spec_, platform_, sw.work, sw.unit, w.cores, nullptr, totals_);
        st.side.push_back(std::move(w));
      }
    }
    tasks_.resize(spec_.tasks.size());
    for (std::size_t t = 0; t < spec_.tasks.size(); ++t) {
      const auto& ts = spec_.tasks[t];
      Task& task = tasks_[t];
      task.spec = &ts;
      task.worker.rng.seed(stream_seed(spec_.seed, StreamKind::task_work, t));
      if (!ts.unit) continue;
      task.worker = worker(*ts.unit, ts.cores, ts.pinned, ts.priority, spec_.stages.size() + t, declared++,
                           stream_seed(spec_.seed, StreamKind::task_work, t));
      task.worker.task = static_cast<int>(t);
      task.worker.kernels = plan_kernels(spec_, platform_, ts.work, *ts.unit, task.worker.cores, nullptr, totals_);
      task.runs = !task.worker.kernels.empty();
    }
    sensor_rng_.resize(spec_.sensors.size());
    for (std::size_t s = 0; s < spec_.sensors.size(); ++s)
      sensor_rng_[s].seed(stream_seed(spec_.seed, StreamKind::sensor_jitter, s));
    sensor_last_s_.assign(spec_.sensors.size(), 0.0);
  }

  using Kind = Dispatcher::Kind;

  void schedule() {
    for (std::size_t s = 0; s < spec_.sensors.size(); ++s) {
      ++sensors_running_;
      next_capture(s, 0);
    }
    for (std::size_t t = 0; t < spec_.tasks.size(); ++t) next_release(t, 0);
    next_tick(1);
    if (const double period = contention_period(); period > 0) {
      ledger_->sample_contention_separately();
      next_sample(period, 1);
    }
    if (dispatcher_->fluid())
      for (std::size_t b = 0; b < spec_.background.size(); ++b) next_background_step(b, 0);
    dispatcher_->at(spec_.duration_s, Kind::check, 0, [] {});
    dispatcher_->after_each_instant([this] { check_end(); });
  }

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
    spawn("dispatcher", anywhere, [this] { dispatcher_->run(); });
    if (!dispatcher_->fluid())
      for (std::size_t b = 0; b < spec_.background.size(); ++b)
        spawn("background:" + spec_.background[b].name, platform_.background_hosts[b], [this, b] {
          stream_background_on_simgrid(spec_, b, platform_, *ledger_, totals_, stopping_);
        })->daemonize();
    if (options_.progress) {
      spawn("progress", anywhere, [this] {
        for (int i = 1; i <= 100; ++i) {
          sg4::this_actor::sleep_until(spec_.duration_s * i / 100);
          options_.progress(i / 100.0);
        }
      })->daemonize();
    }
  }

  double now() const { return dispatcher_->now(); }

  // ---------------------------------------------------------------- sensors
  void next_capture(std::size_t s, std::int64_t i) {
    const auto& sensor = spec_.sensors[s];
    double t = 0;
    if (!sensor.timestamps_s.empty()) {  // a timestamp log, replayed as it is
      if (i >= static_cast<std::int64_t>(sensor.timestamps_s.size())) return sensor_done();
      t = sensor.timestamps_s[static_cast<std::size_t>(i)];
    } else {
      t = std::max(sensor_last_s_[s],
                   sensor.phase_s + static_cast<double>(i) / sensor.rate_Hz + sensor.jitter_s.sample(sensor_rng_[s]));
    }
    if (t >= spec_.duration_s) return sensor_done();
    sensor_last_s_[s] = t;
    dispatcher_->at(t, Kind::capture, s, [this, s, i, t] {
      const Ledger::State& state = ledger_->state_before(t);
      pipeline_->capture(s, t, now(), state.temperature_C, state.unit_frequency_Hz);
      ++totals_.frames_captured;
      for (std::size_t st = 0; st < stages_.size(); ++st) try_start(st);
      next_capture(s, i + 1);
    });
  }

  void sensor_done() { --sensors_running_; }

  // ---------------------------------------------------------------- stages
  /// Takes the stage's inputs and releases its first step when it is free and its inputs are there.
  void try_start(std::size_t s) {
    Stage& st = stages_[s];
    if (st.busy || stopping_ || !pipeline_->ready(s, now())) return;
    st.current = pipeline_->take(s, now());
    st.busy = true;
    st.taken_s = now();
    st.unit_wait_s = st.side_wait_s = st.side_run_s = 0;
    st.step = 0;
    st.start_s = -1;
    st.blocked_s = 0;
    st.scale = std::max(0.0, st.spec->work.scale.sample(st.main.rng));
    st.amount = work_amount(st.spec->work, st.main.rng);
    st.energy_J = 0;
    run_step(s, st.current.ready_s);
  }

  /// Step k of the execution: the side work before (in order), the stage's own kernels, the side work after.
  /// Side work with no kernels is passed over.
  void run_step(std::size_t s, double release_s) {
    Stage& st = stages_[s];
    const auto& ss = *st.spec;
    std::vector<std::size_t> before, after;
    for (std::size_t i = 0; i < ss.side_work.size(); ++i)
      if (!st.side[i].kernels.empty()) (ss.side_work[i].after ? after : before).push_back(i);
    const std::size_t steps = before.size() + 1 + after.size();
    if (st.step >= steps) return end_execution(s);
    const bool own = st.step == before.size();
    const Worker* w = nullptr;
    double cycle_scale = 0, byte_scale = 0;
    if (own) {
      w = &st.main;
      cycle_scale = st.amount * st.scale;
      byte_scale = st.scale;
    } else {
      const std::size_t i = st.step < before.size() ? before[st.step] : after[st.step - before.size() - 1];
      Worker& side = st.side[i];
      const double scale = std::max(0.0, ss.side_work[i].work.scale.sample(side.rng));
      cycle_scale = work_amount(ss.side_work[i].work, side.rng) * scale;
      byte_scale = scale;
      w = &side;
    }
    const std::int64_t frame = st.current.trigger.frame;
    // Each job books into its own total, added to the stage's and the frame's when it ends: a stage's energy is
    // exactly its own jobs', whatever else books into the same frame meanwhile.
    st.step_released_s = now();
    dispatcher_->release(*w, release_s, cycle_scale, byte_scale, frame, nullptr, [this, s, own, frame](RunJob& job) {
      Stage& stage = stages_[s];
      stage.energy_J += job.energy_J;
      frames_.at(frame).energy_J += job.energy_J;
      if (stage.start_s < 0) stage.start_s = job.start_s;
      const double wait = job.start_s - stage.step_released_s + job.blocked_s;
      if (own) {
        stage.unit_wait_s = wait;
      } else {
        stage.side_wait_s += wait;
        stage.side_run_s += now() - job.start_s - job.blocked_s;
      }
      if (own) stage.blocked_s = job.blocked_s;
      ++stage.step;
      run_step(s, now());
    });
  }

  void end_execution(std::size_t s) {
    Stage& st = stages_[s];
    const Item& item = st.current.trigger;
    const double end = now();
    StageRecord record{item.frame,
                       s,
                       item.capture_s,
                       item.enqueue_s,
                       st.start_s < 0 ? end : st.start_s,
                       end,
                       st.blocked_s,
                       st.energy_J,
                       static_cast<int>(st.main.kernels.size())};
    record.taken_s = st.taken_s;
    record.unit_wait_s = st.unit_wait_s;
    record.side_wait_s = st.side_wait_s;
    record.side_run_s = st.side_run_s;
    sink_.on_stage(record);
    for (std::size_t c = 0; c < spec_.chains.size(); ++c) {
      const auto& chain = spec_.chains[c];
      if (!chain.task && chain.stages.back() == s && !std::isnan(item.chain_capture_s[c]))
        sink_.on_chain({c, end, item.chain_capture_s[c]});
    }
    st.busy = false;
    const Item finished = item;
    pipeline_->finished(s, finished, end);
    for (std::size_t other = 0; other < stages_.size(); ++other) try_start(other);
  }

  // ---------------------------------------------------------------- tasks
  void next_release(std::size_t t, std::int64_t i) {
    const auto& ts = *tasks_[t].spec;
    const double release = ts.phase_s + static_cast<double>(i) / ts.rate_Hz;
    if (release >= spec_.duration_s) return;
    dispatcher_->at(release, Kind::release, t, [this, t, i, release] {
      task_release(t, i, release);
      next_release(t, i + 1);
    });
  }

  /// A task job at its nominal time: it reads the newest result (one finished at this instant included) and runs
  /// its work as a job released now, also when its previous job is still running (it then waits).
  void task_release(std::size_t t, std::int64_t i, double release) {
    Task& task = tasks_[t];
    const auto& ts = *task.spec;
    std::optional<Item> read;
    if (ts.reads_stage) {
      read = pipeline_->latest_result(*ts.reads_stage);
      ControlRecord r{release, t, std::nullopt, -1};
      if (read) {
        r.staleness_s = release - read->capture_s;
        r.frame = read->frame;
      }
      sink_.on_control(r);
    }
    auto actuate = [this, t](const std::optional<Item>& from) {
      for (std::size_t c = 0; c < spec_.chains.size(); ++c) {
        if (spec_.chains[c].task != t || !from || from->chain_capture_s.empty()) continue;
        if (!std::isnan(from->chain_capture_s[c])) sink_.on_chain({c, now(), from->chain_capture_s[c]});
      }
    };
    if (!task.runs) return actuate(read);
    const double scale = std::max(0.0, ts.work.scale.sample(task.worker.rng));
    const double amount = work_amount(ts.work, task.worker.rng) * scale;
    ++task.in_flight;
    task.pending.emplace(i, release);
    // Ranked as released at this instant (its nominal time may differ from the instant's by rounding).
    dispatcher_->release(task.worker, now(), amount, scale, -1, nullptr,
                         [this, t, i, release, read, actuate](RunJob& job) {
                           Task& done = tasks_[t];
                           --done.in_flight;
                           done.pending.erase(i);
                           totals_.tasks_energy_J += job.energy_J;
                           sink_.on_task({t, i, release, job.start_s, now(), job.blocked_s, job.energy_J, true});
                           actuate(read);
                         });
  }

  // ---------------------------------------------------------------- background, ticks, contention
  void next_background_step(std::size_t b, std::size_t step) {
    const auto& bg = spec_.background[b];
    if (step + 1 >= bg.profile.size()) return;
    const double t = bg.profile[step + 1].first;
    dispatcher_->at(t, Kind::background, b, [this, b, step] {
      dispatcher_->set_background_rate(b, spec_.background[b].profile[step + 1].second);
      next_background_step(b, step + 1);
    });
  }

  double tick_period() const { return spec_.tick_period_s; }

  /// How often the ports are reloaded from the traffic of the other masters, when that is finer than the tick
  /// (0: at every tick), as config resolved it.
  double contention_period() const { return spec_.contention_period_s; }

  void next_sample(double period, std::int64_t i) {
    dispatcher_->at(static_cast<double>(i) * period, Kind::contention, 0, [this, period, i] {
      if (stopping_) return;
      dispatcher_->book_in_flight();
      ledger_->sample_contention(now());
      next_sample(period, i + 1);
    });
  }

  void next_tick(std::int64_t i) {
    dispatcher_->at(static_cast<double>(i) * tick_period(), Kind::tick, 0, [this, i] {
      if (stopping_) return;
      tick(now(), Governor::acts);
      next_tick(i + 1);
    });
  }

  /// One sample of the run: the ledger's energy and thermal step, plus the units' busy fraction and the stages'
  /// queue depths over the interval.
  void tick(double t, Governor governor) {
    const double dt = t - last_tick_s_;
    if (dt <= kSameInstant_s) return;  // the instant of the last tick (the run's end falling on a tick)
    dispatcher_->book_in_flight();
    TickRecord r = ledger_->tick(t, governor);
    for (auto& u : platform_.units) {
      const double busy = u.scheduler->busy_core_s(t);
      r.unit_busy.push_back((busy - u.busy_core_s_at_tick) / (dt * u.spec->cores));
      u.busy_core_s_at_tick = busy;
    }
    for (std::size_t s = 0; s < stages_.size(); ++s) {
      QueueGauge& q = pipeline_->gauge(s);
      q.set(t, q.depth);
      r.stage_queue_depth.push_back(q.window_integral / dt);
      q.window_integral = 0;
    }
    sink_.on_tick(r);
    last_tick_s_ = t;
  }

  // ---------------------------------------------------------------- the end of the run
  double drain_limit_s() const { return std::max(2.0, 20 * spec_.deadline_s); }

  bool drained() const {
    if (sensors_running_ > 0 || !frames_.empty()) return false;
    return std::all_of(tasks_.begin(), tasks_.end(), [](const Task& t) { return t.in_flight == 0; });
  }

  /// After every instant: once the sensors stopped and the duration passed, the run ends when the pipeline has
  /// drained (every frame done, every task job released before the end done), or at the drain limit.
  void check_end() {
    if (stopping_ || sensors_running_ > 0 || now() < spec_.duration_s - kSameInstant_s) return;
    if (drain_deadline_s_ == kNever) {
      drain_deadline_s_ = now() + drain_limit_s();
      dispatcher_->at(drain_deadline_s_, Kind::check, 0, [] {});
    }
    if (!drained()) pipeline_->release_unusable_side_inputs(now());
    if (!drained() && now() < drain_deadline_s_ - kSameInstant_s) return;
    tick(now(), Governor::holds);  // the final interval: booked, no clock changes after the end
    totals_.end_s = now();
    if (!drained()) report_stuck();
    stopping_ = true;
    dispatcher_->stop();
  }

  /// The pipeline did not drain: say where frames are stuck and why (totals.stuck, and a warning).
  void report_stuck() {
    StuckReport report;
    report.drain_limit_s = drain_limit_s();
    report.unfinished_frames = frames_.in_flight();
    report.stages = pipeline_->stuck();
    std::vector<std::string> where;
    for (const auto& stuck : report.stages)
      where.push_back(stuck.waiting_for.empty()
                          ? fmt::format("stage \"{}\" holds {} queued item(s)", stuck.stage, stuck.queued)
                          : fmt::format("stage \"{}\" holds {} queued item(s) waiting for input {}", stuck.stage,
                                        stuck.queued, core::join_list(stuck.waiting_for, ", ", true)));
    std::int64_t task_jobs = 0;
    for (const auto& t : tasks_) task_jobs += t.in_flight;
    if (task_jobs > 0) where.push_back(fmt::format("{} unfinished", core::counted(task_jobs, "task job")));
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
    for (std::size_t s = 0; s < stages_.size(); ++s) {
      QueueGauge& q = pipeline_->gauge(s);
      q.set(totals_.end_s, q.depth);
      totals_.stage_queue_mean.push_back(totals_.end_s > 0 ? q.integral / totals_.end_s : 0.0);
      totals_.stage_queue_max.push_back(static_cast<int>(q.max));
    }
    // Task jobs still pending when a run ends without draining are reported as such (counted, never dropped).
    for (std::size_t t = 0; t < tasks_.size(); ++t)
      for (const auto& [job, release] : tasks_[t].pending)
        sink_.on_task({t, job, release, -1, totals_.end_s, 0, 0, false});
    for (const auto& [s, e] : pipeline_->never_received())
      totals_.warnings.push_back(fmt::format("stage \"{}\" never received input \"{}\"", spec_.stages[s].name,
                                             spec_.stages[s].input_names[e]));
  }

  const ScenarioSpec& spec_;
  RecordSink& sink_;
  const RunOptions& options_;
  RunTotals totals_;
  Platform platform_;
  std::unique_ptr<Ledger> ledger_;
  std::unique_ptr<Dispatcher> dispatcher_;
  FrameBook frames_;
  std::unique_ptr<Pipeline> pipeline_;
  std::vector<Stage> stages_;
  std::vector<Task> tasks_;
  std::vector<std::mt19937_64> sensor_rng_;
  std::vector<double> sensor_last_s_;
  int sensors_running_ = 0;
  bool stopping_ = false;
  double last_tick_s_ = 0;
  double drain_deadline_s_ = kNever;
  std::exception_ptr error_;
};

/// SimGrid keeps global state: one simulation per process (README.md, "Limits").
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
