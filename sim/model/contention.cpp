#include "model/contention.hpp"

#include <algorithm>

#include "model/cost.hpp"

namespace framesim::model {

double curve_slowdown(const ContentionCurve& curve, double others_utilisation) {
  const double rho = std::clamp(others_utilisation, 0.0, 1.0);
  double x0 = 0;
  double y0 = 1;
  for (const auto& [x1, y1] : curve.points) {
    if (rho <= x1) return x1 > x0 ? y0 + (y1 - y0) * (rho - x0) / (x1 - x0) : y1;
    x0 = x1;
    y0 = y1;
  }
  return y0;
}

double contention_factor(const MemoryLevelSpec& level, const ComputeUnitSpec& unit, double others_utilisation) {
  if (!level.contention) return 1.0;
  return 1.0 + unit.contention_sensitivity * (curve_slowdown(*level.contention, others_utilisation) - 1.0);
}

std::optional<double> port_bandwidth_Bps(const MemoryLevelSpec& level, const ComputeUnitSpec& unit,
                                         std::size_t memory_point, double others_utilisation) {
  if (!level.contention) {
    if (!unit.outstanding_bytes) return std::nullopt;
    return littles_cap_Bps(unit, loaded_latency_s(level.latency_s, others_utilisation));
  }
  double b = effective_level_bandwidth_Bps(level, memory_point);
  if (auto cap = littles_cap_Bps(unit, level.latency_s)) b = std::min(b, *cap);
  return b / contention_factor(level, unit, others_utilisation);
}

}  // namespace framesim::model
