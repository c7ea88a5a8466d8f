// The bench's reference: the same platform and the same kernels of every stage, issued from one actor per stage at
// each capture of the first sensor, and of every task with work, from one actor per task at each of its releases,
// with none of framesim's queues, scheduling, energy or records: SimGrid driven as tightly as it can be, one
// activity per kernel with its dispatch overhead as the latency of its routes (a kernel that moves no bytes sleeps
// through its overhead first). A unit shared by several stages or tasks is shared as SimGrid shares it (max-min
// over its cores), not as its scheduler would: the loop issues the kernels, it does not decide who runs.
#include <algorithm>
#include <chrono>

#include <simgrid/s4u.hpp>

#include "engine/plans.hpp"
#include "engine/platform.hpp"
#include "engine/sharing_limit.hpp"
#include "engine/simulation.hpp"

namespace framesim::engine {

namespace {

/// The cores a stage or task runs on, as the simulation counts them: given, or those it is pinned to, or all.
int cores_of(int cores, const std::vector<int>& pinned, const UnitState& unit) {
  return cores > 0 ? cores : pinned.empty() ? unit.spec->cores : static_cast<int>(pinned.size());
}

}  // namespace

std::vector<KernelPlan> bench_work(std::vector<KernelPlan> work, const model::WorkSpec& spec) {
  if (spec.kind != model::WorkSpec::Kind::time) return work;
  const double seconds = std::max(0.0, spec.time_s.mean());
  for (KernelPlan& k : work) {
    k.cycles *= seconds;
    for (double& f : k.flops) f *= seconds;
  }
  return work;
}

RunTotals run_bare_loop(const model::ScenarioSpec& spec) {
  const auto wall_start = std::chrono::steady_clock::now();
  const auto engine = start_engine();
  RunTotals totals;
  Platform platform = build_platform(spec, true, spec.stages.size() + spec.tasks.size());
  struct Issuer {
    std::string name;
    std::size_t unit;
    std::vector<KernelPlan> work;
    double phase_s, rate_Hz;
  };
  std::vector<Issuer> issuers;
  const auto& sensor = spec.sensors.front();
  for (const auto& st : spec.stages) {
    const int cores = cores_of(st.cores, st.pinned, platform.units[st.unit]);
    issuers.push_back({st.name, st.unit,
                       bench_work(plan_kernels(spec, platform, st.work, st.unit, cores, &st, totals), st.work),
                       sensor.phase_s, sensor.rate_Hz});
  }
  for (const auto& t : spec.tasks) {
    if (!t.unit || t.work.kind == model::WorkSpec::Kind::none) continue;
    const int cores = cores_of(t.cores, t.pinned, platform.units[*t.unit]);
    issuers.push_back({t.name, *t.unit,
                       bench_work(plan_kernels(spec, platform, t.work, *t.unit, cores, nullptr, totals), t.work),
                       t.phase_s, t.rate_Hz});
  }
  for (const Issuer& is : issuers) {
    sg4::Actor::create("bare:" + is.name, platform.units[is.unit].host, [&] {
      for (std::int64_t i = 0;; ++i) {
        const double t = is.phase_s + static_cast<double>(i) / is.rate_Hz;
        if (t >= spec.duration_s) break;
        sg4::this_actor::sleep_until(t);
        for (const KernelPlan& k : is.work) {
          const bool in_route = platform.overhead_in_route[is.unit] && !k.matrix.empty();
          if (k.overhead_s > 0 && !in_route) sg4::this_actor::sleep_for(k.overhead_s);
          if (k.empty(1.0)) continue;
          sg4::this_actor::exec_init(k.hosts, k.flops, k.matrix)->wait();
          ++totals.activities;
        }
      }
    });
  }
  engine->run();
  totals.end_s = sg4::Engine::get_clock();
  totals.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return totals;
}

}  // namespace framesim::engine
