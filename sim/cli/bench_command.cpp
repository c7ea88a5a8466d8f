// `framesim bench`: how fast the engine runs a reference scenario, next to a bare SimGrid loop issuing the
// same parallel tasks on the same platform, and whether its memory stays flat as the run gets longer.
// Each measurement runs in its own child process (one SimGrid engine per process). Speed is compared on CPU
// time (user + system of the child), which a busy machine disturbs less than wall time; with --repeat the
// variants alternate and the best of each counts. Peak memory is the child's own high-water mark (VmHWM).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.hpp"
#include "cli/console.hpp"
#include "config/hardware.hpp"
#include "config/scenario.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/units.hpp"
#include "engine/module.hpp"
#include "json_text.hpp"
#include "model/scenario.hpp"
#include "run_analysis.hpp"

namespace framesim::cli {

namespace {

namespace fs = std::filesystem;

struct BenchArgs {
  std::string scenario = "scenarios/bench/reference.yaml";
  std::string stochastic = "scenarios/bench/stochastic.yaml";
  std::string memory = "scenarios/bench/memory.yaml";
  std::string shared = "scenarios/bench/shared.yaml";
  std::string hardware = "hardware/jetson_orin_nx_16gb.yaml";        // for the start-up measurement
  std::string sweep_scenario = "scenarios/detector_segmenter.yaml";  // the sweep of many tiny points
  std::string duration;
  std::string memory_frames = "1000000";
  int repeat = 1;
  std::string json;  // --json FILE: every figure, machine-readable
};

struct Measurement {
  double wall_s = 0;
  double cpu_s = 0;
  double simulated_s = 0;
  double activities = 0;
  double kernels = 0;
  double frames = 0;
  double peak_rss_bytes = 0;
  double loop_cpu_s = 0;  // CPU time of the simulation proper (from loading the engine to its end), by the child
};

/// A network of 1,000 layers written out one by one (500 convolutions, each followed by a ReLU), for start-up.
std::string thousand_layer_network() {
  std::string text =
      "# yaml-language-server: $schema=network.schema.json\n"
      "name: layers-1000\ndescription: \"1,000 layers: 500 x (3x3 convolution, ReLU), 64 channels at 56x56\"\n"
      "precision: int8\ninputs:\n  image: [1, 64, 56, 56]\nlayers:\n";
  for (int i = 0; i < 500; ++i)
    text += fmt::format(
        "  - {{name: conv{0}, op: conv2d, out_channels: 64, kernel: 3, padding: 1}}\n  - {{name: relu{0}, op: relu}}\n",
        i);
  return text;
}

/// A sweep of 64 tiny points (half a simulated second each past the two-second warm-up), the axes of
/// scenarios/sweeps/orin_nx_design.yaml over `scenario`: what a point costs beyond its simulation.
std::string tiny_point_sweep(const fs::path& scenario) {
  return fmt::format(
      "# yaml-language-server: $schema=sweep.schema.json\n"
      "name: bench-sweep\ndescription: \"64 tiny points: the per-point overhead of a sweep\"\n"
      "scenario: \"{}\"\nduration: \"2.5 s\"\nmode: grid\naxes:\n"
      "  hardware.memory.dram.bandwidth: [\"34 GB/s\", \"51.2 GB/s\", \"102.4 GB/s\", \"204.8 GB/s\"]\n"
      "  networks.detector.precision: [fp16, int8]\n  networks.segmenter.precision: [fp16, int8]\n"
      "  stages.detector.unit: [gpu, dla1]\n  sensors.camera.rate: [\"30 Hz\", \"60 Hz\"]\n",
      fs::absolute(scenario).lexically_normal().string());
}

/// What a point of a sweep cost in CPU time, from the sweep's --costs-file (sweep_pool.hpp, PointCosts).
struct SweepCost {
  double points = 0, cpu_s = 0, simulating_s = 0, overhead_s = 0, sweep_s = 0;
};

/// The middle one by `key` of `runs` (an odd number of them: the median itself).
template <class T, class Key>
T median_of(std::vector<T> runs, Key key) {
  std::sort(runs.begin(), runs.end(), [&](const T& x, const T& y) { return key(x) < key(y); });
  return runs[runs.size() / 2];
}

/// CPU time (user + system) and peak memory of a finished child, from the kernel's accounting of that process.
void account(const struct rusage& usage, Measurement& m) {
  m.cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
            static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  m.peak_rss_bytes = static_cast<double>(usage.ru_maxrss) * 1024.0;
}

/// Runs this executable with `args` as a fresh process, its standard output returned; `tick` about once a second.
/// Spawned (posix_spawn: the child shares the bench's memory until it executes), not forked: a forked child would
/// first copy the page tables of the bench, which has loaded the engine and run simulations, and the kernel
/// charges that copy and its teardown at exec to the child, about 25 ms more CPU than the command itself takes.
std::string run_self(const std::vector<std::string>& args, const std::function<void()>& tick, Measurement& m) {
  int fds[2];
  if (::pipe(fds) != 0) throw core::UserError("bench: cannot create a pipe");
  std::fflush(nullptr);
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  ::posix_spawn_file_actions_addclose(&actions, fds[0]);
  ::posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& arg : copy) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw core::UserError(fmt::format("bench: cannot start framesim: {}", std::strerror(spawned)));
  ::close(fds[1]);
  std::string out;
  char buffer[512];
  // Read the child's output, redrawing the progress bar about once a second while it runs.
  for (;;) {
    pollfd fd{fds[0], POLLIN, 0};
    const int ready = ::poll(&fd, 1, 1000);
    if (ready == 0) {
      if (tick) tick();
      continue;
    }
    if (ready < 0 && errno == EINTR) continue;
    const ssize_t n = ready > 0 ? ::read(fds[0], buffer, sizeof buffer) : -1;
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw core::UserError(fmt::format("bench: a measurement failed ({}): {}", fmt::join(args, " "), out));
  account(usage, m);
  return out;
}

/// Runs `framesim _bench-child MODE SCENARIO DURATION` as a fresh process and reads its one line of totals; CPU
/// time and peak memory come from the kernel's accounting of that process. MODE: run (the fast path where it
/// applies), exact (every kernel a SimGrid activity), bare (the bare SimGrid loop), limit (the sharing limit).
Measurement measure(const std::string& mode, const std::string& scenario, double duration_s,
                    const std::function<void()>& tick) {
  Measurement m;
  const std::string out =
      run_self({"framesim", "_bench-child", mode, scenario, fmt::format("{}s", duration_s)}, tick, m);
  std::istringstream in(out);
  in >> m.wall_s >> m.activities >> m.kernels >> m.frames >> m.simulated_s >> m.loop_cpu_s;
  return m;
}

/// Says what is measured as it goes: a progress bar on a terminal (the measurement running, elapsed time, about how
/// long is left from the measurements done so far), and a line per finished measurement with its CPU time.
class Progress {
 public:
  explicit Progress(int total) : total_(total), bar_("bench"), start_(std::chrono::steady_clock::now()) {}
  /// The best (least CPU) of `repeat` runs of `mode` on `scenario`.
  Measurement measure(const std::string& label, const std::string& mode, const std::string& scenario, double duration_s,
                      int repeat) {
    Measurement best_m;
    for (int r = 0; r < repeat; ++r) {
      const std::string what =
          fmt::format("[{}/{}] {} ({} simulated)", done_ + 1, total_, label, core::format_seconds(duration_s));
      if (!bar_.enabled() && !is_quiet()) std::cerr << "  " << what << "..." << std::flush;
      bar_.set_label("bench " + what);
      auto draw = [&] { bar_.update(static_cast<double>(done_) / total_, left_s()); };
      draw();
      const Measurement m = ::framesim::cli::measure(mode, scenario, duration_s, draw);
      ++done_;
      const std::string result = fmt::format("{} CPU; elapsed {}, about {} left", core::format_seconds(m.cpu_s),
                                             core::format_seconds(seconds()), core::format_seconds(*left_s()));
      if (bar_.enabled()) {
        bar_.clear();
        std::cerr << "  " << what << ": " << result << "\n";
      } else if (!is_quiet()) {
        std::cerr << " " << result << "\n";
      }
      if (r == 0 || m.cpu_s < best_m.cpu_s) best_m = m;
    }
    return best_m;
  }
  /// The median CPU time of `repeat` runs of `framesim ARGS...` (output discarded): what a command costs from
  /// process start to exit.
  Measurement command(const std::string& label, const std::vector<std::string>& args, int repeat) {
    std::vector<Measurement> runs;
    for (int r = 0; r < repeat; ++r) {
      const std::string what = fmt::format("[{}/{}] {}", done_ + 1, total_, label);
      if (!bar_.enabled() && !is_quiet()) std::cerr << "  " << what << "..." << std::flush;
      bar_.set_label("bench " + what);
      Measurement m;
      run_self(args, {}, m);
      ++done_;
      if (bar_.enabled()) bar_.clear();
      if (!is_quiet())
        std::cerr << (bar_.enabled() ? "  " + what + ":" : std::string()) << " " << core::format_seconds(m.cpu_s)
                  << " CPU\n";
      runs.push_back(m);
    }
    return median_of(runs, [](const Measurement& m) { return m.cpu_s; });
  }
  /// The median per-point overhead of `repeat` runs of `framesim sweep SWEEP -j 1` into a fresh `out` each.
  SweepCost sweep(const std::string& label, const std::string& sweep_file, const fs::path& out, int repeat) {
    std::vector<SweepCost> runs;
    const fs::path costs = out.string() + ".costs.json";
    for (int r = 0; r < repeat; ++r) {
      const std::string what = fmt::format("[{}/{}] {}", done_ + 1, total_, label);
      if (!bar_.enabled() && !is_quiet()) std::cerr << "  " << what << "..." << std::flush;
      bar_.set_label("bench " + what);
      bar_.update(static_cast<double>(done_) / total_, left_s());
      fs::remove_all(out);
      Measurement whole;
      run_self({"framesim", "-q", "sweep", sweep_file, "-j", "1", "-o", out.string(), "--costs-file", costs.string()},
               {}, whole);
      const auto j = nlohmann::json::parse(core::read_file(costs));
      runs.push_back({j.at("points").get<double>(), j.at("cpu_s_per_point").get<double>(),
                      j.at("simulating_cpu_s_per_point").get<double>(), j.at("overhead_cpu_s_per_point").get<double>(),
                      j.at("sweep_process_cpu_s_per_point").get<double>()});
      fs::remove_all(out);
      ++done_;
      if (bar_.enabled()) bar_.clear();
      if (!is_quiet())
        std::cerr << (bar_.enabled() ? "  " + what + ":" : std::string()) << " "
                  << core::format_seconds(runs.back().overhead_s) << " of overhead per point\n";
    }
    return median_of(runs, [](const SweepCost& c) { return c.overhead_s; });
  }
  void finish() { bar_.clear(); }

 private:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  /// From the measurements done so far (nothing to go on before the first).
  std::optional<double> left_s() const {
    if (done_ == 0) return std::nullopt;
    return seconds() / done_ * (total_ - done_);
  }
  int total_;
  int done_ = 0;
  ProgressBar bar_;
  std::chrono::steady_clock::time_point start_;
};

/// What a row of the bench table measured: framesim (kernels grouped into activities), the bare SimGrid loop
/// (one activity per kernel, so no grouping ratio and no kernel rate of its own), or the minimal sharing loop (no
/// SimGrid activity at all).
enum class Measured { framesim, bare_loop, limit };

std::string row(const std::string& name, const Measurement& m, Measured what) {
  const bool bare = what == Measured::bare_loop;
  auto per_s = [](double n, double seconds) { return seconds > 0 ? n / seconds : 0.0; };
  return fmt::format("  {:<40} {:>10} {:>12} {:>12} {:>9} {:>9} {:>10}\n", name,
                     what == Measured::limit  ? "0"
                     : bare || m.kernels == 0 ? "1"
                                              : core::format_number(m.activities / m.kernels, 3),
                     core::format_number(per_s(m.activities, m.cpu_s), 4),
                     bare ? "-" : core::format_number(per_s(m.kernels, m.cpu_s), 4), core::format_seconds(m.cpu_s),
                     core::format_seconds(m.wall_s), core::format_capacity(m.peak_rss_bytes));
}

nlohmann::json measurement_json(const Measurement& m) {
  return {
      {"wall_s", m.wall_s},   {"cpu_s", m.cpu_s},   {"simulated_s", m.simulated_s},       {"activities", m.activities},
      {"kernels", m.kernels}, {"frames", m.frames}, {"peak_rss_bytes", m.peak_rss_bytes}, {"loop_cpu_s", m.loop_cpu_s}};
}

/// Every measurement of a bench run: the speed variants, the memory runs, start-up and the sweep's overhead.
struct BenchMeasurements {
  Measurement fast, exact, bare, limit, sfast, sbare, shfast, shbare, mem_short, mem_long, validate_1000, budget_1000;
  SweepCost sweep;
};

/// The --json document: every measurement, the speed ratios, kernels per CPU second, the fraction of the sharing
/// limit, start-up and bytes per frame.
nlohmann::json bench_json(const std::string& scenario, double duration, int repeat, const BenchMeasurements& m,
                          double limit_rate, double fast_rate, double per_frame) {
  const Measurement& fast = m.fast;
  const Measurement& exact = m.exact;
  const Measurement& bare = m.bare;
  const Measurement& limit = m.limit;
  const Measurement& sfast = m.sfast;
  const Measurement& sbare = m.sbare;
  const Measurement& shfast = m.shfast;
  const Measurement& shbare = m.shbare;
  const Measurement& mem_short = m.mem_short;
  const Measurement& mem_long = m.mem_long;
  const Measurement& validate_1000 = m.validate_1000;
  const Measurement& budget_1000 = m.budget_1000;
  const SweepCost& sweep = m.sweep;
  return nlohmann::json{
      {"scenario", scenario},
      {"duration_s", duration},
      {"repeat", repeat},
      {"measurements",
       {{"reference_framesim", measurement_json(fast)},
        {"reference_exact", measurement_json(exact)},
        {"reference_bare_loop", measurement_json(bare)},
        {"stochastic_framesim", measurement_json(sfast)},
        {"stochastic_bare_loop", measurement_json(sbare)},
        {"reference_sharing_limit", measurement_json(limit)},
        {"shared_framesim", measurement_json(shfast)},
        {"shared_bare_loop", measurement_json(shbare)},
        {"memory_tenth", measurement_json(mem_short)},
        {"memory_all", measurement_json(mem_long)},
        {"startup_validate_1000_layers", measurement_json(validate_1000)},
        {"startup_budget_1000_layers", measurement_json(budget_1000)}}},
      // bare-loop CPU time / framesim CPU time: above 1, framesim is the faster
      {"speed_ratio",
       {{"reference", bare.cpu_s / fast.cpu_s},
        {"stochastic", sbare.cpu_s / sfast.cpu_s},
        {"shared", shbare.cpu_s / shfast.cpu_s}}},
      {"kernels_per_cpu_s",
       {{"reference", fast.kernels / fast.cpu_s},
        {"stochastic", sfast.kernels / sfast.cpu_s},
        {"shared", shfast.kernels / shfast.cpu_s},
        {"sharing_limit_loop", limit_rate}}},
      // framesim's kernels per CPU second (whole process) / the minimal sharing loop's (its loop), on the reference
      {"fraction_of_sharing_limit", fast_rate / limit_rate},
      {"startup_cpu_s", {{"validate_1000_layers", validate_1000.cpu_s}, {"budget_1000_layers", budget_1000.cpu_s}}},
      // CPU seconds per point of a sweep of tiny points (median of the runs by overhead)
      {"sweep_per_point_cpu_s",
       {{"points", sweep.points},
        {"whole", sweep.cpu_s},
        {"simulating", sweep.simulating_s},
        {"overhead", sweep.overhead_s},
        {"sweep_process", sweep.sweep_s}}},
      {"activities_per_layer",
       {{"framesim", fast.activities / std::max(1.0, fast.kernels)},
        {"exact", exact.activities / std::max(1.0, exact.kernels)}}},
      {"memory_bytes_per_frame", per_frame}};
}

constexpr int kStartupRepeat = 5;  // start-up runs of each command; the median counts
constexpr int kSweepRepeat = 3;    // sweeps of the tiny points; the median by overhead counts

/// What a bench run measures, resolved and checked before minutes are spent measuring it.
struct BenchPlan {
  std::string name;          // the reference scenario's
  double duration_s = 0;     // simulated time of each speed run
  long memory_frames = 0;    // frames of the long memory run
  double memory_long_s = 0;  // simulated time of the long memory run
};

BenchPlan plan_bench(const BenchArgs& a) {
  const model::ScenarioSpec spec = config::load_scenario(a.scenario);
  config::load_scenario(a.stochastic);
  config::load_scenario(a.shared);
  config::load_hardware(a.hardware);
  config::load_scenario(a.sweep_scenario);
  const model::ScenarioSpec memory_spec = config::load_scenario(a.memory);
  BenchPlan plan;
  plan.name = spec.name;
  plan.duration_s = a.duration.empty()
                        ? spec.duration_s
                        : option_quantity("--duration", a.duration, static_cast<int>(core::Dimension::Seconds));
  try {
    plan.memory_frames = std::stol(a.memory_frames);
  } catch (const std::exception&) {
  }
  if (plan.memory_frames < 10) throw core::UserError("--memory-frames: a whole number of frames, at least 10");
  if (!a.json.empty()) {
    const fs::path parent = fs::absolute(a.json).parent_path();
    if (fs::is_directory(a.json)) throw core::UserError(fmt::format("--json: {} is a folder; name a file", a.json));
    if (!fs::is_directory(parent))
      throw core::UserError(fmt::format("--json: no folder {} to write {} in", parent.string(), a.json));
  }
  plan.memory_long_s = static_cast<double>(plan.memory_frames) / memory_spec.sensors.front().rate_Hz;
  return plan;
}

/// Runs every measurement, each in child processes, with a progress line.
BenchMeasurements measure_bench(const BenchArgs& a, const BenchPlan& plan) {
  // Start-up: a 1,000-layer network, written out layer by layer, checked and budgeted from process start to exit.
  const fs::path startup_dir = fs::temp_directory_path() / ("framesim-bench-startup-" + std::to_string(::getpid()));
  fs::create_directories(startup_dir);
  struct Remove {  // also when a measurement fails
    fs::path dir;
    ~Remove() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } remove_startup{startup_dir};
  const std::string network = (startup_dir / "layers_1000.yaml").string();
  core::write_file_atomic(network, thousand_layer_network());
  const std::string sweep_file = (startup_dir / "tiny_points.yaml").string();
  core::write_file_atomic(sweep_file, tiny_point_sweep(a.sweep_scenario));
  const double duration = plan.duration_s;
  Progress progress(8 * a.repeat + 2 + 2 * kStartupRepeat + kSweepRepeat);
  BenchMeasurements m;
  m.fast = progress.measure("reference, framesim", "run", a.scenario, duration, a.repeat);
  m.exact = progress.measure("reference, framesim --exact", "exact", a.scenario, duration, a.repeat);
  m.bare = progress.measure("reference, bare SimGrid loop", "bare", a.scenario, duration, a.repeat);
  m.limit = progress.measure("reference, minimal sharing loop", "limit", a.scenario, duration, a.repeat);
  m.sfast = progress.measure("stochastic, framesim", "run", a.stochastic, duration, a.repeat);
  m.sbare = progress.measure("stochastic, bare SimGrid loop", "bare", a.stochastic, duration, a.repeat);
  m.shfast = progress.measure("shared, framesim", "run", a.shared, duration, a.repeat);
  m.shbare = progress.measure("shared, bare SimGrid loop", "bare", a.shared, duration, a.repeat);
  m.mem_short = progress.measure("memory, a tenth of the frames", "run", a.memory, plan.memory_long_s / 10, 1);
  m.mem_long = progress.measure("memory, all the frames", "run", a.memory, plan.memory_long_s, 1);
  m.validate_1000 =
      progress.command("start-up: validate a 1,000-layer network", {"framesim", "validate", network}, kStartupRepeat);
  m.budget_1000 = progress.command("start-up: budget of a 1,000-layer network",
                                   {"framesim", "budget", a.hardware, network}, kStartupRepeat);
  m.sweep = progress.sweep("sweep overhead: 64 tiny points, -j 1", sweep_file, startup_dir / "sweep", kSweepRepeat);
  progress.finish();
  return m;
}

/// The table of speed rows, the ratios against their targets, start-up, sweep overhead and memory per frame.
void print_bench(const BenchArgs& a, const BenchMeasurements& m, double limit_rate, double fast_rate,
                 double per_frame) {
  std::cout << fmt::format("\n  {:<40} {:>10} {:>12} {:>12} {:>9} {:>9} {:>10}\n", "", "act/layer", "activities/s",
                           "layers/s", "CPU", "wall", "peak RSS");
  std::cout << row("reference: framesim", m.fast, Measured::framesim)
            << row("reference: framesim --exact", m.exact, Measured::framesim)
            << row("reference: bare SimGrid loop", m.bare, Measured::bare_loop)
            << row("reference: minimal sharing loop", m.limit, Measured::limit)
            << row("stochastic: framesim", m.sfast, Measured::framesim)
            << row("stochastic: bare SimGrid loop", m.sbare, Measured::bare_loop)
            << row("shared: framesim", m.shfast, Measured::framesim)
            << row("shared: bare SimGrid loop", m.shbare, Measured::bare_loop);
  auto ratio = [](const Measurement& b, const Measurement& f) { return core::format_number(b.cpu_s / f.cpu_s, 3); };
  auto rate = [](const Measurement& x) {  // kernels per CPU second (of the whole process), in millions
    return core::format_number(x.cpu_s > 0 ? x.kernels / x.cpu_s / 1e6 : 0.0, 3);
  };
  std::cout << fmt::format(
      "\n  speed: framesim / bare loop = {} in CPU time on the reference (target >= 10), {} M kernels per CPU second;\n"
      "         {} on the stochastic variant (target >= 8), {} M kernels per CPU second.\n"
      "  shared: framesim / bare loop = {} (target >= 5), {} M kernels per CPU second (units shared by priority, "
      "preemption and time slices).\n"
      "  sharing limit: a minimal loop of its own (the reference's kernels, a heap of events, max-min rates at every "
      "kernel start and end, no outputs)\n"
      "         runs {} M kernels per CPU second of its loop: framesim (whole process) is at {}% of it, {}x slower.\n"
      "         Reference: {} kernels as {} SimGrid activities ({} per layer; --exact: {}), the bare loop {} "
      "activities "
      "(one per kernel with work, its dispatch overhead as route latency).\n",
      ratio(m.bare, m.fast), rate(m.fast), ratio(m.sbare, m.sfast), rate(m.sfast), ratio(m.shbare, m.shfast),
      rate(m.shfast), core::format_number(limit_rate / 1e6, 3), core::format_number(100.0 * fast_rate / limit_rate, 3),
      core::format_number(limit_rate / std::max(1e-9, fast_rate), 3), core::format_number(m.fast.kernels, 7),
      core::format_number(m.fast.activities, 7),
      core::format_number(m.fast.activities / std::max(1.0, m.fast.kernels), 3),
      core::format_number(m.exact.activities / std::max(1.0, m.exact.kernels), 3),
      core::format_number(m.bare.activities, 7));
  std::cout << fmt::format(
      "  start-up: validate of a 1,000-layer network {} of CPU, budget {} (target < 30 ms; median of {}, from "
      "process start to exit).\n",
      core::format_seconds(m.validate_1000.cpu_s), core::format_seconds(m.budget_1000.cpu_s), kStartupRepeat);
  std::cout << fmt::format(
      "  sweep: {} of overhead per point (target < 10 ms; median of {}): a point's process beyond its "
      "simulation and the sweep's share ({}),\n"
      "         of {} of CPU per point in all ({} simulating), over {} points of {} -j 1.\n",
      core::format_seconds(m.sweep.overhead_s), kSweepRepeat, core::format_seconds(m.sweep.sweep_s),
      core::format_seconds(m.sweep.cpu_s), core::format_seconds(m.sweep.simulating_s), m.sweep.points,
      a.sweep_scenario);
  std::cout << fmt::format("  memory: peak RSS {} at {} frames (target < 100 MB), {} at {}: {} B per frame.\n",
                           core::format_capacity(m.mem_long.peak_rss_bytes), core::format_number(m.mem_long.frames, 8),
                           core::format_capacity(m.mem_short.peak_rss_bytes),
                           core::format_number(m.mem_short.frames, 8), core::format_number(per_frame, 3));
}

int run_bench(const BenchArgs& a) {
  const BenchPlan plan = plan_bench(a);
  std::cout << fmt::format(
      "framesim bench: {} and its stochastic variant, {} simulated each, best of {}; memory at "
      "{} frames\n",
      plan.name, core::format_seconds(plan.duration_s), a.repeat, plan.memory_frames);
  std::cout.flush();
  const BenchMeasurements m = measure_bench(a, plan);
  // The sharing limit counts its loop alone (no process start, no platform); framesim its whole process.
  const double limit_rate = m.limit.kernels / std::max(1e-9, m.limit.loop_cpu_s);
  const double fast_rate = m.fast.kernels / std::max(1e-9, m.fast.cpu_s);
  const double per_frame =
      (m.mem_long.peak_rss_bytes - m.mem_short.peak_rss_bytes) / std::max(1.0, m.mem_long.frames - m.mem_short.frames);
  print_bench(a, m, limit_rate, fast_rate, per_frame);
  if (!a.json.empty()) {
    const nlohmann::json j = bench_json(plan.name, plan.duration_s, a.repeat, m, limit_rate, fast_rate, per_frame);
    core::write_file_atomic(a.json, analysis::json_text(j) + "\n");
  }
  return 0;
}

/// The measured process: one simulation (or bare loop), totals on stdout.
int run_child(const std::string& mode, const std::string& scenario, const std::string& duration) {
  model::ScenarioSpec spec = config::load_scenario(scenario);
  spec.duration_s = option_quantity("duration", duration, static_cast<int>(core::Dimension::Seconds));
  engine::RunTotals totals;
  const auto& engine = engine::engine_module();  // loaded before the clock starts: start-up is not the loop's
  auto cpu_now = [] {
    struct rusage usage {};
    ::getrusage(RUSAGE_SELF, &usage);
    Measurement m;
    account(usage, m);
    return m.cpu_s;
  };
  const double cpu_start = cpu_now();
  if (mode == "bare") {
    totals = engine.run_bare_loop(spec);
  } else if (mode == "limit") {
    totals = engine.run_sharing_limit(spec);
  } else {
    const fs::path folder = fs::temp_directory_path() / ("framesim-bench-" + std::to_string(::getpid()));
    fs::create_directories(folder);
    analysis::RunAnalysis analysis(spec, folder);
    engine::RunOptions options;
    options.fluid = mode == "run";
    totals = engine.simulate(spec, analysis, options);
    analysis.finish(totals);
    fs::remove_all(folder);
  }
  std::cout << fmt::format("{} {} {} {} {} {}\n", totals.wall_s, totals.activities, totals.kernels,
                           mode == "bare" || mode == "limit" ? 0 : totals.frames_captured, totals.end_s,
                           cpu_now() - cpu_start);
  return 0;
}

}  // namespace

Command add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* sub = app.add_subcommand("bench",
                                 "measure simulation speed against a bare SimGrid loop, and memory against run length");
  sub->add_option("--scenario", args->scenario, "the reference scenario (default scenarios/bench/reference.yaml)");
  sub->add_option("--stochastic", args->stochastic, "its stochastic variant (default scenarios/bench/stochastic.yaml)");
  sub->add_option("--shared", args->shared, "the shared-unit reference (default scenarios/bench/shared.yaml)");
  sub->add_option("--hardware", args->hardware,
                  "hardware for the start-up measurement (default hardware/jetson_orin_nx_16gb.yaml)");
  sub->add_option("--sweep-scenario", args->sweep_scenario,
                  "the scenario of the sweep whose per-point overhead is measured (default "
                  "scenarios/detector_segmenter.yaml)");
  sub->add_option("--memory", args->memory,
                  "the many-frames scenario for memory (default scenarios/bench/memory.yaml)");
  sub->add_option("--duration", args->duration,
                  "simulated duration of the speed runs (default: the scenario's, 20 min; e.g. 1min for a first look)");
  sub->add_option("--memory-frames", args->memory_frames, "frames of the long memory run (default 1000000)");
  sub->add_option("--repeat", args->repeat, "measure each speed variant this many times; keep the best (default 1)")
      ->check(CLI::Range(1, 100));
  sub->add_option("--json", args->json, "also write every figure to this JSON file (bench.json)");
  return {sub, [args] { return run_bench(*args); }};
}

Command add_bench_child_command(CLI::App& app) {
  struct ChildArgs {
    std::string mode, scenario, duration;
  };
  auto args = std::make_shared<ChildArgs>();
  auto* sub = app.add_subcommand("_bench-child", "one measurement of `framesim bench` (internal)");
  sub->group("");  // not listed in --help
  sub->add_option("mode", args->mode)->required()->check(CLI::IsMember({"run", "exact", "bare", "limit"}));
  sub->add_option("scenario", args->scenario)->required();
  sub->add_option("duration", args->duration)->required();
  return {sub, [args] { return run_child(args->mode, args->scenario, args->duration); }};
}

}  // namespace framesim::cli
