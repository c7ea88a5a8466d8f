#include "config/scheduler.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/units.hpp"

namespace framesim::config {

using model::SchedulingPolicy;

namespace {
/// The shortest time_slice quantum: a million switches per simulated second of a busy unit. A shorter one is not
/// a GPU's time slice (those are ~1-10 ms) but a typo, and it would make a run last without end.
constexpr double kMinQuantum_s = 1e-6;
}  // namespace

model::SchedulerSpec read_scheduler(const Node& node) {
  const schema::Table& keys = schema::scheduler_table();
  model::SchedulerSpec s;
  if (node.is_scalar()) {
    if (auto p = node.choice(model::kSchedulingPolicies)) s.policy = *p;
    if (s.policy == SchedulingPolicy::time_slice)
      node.error("time_slice needs a quantum: write {policy: time_slice, quantum: \"2 ms\"}");
    return s;
  }
  MapReader m(node, keys, "");
  if (auto p = m.choice("policy", model::kSchedulingPolicies)) s.policy = *p;
  if (m.has("quantum")) {
    s.quantum_s = m.quantity("quantum").value_or(0.0);
    if (s.quantum_s > 0 && s.quantum_s < kMinQuantum_s)
      m.get("quantum")->error(
          fmt::format("a quantum of {} would switch {:.3g} times per simulated second; framesim "
                      "takes a quantum of at least {}",
                      core::format_seconds(s.quantum_s), 1 / s.quantum_s, core::format_seconds(kMinQuantum_s)));
    if (s.policy != SchedulingPolicy::time_slice) m.get("quantum")->error("a quantum is for policy time_slice only");
  } else if (s.policy == SchedulingPolicy::time_slice) {
    node.error("time_slice needs a quantum, e.g. quantum: \"2 ms\"");
  }
  if (m.has("switch_cost")) {
    s.switch_cost_s = m.quantity_or_default("switch_cost");
    if (s.policy != SchedulingPolicy::preemptive && s.policy != SchedulingPolicy::time_slice)
      m.get("switch_cost")
          ->error(
              "a switch cost is for policies preemptive and time_slice (fifo and priority never "
              "switch mid-kernel)");
  }
  return s;
}

}  // namespace framesim::config
