#include "model/handoff.hpp"

#include "core/error.hpp"
#include "model/cost.hpp"
#include "model/plan.hpp"

namespace framesim::model {

double reformat_bytes(const NetworkSpec& net, const std::vector<int>& tensors, const HandoffSpec& handoff) {
  double bytes = 0;
  for (int id : tensors) {
    const auto& t = net.tensors[static_cast<std::size_t>(id)];
    const Precision host = handoff.host_precision.value_or(t.precision);
    bytes += t.bytes() + tensor_bytes(t.elements(), host);  // read in one layout, written in the other
  }
  return bytes / handoff.efficiency;
}

std::size_t handoff_level(const HardwareSpec& hw, const ComputeUnitSpec& host) {
  FRAMESIM_ASSERT(!host.memory_path.empty(), "validated: every unit reaches a writable level");
  std::size_t out = host.memory_path.front();
  for (std::size_t lv : host.memory_path)
    if (is_writable(hw.memory[lv].kind)) out = lv;
  return out;
}

std::vector<SideWorkSpec> handoff_side_work(const HardwareSpec& hw, std::size_t unit, const NetworkSpec& net) {
  std::vector<SideWorkSpec> out;
  const auto& h = hw.units.at(unit).handoff;
  if (!h) return out;
  const auto& host = hw.units.at(h->unit);
  auto reformat = [&](const std::vector<int>& tensors, bool after) {
    if (tensors.empty()) return;
    SideWorkSpec s;
    s.unit = h->unit;
    s.after = after;
    s.derived = true;
    s.work.kind = WorkSpec::Kind::ops;
    s.work.ops = 0;
    for (Precision p : kAllPrecisions)
      if (host.peak_ops_per_s[p]) {
        s.work.precision = p;
        break;
      }
    s.work.bytes_per_level.assign(hw.memory.size(), 0.0);
    s.work.bytes_per_level[handoff_level(hw, host)] = reformat_bytes(net, tensors, *h);
    out.push_back(s);
  };
  if (h->input) reformat(net.inputs, false);
  if (h->launch_s > 0) {
    SideWorkSpec s;
    s.unit = h->unit;
    s.derived = true;
    s.work.kind = WorkSpec::Kind::time;
    s.work.time_s = Distribution::fixed(h->launch_s);
    out.push_back(s);
  }
  if (h->output) reformat(net.outputs, true);
  return out;
}

double side_work_alone_s(const ScenarioSpec& spec, const SideWorkSpec& side) {
  const auto& hw = spec.hardware;
  const auto& unit = hw.units.at(side.unit);
  const auto& w = side.work;
  const auto bandwidths = effective_bandwidths_Bps(hw, unit);
  const double scale = w.scale.mean();
  switch (w.kind) {
    case WorkSpec::Kind::none: return 0.0;
    case WorkSpec::Kind::time: return w.time_s.mean() * scale;
    case WorkSpec::Kind::ops: {
      Kernel k;
      if (w.ops > 0) k.ops[w.precision] = w.ops * scale;
      k.total_ops = w.ops * scale;
      k.bytes = w.bytes_per_level;
      for (auto& b : k.bytes) b *= scale;
      return kernel_time(k, unit, bandwidths).bound_s;
    }
    case WorkSpec::Kind::network: {
      double t = 0;
      for (const auto& k :
           plan_network(spec.networks.at(static_cast<std::size_t>(w.network)).network, hw, side.unit).kernels)
        t += kernel_time(k, unit, bandwidths).bound_s;
      return t * scale;
    }
  }
  return 0.0;
}

}  // namespace framesim::model
