#include "model/replay.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/text.hpp"
#include "core/units.hpp"
#include "model/cost.hpp"

namespace framesim::model {

Replay replay_measured(const HardwareSpec& hw, const StageSpec& stage, const NetworkSpec& net,
                       const ExecutionPlan& plan) {
  Replay out;
  out.times_s.resize(plan.kernels.size());
  if (stage.measured.empty()) return out;
  std::map<std::string, double, std::less<>> by_name;
  for (const auto& m : stage.measured) by_name[m.name] += m.time_s;
  std::set<std::string, std::less<>> used;
  const auto& unit = hw.units[stage.unit];
  const auto bandwidths = effective_bandwidths_Bps(hw, unit);
  std::size_t matched = 0;
  for (std::size_t k = 0; k < plan.kernels.size(); ++k) {
    const auto& kernel = plan.kernels[k];
    auto& time_s = out.times_s[k];
    if (auto it = by_name.find(kernel.name); it != by_name.end()) {
      time_s = it->second;
      used.insert(it->first);
    } else {
      double sum = 0;
      bool any = false;
      std::vector<int> members = kernel.layers;
      members.insert(members.end(), kernel.folded.begin(), kernel.folded.end());
      for (int l : members) {
        if (auto jt = by_name.find(net.layers[static_cast<std::size_t>(l)].name); jt != by_name.end()) {
          sum += jt->second;
          any = true;
          used.insert(jt->first);
        }
      }
      if (any) time_s = sum;
    }
    if (!time_s) continue;
    ++matched;
    const auto alone = kernel_time(kernel, unit, bandwidths);
    const double memory_s =
        alone.memory_s.empty() ? 0.0 : *std::max_element(alone.memory_s.begin(), alone.memory_s.end());
    if (*time_s < memory_s)
      out.warnings.push_back(
          fmt::format("stage \"{}\": measured {} for {} is faster than its memory bound {}: "
                      "the bus binds it",
                      stage.name, core::format_seconds(*time_s), kernel.name, core::format_seconds(memory_s)));
  }
  std::vector<std::string> unused;
  for (const auto& [name, t] : by_name)
    if (!used.count(name)) unused.push_back(name);
  out.note = fmt::format(
      "stage \"{}\": replayed {} of {} from {}{}", stage.name, matched, core::counted(plan.kernels.size(), "kernel"),
      stage.measured_file,
      unused.empty() ? std::string() : fmt::format("; names matching no kernel or layer: {}", fmt::join(unused, ", ")));
  return out;
}

}  // namespace framesim::model
