#include "model/weight_placement.hpp"

#include <algorithm>
#include <numeric>

namespace framesim::model {

namespace {

/// Fills `levels` (each with its room in bytes) with the layers' stored weights in `order`, a layer split across
/// levels where one fills up; what does not fit goes to `rest`.
WeightPlacement fill(const NetworkSpec& net, const HardwareSpec& hw, std::vector<std::pair<int, double>> levels,
                     const std::vector<std::size_t>& order, int rest) {
  WeightPlacement p;
  p.of_layer.resize(net.layers.size());
  p.stored_at.assign(hw.memory.size(), 0.0);
  std::size_t next = 0;
  bool streamed = false;
  for (std::size_t l : order) {
    const double stored = net.layers[l].weight_bytes;
    if (stored <= 0) continue;
    double left = stored;
    while (left > 0 && next < levels.size()) {
      auto& [lv, room] = levels[next];
      const double take = std::min(left, room);
      if (take > 0) {
        p.of_layer[l].push_back({lv, take / stored});
        p.stored_at[static_cast<std::size_t>(lv)] += take;
        room -= take;
        left -= take;
      }
      if (room <= 0) ++next;
    }
    if (left > 0) {
      p.of_layer[l].push_back({rest, left / stored});
      p.stored_at[static_cast<std::size_t>(rest)] += left;
      streamed = true;
    }
  }
  p.home = rest;
  if (!streamed)
    for (std::size_t lv = 0; lv < p.stored_at.size(); ++lv)
      if (p.stored_at[lv] > 0) {
        p.home = static_cast<int>(lv);
        break;
      }
  return p;
}

std::vector<std::size_t> execution_order(const NetworkSpec& net) {
  std::vector<std::size_t> order(net.layers.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  return order;
}

}  // namespace

WeightPlacement runtime_weight_placement(const NetworkSpec& net, const HardwareSpec& hw, const ComputeUnitSpec& unit,
                                         double peak_activation_bytes) {
  const auto order = execution_order(net);
  const int last = static_cast<int>(unit.memory_path.back());
  if (unit.weights_level) return fill(net, hw, {}, order, static_cast<int>(*unit.weights_level));
  const double total = net.total_weight_bytes();
  std::vector<std::pair<int, double>> rooms;
  for (std::size_t lv : unit.memory_path) {
    const auto& level = hw.memory[lv];
    if (!is_on_chip(level.kind) || !is_writable(level.kind)) continue;
    if (total + peak_activation_bytes <= level.capacity_bytes) return fill(net, hw, {}, order, static_cast<int>(lv));
    if (unit.weight_caching == WeightCaching::partial && level.capacity_bytes > peak_activation_bytes)
      rooms.emplace_back(static_cast<int>(lv), level.capacity_bytes - peak_activation_bytes);
  }
  return fill(net, hw, rooms, order, last);
}

WeightPlacement best_weight_placement(const NetworkSpec& net, const HardwareSpec& hw, const ComputeUnitSpec& unit) {
  // The layers that read the most weight bytes per op gain the most from each byte on chip.
  auto order = execution_order(net);
  auto per_op = [&](std::size_t l) {
    const auto& layer = net.layers[l];
    return layer.ops > 0 ? layer.weight_access.bytes / layer.ops : layer.weight_access.bytes;
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return per_op(a) > per_op(b); });
  std::vector<std::pair<int, double>> rooms;
  int rest = static_cast<int>(unit.memory_path.back());
  double rest_Bps = -1;
  double on_chip = 0;
  for (std::size_t lv : unit.memory_path)
    if (is_on_chip(hw.memory[lv].kind)) on_chip += hw.memory[lv].capacity_bytes;
  const double off_chip = std::max(0.0, net.total_weight_bytes() - on_chip);
  for (std::size_t lv : unit.memory_path) {
    const auto& level = hw.memory[lv];
    if (is_on_chip(level.kind)) {
      rooms.emplace_back(static_cast<int>(lv), level.capacity_bytes);
    } else if (level.capacity_bytes >= off_chip && level.bandwidth_at_Bps(0) > rest_Bps) {
      rest = static_cast<int>(lv);
      rest_Bps = level.bandwidth_at_Bps(0);
    }
  }
  return fill(net, hw, rooms, order, rest);
}

}  // namespace framesim::model
