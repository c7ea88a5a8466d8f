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

// priority, preemptive: higher priority, then earlier release, then declaration order. fifo: release, then
// declaration. time_slice: place in the round (a job whose quantum expired joins the back of it after the
// jobs released at that instant), then declaration.
bool UnitScheduler::ranks_before(const Job& a, const Job& b) const {
  switch (spec_.policy) {
    case SchedulingPolicy::priority:
    case SchedulingPolicy::preemptive:
      if (a.priority != b.priority) return a.priority > b.priority;
      [[fallthrough]];
    case SchedulingPolicy::fifo:
      if (a.release_s != b.release_s) return a.release_s < b.release_s;
      return a.declared < b.declared;
    case SchedulingPolicy::time_slice:
      if (a.round_s != b.round_s) return a.round_s < b.round_s;
      if (a.round_late != b.round_late) return a.round_late < b.round_late;
      return a.declared < b.declared;
  }
  return false;
}

void UnitScheduler::release(Job& job, double now_s) {
  FRAMESIM_ASSERT(job.state == Job::State::outside, "a job is released once");
  FRAMESIM_ASSERT(job.cores >= 1 && job.cores <= std::popcount(allowed(job)), "a job fits its unit");
  account(now_s);
  job.state = Job::State::waiting;
  job.owes_switch = false;
  job.contested = false;
  job.expired = false;
  job.round_s = job.release_s;
  job.round_late = 0;
  waiting_.push_back(&job);
  pending_ = true;
}

void UnitScheduler::boundary(Job& job) {
  FRAMESIM_ASSERT(job.state == Job::State::holding, "only a holder reaches a kernel boundary");
  if (interrupts_holders(spec_)) return;
  job.contested = true;
  pending_ = true;
}

void UnitScheduler::expire(Job& job, double now_s) {
  FRAMESIM_ASSERT(job.state == Job::State::holding, "only a holder has a quantum");
  job.expired = true;
  job.contested = true;
  job.slice_end_s = std::numeric_limits<double>::infinity();
  (void)now_s;
  pending_ = true;
}

void UnitScheduler::unhold(Job& job) {
  busy_ &= ~job.held;
  job.held = 0;
  holders_.erase(std::find(holders_.begin(), holders_.end(), &job));
}

void UnitScheduler::finish(Job& job, double now_s) {
  account(now_s);
  if (job.state == Job::State::holding) unhold(job);
  else if (job.state == Job::State::waiting) waiting_.erase(std::find(waiting_.begin(), waiting_.end(), &job));
  job.state = Job::State::outside;
  job.owes_switch = false;
  job.contested = false;
  job.expired = false;
  job.slice_end_s = std::numeric_limits<double>::infinity();
  pending_ = true;
}

void UnitScheduler::decide(double now_s, Decision& out) {
  pending_ = false;
  account(now_s);
  if (waiting_.empty()) {
    keep_all(now_s, out);
    return;
  }
  gather_candidates(now_s);
  grant_in_rank_order();
  apply(now_s, out);
  // Under preemptive, holders are contested at every decision; those that keep their cores stay uncontested.
  if (spec_.policy == SchedulingPolicy::preemptive)
    for (Job* h : holders_) h->contested = false;
}

void UnitScheduler::keep_all(double now_s, Decision& out) {
  // Nobody waits: every contested holder keeps its cores (what the ranking decides when the holders are the only
  // candidates, their cores disjoint), an expired one with a new quantum. The common case of a unit used by one
  // job at a time, decided without sorting.
  const bool preemptive = spec_.policy == SchedulingPolicy::preemptive;
  for (Job* h : holders_) {
    if (!h->contested && !preemptive) continue;
    if (h->expired) h->slice_end_s = now_s + spec_.quantum_s;
    const bool was_contested = h->contested;
    h->contested = false;
    h->expired = false;
    if (was_contested && !preemptive) out.granted.push_back(h);
  }
}

void UnitScheduler::gather_candidates(double now_s) {
  // The candidates: waiting jobs and the holders whose cores are contested now (under preemptive, every holder).
  const bool preemptive = spec_.policy == SchedulingPolicy::preemptive;
  candidates_.clear();
  round_.taken = 0;
  round_.contested = 0;
  for (Job* h : holders_) {
    if (preemptive) h->contested = true;
    if (h->contested) {
      round_.contested |= h->held;
      candidates_.push_back(h);
    } else {
      round_.taken |= h->held;
    }
  }
  // An expired quantum puts its job at the back of the round, behind this instant's releases; it gets its old
  // place back if it keeps its cores.
  round_.places.clear();
  for (Job* c : candidates_) {
    if (!c->expired) continue;
    round_.places.push_back({c, c->round_s, c->round_late});
    c->round_s = now_s;
    c->round_late = 1;
  }
  candidates_.insert(candidates_.end(), waiting_.begin(), waiting_.end());
  std::stable_sort(candidates_.begin(), candidates_.end(),
                   [&](const Job* a, const Job* b) { return ranks_before(*a, *b); });
}

CoreMask UnitScheduler::pick(const Job& w, CoreMask free, CoreMask take) const {
  // Free cores first (the lowest numbered), then those of the lowest-ranked contested holders.
  int need = w.cores;
  for (CoreMask pool = free & ~round_.contested; need > 0 && pool; --need) {
    const CoreMask lowest = pool & (~pool + 1);
    take |= lowest;
    pool &= ~lowest;
  }
  for (auto it = candidates_.rbegin(); need > 0 && it != candidates_.rend(); ++it) {
    if ((*it)->state != Job::State::holding) continue;
    for (CoreMask pool = (*it)->held & free & ~take; need > 0 && pool; --need) {
      const CoreMask lowest = pool & (~pool + 1);
      take |= lowest;
      pool &= ~lowest;
    }
  }
  return take;
}

void UnitScheduler::grant_in_rank_order() {
  // Grants in rank order. A holder keeps its own cores when it may; a waiting job takes free cores first, then
  // those of the lowest-ranked contested holders. A job that cannot get its cores reserves the ones it may use,
  // so nobody ranked below it overtakes it there.
  auto& r = round_;
  r.keeps.clear();
  r.gets.clear();
  r.loses.clear();
  r.new_cores.assign(candidates_.size(), 0);
  CoreMask reserved = 0;
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    Job& c = *candidates_[i];
    if (c.state == Job::State::holding && !(c.held & (reserved | r.taken))) {
      r.taken |= c.held;
      r.new_cores[i] = c.held;
      r.keeps.push_back(&c);
      continue;
    }
    const CoreMask free = allowed(c) & ~reserved & ~r.taken;
    if (std::popcount(free) < c.cores) {
      reserved |= allowed(c);
      if (c.state == Job::State::holding) r.loses.push_back(&c);
      continue;
    }
    r.new_cores[i] = pick(c, free, 0);
    r.taken |= r.new_cores[i];
    if (c.state == Job::State::holding) r.keeps.push_back(&c);  // moved to other cores of the unit
    else r.gets.push_back(&c);
  }

  // time_slice: an expired holder whose cores nobody took keeps them (its place, and a new quantum).
  CoreMask given = 0;
  for (std::size_t i = 0; i < candidates_.size(); ++i)
    if (candidates_[i]->state == Job::State::waiting) given |= r.new_cores[i];
  const bool sliced = spec_.policy == SchedulingPolicy::time_slice;
  for (auto it = r.loses.begin(); it != r.loses.end();) {
    Job& l = **it;
    if (sliced && l.expired && !(l.held & given)) {
      r.keeps.push_back(&l);
      it = r.loses.erase(it);
    } else {
      ++it;
    }
  }
  for (const Round::Place& p : r.places) {
    if (std::find(r.keeps.begin(), r.keeps.end(), p.job) == r.keeps.end()) continue;
    p.job->round_s = p.round_s;
    p.job->round_late = p.late;
  }
}

void UnitScheduler::apply(double now_s, Decision& out) {
  // A forced switch (preemption, an expired quantum handed on) costs the loser a switch when it resumes and
  // the job taking its cores a switch before it starts. A hand-over at a kernel boundary (priority, fifo) costs
  // nothing.
  const bool preemptive = spec_.policy == SchedulingPolicy::preemptive;
  const bool sliced = spec_.policy == SchedulingPolicy::time_slice;
  auto& r = round_;
  CoreMask switched = 0;
  for (Job* l : r.loses) {
    const bool forced = preemptive || sliced;
    if (forced) switched |= l->held;
    unhold(*l);
    l->state = Job::State::waiting;
    l->contested = false;
    l->expired = false;
    l->owes_switch = l->owes_switch || forced;
    l->slice_end_s = std::numeric_limits<double>::infinity();
    waiting_.push_back(l);
    out.stopped.push_back(l);
  }
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    Job& c = *candidates_[i];
    if (c.state == Job::State::holding && std::find(r.keeps.begin(), r.keeps.end(), &c) != r.keeps.end()) {
      busy_ &= ~c.held;
      if (r.new_cores[i]) c.held = r.new_cores[i];
      busy_ |= c.held;
      if (c.expired) c.slice_end_s = now_s + spec_.quantum_s;
      const bool was_contested = c.contested;
      c.contested = false;
      c.expired = false;
      if (was_contested && !preemptive) out.granted.push_back(&c);
    }
  }
  // Waiting jobs granted, in rank order (they are in `gets` in that order).
  for (Job* g : r.gets) {
    const std::size_t i =
        static_cast<std::size_t>(std::find(candidates_.begin(), candidates_.end(), g) - candidates_.begin());
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), g));
    g->held = r.new_cores[i];
    busy_ |= g->held;
    g->state = Job::State::holding;
    g->contested = false;
    g->expired = false;
    if (g->held & switched) g->owes_switch = true;
    if (sliced) g->slice_end_s = now_s + (g->owes_switch ? spec_.switch_cost_s : 0.0) + spec_.quantum_s;
    holders_.push_back(g);
    out.granted.push_back(g);
  }
}

}  // namespace framesim::engine
