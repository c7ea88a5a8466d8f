#include "engine/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <boost/intrusive/list.hpp>
#include <memory>

#include <fmt/format.h>
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include "core/error.hpp"
#include "core/units.hpp"
#include "model/cost.hpp"
#include "model/plan.hpp"

namespace sg4 = simgrid::s4u;

namespace framesim::engine {

std::string_view frame_outcome_name(FrameOutcome o) {
  switch (o) {
    case FrameOutcome::completed: return "completed";
    case FrameOutcome::dropped: return "dropped";
    case FrameOutcome::side_input: return "side_input";
    case FrameOutcome::unfinished: return "unfinished";
  }
  return "?";
}

std::string_view drop_reason_name(DropReason r) {
  switch (r) {
    case DropReason::none: return "";
    case DropReason::queue_full: return "queue_full";
    case DropReason::superseded: return "superseded";
    case DropReason::unmatched: return "unmatched";
  }
  return "?";
}

namespace {

using model::ScenarioSpec;

/// Loaded latency of a memory level as seen by one master: L0 / (1 - rho), rho the level's utilisation by
/// the other masters over the last sampling interval, capped at 0.9 (ten times the unloaded latency).
/// It sets the Little's-law cap outstanding / L of the master's private port link.
constexpr double kMaxOtherUtilisation = 0.9;
/// The bandwidth of a link that must never bind (one that only carries a dispatch latency).
constexpr double kUnboundedBps = 1e30;

/// One kernel of a piece of work, ready to run on a unit: SimGrid amounts at the nominal clock.
struct KernelPlan {
  std::string name;
  double cycles = 0;               // core-cycles at the nominal clock (all entries together)
  std::vector<double> bytes;       // per memory level
  double compute_energy_J = 0;     // arithmetic energy at the nominal voltage
  double overhead_s = 0;
  // The parallel task for the cores it runs on, at scale 1: one host entry per core, then one per level
  // with bytes; flops per entry; the bytes matrix (from the first core to each level).
  std::vector<sg4::Host*> hosts;
  std::vector<double> flops;
  std::vector<double> matrix;
  // When this kernel starts a run of kernels that may share one activity (see mergeable runs below):
  // one past the run's last kernel, the run's parallel task, and where each kernel's share of the run's
  // binding amount ends (fractions, run_breaks.front() == 0, back() == 1).
  std::size_t run_end = 0;
  std::vector<sg4::Host*> run_hosts;
  std::vector<double> run_flops;
  std::vector<double> run_matrix;
  std::vector<double> run_breaks;
};

const std::vector<double> kWholeKernel{0.0, 1.0};

struct Item {
  std::int64_t frame = 0;
  double capture_s = 0;
  double enqueue_s = 0;
};

struct Waiter {
  int priority = 0;
  std::uint64_t seq = 0;
  int cores = 0;
  sg4::SemaphorePtr granted;
};

/// A compute unit: its host, its cores, and the priority queue of kernels waiting for them.
/// Non-preemptive: a kernel holds its cores until it ends; waiters are served by priority, then FIFO.
struct Unit {
  const model::ComputeUnitSpec* spec = nullptr;
  sg4::Host* host = nullptr;
  int free_cores = 0;
  std::size_t pstate = 0;
  bool throttleable = false;
  std::vector<Waiter*> waiting;  // sorted: priority descending, then arrival
  std::uint64_t next_seq = 0;
  double static_energy_J = 0;
  double throttled_s = 0;
  double compute_energy_J = 0;
};

struct Level {
  const model::MemoryLevelSpec* spec = nullptr;
  sg4::Host* host = nullptr;
  sg4::Link* link = nullptr;
  std::size_t pstate = 0;
  bool throttleable = false;
};

/// A kernel in flight. Its energy and bytes are booked in proportion to its progress, at every tick
/// and at completion, so every total is exact at any instant. It lives on the stack of the actor running
/// the kernel and links itself into the simulation's list (unlinking itself if that actor is killed).
struct Running : boost::intrusive::list_base_hook<boost::intrusive::link_mode<boost::intrusive::auto_unlink>> {
  std::uint64_t id = 0;    // increasing: the running list stays sorted by id
  sg4::ExecPtr exec;
  std::size_t master = 0;  // units first, then background masters
  const KernelPlan* kernels = nullptr;  // the kernels this activity runs (one, or a merged run)
  std::size_t count = 1;
  const std::vector<double>* breaks = &kWholeKernel;  // where each kernel's share of the progress ends
  double cycle_scale = 1;
  double byte_scale = 1;
  double* bucket = nullptr;  // where the energy is booked (a frame, tasks, background)
  double progress = 0;
};

struct Stage {
  const model::StageSpec* spec = nullptr;
  std::size_t index = 0;
  Unit* unit = nullptr;
  int cores = 1;
  std::vector<std::deque<Item>> queues;           // one per input edge
  std::vector<std::optional<Item>> last_side;     // `latest`: the side input last used
  std::vector<std::pair<std::size_t, std::size_t>> outputs;  // (consumer stage, its input edge)
  std::vector<KernelPlan> kernels;
  sg4::ConditionVariablePtr cv;
  sg4::MutexPtr mutex;
  std::mt19937_64 rng;
  std::optional<Item> latest_result;  // newest finished item (what a control loop reads)
};

struct Task {
  const model::TaskSpec* spec = nullptr;
  std::size_t index = 0;
  Unit* unit = nullptr;
  int cores = 1;
  std::vector<KernelPlan> kernels;
  std::mt19937_64 rng;
};

struct Frame {
  std::size_t sensor = 0;
  double capture_s = 0;
  int outstanding = 0;  // copies in queues or being processed
  bool reached_sink = false;
  bool finalized = false;
  DropReason reason = DropReason::none;
  int drop_stage = -1;
  double end_s = 0;
  double energy_J = 0;
  double temperature_C = 0;
  std::vector<double> frequency_Hz;
};

class Simulation {
 public:
  Simulation(const ScenarioSpec& spec, RecordSink& sink, const RunOptions& options)
      : spec_(spec), sink_(sink), options_(options) {}

  RunTotals run(bool bare = false) {
    const auto wall_start = std::chrono::steady_clock::now();
    int argc = 1;
    char name[] = "framesim";
    char* argv[] = {name, nullptr};
    xbt_log_control_set("root.thres:critical");
    sg4::Engine engine(&argc, argv);
    sg4::Engine::set_config("host/model:ptask_L07");
    // L07 bounds the rate of a ptask whose route has latency by TCP-gamma / (2 latency bytes) (a TCP window
    // model). Route latency here is only a dispatch overhead (see build_platform), which must not cap the rate.
    sg4::Engine::set_config("network/TCP-gamma:1e300");
    bare_ = bare;
    build_platform();
    plan_work();
    if (bare) {
      start_bare_actors();
      engine.run();
      totals_.end_s = sg4::Engine::get_clock();
      totals_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
      return totals_;
    }
    start_actors();
    engine.run();
    if (!finished_)
      totals_.warnings.push_back("the simulation stopped before the pipeline drained (a deadlock): see unfinished frames");
    finish();
    totals_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return totals_;
  }

 private:
  // ---------------------------------------------------------------- platform
  void build_platform() {
    const auto& hw = spec_.hardware;
    auto* zone = sg4::create_full_zone("soc");
    std::vector<std::string> throttled = hw.thermal ? hw.thermal->throttled : std::vector<std::string>{};
    auto may_throttle = [&](const std::string& n) {
      return hw.thermal && (throttled.empty() || std::find(throttled.begin(), throttled.end(), n) != throttled.end());
    };
    for (const auto& u : hw.units) {
      std::vector<double> speeds;
      for (const auto& op : u.operating_points) speeds.push_back(op.frequency_Hz);
      Unit unit;
      unit.spec = &u;
      unit.host = zone->create_host(u.name, speeds)->set_core_count(u.cores);
      unit.free_cores = u.cores;
      unit.throttleable = may_throttle(u.name) && u.operating_points.size() > 1;
      units_.push_back(unit);
    }
    for (const auto& l : hw.memory) {
      Level level;
      level.spec = &l;
      level.host = zone->create_host("mem:" + l.name, 1.0);
      level.link = zone->create_link("bus:" + l.name, model::effective_level_bandwidth_Bps(l, 0))->set_latency(0);
      level.throttleable = may_throttle(l.name) && l.operating_points.size() > 1;
      levels_.push_back(level);
    }
    // Dispatch overhead as route latency: under L07 a ptask pays the latency of its routes before it starts,
    // consuming nothing meanwhile, which is exactly an idle gap before the kernel; the actor then need not
    // sleep through it (one activity per kernel instead of a sleep and an activity). The latency sits on
    // links private to the unit (its Little's-law ports, or else one link of unbounded bandwidth in each of
    // its routes), so it delays only that unit's kernels; a kernel that moves no bytes has no route and
    // sleeps as before. Off with merge_kernels (--no-merge) and in the bench's bare loop.
    ports_.assign(units_.size(), std::vector<sg4::Link*>(levels_.size(), nullptr));
    overhead_in_route_.assign(units_.size(), false);
    for (std::size_t u = 0; u < units_.size(); ++u) {
      const auto& unit = hw.units[u];
      overhead_in_route_[u] = options_.merge_kernels && !bare_ && unit.dispatch_overhead_s > 0;
      const double latency = overhead_in_route_[u] ? unit.dispatch_overhead_s : 0.0;
      sg4::Link* dispatch = nullptr;
      for (std::size_t lv : unit.memory_path) {
        std::vector<sg4::LinkInRoute> route;
        if (auto cap = model::littles_cap_Bps(unit, hw.memory[lv].latency_s)) {
          ports_[u][lv] = zone->create_link(fmt::format("port:{}:{}", unit.name, hw.memory[lv].name), *cap)
                              ->set_latency(latency);
          route.emplace_back(ports_[u][lv]);
        } else if (latency > 0) {
          if (!dispatch) dispatch = zone->create_link("dispatch:" + unit.name, kUnboundedBps)->set_latency(latency);
          route.emplace_back(dispatch);
        }
        route.emplace_back(levels_[lv].link);
        zone->add_route(units_[u].host->get_netpoint(), levels_[lv].host->get_netpoint(), nullptr, nullptr, route, true);
      }
    }
    for (const auto& b : spec_.background) {
      auto* host = zone->create_host("bg:" + b.name, 1.0);
      auto* port = zone->create_link("bgport:" + b.name, b.rate_Bps)->set_latency(0);
      zone->add_route(host->get_netpoint(), levels_[b.level].host->get_netpoint(), nullptr, nullptr,
                      {sg4::LinkInRoute(port), sg4::LinkInRoute(levels_[b.level].link)}, true);
      background_hosts_.push_back(host);
      background_ports_.push_back(port);
    }
    zone->seal();
    const std::size_t masters = units_.size() + spec_.background.size();
    window_bytes_.assign(masters, std::vector<double>(levels_.size(), 0.0));
    memory_energy_J_.assign(levels_.size(), 0.0);
  }

  // ---------------------------------------------------------------- work plans
  std::vector<KernelPlan> plan(const model::WorkSpec& work, std::size_t unit_index, int cores,
                               const model::StageSpec* stage = nullptr) {
    const auto& hw = spec_.hardware;
    const auto& unit = hw.units[unit_index];
    const double f_nominal = unit.nominal().frequency_Hz;
    const double n = unit.cores;
    std::vector<KernelPlan> out;
    auto arithmetic_energy = [&](model::Precision p, double ops) {
      return ops * model::energy_per_op_J(unit, p, 0).value_or(0.0);
    };
    switch (work.kind) {
      case model::WorkSpec::Kind::none: break;
      case model::WorkSpec::Kind::network: {
        const auto& net = spec_.networks[static_cast<std::size_t>(work.network)].network;
        const auto xplan = model::plan_network(net, hw, unit_index);
        const auto replayed = stage ? replay_times(*stage, net, xplan) : std::vector<std::optional<double>>(xplan.kernels.size());
        for (std::size_t ki = 0; ki < xplan.kernels.size(); ++ki) {
          const auto& k = xplan.kernels[ki];
          KernelPlan kp;
          kp.name = k.name;
          for (model::Precision p : model::kAllPrecisions) {
            const auto& ops = k.ops[p];
            if (!ops || *ops <= 0) continue;
            kp.cycles += *ops / model::effective_compute_ops_per_s(unit, p) * f_nominal * n;
            kp.compute_energy_J += arithmetic_energy(p, *ops);
          }
          // A measured time replaces the roofline: alone, at the nominal clock, on the stage's cores, the
          // kernel computes for exactly that long; it still moves its bytes, so it can only be slower under
          // contention (or if the measurement beats its own memory bound).
          if (replayed[ki]) kp.cycles = *replayed[ki] * f_nominal * cores;
          kp.bytes = k.bytes;
          kp.overhead_s = unit.dispatch_overhead_s;
          out.push_back(std::move(kp));
        }
        break;
      }
      case model::WorkSpec::Kind::time: {
        KernelPlan kp;
        kp.name = "work";
        kp.cycles = f_nominal * cores;  // per second of work: scaled by the sampled time
        kp.bytes.assign(hw.memory.size(), 0.0);
        // Busy at the unit's top rate: the energy of its first precision with an energy figure.
        for (model::Precision p : model::kAllPrecisions) {
          if (unit.peak_ops_per_s[p] && unit.energy_per_op_J[p]) {
            kp.compute_energy_J = arithmetic_energy(p, model::effective_compute_ops_per_s(unit, p)) * cores / n;
            break;
          }
        }
        kp.overhead_s = 0;
        out.push_back(std::move(kp));
        break;
      }
      case model::WorkSpec::Kind::ops: {
        KernelPlan kp;
        kp.name = "work";
        if (work.ops > 0) kp.cycles = work.ops / model::effective_compute_ops_per_s(unit, work.precision) * f_nominal * n;
        kp.compute_energy_J = arithmetic_energy(work.precision, work.ops);
        kp.bytes = work.bytes_per_level;
        kp.overhead_s = unit.dispatch_overhead_s;
        out.push_back(std::move(kp));
        break;
      }
    }
    return out;
  }

  /// Measured times for each kernel of a stage's network (by kernel name, or its layers' times summed);
  /// what matches nothing, or is faster than its kernel's memory bound, is reported as a warning.
  std::vector<std::optional<double>> replay_times(const model::StageSpec& stage, const model::NetworkSpec& net,
                                                  const model::ExecutionPlan& xplan) {
    std::vector<std::optional<double>> out(xplan.kernels.size());
    if (stage.measured.empty()) return out;
    std::map<std::string, double, std::less<>> by_name;
    for (const auto& m : stage.measured) by_name[m.name] += m.time_s;
    std::set<std::string, std::less<>> used;
    const auto& unit = spec_.hardware.units[stage.unit];
    const auto bandwidths = model::effective_bandwidths_Bps(spec_.hardware, unit);
    std::size_t matched = 0;
    for (std::size_t k = 0; k < xplan.kernels.size(); ++k) {
      const auto& kernel = xplan.kernels[k];
      if (auto it = by_name.find(kernel.name); it != by_name.end()) {
        out[k] = it->second;
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
        if (any) out[k] = sum;
      }
      if (!out[k]) continue;
      ++matched;
      const auto alone = model::kernel_time(kernel, unit, bandwidths);
      const double memory_s = alone.memory_s.empty() ? 0.0 : *std::max_element(alone.memory_s.begin(), alone.memory_s.end());
      if (*out[k] < memory_s)
        totals_.warnings.push_back(fmt::format("stage \"{}\": measured {} for {} is faster than its memory bound {}: "
                                               "the bus binds it",
                                               stage.name, core::format_seconds(*out[k]), kernel.name,
                                               core::format_seconds(memory_s)));
    }
    std::vector<std::string> unused;
    for (const auto& [name, t] : by_name)
      if (!used.count(name)) unused.push_back(name);
    totals_.notes.push_back(fmt::format("stage \"{}\": replayed {} of {} kernels from {}{}", stage.name, matched,
                                           xplan.kernels.size(), stage.measured_file,
                                           unused.empty() ? std::string()
                                                          : fmt::format("; names matching no kernel or layer: {}",
                                                                        fmt::join(unused, ", "))));
    return out;
  }

  /// Fills in the SimGrid amounts of kernel `k` for `cores` cores of `unit`.
  void prepare(KernelPlan& k, const Unit& unit, int cores) const {
    k.hosts.assign(static_cast<std::size_t>(cores), unit.host);
    std::vector<std::size_t> level_of;
    for (std::size_t lv = 0; lv < k.bytes.size(); ++lv) {
      if (k.bytes[lv] <= 0) continue;
      k.hosts.push_back(levels_[lv].host);
      level_of.push_back(lv);
    }
    const std::size_t n = k.hosts.size();
    k.flops.assign(n, 0.0);
    for (int c = 0; c < cores; ++c) k.flops[static_cast<std::size_t>(c)] = k.cycles / cores;
    k.matrix.clear();
    if (!level_of.empty()) {
      k.matrix.assign(n * n, 0.0);
      for (std::size_t j = 0; j < level_of.size(); ++j) k.matrix[static_cast<std::size_t>(cores) + j] = k.bytes[level_of[j]];
    }
  }

  /// Marks runs of consecutive kernels that can share one activity without changing any result. Kernels
  /// [i, end) merge when the unit runs nothing else (no other stage, no task: no one waits at a kernel
  /// boundary), none has a dispatch overhead (no idle gap), and every one of them stays bound by the same
  /// resource whatever the clocks and the bus shares do during the run:
  ///   - memory-bound on the same shared level L (the only shared level it touches): even at the slowest
  ///     clock and with L to itself, its L bytes take longer than its compute and its private-level bytes at
  ///     their slowest. Then the run only ever draws its fair share of L, whose bytes simply add up.
  ///   - compute-bound with private levels only: even at the fastest clock, against its private levels at
  ///     their slowest. Then its cycles simply add up.
  /// Energy and bytes of a merged run are still booked kernel by kernel along its progress (book()).
  void mark_runs(std::vector<KernelPlan>& kernels, std::size_t unit_index, int cores, bool exclusive) {
    if (!exclusive || !options_.merge_kernels) return;
    const auto& hw = spec_.hardware;
    const Unit& unit = units_[unit_index];
    const auto& ops = unit.spec->operating_points;
    const double f_max = ops.front().frequency_Hz;
    const double f_min = unit.throttleable ? ops.back().frequency_Hz : f_max;
    std::vector<bool> shared(levels_.size(), false);
    model::RunPoint slowest_clocks;  // every level the governor may slow at its slowest point
    for (std::size_t lv = 0; lv < levels_.size(); ++lv) {
      shared[lv] = levels_[lv].spec->shared();
      slowest_clocks.memory_points.push_back(levels_[lv].throttleable ? levels_[lv].spec->operating_points.size() - 1 : 0);
    }
    for (const auto& b : spec_.background) shared[b.level] = true;
    // Bandwidths of the levels on the unit's path (the only ones its kernels move bytes to).
    const auto fastest = model::effective_bandwidths_Bps(hw, hw.units[unit_index]);
    const auto slowest = model::effective_bandwidths_Bps(hw, hw.units[unit_index], slowest_clocks);
    // The class of a kernel: -1 none, -2 compute-bound on private levels, L >= 0 memory-bound on shared level L.
    auto classify = [&](const KernelPlan& k) -> long {
      if (k.overhead_s > 0) return -1;
      long level = -1;
      for (std::size_t lv = 0; lv < k.bytes.size(); ++lv) {
        if (k.bytes[lv] <= 0 || !shared[lv]) continue;
        if (level >= 0) return -1;  // two shared levels: either could bind
        level = static_cast<long>(lv);
      }
      if (level < 0) {
        if (k.cycles <= 0) return -1;
        const double compute_fast = k.cycles / (cores * f_max);
        for (std::size_t lv = 0; lv < k.bytes.size(); ++lv)
          if (k.bytes[lv] > 0 && k.bytes[lv] / slowest[lv] > compute_fast) return -1;
        return -2;
      }
      const double shared_fast = k.bytes[static_cast<std::size_t>(level)] / fastest[static_cast<std::size_t>(level)];
      if (k.cycles / (cores * f_min) > shared_fast) return -1;
      for (std::size_t lv = 0; lv < k.bytes.size(); ++lv)
        if (k.bytes[lv] > 0 && !shared[lv] && k.bytes[lv] / slowest[lv] > shared_fast) return -1;
      return level;
    };
    for (std::size_t i = 0; i < kernels.size();) {
      const long cls = classify(kernels[i]);
      std::size_t end = i + 1;
      while (cls != -1 && end < kernels.size() && classify(kernels[end]) == cls) ++end;
      if (end - i >= 2) make_run(kernels, i, end, cls, unit_index, cores);
      i = end;
    }
  }

  /// The parallel task of kernels [first, end) and the progress each kernel owns in it.
  void make_run(std::vector<KernelPlan>& kernels, std::size_t first, std::size_t end, long cls, std::size_t unit_index,
                int cores) {
    KernelPlan& k = kernels[first];
    KernelPlan sum;
    sum.bytes.assign(levels_.size(), 0.0);
    std::vector<double> amounts;  // the binding amount of each kernel: cycles, or bytes at the shared level
    for (std::size_t i = first; i < end; ++i) {
      sum.cycles += kernels[i].cycles;
      for (std::size_t lv = 0; lv < levels_.size(); ++lv) sum.bytes[lv] += kernels[i].bytes[lv];
      amounts.push_back(cls == -2 ? kernels[i].cycles : kernels[i].bytes[static_cast<std::size_t>(cls)]);
    }
    prepare(sum, units_[unit_index], cores);
    k.run_end = end;
    k.run_hosts = std::move(sum.hosts);
    k.run_flops = std::move(sum.flops);
    k.run_matrix = std::move(sum.matrix);
    k.run_breaks.assign(1, 0.0);
    double total = 0;
    for (double a : amounts) total += a;
    double running = 0;
    for (double a : amounts) {
      running += a;
      k.run_breaks.push_back(running / total);
    }
    k.run_breaks.back() = 1.0;
  }

  void plan_work() {
    stages_.resize(spec_.stages.size());
    for (std::size_t s = 0; s < spec_.stages.size(); ++s) {
      const auto& ss = spec_.stages[s];
      Stage& st = stages_[s];
      st.spec = &ss;
      st.index = s;
      st.unit = &units_[ss.unit];
      st.cores = ss.cores > 0 ? ss.cores : ss.unit < units_.size() ? units_[ss.unit].spec->cores : 1;
      st.queues.resize(ss.inputs.size());
      st.last_side.resize(ss.inputs.size());
      st.kernels = plan(ss.work, ss.unit, st.cores, &ss);
      for (KernelPlan& k : st.kernels) prepare(k, *st.unit, st.cores);
      const bool exclusive =
          std::count_if(spec_.stages.begin(), spec_.stages.end(), [&](const auto& o) { return o.unit == ss.unit; }) == 1 &&
          std::none_of(spec_.tasks.begin(), spec_.tasks.end(), [&](const auto& t) { return t.unit == ss.unit; });
      mark_runs(st.kernels, ss.unit, st.cores, exclusive);
      st.cv = sg4::ConditionVariable::create();
      st.mutex = sg4::Mutex::create();
      st.rng.seed(spec_.seed * 1000003ULL + 17 * s + 1);
    }
    for (std::size_t s = 0; s < spec_.stages.size(); ++s) {
      const auto& ss = spec_.stages[s];
      for (std::size_t e = 0; e < ss.inputs.size(); ++e) {
        const auto& in = ss.inputs[e];
        if (in.sensor) sensor_outputs_.resize(std::max(sensor_outputs_.size(), in.index + 1));
        if (in.sensor) sensor_outputs_[in.index].emplace_back(s, e);
        else stages_[in.index].outputs.emplace_back(s, e);
      }
    }
    sensor_outputs_.resize(spec_.sensors.size());
    tasks_.resize(spec_.tasks.size());
    for (std::size_t t = 0; t < spec_.tasks.size(); ++t) {
      const auto& ts = spec_.tasks[t];
      Task& task = tasks_[t];
      task.spec = &ts;
      task.index = t;
      if (ts.unit) {
        task.unit = &units_[*ts.unit];
        task.cores = ts.cores > 0 ? ts.cores : units_[*ts.unit].spec->cores;
        task.kernels = plan(ts.work, *ts.unit, task.cores);
        for (KernelPlan& k : task.kernels) prepare(k, *task.unit, task.cores);
      }
      task.rng.seed(spec_.seed * 7919ULL + 31 * t + 2);
    }
    temperature_C_ = spec_.initial_temperature_C.value_or(spec_.hardware.thermal ? ambient() : 25.0);
    drained_cv_ = sg4::ConditionVariable::create();
    drained_mutex_ = sg4::Mutex::create();
    tick_mutex_ = sg4::Mutex::create();
  }

  /// The ambient temperature at `time_s`: a replayed profile (steps), else the scenario's or the hardware's.
  double ambient(double time_s = 0) const {
    const auto& profile = spec_.ambient_profile_C;
    if (!profile.empty()) {
      auto it = std::upper_bound(profile.begin(), profile.end(), time_s,
                                 [](double t, const auto& point) { return t < point.first; });
      return it == profile.begin() ? profile.front().second : std::prev(it)->second;
    }
    if (spec_.ambient_C) return *spec_.ambient_C;
    return spec_.hardware.thermal ? spec_.hardware.thermal->ambient_C : 25.0;
  }

  // ---------------------------------------------------------------- actors
  void start_actors() {
    sg4::Host* anywhere = units_.front().host;
    for (std::size_t s = 0; s < spec_.sensors.size(); ++s) {
      ++sensors_running_;
      sg4::Actor::create("sensor:" + spec_.sensors[s].name, anywhere, [this, s] { sensor_loop(s); });
    }
    for (auto& st : stages_) sg4::Actor::create("stage:" + st.spec->name, st.unit->host, [this, &st] { stage_loop(st); });
    for (auto& t : tasks_) {
      sg4::Actor::create("task:" + t.spec->name, t.unit ? t.unit->host : anywhere, [this, &t] { task_loop(t); })
          ->daemonize();
    }
    for (std::size_t b = 0; b < spec_.background.size(); ++b)
      sg4::Actor::create("background:" + spec_.background[b].name, background_hosts_[b], [this, b] {
        background_loop(b);
      })->daemonize();
    sg4::Actor::create("thermal", anywhere, [this] { tick_loop(); })->daemonize();
    sg4::Actor::create("controller", anywhere, [this] { controller(); });
    if (options_.progress) {
      sg4::Actor::create("progress", anywhere, [this] {
        for (int i = 1; i <= 100; ++i) {
          sg4::this_actor::sleep_until(spec_.duration_s * i / 100);
          options_.progress(i / 100.0);
        }
      })->daemonize();
    }
  }

  /// The bench's reference: each stage's kernels (dispatch overhead, then the parallel task) at every capture of
/// the first sensor, as plainly as SimGrid allows.
  void start_bare_actors() {
    const auto& sensor = spec_.sensors.front();
    for (auto& st : stages_) {
      sg4::Actor::create("bare:" + st.spec->name, st.unit->host, [this, &st, &sensor] {
        for (std::int64_t i = 0;; ++i) {
          const double t = sensor.phase_s + static_cast<double>(i) / sensor.rate_Hz;
          if (t >= spec_.duration_s) break;
          sg4::this_actor::sleep_until(t);
          for (const KernelPlan& k : st.kernels) {
            if (k.overhead_s > 0) sg4::this_actor::sleep_for(k.overhead_s);  // the same workload: launch, then run
            if (k.cycles <= 0 && k.matrix.empty()) continue;
            sg4::this_actor::exec_init(k.hosts, k.flops, k.matrix)->wait();
            ++totals_.activities;
          }
        }
      });
    }
  }

  void sensor_loop(std::size_t s) {
    const auto& sensor = spec_.sensors[s];
    std::mt19937_64 rng(spec_.seed * 104729ULL + 13 * s + 3);
    double last = 0;
    for (std::int64_t i = 0;; ++i) {
      double t = 0;
      if (!sensor.timestamps_s.empty()) {  // a timestamp log, replayed as it is
        if (i >= static_cast<std::int64_t>(sensor.timestamps_s.size())) break;
        t = sensor.timestamps_s[static_cast<std::size_t>(i)];
      } else {
        t = std::max(last, sensor.phase_s + static_cast<double>(i) / sensor.rate_Hz + sensor.jitter_s.sample(rng));
      }
      if (t >= spec_.duration_s) break;
      last = t;
      sg4::this_actor::sleep_until(t);
      capture(s, t);
    }
    --sensors_running_;
    notify_controller();
  }

  void capture(std::size_t sensor, double t) {
    const std::int64_t id = next_frame_++;
    Frame f;
    f.sensor = sensor;
    f.capture_s = t;
    f.temperature_C = temperature_C_;
    f.frequency_Hz = unit_frequencies_Hz();
    frames_.push_back(std::move(f));
    account_in_system(t, +1);
    ++totals_.frames_captured;
    Frame& frame = frame_at(id);
    frame.outstanding = 1;  // held while pushing
    for (const auto& [stage, edge] : sensor_outputs_[sensor]) {
      ++frame.outstanding;
      push(stages_[stage], edge, Item{id, t, t});
    }
    release_copy(id);
  }

  /// The clock of every unit at its current operating point, in unit order.
  std::vector<double> unit_frequencies_Hz() const {
    std::vector<double> out;
    for (const auto& u : units_) out.push_back(u.spec->operating_points[u.pstate].frequency_Hz);
    return out;
  }

  Frame& frame_at(std::int64_t id) { return frames_[static_cast<std::size_t>(id - first_frame_)]; }

  void push(Stage& st, std::size_t edge, Item item) {
    auto& q = st.queues[edge];
    item.enqueue_s = sg4::Engine::get_clock();
    if (static_cast<int>(q.size()) >= st.spec->queue_depth) {
      if (st.spec->overflow == model::Overflow::drop_newest) {
        drop(item.frame, st.index, DropReason::queue_full);
        return;
      }
      const std::int64_t oldest = q.front().frame;
      q.pop_front();
      drop(oldest, st.index, DropReason::queue_full);
    }
    q.push_back(item);
    st.cv->notify_all();
  }

  void drop(std::int64_t id, std::size_t stage, DropReason reason) {
    Frame& f = frame_at(id);
    if (reason != DropReason::none && f.reason == DropReason::none) {
      f.reason = reason;
      f.drop_stage = static_cast<int>(stage);
    }
    release_copy(id);
  }

  void release_copy(std::int64_t id) {
    Frame& f = frame_at(id);
    FRAMESIM_ASSERT(f.outstanding > 0, "a frame copy is released once");
    if (--f.outstanding > 0) return;
    f.finalized = true;
    f.end_s = sg4::Engine::get_clock();
    account_in_system(f.end_s, -1);
    emit_finalized();
    notify_controller();
  }

  /// Emits finalized frames in frame order and forgets them (memory stays flat in the run length).
  void emit_finalized() {
    while (!frames_.empty() && frames_.front().finalized) {
      const Frame& f = frames_.front();
      FrameRecord r = front_frame_record();
      r.done_s = f.end_s;
      r.drop_stage = f.drop_stage;
      r.reason = f.reason;
      if (f.reason != DropReason::none) r.outcome = FrameOutcome::dropped;
      else if (f.reached_sink) r.outcome = FrameOutcome::completed;
      else r.outcome = FrameOutcome::side_input;
      sink_.on_frame(r);
      frames_.pop_front();
      ++first_frame_;
    }
  }

  /// The record of the oldest frame kept, as far as the frame itself knows it (the caller adds its outcome,
  /// end and drop); its energy joins the frames' total.
  FrameRecord front_frame_record() {
    const Frame& f = frames_.front();
    FrameRecord r;
    r.frame = first_frame_;
    r.sensor = f.sensor;
    r.capture_s = f.capture_s;
    r.energy_J = f.energy_J;
    totals_.frames_energy_J += f.energy_J;
    r.temperature_C = f.temperature_C;
    r.unit_frequency_Hz = f.frequency_Hz;
    return r;
  }

  void account_in_system(double t, int delta) {
    totals_.in_system_integral += static_cast<double>(in_system_) * (t - in_system_since_);
    in_system_since_ = t;
    in_system_ += delta;
  }

  /// Whether `st` can take a set of inputs now; discards what can never be used.
  bool ready(Stage& st) {
    const auto& ins = st.spec->inputs;
    if (st.spec->policy == model::InputPolicy::latest) {
      if (st.queues[0].empty()) return false;
      for (std::size_t e = 1; e < ins.size(); ++e)
        if (st.queues[e].empty() && !st.last_side[e]) return false;
      return true;
    }
    // all: the same frame at the head of every queue; older heads have lost their partner.
    while (true) {
      std::int64_t newest = -1;
      for (const auto& q : st.queues) {
        if (q.empty()) return false;
        newest = std::max(newest, q.front().frame);
      }
      bool aligned = true;
      for (auto& q : st.queues) {
        while (!q.empty() && q.front().frame < newest) {
          const std::int64_t id = q.front().frame;
          q.pop_front();
          drop(id, st.index, DropReason::unmatched);
          aligned = false;
        }
      }
      if (aligned) return true;
    }
  }

  /// Takes the inputs of one execution and returns the trigger item (its frame is the one processed).
  Item take(Stage& st) {
    if (st.spec->policy == model::InputPolicy::latest) {
      auto& q = st.queues[0];
      while (q.size() > 1) {
        const std::int64_t id = q.front().frame;
        q.pop_front();
        drop(id, st.index, DropReason::superseded);
      }
      Item trigger = q.front();
      q.pop_front();
      for (std::size_t e = 1; e < st.queues.size(); ++e) {
        auto& side = st.queues[e];
        while (!side.empty()) {
          st.last_side[e] = side.front();
          side.pop_front();
          release_copy(st.last_side[e]->frame);  // used (or passed over): its lineage ends here
        }
      }
      return trigger;
    }
    Item trigger = st.queues[0].front();
    for (std::size_t e = 1; e < st.queues.size(); ++e) {
      st.queues[e].pop_front();
      release_copy(trigger.frame);  // the copies merge into the one processed
    }
    st.queues[0].pop_front();
    return trigger;
  }

  void stage_loop(Stage& st) {
    while (true) {
      Item item;
      {
        std::unique_lock lock(*st.mutex);
        while (!stopping_ && !ready(st)) st.cv->wait(lock);
        if (stopping_) break;
        item = take(st);
      }
      const double start = sg4::Engine::get_clock();
      const double scale = std::max(0.0, st.spec->work.scale.sample(st.rng));
      Frame& f = frame_at(item.frame);
      const double energy_before = f.energy_J;
      run_work(*st.unit, st.cores, st.spec->priority, st.kernels, work_amount(st.spec->work, st.rng) * scale, scale,
               static_cast<int>(st.index), -1, item.frame, &f.energy_J);
      const double end = sg4::Engine::get_clock();
      const double energy = f.energy_J - energy_before;
      sink_.on_stage({item.frame, st.index, item.capture_s, item.enqueue_s, start, end, energy,
                      static_cast<int>(st.kernels.size())});
      st.latest_result = item;
      if (st.outputs.empty()) {
        f.reached_sink = true;
      } else {
        for (const auto& [consumer, edge] : st.outputs) {
          ++frame_at(item.frame).outstanding;
          push(stages_[consumer], edge, item);
        }
      }
      release_copy(item.frame);
    }
  }

  /// The work multiplier of one item: sampled seconds for time work, 1 otherwise.
  static double work_amount(const model::WorkSpec& work, std::mt19937_64& rng) {
    if (work.kind == model::WorkSpec::Kind::time) return std::max(0.0, work.time_s.sample(rng));
    return 1.0;
  }

  void task_loop(Task& t) {
    const auto& ts = *t.spec;
    for (std::int64_t i = 0;; ++i) {
      const double tick = ts.phase_s + static_cast<double>(i) / ts.rate_Hz;
      if (tick >= spec_.duration_s || stopping_) return;
      sg4::this_actor::sleep_until(tick);
      if (ts.reads_stage) {
        const auto& result = stages_[*ts.reads_stage].latest_result;
        ControlRecord r{tick, t.index, std::nullopt, -1};
        if (result) {
          r.staleness_s = tick - result->capture_s;
          r.frame = result->frame;
        }
        sink_.on_control(r);
      }
      if (t.unit && !t.kernels.empty()) {
        const double scale = std::max(0.0, ts.work.scale.sample(t.rng));
        run_work(*t.unit, t.cores, ts.priority, t.kernels, work_amount(ts.work, t.rng) * scale, scale, -1,
                 static_cast<int>(t.index), -1, &totals_.tasks_energy_J);
      }
    }
  }

  /// Runs kernels on a unit: `cycle_scale` multiplies compute, `byte_scale` memory traffic. Their energy is
  /// booked into `*bucket` as they progress, arithmetic at the voltage of the operating point of the moment.
  /// Past the kernel-trace window, a mergeable run of kernels is one activity (exactly the same timing).
  void run_work(Unit& unit, int cores, int priority, const std::vector<KernelPlan>& kernels, double cycle_scale,
                double byte_scale, int stage, int task, std::int64_t frame, double* bucket) {
    const std::size_t unit_index = static_cast<std::size_t>(&unit - units_.data());
    for (std::size_t i = 0; i < kernels.size();) {
      const KernelPlan& k = kernels[i];
      acquire(unit, cores, priority);
      const double dispatch_start = sg4::Engine::get_clock();
      const bool traced = dispatch_start < spec_.kernel_trace_s;
      const std::size_t end = k.run_end > i + 1 && !traced ? k.run_end : i + 1;
      // A kernel that moves bytes pays its overhead as the latency of its route (see build_platform).
      const bool in_route = k.overhead_s > 0 && overhead_in_route_[unit_index] && !k.matrix.empty() && byte_scale > 0;
      if (k.overhead_s > 0 && !in_route) {
        sg4::this_actor::sleep_for(k.overhead_s);
        ++totals_.dispatch_sleeps;
      }
      const double start = in_route ? dispatch_start + k.overhead_s : sg4::Engine::get_clock();
      execute(unit_index, kernels, i, end, cycle_scale, byte_scale, bucket);
      totals_.kernels += static_cast<std::int64_t>(end - i);
      release(unit, cores);
      if (traced)
        sink_.on_kernel({unit_index, stage, task, k.name, frame, start, sg4::Engine::get_clock(), start - dispatch_start});
      i = end;
    }
  }

  /// One parallel task for kernels [first, end): the unit's cores compute, bytes flow to each memory level.
  void execute(std::size_t unit_index, const std::vector<KernelPlan>& kernels, std::size_t first, std::size_t end,
               double cycle_scale, double byte_scale, double* bucket) {
    const KernelPlan& k = kernels[first];
    const bool merged = end > first + 1;
    const auto& hosts = merged ? k.run_hosts : k.hosts;
    const auto& base_flops = merged ? k.run_flops : k.flops;
    const auto& base_matrix = merged ? k.run_matrix : k.matrix;
    if (!merged && k.cycles * cycle_scale <= 0 && k.matrix.empty()) return;
    sg4::ExecPtr exec;
    if (cycle_scale == 1.0 && byte_scale == 1.0) {
      exec = sg4::this_actor::exec_init(hosts, base_flops, base_matrix);
    } else {
      std::vector<double> flops = base_flops;
      for (double& f : flops) f *= cycle_scale;
      std::vector<double> matrix = base_matrix;
      for (double& b : matrix) b *= byte_scale;
      exec = sg4::this_actor::exec_init(hosts, flops, matrix);
    }
    ++totals_.activities;
    Running running;
    running.exec = exec;
    running.master = unit_index;
    running.kernels = &k;
    running.count = end - first;
    running.breaks = merged ? &k.run_breaks : &kWholeKernel;
    running.cycle_scale = cycle_scale;
    running.byte_scale = byte_scale;
    running.bucket = bucket;
    wait_booked(running);
  }

  /// Registers `running` in the running list (so that every tick books its progress), waits for its activity
  /// to end, then books the rest.
  void wait_booked(Running& running) {
    running.id = next_running_id_++;
    running_.push_back(running);  // maybe before it starts: until then a tick sees no progress (state INITED)
    running.exec->wait();
    book(running, 1.0);
  }

  /// Books the part of a running activity's energy and bytes between its last booked progress and `progress`.
  /// In a merged run, kernel i owns the progress between breaks[i] and breaks[i + 1].
  void book(Running& r, double progress) {
    if (progress <= r.progress) return;
    double voltage2 = 0;
    if (r.master < units_.size()) {
      // Progress made since the last booking ran at the current operating point: pstates change only at
      // governor ticks, and every running activity is booked at each tick before the governor acts.
      const Unit& unit = units_[r.master];
      const double v = unit.spec->operating_points[unit.pstate].voltage_V / unit.spec->nominal().voltage_V;
      voltage2 = v * v;
    }
    const auto& breaks = *r.breaks;
    double energy = 0;
    for (std::size_t i = 0; i < r.count; ++i) {
      const double overlap = std::min(breaks[i + 1], progress) - std::max(breaks[i], r.progress);
      if (overlap <= 0) continue;
      const double fraction = overlap / (breaks[i + 1] - breaks[i]);
      const KernelPlan& k = r.kernels[i];
      if (r.master < units_.size()) {
        const double compute = k.compute_energy_J * r.cycle_scale * fraction * voltage2;
        units_[r.master].compute_energy_J += compute;
        energy += compute;
      }
      for (std::size_t lv = 0; lv < k.bytes.size(); ++lv) {
        const double b = k.bytes[lv] * r.byte_scale * fraction;
        if (b <= 0) continue;
        window_bytes_[r.master][lv] += b;
        const double e = b * levels_[lv].spec->energy_per_byte_J;
        memory_energy_J_[lv] += e;
        energy += e;
      }
    }
    r.progress = progress;
    window_dynamic_J_ += energy;
    *r.bucket += energy;
  }

  void acquire(Unit& unit, int cores, int priority) {
    if (unit.waiting.empty() && unit.free_cores >= cores) {
      unit.free_cores -= cores;
      return;
    }
    Waiter w{priority, unit.next_seq++, cores, sg4::Semaphore::create(0)};
    auto pos = std::find_if(unit.waiting.begin(), unit.waiting.end(), [&](const Waiter* o) { return o->priority < priority; });
    unit.waiting.insert(pos, &w);
    w.granted->acquire();
  }

  void release(Unit& unit, int cores) {
    unit.free_cores += cores;
    while (!unit.waiting.empty() && unit.waiting.front()->cores <= unit.free_cores) {
      Waiter* w = unit.waiting.front();
      unit.waiting.erase(unit.waiting.begin());
      unit.free_cores -= w->cores;
      w->granted->release();
    }
  }

  void background_loop(std::size_t b) {
    const auto& bg = spec_.background[b];
    const std::size_t master = units_.size() + b;
    // Continuous traffic in chunks of 10 ms at the nominal rate; the port link caps the rate, the shared
    // bus may give it less.
    // With a profile, the rate steps at each of its times (the port link follows); a zero rate sleeps.
    std::size_t step = 0;
    double rate = bg.profile.empty() ? bg.rate_Bps : bg.profile.front().second;
    auto next_change = [&] { return step + 1 < bg.profile.size() ? bg.profile[step + 1].first : 1e300; };
    while (!stopping_) {
      const double now = sg4::Engine::get_clock();
      while (!bg.profile.empty() && now >= next_change()) {
        ++step;
        rate = bg.profile[step].second;
        if (rate > 0) background_ports_[b]->set_bandwidth(rate);
      }
      if (rate <= 0) {
        if (next_change() >= 1e300) return;
        sg4::this_actor::sleep_until(next_change());
        continue;
      }
      const double chunk = rate * std::min(0.01, std::max(1e-6, next_change() - now));
      KernelPlan& kernel = background_plans_.emplace_back();
      kernel.name = bg.name;
      kernel.bytes.assign(levels_.size(), 0.0);
      kernel.bytes[bg.level] = chunk;
      if (background_plans_.size() > 64) background_plans_.pop_front();  // only the chunks in flight are referred to
      auto exec = sg4::this_actor::exec_init({background_hosts_[b], levels_[bg.level].host}, {0.0, 0.0},
                                             {0.0, chunk, 0.0, 0.0});
      exec->start();
      ++totals_.activities;
      Running running;
      running.exec = exec;
      running.master = master;
      running.kernels = &kernel;
      running.bucket = &totals_.background_energy_J;
      wait_booked(running);
    }
  }

  double tick_period() const {
    return spec_.hardware.thermal ? spec_.hardware.thermal->governor_period_s : spec_.sample_period_s;
  }

  void tick_loop() {
    const double period = tick_period();
    for (std::int64_t i = 1; !stopping_; ++i) {
      sg4::this_actor::sleep_until(static_cast<double>(i) * period);
      if (stopping_) return;
      tick(sg4::Engine::get_clock(), true);
    }
  }

  /// Integrates energy since the last tick, steps the RC model, lets the governor act, records a sample.
  void tick(double now, bool govern) {
    // Asking activities for their progress yields to other actors: the controller's final tick must not run
    // inside the governor's (it would book and record the same interval twice).
    std::unique_lock guard(*tick_mutex_);
    const double dt = now - last_tick_s_;
    if (dt <= 0) return;
    // Asking an activity for its remaining work is a simcall: while this actor waits for the answer, the
    // actor owning the activity may run, finish it and drop it (and erase its entry). So: hold a reference to
    // every activity, ask, then book only the entries still running (entries are in increasing id order).
    struct Probe {
      std::uint64_t id;
      sg4::ExecPtr exec;
      double remaining;
    };
    std::vector<Probe> probes;
    probes.reserve(running_.size());
    for (const auto& r : running_) probes.push_back({r.id, r.exec, 0.0});
    for (auto& p : probes) {
      const auto state = p.exec->get_state();
      p.remaining = state == sg4::Activity::State::STARTED ? p.exec->get_remaining_ratio()
                    : state == sg4::Activity::State::FINISHED ? 0.0
                                                               : 1.0;  // not started, or cancelled: no progress
    }
    auto probe = probes.begin();
    for (auto& r : running_) {
      while (probe != probes.end() && probe->id < r.id) ++probe;
      if (probe != probes.end() && probe->id == r.id) book(r, 1.0 - probe->remaining);
    }
    double static_J = 0;
    bool throttled = false;
    for (auto& u : units_) {
      const double e = model::static_power_W(*u.spec, u.pstate) * dt;
      u.static_energy_J += e;
      static_J += e;
      if (u.pstate > 0) {
        u.throttled_s += dt;
        throttled = true;
      }
    }
    for (const auto& l : levels_) throttled = throttled || l.pstate > 0;
    if (throttled) totals_.throttled_s += dt;
    totals_.static_energy_J += static_J;
    const double power = (window_dynamic_J_ + static_J) / dt;
    if (const auto& th = spec_.hardware.thermal) {
      // Exact step of C dT/dt = P - (T - Ta)/R with P constant over the interval.
      const double steady = ambient(last_tick_s_) + power * th->resistance_K_per_W;
      temperature_C_ = steady + (temperature_C_ - steady) * std::exp(-dt / (th->resistance_K_per_W * th->capacitance_J_per_K));
      if (govern) govern_step(*th);
    }
    TickRecord r;
    r.time_s = now;
    r.temperature_C = temperature_C_;
    r.power_W = power;
    r.dynamic_J = window_dynamic_J_;
    r.static_J = static_J;
    r.unit_frequency_Hz = unit_frequencies_Hz();
    r.level_bandwidth_Bps.assign(levels_.size(), 0.0);
    for (const auto& master : window_bytes_)
      for (std::size_t lv = 0; lv < levels_.size(); ++lv) r.level_bandwidth_Bps[lv] += master[lv] / dt;
    r.throttled = throttled;
    update_port_caps(r.level_bandwidth_Bps, dt);
    sink_.on_tick(r);
    window_dynamic_J_ = 0;
    for (auto& master : window_bytes_) std::fill(master.begin(), master.end(), 0.0);
    last_tick_s_ = now;
  }

  void govern_step(const model::ThermalSpec& th) {
    int step = 0;
    if (temperature_C_ >= th.trip_C) step = +1;        // slower
    else if (temperature_C_ <= th.release_C) step = -1;  // faster
    if (step == 0) return;
    const bool all_the_way = th.policy == model::GovernorPolicy::bang_bang;
    // The operating point after `pstate` for a part whose slowest point is `last`.
    auto next_point = [&](std::size_t pstate, std::size_t last) -> std::size_t {
      if (step > 0) return all_the_way ? last : std::min(last, pstate + 1);
      return all_the_way || pstate == 0 ? 0 : pstate - 1;
    };
    for (auto& u : units_) {
      if (!u.throttleable) continue;
      const std::size_t next = next_point(u.pstate, u.spec->operating_points.size() - 1);
      if (next != u.pstate) {
        u.pstate = next;
        u.host->set_pstate(static_cast<unsigned long>(next));
      }
    }
    for (auto& l : levels_) {
      if (!l.throttleable) continue;
      const std::size_t next = next_point(l.pstate, l.spec->operating_points.size() - 1);
      if (next != l.pstate) {
        l.pstate = next;
        l.link->set_bandwidth(model::effective_level_bandwidth_Bps(*l.spec, next));
      }
    }
  }

  /// Little's-law caps with loaded latency: each port link gets outstanding / (L0 / (1 - rho_others)).
  void update_port_caps(const std::vector<double>& level_Bps, double dt) {
    const auto& hw = spec_.hardware;
    for (std::size_t u = 0; u < units_.size(); ++u) {
      for (std::size_t lv = 0; lv < levels_.size(); ++lv) {
        if (!ports_[u][lv]) continue;
        const double capacity = model::effective_level_bandwidth_Bps(hw.memory[lv], levels_[lv].pstate);
        const double others = level_Bps[lv] - window_bytes_[u][lv] / dt;
        const double rho = std::clamp(others / capacity, 0.0, kMaxOtherUtilisation);
        const double latency = hw.memory[lv].latency_s / (1.0 - rho);
        ports_[u][lv]->set_bandwidth(*hw.units[u].outstanding_bytes / latency);
      }
    }
  }

  void notify_controller() { drained_cv_->notify_all(); }

  bool drained() const { return sensors_running_ == 0 && frames_.empty(); }

  /// Waits for the sensors to stop, the duration to pass and the pipeline to drain (or a drain limit), then
  /// ends the run.
  void controller() {
    {
      std::unique_lock lock(*drained_mutex_);
      while (sensors_running_ > 0) drained_cv_->wait(lock);
      // The run lasts at least its duration (the time series covers it), then until the pipeline drains.
      if (sg4::Engine::get_clock() < spec_.duration_s) {
        lock.unlock();
        sg4::this_actor::sleep_until(spec_.duration_s);
        lock.lock();
      }
      const double limit = sg4::Engine::get_clock() + std::max(2.0, 20 * spec_.deadline_s);
      while (!drained()) {
        if (drained_cv_->wait_until(lock, limit) == std::cv_status::timeout) break;
      }
    }
    const double now = sg4::Engine::get_clock();
    tick(now, false);
    totals_.end_s = now;
    stopping_ = true;
    finished_ = true;
    for (auto& st : stages_) st.cv->notify_all();
  }

  void finish() {
    totals_.notes.insert(totals_.notes.begin(), spec_.notes.begin(), spec_.notes.end());
    // Frames still in flight when the run stopped.
    while (!frames_.empty()) {
      Frame& f = frames_.front();
      if (!f.finalized) {
        FrameRecord r = front_frame_record();
        r.outcome = FrameOutcome::unfinished;
        r.done_s = totals_.end_s;
        sink_.on_frame(r);
        account_in_system(totals_.end_s, -1);
        frames_.pop_front();
        ++first_frame_;
      } else {
        emit_finalized();
      }
    }
    for (const auto& u : units_) {
      totals_.compute_energy_J.push_back(u.compute_energy_J);
      totals_.unit_static_energy_J.push_back(u.static_energy_J);
      totals_.unit_throttled_s.push_back(u.throttled_s);
    }
    totals_.memory_energy_J = memory_energy_J_;
    for (const auto& st : stages_) {
      for (std::size_t e = 1; e < st.spec->inputs.size(); ++e)
        if (st.spec->policy == model::InputPolicy::latest && !st.last_side[e])
          totals_.warnings.push_back(fmt::format("stage \"{}\" never received input \"{}\"", st.spec->name,
                                                 st.spec->input_names[e]));
    }
  }

  const ScenarioSpec& spec_;
  RecordSink& sink_;
  const RunOptions& options_;
  RunTotals totals_;

  std::vector<Unit> units_;
  std::vector<Level> levels_;
  std::vector<std::vector<sg4::Link*>> ports_;
  std::vector<sg4::Host*> background_hosts_;
  std::vector<sg4::Link*> background_ports_;
  std::deque<KernelPlan> background_plans_;
  std::vector<Stage> stages_;
  std::vector<Task> tasks_;
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> sensor_outputs_;

  std::deque<Frame> frames_;
  std::int64_t first_frame_ = 0;
  std::int64_t next_frame_ = 0;
  std::int64_t in_system_ = 0;
  double in_system_since_ = 0;
  int sensors_running_ = 0;
  bool stopping_ = false;
  bool finished_ = false;
  sg4::ConditionVariablePtr drained_cv_;
  sg4::MutexPtr drained_mutex_;
  sg4::MutexPtr tick_mutex_;

  boost::intrusive::list<Running, boost::intrusive::constant_time_size<false>> running_;
  bool bare_ = false;
  std::vector<bool> overhead_in_route_;    // [unit]: its dispatch overhead is its ports' latency
  std::uint64_t next_running_id_ = 0;
  double window_dynamic_J_ = 0;
  std::vector<std::vector<double>> window_bytes_;  // per master, per level, since the last tick
  std::vector<double> memory_energy_J_;
  double last_tick_s_ = 0;
  double temperature_C_ = 25;
};

}  // namespace

RunTotals simulate(const model::ScenarioSpec& spec, RecordSink& sink, const RunOptions& options) {
  Simulation sim(spec, sink, options);
  return sim.run();
}

namespace {
/// Discards every record (the bare loop produces none).
class NullSink : public RecordSink {
 public:
  void on_frame(const FrameRecord&) override {}
  void on_stage(const StageRecord&) override {}
  void on_control(const ControlRecord&) override {}
  void on_tick(const TickRecord&) override {}
  void on_kernel(const KernelRecord&) override {}
};
}  // namespace

RunTotals run_bare_loop(const model::ScenarioSpec& spec) {
  NullSink sink;
  RunOptions options;
  Simulation sim(spec, sink, options);
  return sim.run(true);
}

}  // namespace framesim::engine
