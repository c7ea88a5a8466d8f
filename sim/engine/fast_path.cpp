#include "engine/fast_path.hpp"

#include <algorithm>
#include <map>

#include "core/error.hpp"

namespace framesim::engine {

namespace {
constexpr std::uint64_t kBackground = std::numeric_limits<std::uint64_t>::max();
}

FastPath::FastPath(const model::ScenarioSpec& spec, Platform& platform, Ledger& ledger, RecordSink& sink,
                   RunTotals& totals)
    : spec_(spec), platform_(platform), ledger_(ledger), sink_(sink), totals_(totals) {
  for (const auto& u : platform_.units) {
    const double speed = u.spec->operating_points[u.pstate].frequency_Hz;
    unit_cpu_.push_back(fluid_.add_constraint(speed * u.spec->cores, speed, u.spec->cores));
  }
  for (const auto& l : platform_.levels) level_bus_.push_back(fluid_.add_constraint(l.link->get_bandwidth()));
  unit_port_.assign(platform_.units.size(), std::vector<std::int64_t>(platform_.levels.size(), -1));
  for (std::size_t u = 0; u < platform_.units.size(); ++u)
    for (std::size_t lv = 0; lv < platform_.levels.size(); ++lv)
      if (platform_.ports[u][lv])
        unit_port_[u][lv] = static_cast<std::int64_t>(fluid_.add_constraint(platform_.ports[u][lv]->get_bandwidth()));
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
  wake_ = sg4::ConditionVariable::create();
  mutex_ = sg4::Mutex::create();
}

bool FastPath::eligible(const model::ScenarioSpec& spec) {
  std::vector<int> sources(spec.hardware.units.size(), 0);
  for (const auto& s : spec.stages) {
    if (s.work.kind != model::WorkSpec::Kind::none) ++sources[s.unit];
    for (const auto& side : s.side_work) ++sources[side.unit];  // side work is a job of its own on that unit
  }
  for (const auto& t : spec.tasks)
    if (t.unit && t.work.kind != model::WorkSpec::Kind::none) ++sources[*t.unit];
  return std::all_of(sources.begin(), sources.end(), [](int n) { return n <= 1; });
}

const FluidSystem::FlowSpec& FastPath::flow_spec(const Job& job, const KernelPlan& k) const {
  // The parallel task of plans.cpp: `cores` entries of the unit sharing the cycles, then the bytes from the
  // first core to each level, through the unit's port (if any) and the level's bus.
  FluidSystem::FlowSpec& f = scratch_;
  f.elements.clear();
  f.cycles_per_entry = 0;
  const double cycles = k.cycles * job.cycle_scale;
  if (cycles > 0) {
    for (int c = 0; c < job.cores; ++c) f.elements.push_back({unit_cpu_[job.unit], cycles / job.cores});
    f.cycles_per_entry = cycles / job.cores;
  }
  f.speed_of = unit_cpu_[job.unit];
  for (std::size_t lv = 0; lv < k.bytes.size(); ++lv) {
    const double bytes = k.bytes[lv] * job.byte_scale;
    if (bytes <= 0) continue;
    if (unit_port_[job.unit][lv] >= 0)
      f.elements.push_back({static_cast<std::size_t>(unit_port_[job.unit][lv]), bytes});
    f.elements.push_back({level_bus_[lv], bytes});
  }
  f.latency_s = k.overhead_s + stall_at_start_s(k, platform_, job.unit, job.cores, job.cycle_scale, job.byte_scale);
  return f;
}

std::size_t FastPath::next_kernel(const Job& job, std::size_t kernel) const {
  const auto& kernels = *job.kernels;
  // A kernel with nothing to launch nor to run: SimGrid would not see it either.
  while (kernel < kernels.size() && kernels[kernel].empty(job.cycle_scale) && kernels[kernel].overhead_s <= 0) ++kernel;
  return kernel;
}

void FastPath::changed() {
  predicted_ = false;
  wake_->notify_all();
}

void FastPath::run_job(std::size_t unit, int cores, const std::vector<KernelPlan>& kernels, double cycle_scale,
                       double byte_scale, int stage, int task, std::int64_t frame, double* bucket) {
  const double now = sg4::Engine::get_clock();
  advance(now);
  totals_.kernels += static_cast<std::int64_t>(kernels.size());
  Job& j = jobs_.emplace_back();
  const std::uint64_t id = first_job_ + jobs_.size() - 1;
  j.unit = unit;
  j.cores = cores;
  j.kernels = &kernels;
  j.cycle_scale = cycle_scale;
  j.byte_scale = byte_scale;
  j.stage = stage;
  j.task = task;
  j.frame = frame;
  j.booking.master = unit;
  j.booking.cycle_scale = cycle_scale;
  j.booking.byte_scale = byte_scale;
  j.booking.bucket = bucket;
  j.next = next_kernel(j, 0);
  if (j.next < kernels.size()) {
    j.finished = sg4::Semaphore::create(0);
    const auto finished = j.finished;
    const auto& flow = flow_spec(j, kernels[j.next]);
    j.launch_s = flow.latency_s;
    j.flow = fluid_.start(flow, id);
    j.dispatch_start_s = now;
    j.booking.kernels = &kernels[j.next];
    changed();
    finished->acquire();  // released by the driver when the last kernel ends
  } else {
    j.done = true;
  }
  while (!jobs_.empty() && jobs_.front().done) {
    jobs_.pop_front();
    ++first_job_;
  }
}

void FastPath::advance(double t_s) {
  fluid_.advance(t_s, [&](std::size_t /*flow*/, std::uint64_t owner) {
    if (owner == kBackground) return;  // background streams never end
    Job& j = job(owner);
    const double now = fluid_.now_s();
    const KernelPlan& k = (*j.kernels)[j.next];
    ledger_.book(j.booking, 1.0);
    if (j.dispatch_start_s < spec_.kernel_trace_s - kSameInstant_s)  // a kernel at the window's end is out
      sink_.on_kernel({j.unit, j.stage, j.task, k.name, j.frame, j.dispatch_start_s + j.launch_s, now, j.launch_s});
    j.next = next_kernel(j, j.next + 1);
    if (j.next < j.kernels->size()) {
      const auto& flow = flow_spec(j, (*j.kernels)[j.next]);
      j.launch_s = flow.latency_s;
      j.flow = fluid_.start(flow, owner);
      j.dispatch_start_s = now;
      j.booking.kernels = &(*j.kernels)[j.next];
      j.booking.progress = 0;
    } else {
      j.done = true;
      j.finished->release();
    }
  });
}

void FastPath::book_in_flight() {
  for (auto& j : jobs_)
    if (!j.done) ledger_.book(j.booking, fluid_.progress(j.flow));
  for (std::size_t b = 0; b < background_flow_.size(); ++b) {
    const double done = fluid_.progress(background_flow_[b]);
    ledger_.book_bytes(platform_.units.size() + b, spec_.background[b].level, done - background_booked_[b],
                       &totals_.background_energy_J);
    background_booked_[b] = done;
  }
}

void FastPath::sync(double now_s) {
  advance(now_s);
  book_in_flight();
}

double FastPath::next_job_end_s() {
  const double now = fluid_.now_s();
  if (!predicted_) {
    predicted_ends_s_.clear();
    FluidSystem dry = fluid_;
    std::map<std::uint64_t, std::size_t> next;  // the kernel each job runs in the dry run
    for (std::uint64_t id = first_job_; id < first_job_ + jobs_.size(); ++id)
      if (!job(id).done) next[id] = job(id).next;
    std::size_t running = next.size();
    while (running > 0) {
      const double delta = dry.next_delta_s();
      if (delta == std::numeric_limits<double>::infinity()) break;
      dry.advance(dry.now_s() + delta, [&](std::size_t, std::uint64_t owner) {
        if (owner == kBackground) return;
        const Job& j = job(owner);
        const std::size_t k = next_kernel(j, next[owner] + 1);
        if (k < j.kernels->size()) {
          next[owner] = k;
          dry.start(flow_spec(j, (*j.kernels)[k]), owner);
        } else {
          predicted_ends_s_.push_back(dry.now_s());
          --running;
        }
      });
    }
    predicted_ = true;
  }
  for (double t : predicted_ends_s_)
    if (t > now) return t;
  return std::numeric_limits<double>::infinity();
}

void FastPath::set_background_rate(std::size_t background, double rate_Bps) {
  sync(sg4::Engine::get_clock());
  fluid_.set_capacity(background_port_[background], std::max(0.0, rate_Bps));
  changed();
}

void FastPath::unit_speed_changed(std::size_t unit) {
  const auto& u = platform_.units[unit];
  fluid_.set_speed(unit_cpu_[unit], u.spec->operating_points[u.pstate].frequency_Hz);
  changed();
}

void FastPath::level_bandwidth_changed(std::size_t level) {
  fluid_.set_capacity(level_bus_[level], platform_.levels[level].link->get_bandwidth());
  changed();
}

void FastPath::port_bandwidth_changed(std::size_t unit, std::size_t level, double bandwidth_Bps) {
  const auto port = static_cast<std::size_t>(unit_port_[unit][level]);
  if (fluid_.capacity(port) == bandwidth_Bps) return;  // reloaded with the same latency: nothing changes
  fluid_.set_capacity(port, bandwidth_Bps);
  changed();
}

void FastPath::drive() {
  std::unique_lock lock(*mutex_);
  while (!stopping_) {
    // Let every actor woken at this instant (new jobs, a tick) act before looking ahead.
    lock.unlock();
    sg4::this_actor::yield();
    lock.lock();
    if (stopping_) break;
    const double end = next_job_end_s();
    if (end == std::numeric_limits<double>::infinity()) wake_->wait(lock);
    else wake_->wait_until(lock, end);
    if (stopping_) break;
    advance(sg4::Engine::get_clock());
  }
}

void FastPath::stop() {
  stopping_ = true;
  changed();
}

}  // namespace framesim::engine
