// framesim's fluid system (fluid.hpp) against SimGrid's own L07 model: random islands of parallel tasks (flops
// on a multi-core host, bytes through a private port and a shared bus, some with route latency, some bounded by
// their cores) run in one SimGrid simulation, and the same flows in the fluid system; every task ends at the same
// time to 1e-9. The oracle is SimGrid's solver, which shares no code with fluid.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <xbt/log.h>
#include <simgrid/s4u.hpp>

#include "engine/fluid.hpp"

namespace sg4 = simgrid::s4u;
using framesim::engine::FluidSystem;

namespace {

struct Task {
  std::size_t unit;
  int cores;
  double flops, bytes, latency_s, start_s;
};

struct Island {
  std::vector<int> unit_cores;
  std::vector<double> unit_speed, port_Bps;
  double bus_Bps;
  std::vector<Task> tasks;
};

Island random_island(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Island is;
  const int units = 1 + static_cast<int>(u(rng) * 3);
  for (int k = 0; k < units; ++k) {
    is.unit_cores.push_back(1 + static_cast<int>(u(rng) * 4));
    is.unit_speed.push_back(1e9 * (0.5 + u(rng)));
    is.port_Bps.push_back(u(rng) < 0.5 ? 0.0 : 2e9 + 8e9 * u(rng));  // 0: no port
  }
  is.bus_Bps = 4e9 + 16e9 * u(rng);
  const int tasks = 2 + static_cast<int>(u(rng) * 5);
  for (int k = 0; k < tasks; ++k) {
    Task t;
    t.unit = static_cast<std::size_t>(u(rng) * units);
    t.cores = 1 + static_cast<int>(u(rng) * is.unit_cores[t.unit]);
    t.flops = u(rng) < 0.2 ? 0.0 : 1e6 * (1 + 20 * u(rng));
    t.bytes = u(rng) < 0.2 ? 0.0 : 1e6 * (1 + 40 * u(rng));
    if (t.flops == 0 && t.bytes == 0) t.bytes = 1e6;
    t.latency_s = u(rng) < 0.4 ? 1e-4 * u(rng) : 0.0;
    if (t.bytes == 0) t.latency_s = 0;  // latency is a route's: a task that moves no bytes has none
    t.start_s = u(rng) < 0.5 ? 0.0 : 5e-3 * u(rng);
    is.tasks.push_back(t);
  }
  return is;
}

using TaskKey = std::pair<std::size_t, std::size_t>;  // (island, task)

/// SimGrid's platform of the islands (in the running engine): one host per unit, a bus and optional ports per
/// island, a memory pseudo-host per island.
struct SimGridPlatform {
  std::vector<std::vector<sg4::Host*>> hosts;  // per island, per unit
  std::vector<sg4::Host*> memory;              // per island
  std::map<TaskKey, sg4::Host*> task_host;     // a task with latency: its own host
};

SimGridPlatform simgrid_platform(const std::vector<Island>& islands) {
  SimGridPlatform p;
  auto* zone = sg4::create_full_zone("z");
  p.hosts.resize(islands.size());
  p.memory.resize(islands.size());
  for (std::size_t i = 0; i < islands.size(); ++i) {
    const Island& is = islands[i];
    p.memory[i] = zone->create_host(fmt::format("mem{}", i), 1.0);
    zone->create_link(fmt::format("bus{}", i), is.bus_Bps)->set_latency(0);
    for (std::size_t k = 0; k < is.unit_cores.size(); ++k) {
      auto* h = zone->create_host(fmt::format("u{}_{}", i, k), is.unit_speed[k])->set_core_count(is.unit_cores[k]);
      p.hosts[i].push_back(h);
    }
  }
  // Latency differs per task: one latency link per (island, task) route is impossible with one route per host
  // pair, so a task with latency gets a host of its own (same speed and cores) with a route through a latency link.
  for (std::size_t i = 0; i < islands.size(); ++i) {
    const Island& is = islands[i];
    auto* bus = sg4::Link::by_name(fmt::format("bus{}", i));
    std::vector<sg4::Link*> ports;
    for (std::size_t k = 0; k < is.unit_cores.size(); ++k)
      ports.push_back(is.port_Bps[k] > 0
                          ? zone->create_link(fmt::format("port{}_{}", i, k), is.port_Bps[k])->set_latency(0)
                          : nullptr);
    for (std::size_t k = 0; k < is.unit_cores.size(); ++k) {
      std::vector<sg4::LinkInRoute> route;
      if (ports[k]) route.emplace_back(ports[k]);
      route.emplace_back(bus);
      zone->add_route(p.hosts[i][k]->get_netpoint(), p.memory[i]->get_netpoint(), nullptr, nullptr, route, true);
    }
    for (std::size_t t = 0; t < is.tasks.size(); ++t) {
      const Task& task = is.tasks[t];
      if (task.latency_s <= 0) continue;
      auto* h = zone->create_host(fmt::format("t{}_{}", i, t), is.unit_speed[task.unit])
                    ->set_core_count(is.unit_cores[task.unit]);
      auto* lat = zone->create_link(fmt::format("lat{}_{}", i, t), 1e30)->set_latency(task.latency_s);
      std::vector<sg4::LinkInRoute> route{sg4::LinkInRoute(lat)};
      if (ports[task.unit]) route.emplace_back(ports[task.unit]);
      route.emplace_back(bus);
      zone->add_route(h->get_netpoint(), p.memory[i]->get_netpoint(), nullptr, nullptr, route, true);
      p.task_host[{i, t}] = h;
    }
  }
  zone->seal();
  return p;
}

/// SimGrid's side: the end time of every task, each a parallel task of L07 (its flops over its cores, its bytes
/// from its first core to the memory host) started by an actor at the task's start.
std::map<TaskKey, double> simgrid_end_times(const std::vector<Island>& islands) {
  int argc = 1;
  char name[] = "fluid_test";
  char* argv[] = {name, nullptr};
  xbt_log_control_set("root.thres:critical");
  sg4::Engine engine(&argc, argv);
  sg4::Engine::set_config("host/model:ptask_L07");
  sg4::Engine::set_config("network/TCP-gamma:1e300");
  sg4::Engine::set_config("surf/precision:1e-12");
  const SimGridPlatform p = simgrid_platform(islands);
  std::map<TaskKey, double> simgrid_end;
  for (std::size_t i = 0; i < islands.size(); ++i) {
    for (std::size_t t = 0; t < islands[i].tasks.size(); ++t) {
      const Task task = islands[i].tasks[t];
      sg4::Host* h = task.latency_s > 0 ? p.task_host.at({i, t}) : p.hosts[i][task.unit];
      sg4::Actor::create(fmt::format("a{}_{}", i, t), h, [&, i, t, task, h] {
        sg4::this_actor::sleep_until(task.start_s);
        std::vector<sg4::Host*> list(static_cast<std::size_t>(task.cores), h);
        list.push_back(p.memory[i]);
        const std::size_t n = list.size();
        std::vector<double> flops(n, 0.0);
        for (int c = 0; c < task.cores; ++c) flops[static_cast<std::size_t>(c)] = task.flops / task.cores;
        std::vector<double> bytes;
        if (task.bytes > 0) {
          bytes.assign(n * n, 0.0);
          bytes[static_cast<std::size_t>(task.cores)] = task.bytes;  // first core -> memory
        }
        sg4::this_actor::exec_init(list, flops, bytes)->wait();
        simgrid_end[{i, t}] = sg4::Engine::get_clock();
      });
    }
  }
  engine.run();
  return simgrid_end;
}

/// framesim's side: the same flows in the fluid system, constraints as the platform, starts in time order; the end
/// time of every task by its owner (island * 1000 + task).
std::map<std::uint64_t, double> fluid_end_times(const std::vector<Island>& islands) {
  FluidSystem fluid;
  struct Start {
    double t;
    std::size_t island, task;
  };
  std::vector<Start> starts;
  std::map<TaskKey, FluidSystem::FlowSpec> specs;
  for (std::size_t i = 0; i < islands.size(); ++i) {
    const Island& is = islands[i];
    const std::size_t bus = fluid.add_constraint(is.bus_Bps);
    std::vector<std::size_t> cpu, port;
    for (std::size_t k = 0; k < is.unit_cores.size(); ++k) {
      cpu.push_back(fluid.add_constraint(is.unit_speed[k] * is.unit_cores[k], is.unit_speed[k], is.unit_cores[k]));
      port.push_back(is.port_Bps[k] > 0 ? fluid.add_constraint(is.port_Bps[k]) : SIZE_MAX);
    }
    for (std::size_t t = 0; t < is.tasks.size(); ++t) {
      const Task& task = is.tasks[t];
      const std::size_t c = task.latency_s > 0
                                ? fluid.add_constraint(is.unit_speed[task.unit] * is.unit_cores[task.unit],
                                                       is.unit_speed[task.unit], is.unit_cores[task.unit])
                                : cpu[task.unit];
      FluidSystem::FlowSpec f;
      f.speed_of = c;
      if (task.flops > 0) {
        for (int e = 0; e < task.cores; ++e) f.elements.push_back({c, task.flops / task.cores});
        f.cycles_per_entry = task.flops / task.cores;
      }
      if (task.bytes > 0) {
        if (port[task.unit] != SIZE_MAX) f.elements.push_back({port[task.unit], task.bytes});
        f.elements.push_back({bus, task.bytes});
      }
      f.latency_s = task.latency_s;
      specs[{i, t}] = f;
      starts.push_back({task.start_s, i, t});
    }
  }
  std::sort(starts.begin(), starts.end(), [](const Start& a, const Start& b) { return a.t < b.t; });
  std::map<std::uint64_t, double> fluid_end;
  auto record = [&](std::size_t, std::uint64_t owner) { fluid_end[owner] = fluid.now_s(); };
  for (const Start& st : starts) {
    fluid.advance(st.t, record);
    fluid.start(specs[{st.island, st.task}], st.island * 1000 + st.task);
  }
  fluid.advance(1e9, record);
  return fluid_end;
}

/// An island in a line, for the message of a task that disagrees.
std::string island_description(const Island& is) {
  std::string desc;
  for (std::size_t k = 0; k < is.unit_cores.size(); ++k)
    desc += fmt::format(" unit{}: {} cores {:g} Hz port {:g};", k, is.unit_cores[k], is.unit_speed[k], is.port_Bps[k]);
  desc += fmt::format(" bus {:g};", is.bus_Bps);
  for (const Task& t : is.tasks)
    desc +=
        fmt::format(" [u{} c{} F{:g} B{:g} lat{:g} at{:g}]", t.unit, t.cores, t.flops, t.bytes, t.latency_s, t.start_s);
  return desc;
}

}  // namespace

TEST(Fluid, AgreesWithSimGridsL07OnRandomIslands) {
  std::mt19937_64 rng(20261201);
  std::vector<Island> islands;
  for (int i = 0; i < 200; ++i) islands.push_back(random_island(rng));
  const auto simgrid_end = simgrid_end_times(islands);
  const auto fluid_end = fluid_end_times(islands);
  int checked = 0;
  for (const auto& [key, end] : simgrid_end) {
    const double mine = fluid_end.at(key.first * 1000 + key.second);
    EXPECT_NEAR(mine, end, 1e-9 * end) << "island " << key.first << " task " << key.second << ":"
                                       << island_description(islands[key.first]);
    ++checked;
  }
  EXPECT_GT(checked, 500);
}
