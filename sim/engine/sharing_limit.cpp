// The bench's sharing limit: how fast the kernels of a scenario can go through an event loop that shares the
// platform at all, written as small as it can be. The same kernels as the bare loop (bare_loop.cpp: every stage's at
// each capture of the first sensor, every task's at each release, one after another), a binary heap of events, and
// the rates set max-min fair (progressive filling: every unfixed kernel's rate rises together until a resource it
// uses is full or it reaches its cores' bound) at every kernel start and end; no SimGrid run, no queues, no
// scheduling, no energy, no records. Its resources are framesim's: a unit's cores (capacity speed x cores, a kernel
// bounded by speed / cycles per core), each level's bus, each Little's-law port. What framesim does beyond this
// (its schedulers, ledger, records, and SimGrid for everything outside the fluid system) is the gap `bench` prints.
#include <algorithm>
#include <chrono>
#include <limits>
#include <queue>

#include <simgrid/s4u.hpp>

#include "engine/plans.hpp"
#include "engine/platform.hpp"
#include "engine/sharing_limit.hpp"

namespace framesim::engine {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Use {
  std::size_t resource;
  double weight;  // resource units per unit of the kernel's progress
};

struct Issuer {
  std::vector<KernelPlan> work;
  std::size_t unit = 0;
  int cores = 1;
  double phase_s = 0, rate_Hz = 1;
  std::int64_t release = 0;  // the next release's index
  std::size_t next = 0;      // the kernel running or next
  // The kernel in flight: its uses, bound, progress left and rate.
  std::vector<Use> uses;
  double bound = kInf, left = 0, rate = 0, since_s = 0;
  bool flowing = false;
  std::uint64_t version = 0;  // events of an older version are stale
};

struct LimitEvent {
  double t;
  std::uint64_t seq;  // ties in issue order
  std::size_t issuer;
  int kind;  // 0: release, 1: overhead over, 2: finish
  std::uint64_t version;
  bool operator>(const LimitEvent& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

class Loop {
 public:
  Loop(const model::ScenarioSpec& spec, const Platform& platform, std::vector<Issuer> issuers)
      : spec_(spec), issuers_(std::move(issuers)) {
    for (const auto& u : platform.units) {
      speed_.push_back(u.spec->operating_points[u.pstate].frequency_Hz);
      capacity_.push_back(speed_.back() * u.spec->cores);
    }
    for (const auto& l : platform.levels) {
      bus_.push_back(capacity_.size());
      capacity_.push_back(l.link->get_bandwidth());
    }
    port_.assign(platform.units.size(), std::vector<std::size_t>(platform.levels.size(), kNone));
    for (std::size_t u = 0; u < platform.units.size(); ++u)
      for (std::size_t lv = 0; lv < platform.levels.size(); ++lv)
        if (platform.ports[u][lv]) {
          port_[u][lv] = capacity_.size();
          capacity_.push_back(platform.ports[u][lv]->get_bandwidth());
        }
    remaining_.resize(capacity_.size());
    weight_.resize(capacity_.size());
  }

  void run(RunTotals& totals) {
    for (std::size_t i = 0; i < issuers_.size(); ++i) push(release_time(issuers_[i]), i, 0, 0);
    while (!heap_.empty()) {
      const LimitEvent e = heap_.top();
      heap_.pop();
      Issuer& is = issuers_[e.issuer];
      if (e.kind != 0 && e.version != is.version) continue;
      now_ = e.t;
      if (e.kind == 0) {  // a release: its kernels, one after another
        ++is.release;
        totals.kernels += static_cast<std::int64_t>(is.work.size());
        is.next = 0;
        begin_kernel(e.issuer);
      } else if (e.kind == 1) {
        start_flow(e.issuer);
      } else {
        is.flowing = false;
        ++is.version;
        rerate();
        ++is.next;
        begin_kernel(e.issuer);
      }
    }
    totals.end_s = now_;
  }

 private:
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

  double release_time(const Issuer& is) const { return is.phase_s + static_cast<double>(is.release) / is.rate_Hz; }

  void push(double t, std::size_t issuer, int kind, std::uint64_t version) {
    heap_.push({t, seq_++, issuer, kind, version});
  }

  /// The issuer's kernel `next` starts now: its overhead, then its flow (or the next release when it is done).
  void begin_kernel(std::size_t i) {
    Issuer& is = issuers_[i];
    while (is.next < is.work.size() && is.work[is.next].empty(1.0) && is.work[is.next].overhead_s <= 0) ++is.next;
    if (is.next == is.work.size()) {
      const double t = release_time(is);
      if (t < spec_.duration_s) push(std::max(t, now_), i, 0, 0);
      return;
    }
    const KernelPlan& k = is.work[is.next];
    ++is.version;
    if (k.overhead_s > 0) push(now_ + k.overhead_s, i, 1, is.version);
    else start_flow(i);
  }

  void start_flow(std::size_t i) {
    Issuer& is = issuers_[i];
    const KernelPlan& k = is.work[is.next];
    if (k.empty(1.0)) {  // only an overhead
      ++is.next;
      begin_kernel(i);
      return;
    }
    is.uses.clear();
    is.bound = kInf;
    if (k.cycles > 0) {
      is.uses.push_back({is.unit, k.cycles});
      is.bound = speed_[is.unit] * is.cores / k.cycles;
    }
    for (std::size_t lv = 0; lv < k.bytes.size(); ++lv) {
      if (k.bytes[lv] <= 0) continue;
      if (port_[is.unit][lv] != kNone) is.uses.push_back({port_[is.unit][lv], k.bytes[lv]});
      is.uses.push_back({bus_[lv], k.bytes[lv]});
    }
    is.left = 1;
    is.rate = 0;
    is.since_s = now_;
    is.flowing = true;
    rerate();
  }

  /// Max-min fair rates by progressive filling, then every flowing kernel's finish event.
  void rerate() {
    flowing_.clear();
    for (std::size_t i = 0; i < issuers_.size(); ++i) {
      Issuer& is = issuers_[i];
      if (!is.flowing) continue;
      is.left = std::max(0.0, is.left - is.rate * (now_ - is.since_s));
      is.since_s = now_;
      is.rate = 0;
      flowing_.push_back(i);
    }
    std::copy(capacity_.begin(), capacity_.end(), remaining_.begin());
    unfixed_ = flowing_;
    while (!unfixed_.empty()) {
      std::fill(weight_.begin(), weight_.end(), 0.0);
      for (std::size_t i : unfixed_)
        for (const Use& u : issuers_[i].uses) weight_[u.resource] += u.weight;
      double step = kInf;
      for (std::size_t r = 0; r < weight_.size(); ++r)
        if (weight_[r] > 0) step = std::min(step, remaining_[r] / weight_[r]);
      for (std::size_t i : unfixed_) step = std::min(step, issuers_[i].bound - issuers_[i].rate);
      for (std::size_t i : unfixed_) {
        issuers_[i].rate += step;
        for (const Use& u : issuers_[i].uses) remaining_[u.resource] -= u.weight * step;
      }
      std::erase_if(unfixed_, [&](std::size_t i) {
        const Issuer& is = issuers_[i];
        if (is.rate >= is.bound * (1 - 1e-12)) return true;
        return std::any_of(is.uses.begin(), is.uses.end(),
                           [&](const Use& u) { return remaining_[u.resource] <= capacity_[u.resource] * 1e-12; });
      });
    }
    for (std::size_t i : flowing_) {
      Issuer& is = issuers_[i];
      ++is.version;
      if (is.rate > 0) push(now_ + is.left / is.rate, i, 2, is.version);
    }
  }

  const model::ScenarioSpec& spec_;
  std::vector<Issuer> issuers_;
  std::vector<double> speed_, capacity_, remaining_, weight_;
  std::vector<std::size_t> bus_;
  std::vector<std::vector<std::size_t>> port_;
  std::vector<std::size_t> flowing_, unfixed_;
  std::priority_queue<LimitEvent, std::vector<LimitEvent>, std::greater<>> heap_;
  std::uint64_t seq_ = 0;
  double now_ = 0;
};

}  // namespace

RunTotals run_sharing_limit(const model::ScenarioSpec& spec) {
  const auto wall_start = std::chrono::steady_clock::now();
  const auto engine = start_engine();  // the platform (and so the kernels' plans) is built in SimGrid terms
  RunTotals totals;
  Platform platform = build_platform(spec, true, spec.stages.size() + spec.tasks.size());
  auto cores_of = [&](int cores, const std::vector<int>& pinned, std::size_t unit) {
    return cores > 0 ? cores : pinned.empty() ? platform.units[unit].spec->cores : static_cast<int>(pinned.size());
  };
  std::vector<Issuer> issuers;
  const auto& sensor = spec.sensors.front();
  for (const auto& st : spec.stages) {
    Issuer is;
    is.unit = st.unit;
    is.cores = cores_of(st.cores, st.pinned, st.unit);
    is.work = bench_work(plan_kernels(spec, platform, st.work, st.unit, is.cores, &st, totals), st.work);
    is.phase_s = sensor.phase_s;
    is.rate_Hz = sensor.rate_Hz;
    issuers.push_back(std::move(is));
  }
  for (const auto& t : spec.tasks) {
    if (!t.unit || t.work.kind == model::WorkSpec::Kind::none) continue;
    Issuer is;
    is.unit = *t.unit;
    is.cores = cores_of(t.cores, t.pinned, *t.unit);
    is.work = bench_work(plan_kernels(spec, platform, t.work, *t.unit, is.cores, nullptr, totals), t.work);
    is.phase_s = t.phase_s;
    is.rate_Hz = t.rate_Hz;
    issuers.push_back(std::move(is));
  }
  Loop(spec, platform, std::move(issuers)).run(totals);
  totals.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return totals;
}

}  // namespace framesim::engine
