#include "engine/platform.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <xbt/log.h>

#include "model/contention.hpp"
#include "model/cost.hpp"

namespace framesim::engine {

namespace {
/// The bandwidth of a link that must never bind (one that only carries a dispatch latency).
constexpr double kUnboundedBps = 1e30;
}  // namespace

std::unique_ptr<sg4::Engine> start_engine() {
  static int argc = 1;
  static char name[] = "framesim";
  static char* argv[] = {name, nullptr};
  xbt_log_control_set("root.thres:critical");
  auto engine = std::make_unique<sg4::Engine>(&argc, argv);
  sg4::Engine::set_config("host/model:ptask_L07");
  sg4::Engine::set_config("network/TCP-gamma:1e300");
  sg4::Engine::set_config("surf/precision:1e-12");
  return engine;
}

Platform build_platform(const model::ScenarioSpec& spec, bool overhead_as_route_latency, std::size_t owners) {
  const auto& hw = spec.hardware;
  Platform p;
  auto* zone = sg4::create_full_zone("soc");
  const std::vector<std::string> throttled = hw.thermal ? hw.thermal->throttled : std::vector<std::string>{};
  auto may_throttle = [&](const std::string& n) {
    return hw.thermal && (throttled.empty() || std::find(throttled.begin(), throttled.end(), n) != throttled.end());
  };
  for (const auto& u : hw.units) {
    std::vector<double> speeds;
    for (const auto& op : u.operating_points) speeds.push_back(op.frequency_Hz);
    UnitState& unit = p.units.emplace_back();
    unit.spec = &u;
    unit.host = zone->create_host(u.name, speeds)->set_core_count(u.cores);
    unit.throttleable = may_throttle(u.name) && u.fastest_point + 1 < u.operating_points.size();
    unit.pstate = u.fastest_point;  // a clock cap (scenario clock_caps): it starts at its fastest allowed point
    unit.scheduler = std::make_unique<UnitScheduler>(u.scheduler, u.cores, owners);
  }
  for (const auto& l : hw.memory) {
    LevelState& level = p.levels.emplace_back();
    level.spec = &l;
    level.host = zone->create_host("mem:" + l.name, 1.0);
    level.link = zone->create_link("bus:" + l.name, model::effective_level_bandwidth_Bps(l, 0))->set_latency(0);
    level.throttleable = may_throttle(l.name) && l.operating_points.size() > 1;
  }
  // Dispatch overhead as route latency: under L07 a ptask pays the latency of its routes before it starts,
  // consuming nothing meanwhile, which is exactly an idle gap before the kernel. The latency sits on links
  // private to the unit (its Little's-law ports, or else one link of unbounded bandwidth in each of its routes),
  // so it delays only that unit's kernels; a kernel that moves no bytes has no route and sleeps instead.
  p.ports.assign(p.units.size(), std::vector<sg4::Link*>(p.levels.size(), nullptr));
  p.overhead_in_route.assign(p.units.size(), false);
  p.others_utilisation.assign(p.units.size(), std::vector<double>(p.levels.size(), 0.0));
  p.others_utilisation_before = p.others_utilisation;
  for (std::size_t u = 0; u < p.units.size(); ++u) {
    const auto& unit = hw.units[u];
    p.overhead_in_route[u] =
        overhead_as_route_latency && unit.dispatch_overhead_s > 0 && !interrupts_holders(unit.scheduler);
    const double latency = p.overhead_in_route[u] ? unit.dispatch_overhead_s : 0.0;
    sg4::Link* dispatch = nullptr;
    for (std::size_t lv : unit.memory_path) {
      std::vector<sg4::LinkInRoute> route;
      // A private port when the unit has a Little's-law cap on the level or the level a contention curve: the
      // ledger reloads it every tick (model/contention.hpp). Alone it carries the unit's effective bandwidth.
      if (auto cap = model::port_bandwidth_Bps(hw.memory[lv], unit, 0, 0.0)) {
        p.ports[u][lv] =
            zone->create_link(fmt::format("port:{}:{}", unit.name, hw.memory[lv].name), *cap)->set_latency(latency);
        route.emplace_back(p.ports[u][lv]);
      } else if (latency > 0) {
        if (!dispatch) dispatch = zone->create_link("dispatch:" + unit.name, kUnboundedBps)->set_latency(latency);
        route.emplace_back(dispatch);
      }
      route.emplace_back(p.levels[lv].link);
      zone->add_route(p.units[u].host->get_netpoint(), p.levels[lv].host->get_netpoint(), nullptr, nullptr, route,
                      true);
    }
  }
  for (const auto& b : spec.background) {
    auto* host = zone->create_host("bg:" + b.name, 1.0);
    // A profile's port starts at its first rate (a zero rate issues nothing until the next step).
    const double first_Bps = b.profile.empty() || b.profile.front().second <= 0 ? b.rate_Bps : b.profile.front().second;
    auto* port = zone->create_link("bgport:" + b.name, first_Bps)->set_latency(0);
    zone->add_route(host->get_netpoint(), p.levels[b.level].host->get_netpoint(), nullptr, nullptr,
                    {sg4::LinkInRoute(port), sg4::LinkInRoute(p.levels[b.level].link)}, true);
    p.background_hosts.push_back(host);
    p.background_ports.push_back(port);
  }
  zone->seal();
  // Only a sealed platform takes a pstate change (SimGrid's solver exists from then on).
  for (auto& u : p.units)
    if (u.pstate > 0) u.host->set_pstate(static_cast<unsigned long>(u.pstate));
  return p;
}

}  // namespace framesim::engine
