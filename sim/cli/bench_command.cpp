// `framesim bench`: how fast the engine runs a reference scenario, next to a bare SimGrid loop issuing the
// same parallel tasks on the same platform, and whether its memory stays flat as the run gets longer.
// Each measurement runs in its own child process (one SimGrid engine per process). Speed is compared on CPU
// time (user + system of the child), which a busy machine disturbs less than wall time; with --repeat the
// variants alternate and the best of each counts. Peak memory is the child's own high-water mark (VmHWM).
#include <cstdio>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.hpp"
#include "config/scenario.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "engine/simulation.hpp"
#include "model/scenario.hpp"
#include "run_analysis.hpp"

namespace framesim::cli {

namespace {

namespace fs = std::filesystem;

struct BenchArgs {
  std::string scenario = "scenarios/bench/reference.yaml";
  std::string duration;
  std::string short_duration = "2 min";
  int repeat = 3;
};

struct Measurement {
  double wall_s = 0;
  double cpu_s = 0;
  double simulated_s = 0;
  double activities = 0;
  double kernels = 0;
  double frames = 0;
  double peak_rss_bytes = 0;
};

/// Runs `framesim _bench-child MODE SCENARIO DURATION [no-overhead]` as a fresh process and reads its one line
/// of totals; CPU time and peak memory come from the kernel's accounting of that process.
Measurement measure(const std::string& mode, const std::string& scenario, double duration_s, bool no_overhead) {
  int fds[2];
  if (::pipe(fds) != 0) throw core::UserError("bench: cannot create a pipe");
  const std::string duration = fmt::format("{}s", duration_s);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw core::UserError("bench: cannot fork");
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    std::vector<std::string> args{"framesim", "_bench-child", mode, scenario, duration};
    if (no_overhead) args.emplace_back("--no-overhead");
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    ::execv("/proc/self/exe", argv.data());
    std::_Exit(127);
  }
  ::close(fds[1]);
  std::string out;
  char buffer[512];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) out.append(buffer, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw core::UserError("bench: a measurement failed: " + out);
  Measurement m;
  std::istringstream in(out);
  in >> m.wall_s >> m.activities >> m.kernels >> m.frames >> m.simulated_s;
  m.cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
            static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  m.peak_rss_bytes = static_cast<double>(usage.ru_maxrss) * 1024.0;
  return m;
}

/// The best (least CPU) of `repeat` measurements.
Measurement best(const std::vector<Measurement>& ms) {
  return *std::min_element(ms.begin(), ms.end(), [](const auto& a, const auto& b) { return a.cpu_s < b.cpu_s; });
}

struct Pair {
  Measurement full, bare;
};

/// framesim and the bare loop, alternating `repeat` times; the best of each.
Pair compare(const BenchArgs& a, double duration_s, bool no_overhead) {
  std::vector<Measurement> fulls, bares;
  for (int i = 0; i < a.repeat; ++i) {
    fulls.push_back(measure("run", a.scenario, duration_s, no_overhead));
    bares.push_back(measure("bare", a.scenario, duration_s, no_overhead));
  }
  return {best(fulls), best(bares)};
}

void print_rows(const std::vector<std::pair<std::string, const Measurement*>>& rows) {
  auto per_s = [](double n, double seconds) { return seconds > 0 ? n / seconds : 0.0; };
  std::cout << fmt::format("  {:<44} {:>12} {:>12} {:>10} {:>9} {:>9} {:>10}\n", "", "activities/s", "layers/s",
                           "frames/s", "CPU", "wall", "peak RSS");
  for (const auto& [name, m] : rows) {
    const bool bare = m->frames == 0;
    std::cout << fmt::format("  {:<44} {:>12} {:>12} {:>10} {:>9} {:>9} {:>10}\n", name,
                             core::format_number(per_s(m->activities, m->cpu_s), 4),
                             bare ? "-" : core::format_number(per_s(m->kernels, m->cpu_s), 4),
                             bare ? "-" : core::format_number(per_s(m->frames, m->cpu_s), 4),
                             core::format_seconds(m->cpu_s), core::format_seconds(m->wall_s),
                             core::format_capacity(m->peak_rss_bytes));
  }
}

int run_bench(const BenchArgs& a) {
  const model::ScenarioSpec spec = config::load_scenario(a.scenario);
  const double duration = a.duration.empty()
                              ? spec.duration_s
                              : option_quantity("--duration", a.duration, static_cast<int>(core::Dimension::Seconds));
  const double short_s = option_quantity("--short", a.short_duration, static_cast<int>(core::Dimension::Seconds));
  if (short_s >= duration) throw core::UserError("--short: must be shorter than the benchmark's duration");
  std::cout << fmt::format("framesim bench: {} ({}), {} simulated, best of {}\n\n", spec.name, a.scenario,
                           core::format_seconds(duration), a.repeat);
  std::cout.flush();
  const Pair main = compare(a, duration, false);
  const Measurement brief = measure("run", a.scenario, short_s, false);
  const Measurement brief_bare = measure("bare", a.scenario, short_s, false);
  const Pair free = compare(a, duration, true);
  print_rows({{fmt::format("framesim run ({})", core::format_seconds(main.full.simulated_s)), &main.full},
              {"bare SimGrid loop, same workload", &main.bare},
              {fmt::format("framesim run ({})", core::format_seconds(brief.simulated_s)), &brief},
              {"framesim run, no dispatch overhead", &free.full},
              {"bare SimGrid loop, no dispatch overhead", &free.bare}});
  auto ratio = [](const Pair& p) { return core::format_number(p.bare.cpu_s / p.full.cpu_s, 3); };
  std::cout << fmt::format(
      "\n  speed: framesim / bare loop = {} in CPU time (target >= 1): {} kernels as {} activities, each paying its\n"
      "         dispatch overhead as route latency, vs {} ptasks, each after a sleep for its overhead.\n"
      "         With no dispatch overhead anywhere (consecutive kernels can then share one activity exactly): {}\n"
      "         ({} kernels as {} activities).\n",
      ratio(main), core::format_number(main.full.kernels, 7), core::format_number(main.full.activities, 7),
      core::format_number(main.bare.activities, 7), ratio(free), core::format_number(free.full.kernels, 7),
      core::format_number(free.full.activities, 7));
  // A run keeps every sample for exact percentiles: per frame its latency and energy, per stage its wait,
  // service and latency (11 doubles a frame here), and a point of the latency-over-time plot. Nothing else
  // should grow with the run.
  const double per_frame = (main.full.peak_rss_bytes - brief.peak_rss_bytes) / std::max(1.0, main.full.frames - brief.frames);
  std::cout << fmt::format(
      "  memory: peak RSS {} after {} vs {} after {} ({}x the frames): {} B per frame, the samples kept for exact\n"
      "          percentiles; the bare loop {} vs {}.\n",
      core::format_capacity(main.full.peak_rss_bytes), core::format_seconds(main.full.simulated_s),
      core::format_capacity(brief.peak_rss_bytes), core::format_seconds(brief.simulated_s),
      core::format_number(main.full.frames / std::max(1.0, brief.frames), 3), core::format_number(per_frame, 3),
      core::format_capacity(main.bare.peak_rss_bytes), core::format_capacity(brief_bare.peak_rss_bytes));
  return 0;
}

/// The measured process: one simulation (or bare loop), totals on stdout.
int run_child(const std::string& mode, const std::string& scenario, const std::string& duration, bool no_overhead) {
  model::ScenarioSpec spec = config::load_scenario(scenario);
  spec.duration_s = option_quantity("duration", duration, static_cast<int>(core::Dimension::Seconds));
  if (no_overhead)
    for (auto& u : spec.hardware.units) u.dispatch_overhead_s = 0;
  engine::RunTotals totals;
  if (mode == "bare") {
    totals = engine::run_bare_loop(spec);
  } else {
    const fs::path folder = fs::temp_directory_path() / ("framesim-bench-" + std::to_string(::getpid()));
    fs::create_directories(folder);
    analysis::RunAnalysis analysis(spec, folder);
    totals = engine::simulate(spec, analysis);
    analysis.finish(totals);
    fs::remove_all(folder);
  }
  std::cout << fmt::format("{} {} {} {} {}\n", totals.wall_s, totals.activities, totals.kernels,
                           mode == "bare" ? 0 : totals.frames_captured, totals.end_s);
  return 0;
}

}  // namespace

Command add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* sub = app.add_subcommand("bench", "measure simulation speed against a bare SimGrid loop, and memory against run length");
  sub->add_option("--scenario", args->scenario, "the reference scenario (default scenarios/bench/reference.yaml)");
  sub->add_option("--duration", args->duration, "override the simulated duration (default: the scenario's, 20 min)");
  sub->add_option("--short", args->short_duration, "the shorter run memory is compared with (default 2 min)");
  sub->add_option("--repeat", args->repeat, "measure each variant this many times, alternating; keep the best")
      ->check(CLI::Range(1, 100));
  return {sub, [args] { return run_bench(*args); }};
}

Command add_bench_child_command(CLI::App& app) {
  struct ChildArgs {
    std::string mode, scenario, duration;
    bool no_overhead = false;
  };
  auto args = std::make_shared<ChildArgs>();
  auto* sub = app.add_subcommand("_bench-child", "one measurement of `framesim bench` (internal)");
  sub->group("");  // not listed in --help
  sub->add_option("mode", args->mode)->required()->check(CLI::IsMember({"run", "bare"}));
  sub->add_option("scenario", args->scenario)->required();
  sub->add_option("duration", args->duration)->required();
  sub->add_flag("--no-overhead", args->no_overhead);
  return {sub, [args] { return run_child(args->mode, args->scenario, args->duration, args->no_overhead); }};
}

}  // namespace framesim::cli
