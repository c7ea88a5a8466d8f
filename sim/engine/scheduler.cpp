#include "engine/scheduler.hpp"

#include <algorithm>
#include <bit>

#include "core/error.hpp"

namespace framesim::engine {

using model::SchedulingPolicy;

UnitScheduler::UnitScheduler(const model::SchedulerSpec& spec, int cores, std::size_t owners)
    : spec_(spec),
      cores_(cores),
      all_(cores >= kMaxCores ? ~CoreMask{0} : (CoreMask{1} << cores) - 1),
      owner_core_s_(owners, 0.0) {
  FRAMESIM_ASSERT(cores >= 1 && cores <= kMaxCores, "a unit has 1 to 64 cores");
}

int UnitScheduler::busy_cores() const { return std::popcount(busy_); }

double UnitScheduler::busy_core_s(double now_s) {
  account(now_s);
  return busy_core_s_;
}

void UnitScheduler::account(double now_s) {
  const double dt = now_s - accounted_s_;
  if (dt <= 0) return;
  busy_core_s_ += std::popcount(busy_) * dt;
  for (const Job* h : holders_) owner_core_s_[h->owner] += std::popcount(h->held) * dt;
  accounted_s_ = now_s;
}

bool UnitScheduler::ranks_before(const Job& a, const Job& b) const {
  switch (spec_.policy) {
    case SchedulingPolicy::priority:
    case SchedulingPolicy::preemptive:
      if (a.priority != b.priority) return a.priority > b.priority;
      return a.order < b.order;
    case SchedulingPolicy::fifo:
    case SchedulingPolicy::time_slice: return a.order < b.order;
  }
  return false;
}

void UnitScheduler::enqueue(Job& job) {
  job.state = Job::State::waiting;
  waiting_.push_back(&job);
}

void UnitScheduler::unhold(Job& job) {
  busy_ &= ~job.held;
  job.held = 0;
  holders_.erase(std::find(holders_.begin(), holders_.end(), &job));
}

void UnitScheduler::dispatch(double now_s, std::vector<Job*>& granted) {
  std::stable_sort(waiting_.begin(), waiting_.end(), [&](const Job* a, const Job* b) { return ranks_before(*a, *b); });
  CoreMask reserved = 0;
  for (auto it = waiting_.begin(); it != waiting_.end() && reserved != all_;) {
    Job& w = **it;
    CoreMask free = allowed(w) & ~reserved & ~busy_;
    if (std::popcount(free) < w.cores) {
      reserved |= allowed(w);
      ++it;
      continue;
    }
    CoreMask take = 0;
    for (int n = 0; n < w.cores; ++n) {
      const CoreMask lowest = free & (~free + 1);
      take |= lowest;
      free &= ~lowest;
    }
    w.held = take;
    busy_ |= take;
    w.state = Job::State::holding;
    if (spec_.policy == SchedulingPolicy::time_slice)
      w.slice_end_s = now_s + (w.owes_switch ? spec_.switch_cost_s : 0.0) + spec_.quantum_s;
    holders_.push_back(&w);
    granted.push_back(&w);
    it = waiting_.erase(it);
  }
}

bool UnitScheduler::release(Job& job, double now_s, std::vector<Job*>& preempted) {
  FRAMESIM_ASSERT(job.state == Job::State::outside, "a job is released once");
  FRAMESIM_ASSERT(job.cores >= 1 && job.cores <= std::popcount(allowed(job)), "a job fits its unit");
  account(now_s);
  job.order = next_order_++;
  job.owes_switch = false;
  enqueue(job);
  std::vector<Job*> granted;
  dispatch(now_s, granted);
  if (job.state == Job::State::holding) return true;
  if (spec_.policy != SchedulingPolicy::preemptive) return false;
  // Which holders of lower priority it would take cores from: the lowest first, then the latest released.
  std::vector<Job*> victims;
  for (Job* h : holders_)
    if (h->priority < job.priority && (h->held & allowed(job))) victims.push_back(h);
  std::sort(victims.begin(), victims.end(), [](const Job* a, const Job* b) {
    return a->priority != b->priority ? a->priority < b->priority : a->order > b->order;
  });
  CoreMask free = allowed(job) & ~busy_;
  std::size_t needed = 0;
  while (std::popcount(free) < job.cores && needed < victims.size()) free |= victims[needed++]->held & allowed(job);
  if (std::popcount(free) < job.cores) return false;  // even all of them would not make room: it waits
  for (std::size_t i = 0; i < needed; ++i) {
    Job& v = *victims[i];
    unhold(v);
    v.owes_switch = true;
    enqueue(v);
    preempted.push_back(&v);
  }
  dispatch(now_s, granted);
  if (job.state == Job::State::holding) job.owes_switch = true;
  FRAMESIM_ASSERT(std::all_of(granted.begin(), granted.end(), [&](const Job* g) { return g == &job; }),
                  "preemption makes room for the preempting job only");
  return job.state == Job::State::holding;
}

bool UnitScheduler::boundary(Job& job, double now_s, std::vector<Job*>& granted) {
  if (job.state != Job::State::holding) return false;  // preempted as its kernel ended
  if (spec_.policy == SchedulingPolicy::time_slice) {
    if (now_s < job.slice_end_s) return true;
    return !quantum_expired(job, now_s, granted);
  }
  account(now_s);
  unhold(job);
  enqueue(job);
  const std::size_t before = granted.size();
  dispatch(now_s, granted);
  const auto self = std::find(granted.begin() + static_cast<std::ptrdiff_t>(before), granted.end(), &job);
  if (self == granted.end()) return false;
  granted.erase(self);
  return true;
}

bool UnitScheduler::quantum_expired(Job& job, double now_s, std::vector<Job*>& granted) {
  FRAMESIM_ASSERT(job.state == Job::State::holding, "only a holder has a quantum");
  account(now_s);
  const CoreMask held = job.held;
  unhold(job);
  const std::uint64_t order = job.order;
  job.order = next_order_++;
  job.owes_switch = true;
  enqueue(job);
  const std::size_t before = granted.size();
  dispatch(now_s, granted);
  const bool others = std::any_of(granted.begin() + static_cast<std::ptrdiff_t>(before), granted.end(),
                                  [&](const Job* g) { return g != &job; });
  if (others) {
    // A forced switch: whoever gets the cores pays the switch cost before its quantum starts.
    for (auto it = granted.begin() + static_cast<std::ptrdiff_t>(before); it != granted.end(); ++it) {
      if (*it == &job || (*it)->owes_switch) continue;
      (*it)->owes_switch = true;
      (*it)->slice_end_s += spec_.switch_cost_s;
    }
    if (job.state == Job::State::holding) {  // it got cores back beside the others: nothing was switched out
      job.owes_switch = false;
      granted.erase(std::find(granted.begin() + static_cast<std::ptrdiff_t>(before), granted.end(), &job));
    }
    return job.state != Job::State::holding;
  }
  // Nobody else could use its cores: it keeps them, its place and a new quantum.
  if (job.state == Job::State::holding) {
    granted.erase(std::find(granted.begin() + static_cast<std::ptrdiff_t>(before), granted.end(), &job));
  } else {
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), &job));
    job.state = Job::State::holding;
    holders_.push_back(&job);
  }
  busy_ &= ~job.held;
  job.held = held;
  busy_ |= held;
  job.order = order;
  job.owes_switch = false;
  job.slice_end_s = now_s + spec_.quantum_s;
  return false;
}

void UnitScheduler::finish(Job& job, double now_s, std::vector<Job*>& granted) {
  account(now_s);
  if (job.state == Job::State::holding) unhold(job);
  else if (job.state == Job::State::waiting) waiting_.erase(std::find(waiting_.begin(), waiting_.end(), &job));
  job.state = Job::State::outside;
  job.owes_switch = false;
  job.slice_end_s = std::numeric_limits<double>::infinity();
  dispatch(now_s, granted);
}

}  // namespace framesim::engine
