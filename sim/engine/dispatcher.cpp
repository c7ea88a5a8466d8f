#include "engine/dispatcher.hpp"

#include <algorithm>

#include <simgrid/s4u.hpp>

#include "core/error.hpp"
#include "engine/executor.hpp"

namespace framesim::engine {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// Kernel ends of one instant are applied in declaration order (then release order): never in the order an
/// executor happened to report them.
bool applied_before(const RunJob* a, const RunJob* b) {
  if (a->declared != b->declared) return a->declared < b->declared;
  return a->id < b->id;
}
}  // namespace

Dispatcher::Dispatcher(const model::ScenarioSpec& spec, Platform& platform, Ledger& ledger, RecordSink& sink,
                       RunTotals& totals, bool fluid)
    : spec_(spec), platform_(platform), sink_(sink), totals_(totals), fluid_(fluid) {
  executor_ = fluid ? make_fluid_executor(spec, platform, ledger, totals, *this)
                    : make_exact_executor(spec, platform, ledger, totals);
}

Dispatcher::~Dispatcher() = default;

PlatformListener* Dispatcher::listener() { return executor_.get(); }

void Dispatcher::at(double t_s, Kind kind, std::uint64_t key, std::function<void()> fire) {
  std::size_t slot = functions_.size();
  if (free_functions_.empty()) {
    functions_.push_back(std::move(fire));
  } else {
    slot = free_functions_.back();
    free_functions_.pop_back();
    functions_[slot] = std::move(fire);
  }
  timers_.push({on_lattice(t_s), kind, key, timer_seq_++, slot, nullptr, 0});
}

void Dispatcher::at_job(double t_s, Kind kind, RunJob& j, std::uint64_t gen) {
  timers_.push({on_lattice(t_s), kind, j.declared, timer_seq_++, 0, &j, gen});
}

void Dispatcher::fire(Timer& timer) {
  RunJob* p = timer.job;
  if (!p) {
    // Taken out of its slot first: it may set timers of its own, which may take the slot.
    std::function<void()> f = std::move(functions_[timer.function]);
    functions_[timer.function] = nullptr;
    free_functions_.push_back(timer.function);
    f();
    return;
  }
  switch (timer.kind) {
    case Kind::launch:
      if (p->generation != timer.generation || p->phase != RunJob::Phase::launching) return;
      p->launch_left_s = 0;
      p->phase = RunJob::Phase::idle;
      ready_.push_back(p);
      return;
    case Kind::switched:
      if (p->generation != timer.generation || p->phase != RunJob::Phase::switching) return;
      p->owes_switch = false;
      // Its start (the first switch was part of its wait) is when it goes on, after this instant's decision: a
      // job whose switch ends at the instant it is preempted has not started.
      if (p->start_s >= 0) p->blocked_s += now_ - p->phase_start_s;
      p->phase = RunJob::Phase::idle;
      ready_.push_back(p);
      return;
    case Kind::quantum:
      if (p->slice_generation == timer.generation && p->state == Job::State::holding) scheduler(*p).expire(*p, now_);
      return;
    default: FRAMESIM_ASSERT(false, "a job's own timer is a launch, a switch or a quantum");
  }
}

void Dispatcher::book_in_flight() { executor_->book_in_flight(); }

void Dispatcher::set_background_rate(std::size_t background, double rate_Bps) {
  executor_->set_background_rate(background, rate_Bps);
}

void Dispatcher::release(const Worker& worker, double release_s, double cycle_scale, double byte_scale,
                         std::int64_t frame, double* bucket, std::function<void(RunJob&)> done) {
  RunJob* j = nullptr;
  if (free_.empty()) {
    j = &pool_.emplace_back();
  } else {
    j = free_.back();
    free_.pop_back();
    *j = RunJob{};
  }
  j->id = next_job_++;
  j->worker = &worker;
  j->owner = worker.owner;
  j->priority = worker.priority;
  j->cores = worker.cores;
  j->pinned = worker.pinned;
  j->declared = worker.declared;
  j->release_s = release_s;
  j->cycle_scale = cycle_scale;
  j->byte_scale = byte_scale;
  j->frame = frame;
  j->bucket = bucket ? bucket : &j->energy_J;
  j->done = std::move(done);
  j->booking.master = worker.unit;
  j->booking.cycle_scale = cycle_scale;
  j->booking.byte_scale = byte_scale;
  j->booking.bucket = j->bucket;
  totals_.kernels += static_cast<std::int64_t>(worker.kernels.size());
  scheduler(*j).release(*j, now_);
}

std::size_t Dispatcher::next_kernel(const RunJob& j, std::size_t from) const {
  const auto& kernels = j.worker->kernels;
  // A kernel with nothing to launch nor to run takes no time.
  while (from < kernels.size() && kernels[from].empty(j.cycle_scale) && kernels[from].overhead_s <= 0) ++from;
  return from;
}

void Dispatcher::run() {
  while (!stopped_) {
    const double next_timer = timers_.empty() ? kInfinity : timers_.top().t_s;
    completed_.clear();
    const double t = executor_->wait(next_timer, completed_);
    if (t == kInfinity) break;  // nothing can ever happen again
    now_ = std::max(now_, on_lattice(t));
    // Kernel ends less than kInstant_s apart belong to one instant.
    for (double p = executor_->peek_s(); p <= now_ + kInstant_s && p < kInfinity; p = executor_->peek_s())
      executor_->wait(p, completed_);
    instant();
  }
}

void Dispatcher::instant() {
  // 1. Kernel ends: a job goes on to its next kernel (after the decision) or ends (its owner acts: a stage hands
  //    its item on, which may release jobs downstream at this instant).
  std::sort(completed_.begin(), completed_.end(), applied_before);
  for (RunJob* j : completed_) kernel_ended(*j);
  // 2. Timers of the instant, by kind; those they add at this instant join in.
  while (!timers_.empty() && timers_.top().t_s <= now_ + kInstant_s) {
    batch_.clear();
    while (!timers_.empty() && timers_.top().t_s <= now_ + kInstant_s) {
      batch_.push_back(timers_.top());
      timers_.pop();
    }
    std::sort(batch_.begin(), batch_.end(), [](const Timer& a, const Timer& b) {
      if (a.kind != b.kind) return a.kind < b.kind;
      if (a.key != b.key) return a.key < b.key;
      return a.seq < b.seq;
    });
    for (Timer& timer : batch_) fire(timer);
  }
  // 3. Decisions, and jobs that hold cores going on; a job ending there may release others: until settled.
  settle();
  if (after_instant_) after_instant_();
}

void Dispatcher::settle() {
  UnitScheduler::Decision& d = decision_;  // its lists keep their buffers from instant to instant
  while (true) {
    bool decided = false;
    for (auto& u : platform_.units) {
      if (!u.scheduler->pending()) continue;
      d.granted.clear();
      d.stopped.clear();
      u.scheduler->decide(now_, d);
      apply(d);
      decided = true;
    }
    if (!decided && ready_.empty()) return;
    go_.clear();
    go_.swap(ready_);  // ready_ takes go_'s buffer: no allocation per round
    std::sort(go_.begin(), go_.end(), applied_before);
    for (RunJob* j : go_) proceed(*j);
  }
}

void Dispatcher::apply(UnitScheduler::Decision& d) {
  for (Job* s : d.stopped) {
    RunJob& j = *static_cast<RunJob*>(s);
    stop_job(j);
    j.had_cores = false;
    j.lost_s = now_;
    ready_.erase(std::remove(ready_.begin(), ready_.end(), &j), ready_.end());
  }
  for (Job* g : d.granted) {
    RunJob& j = *static_cast<RunJob*>(g);
    const double switch_s = scheduler(j).spec().switch_cost_s;
    if (j.state == Job::State::holding && !std::isinf(j.slice_end_s)) {
      // time_slice: a quantum timer for this grant (older ones are void by generation).
      at_job(j.slice_end_s, Kind::quantum, j, (j.slice_generation = ++stamp_));
    }
    if (j.had_cores) {  // kept its cores after a contest (a boundary, an expired quantum): goes on as it was
      if (j.phase == RunJob::Phase::idle && std::find(ready_.begin(), ready_.end(), &j) == ready_.end())
        ready_.push_back(&j);
      continue;
    }
    j.had_cores = true;
    const bool switches = j.owes_switch && switch_s > 0;
    // It starts once it holds cores and has paid the switch it owes: a first switch is part of its wait, later
    // ones (and the time without cores after its start) are blocked time.
    if (j.start_s < 0) {
      if (!switches) j.start_s = now_;
    } else {
      j.blocked_s += now_ - j.lost_s;
    }
    if (switches) {
      j.phase = RunJob::Phase::switching;
      j.phase_start_s = now_;
      at_job(now_ + switch_s, Kind::switched, j, (j.generation = ++stamp_));
    } else {
      j.owes_switch = false;
      ready_.push_back(&j);
    }
  }
}

void Dispatcher::stop_job(RunJob& j) {
  (j.generation = ++stamp_);  // its launch or switch timer is void
  switch (j.phase) {
    case RunJob::Phase::running: {
      const double left = 1.0 - j.kernel_done;
      const double done = executor_->stop(j);
      j.kernel_done += left * done;
      if (j.kernel_done >= 1.0) j.kernel_done = 1.0 - 1e-15;  // it had just ended: a sliver runs on resume
      ++totals_.preemptions;
      break;
    }
    case RunJob::Phase::launching: j.launch_left_s = std::max(0.0, j.launch_left_s - (now_ - j.phase_start_s)); break;
    case RunJob::Phase::switching:  // pays it again in full
      if (j.start_s >= 0) j.blocked_s += now_ - j.phase_start_s;
      break;
    case RunJob::Phase::idle: break;
  }
  j.phase = RunJob::Phase::idle;
}

void Dispatcher::proceed(RunJob& j) {
  if (j.state != Job::State::holding || j.phase != RunJob::Phase::idle) return;
  if (j.start_s < 0) j.start_s = now_;  // after a first switch paid
  if (!j.in_kernel) {
    j.next = next_kernel(j, j.next);
    if (j.next >= j.worker->kernels.size()) {
      finish(j);
      return;
    }
    begin_kernel(j);
  }
  if (j.launch_left_s > 0 && !executor_->runs_launches(j.worker->unit)) {  // the unit is held and idle
    j.phase = RunJob::Phase::launching;
    j.phase_start_s = now_;
    at_job(now_ + j.launch_left_s, Kind::launch, j, (j.generation = ++stamp_));
    return;
  }
  start_kernel(j);
}

void Dispatcher::begin_kernel(RunJob& j) {
  const KernelPlan& k = j.worker->kernels[j.next];
  j.in_kernel = true;
  j.kernel_done = 0;
  j.work_start_s = -1;
  j.dispatch_start_s = now_;
  // The launch, and the memory stall its compute will not hide (model/overlap.hpp): the unit held, idle. The
  // stall is judged once, when the launch begins.
  j.launch_left_s =
      k.overhead_s + stall_at_start_s(k, platform_, j.worker->unit, j.cores, j.cycle_scale, j.byte_scale, now_);
}

void Dispatcher::start_kernel(RunJob& j) {
  const KernelPlan& k = j.worker->kernels[j.next];
  // An executor that runs launches starts the work when the launch has passed: when the launch timer would fire.
  if (j.work_start_s < 0) j.work_start_s = j.launch_left_s > 0 ? on_lattice(now_ + j.launch_left_s) : now_;
  if (k.empty(j.cycle_scale) && j.launch_left_s <= 0) {  // only a launch, passed: the kernel ends with it
    kernel_ended(j);
    return;
  }
  j.phase = RunJob::Phase::running;
  j.booking.kernels = &k;
  j.booking.base = j.kernel_done;
  j.booking.span = 1.0 - j.kernel_done;
  j.booking.progress = j.kernel_done;
  executor_->start(j);  // runs what is left of the launch first, if any (then launch_left_s is 0)
}

bool Dispatcher::go_on(RunJob& j, double t_s) {
  UnitScheduler& unit = scheduler(j);
  if (unit.waiting() > 0 || unit.pending() || !executor_->runs_launches(j.worker->unit)) return false;
  const std::size_t next = next_kernel(j, j.next + 1);
  if (next >= j.worker->kernels.size()) return false;  // its last: the job ends and its owner acts
  now_ = std::max(now_, t_s);
  record_kernel(j);
  j.next = next;
  begin_kernel(j);
  // next_kernel() skips a kernel with neither work nor overhead, so this one has a launch or work: a flow.
  FRAMESIM_ASSERT(j.launch_left_s > 0 || !j.worker->kernels[next].empty(j.cycle_scale), "a kernel gone on to runs");
  start_kernel(j);
  return true;
}

void Dispatcher::record_kernel(const RunJob& j) {
  if (j.dispatch_start_s < spec_.kernel_trace_s - kSameInstant_s)  // a kernel at the window's end is out
    sink_.on_kernel({j.worker->unit, j.worker->stage, j.worker->task, j.worker->kernels[j.next].name, j.frame,
                     j.work_start_s, now_, j.work_start_s - j.dispatch_start_s});
}

void Dispatcher::kernel_ended(RunJob& j) {
  j.phase = RunJob::Phase::idle;
  j.in_kernel = false;
  record_kernel(j);
  j.next = next_kernel(j, j.next + 1);
  if (j.next >= j.worker->kernels.size()) {
    finish(j);
    return;
  }
  scheduler(j).boundary(j);
  ready_.push_back(&j);
}

void Dispatcher::finish(RunJob& j) {
  scheduler(j).finish(j, now_);
  ready_.erase(std::remove(ready_.begin(), ready_.end(), &j), ready_.end());
  (j.generation = ++stamp_);
  (j.slice_generation = ++stamp_);
  if (j.done) j.done(j);
  j.done = nullptr;
  free_.push_back(&j);
}

}  // namespace framesim::engine
