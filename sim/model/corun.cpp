#include "model/corun.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "model/contention.hpp"
#include "model/cost.hpp"
#include "model/handoff.hpp"

namespace framesim::model {

namespace {

/// sum_k t_k of `kernels` on `unit` with `bandwidths_Bps` per level.
double network_time_s(const std::vector<Kernel>& kernels, const ComputeUnitSpec& unit,
                      const std::vector<double>& bandwidths_Bps) {
  double t = 0;
  for (const auto& k : kernels) t += kernel_time(k, unit, bandwidths_Bps).bound_s;
  return t;
}

bool uses_level(const ComputeUnitSpec& unit, std::size_t level) {
  return std::find(unit.memory_path.begin(), unit.memory_path.end(), level) != unit.memory_path.end();
}

/// One member's host jobs per inference: each one's time at the host's bandwidths `host_Bps`.
std::vector<double> host_jobs_s(const HardwareSpec& hw, const CorunMember& m, const std::vector<double>& host_Bps) {
  std::vector<double> out;
  const auto& h = hw.units[m.unit].handoff;
  if (!h) return out;
  const auto& host = hw.units[h->unit];
  const std::size_t lv = handoff_level(hw, host);
  auto reformat = [&](double bytes) {
    if (bytes > 0) out.push_back(bytes / h->efficiency / host_Bps[lv] + host.dispatch_overhead_s);
  };
  reformat(m.reformat_in_bytes);
  if (h->launch_s > 0) out.push_back(h->launch_s);
  reformat(m.reformat_out_bytes);
  return out;
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

}  // namespace

CorunMember corun_member(const HardwareSpec& hw, std::size_t unit, const NetworkSpec& net) {
  CorunMember m{net.name, unit, plan_network(net, hw, unit).kernels, 0, 0};
  if (auto h = hw.units[unit].handoff) {
    h->efficiency = 1;  // the fit varies it: the member keeps the bytes at efficiency 1
    if (h->input) m.reformat_in_bytes = reformat_bytes(net, net.inputs, *h);
    if (h->output) m.reformat_out_bytes = reformat_bytes(net, net.outputs, *h);
  }
  return m;
}

std::vector<double> corun_times_s(const HardwareSpec& hw, const std::vector<CorunMember>& members, bool together) {
  const std::size_t n = members.size(), levels = hw.memory.size();
  // Bytes per inference each member puts on each level from each unit (its own, and its hand-off's on the host).
  std::vector<std::vector<double>> own_bytes(n, std::vector<double>(levels, 0.0)), host_bytes = own_bytes;
  std::vector<int> host(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto& k : members[i].kernels)
      for (std::size_t l = 0; l < k.bytes.size() && l < levels; ++l) own_bytes[i][l] += k.bytes[l];
    if (const auto& h = hw.units[members[i].unit].handoff) {
      host[i] = static_cast<int>(h->unit);
      host_bytes[i][handoff_level(hw, hw.units[h->unit])] =
          (members[i].reformat_in_bytes + members[i].reformat_out_bytes) / h->efficiency;
    }
  }
  auto alone_Bps = [&](std::size_t unit) { return effective_bandwidths_Bps(hw, hw.units[unit]); };
  std::vector<double> t(n);
  for (std::size_t i = 0; i < n; ++i) {
    t[i] = network_time_s(members[i].kernels, hw.units[members[i].unit], alone_Bps(members[i].unit));
    if (host[i] >= 0) t[i] += sum(host_jobs_s(hw, members[i], alone_Bps(static_cast<std::size_t>(host[i]))));
    FRAMESIM_ASSERT(t[i] > 0, "a network takes time");
  }
  if (!together || n < 2) return t;
  // Damped fixed point: a member's time grows with the others' traffic and host work, which fall as their
  // times grow.
  for (int iteration = 0; iteration < 2000; ++iteration) {
    // Each unit's bandwidths with the traffic of every other unit at the present times.
    std::vector<std::vector<double>> bw(hw.units.size());
    for (std::size_t u = 0; u < hw.units.size(); ++u) {
      bw[u] = alone_Bps(u);
      for (std::size_t l : hw.units[u].memory_path) {
        double others_Bps = 0;
        for (std::size_t j = 0; j < n; ++j) {
          if (members[j].unit != u && uses_level(hw.units[members[j].unit], l)) others_Bps += own_bytes[j][l] / t[j];
          if (host[j] >= 0 && static_cast<std::size_t>(host[j]) != u) others_Bps += host_bytes[j][l] / t[j];
        }
        const double rho = others_Bps / effective_level_bandwidth_Bps(hw.memory[l]);
        if (auto port = port_bandwidth_Bps(hw.memory[l], hw.units[u], 0, rho)) bw[u][l] = std::min(bw[u][l], *port);
      }
    }
    std::vector<std::vector<double>> jobs(n);
    std::vector<double> own(n), load(hw.units.size(), 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      own[i] = network_time_s(members[i].kernels, hw.units[members[i].unit], bw[members[i].unit]);
      if (host[i] >= 0) {
        jobs[i] = host_jobs_s(hw, members[i], bw[static_cast<std::size_t>(host[i])]);
        load[static_cast<std::size_t>(host[i])] += sum(jobs[i]) / t[i];
      }
    }
    double change = 0;
    std::vector<double> next(n);
    for (std::size_t i = 0; i < n; ++i) {
      double wait = 0;
      if (host[i] >= 0) {
        // The work in progress a host job finds: the host's own inferences and the other members' host jobs.
        double residual = 0;
        for (std::size_t j = 0; j < n; ++j) {
          if (static_cast<int>(members[j].unit) == host[i]) residual += own[j] / t[j] * own[j] / 2;
          if (j != i && host[j] == host[i])
            for (double x : jobs[j]) residual += x / t[j] * x / 2;
        }
        wait = static_cast<double>(jobs[i].size()) * residual;
      }
      const double share = std::max(1e-3, 1 - load[members[i].unit]);
      const double target = (own[i] + sum(jobs[i]) + wait) / share;
      next[i] = 0.5 * (t[i] + target);
      change = std::max(change, std::fabs(next[i] / t[i] - 1));
    }
    t = next;
    if (change < 1e-13) break;
  }
  return t;
}

std::vector<double> corun_slowdowns(const HardwareSpec& hw, const std::vector<CorunMember>& members) {
  const auto alone = corun_times_s(hw, members, false), together = corun_times_s(hw, members, true);
  std::vector<double> out(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) out[i] = together[i] / alone[i];
  return out;
}

}  // namespace framesim::model
