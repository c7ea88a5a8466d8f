// The bench's reference: the same platform and the same kernels of every stage, issued from one actor per stage at
// each capture of the first sensor, with none of framesim's queues, scheduling, energy or records: SimGrid driven as
// tightly as it can be, one activity per kernel with its dispatch overhead as the latency of its routes (a kernel
// that moves no bytes sleeps through its overhead first).
#include <chrono>

#include <simgrid/s4u.hpp>

#include "engine/plans.hpp"
#include "engine/platform.hpp"
#include "engine/simulation.hpp"

namespace framesim::engine {

RunTotals run_bare_loop(const model::ScenarioSpec& spec) {
  const auto wall_start = std::chrono::steady_clock::now();
  const auto engine = start_engine();
  RunTotals totals;
  Platform platform = build_platform(spec, true, spec.stages.size() + spec.tasks.size());
  std::vector<std::vector<KernelPlan>> work;
  for (const auto& st : spec.stages) {
    const int cores = st.cores > 0 ? st.cores : platform.units[st.unit].spec->cores;
    work.push_back(plan_kernels(spec, platform, st.work, st.unit, cores, &st, totals));
  }
  const auto& sensor = spec.sensors.front();
  for (std::size_t s = 0; s < spec.stages.size(); ++s) {
    sg4::Actor::create("bare:" + spec.stages[s].name, platform.units[spec.stages[s].unit].host, [&, s] {
      for (std::int64_t i = 0;; ++i) {
        const double t = sensor.phase_s + static_cast<double>(i) / sensor.rate_Hz;
        if (t >= spec.duration_s) break;
        sg4::this_actor::sleep_until(t);
        const std::size_t unit = spec.stages[s].unit;
        for (const KernelPlan& k : work[s]) {
          const bool in_route = platform.overhead_in_route[unit] && !k.matrix.empty();
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
