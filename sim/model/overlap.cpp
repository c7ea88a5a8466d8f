#include "model/overlap.hpp"

#include <algorithm>

#include "model/contention.hpp"
#include "model/cost.hpp"

namespace framesim::model {

double non_overlap(const Kernel& kernel, const ComputeUnitSpec& unit) {
  double ops = 0, weighted = 0;
  for (Precision p : kAllPrecisions) {
    const auto& total = kernel.ops[p];
    if (!total || *total <= 0) continue;
    double classified = 0;
    for (OpClass c : kAllOpClasses) {
      const auto& class_ops = kernel.ops_by_class[static_cast<std::size_t>(c)][p];
      if (!class_ops || *class_ops <= 0) continue;
      classified += *class_ops;
      weighted += *class_ops * (1.0 - unit.overlap_for(c));
    }
    weighted += std::max(0.0, *total - classified) * (1.0 - unit.overlap);
    ops += *total;
  }
  // A kernel with no arithmetic has no compute time to overlap: min(c, m) = 0 whatever o is.
  return ops > 0 ? weighted / ops : 1.0 - unit.overlap;
}

double stall_s(double non_overlap, double compute_s, const std::vector<double>& memory_s,
               const std::vector<double>& memory_factor) {
  if (non_overlap <= 0 || compute_s <= 0) return 0.0;
  double m = 0;
  for (std::size_t l = 0; l < memory_s.size(); ++l)
    m = std::max(m, memory_s[l] * (l < memory_factor.size() ? memory_factor[l] : 1.0));
  return non_overlap * std::min(compute_s, m);
}

double memory_factor(const MemoryLevelSpec& level, const ComputeUnitSpec& unit, std::size_t memory_point,
                     double others_utilisation) {
  double alone = effective_level_bandwidth_Bps(level, 0);
  if (auto cap = littles_cap_Bps(unit, level.latency_s)) alone = std::min(alone, *cap);
  double now = effective_level_bandwidth_Bps(level, memory_point);
  if (auto port = port_bandwidth_Bps(level, unit, memory_point, others_utilisation)) now = std::min(now, *port);
  return alone / now;
}

}  // namespace framesim::model
