// `framesim run SCENARIO`: simulate the pipeline frame by frame and write the run folder.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <unistd.h>

#include "cli/commands.hpp"
#include "cli/console.hpp"
#include "cli/output_guard.hpp"
#include "config/scenario.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/units.hpp"
#include "engine/module.hpp"
#include "json_text.hpp"
#include "run_analysis.hpp"
#include "run_summary.hpp"
#include "sweep_report.hpp"

namespace framesim::cli {

namespace {

namespace fs = std::filesystem;

struct RunArgs {
  std::string scenario;
  std::string out;
  std::string duration;
  std::string seed;
  std::vector<std::string> set;
  bool force = false;
  bool json = false;
  bool exact = false;
  bool strict = false;
  bool no_folder = false;      // the summary only, no run folder (a sweep's point whose run is not kept)
  bool point_metrics = false;  // --json, but only what a sweep keeps of the run (its point's metrics)
  std::string wall_limit;
  std::string progress_file;  // the fraction simulated, rewritten as it moves (a sweep reads it)
};

/// Writes the fraction simulated into a small file, in place, each time it moves by half a percent: a sweep
/// running this simulation as one of its points reads it to show progress within points.
class ProgressFile {
 public:
  explicit ProgressFile(const std::string& path) : file_(path.empty() ? nullptr : std::fopen(path.c_str(), "w")) {}
  ~ProgressFile() {
    if (file_) std::fclose(file_);
  }
  ProgressFile(const ProgressFile&) = delete;
  ProgressFile& operator=(const ProgressFile&) = delete;
  bool enabled() const { return file_ != nullptr; }
  void update(double fraction) {
    if (!file_ || fraction < last_ + 0.005) return;
    last_ = fraction;
    std::rewind(file_);
    std::fprintf(file_, "%.6f\n", std::clamp(fraction, 0.0, 1.0));
    std::fflush(file_);
  }

 private:
  std::FILE* file_;
  double last_ = -1;
};

/// -o, or runs/<the scenario file's name without .yaml> (runs/stdin for `-`).
fs::path run_folder(const RunArgs& a) {
  if (a.out.empty() && a.scenario == "-") return fs::path("runs") / "stdin";
  return a.out.empty() ? fs::path("runs") / fs::path(a.scenario).stem() : fs::path(a.out);
}

/// A shortened run (--duration) whose cold and sustained windows no longer fit side by side in the counted time:
/// both are scaled by the ratio of the counted times, so they keep their share of the run, and the run says so
/// (a note on stderr, in the summary, summary.json and report.html). Nothing when they still fit.
std::optional<analysis::ScaledWindows> scale_windows(model::ScenarioSpec& spec, double scenario_counted_s,
                                                     const std::string& duration) {
  const double counted_s = spec.duration_s - spec.warmup_s;
  if (spec.cold_window_s + spec.sustained_window_s <= counted_s || counted_s >= scenario_counted_s) return std::nullopt;
  analysis::ScaledWindows w;
  w.factor = counted_s / scenario_counted_s;
  w.scenario_cold_s = spec.cold_window_s;
  w.scenario_sustained_s = spec.sustained_window_s;
  spec.cold_window_s *= w.factor;
  spec.sustained_window_s *= w.factor;
  auto shown = [](double requested, double now) {
    return requested > 0 ? fmt::format("{} -> {}", core::format_seconds(requested), core::format_seconds(now))
                         : std::string("automatic");
  };
  w.note = fmt::format(
      "--duration {}: the scenario's windows (cold {}, sustained {}) do not fit side by side in the {} counted; "
      "both scaled by {} (the counted time's share of the scenario's {}): the sustained window is the end of this "
      "run, not the scenario's sustained state",
      duration, shown(w.scenario_cold_s, spec.cold_window_s), shown(w.scenario_sustained_s, spec.sustained_window_s),
      core::format_seconds(counted_s), core::format_number(w.factor, 3), core::format_seconds(scenario_counted_s));
  spec.notes.push_back(w.note);
  return w;
}

/// What simulating took: the engine's totals and the CPU seconds of simulate() alone.
struct Simulated {
  engine::RunTotals totals;
  double cpu_s = 0;
};

/// Simulates `spec` into `analysis` (its provenance and scaled windows set here), reporting progress on `bar`
/// and --progress-file: the one simulation step of a run, with its folder or without.
Simulated simulate(const RunArgs& a, const model::ScenarioSpec& spec, analysis::RunAnalysis& analysis,
                   const std::optional<analysis::ScaledWindows>& scaled, const std::vector<config::Override>& overrides,
                   ProgressBar& bar) {
  analysis.set_provenance(provenance_record(spec.input_files, overrides));
  if (scaled) analysis.set_scaled_windows(*scaled);
  engine::RunOptions options;
  ProgressFile progress_file(a.progress_file);
  if (bar.enabled() || progress_file.enabled())
    options.progress = [&bar, &progress_file](double f) {
      if (bar.enabled()) bar.update(f);
      progress_file.update(f);
    };
  options.fluid = !a.exact;
  const auto& engine = engine::engine_module();  // loaded before the CPU clock starts
  const std::clock_t cpu_start = std::clock();
  Simulated out{engine.simulate(spec, analysis, options), 0};
  out.cpu_s = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  return out;
}

/// --json: the summary with the wall and CPU time of simulating, which are printed, never written (a run
/// folder stays reproducible). --point-metrics: only the figures a sweep keeps of it (analysis::point_metrics of
/// the summary as read back from what is written, RunAnalysis::finish) and those times, on one line: a point's
/// output is read whole.
void print_json(const analysis::RunSummary& summary, const Simulated& run, bool point_only) {
  const analysis::RunTimes times{run.totals.wall_s, run.cpu_s};
  if (point_only) {
    std::cout << analysis::point_output_text({analysis::point_metrics(summary), times}) << "\n";
    return;
  }
  analysis::RunSummary timed = summary;
  timed.times = times;
  std::cout << analysis::json_text(analysis::write_run_summary(timed)) << "\n";
}

/// --no-folder: the same simulation and summary as a run writing its folder, printed, nothing written.
int run_without_folder(const RunArgs& a, const model::ScenarioSpec& spec,
                       const std::optional<analysis::ScaledWindows>& scaled,
                       const std::vector<config::Override>& overrides) {
  analysis::RunAnalysis analysis(spec, {});
  ProgressBar bar(fmt::format("run {}", spec.name));
  const Simulated run = simulate(a, spec, analysis, scaled, overrides, bar);
  const auto summary = analysis.finish(
      run.totals, a.point_metrics ? analysis::RunAnalysis::Finish::record : analysis::RunAnalysis::Finish::whole);
  bar.clear();
  if (a.json || a.point_metrics) print_json(summary, run, a.point_metrics);
  else std::cout << analysis.text(summary);
  return 0;
}

int run_scenario(const RunArgs& a) {
  std::vector<config::Override> overrides;
  for (const auto& s : a.set) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw core::UserError(fmt::format("--set: expected KEY.PATH=VALUE, got \"{}\"", s));
    overrides.push_back({s.substr(0, eq), s.substr(eq + 1), {"--set " + s, 0, 0}});
  }
  const double wall_limit_s =
      a.wall_limit.empty() ? 0.0
                           : option_quantity("--wall-limit", a.wall_limit, static_cast<int>(core::Dimension::Seconds));
  if (!a.wall_limit.empty() && wall_limit_s <= 0)
    throw core::UserError(fmt::format("--wall-limit: must be positive, got \"{}\"", a.wall_limit));
  // From here a signal or the wall-time limit ends the run with nothing written (exit code 128 + N, or 3).
  // Through a symbolic link (-o latest -> runs/2024-06-01): the folder it points to is replaced, the link stays.
  const fs::path out = core::resolve_links(run_folder(a));
  const fs::path tmp = out.string() + ".tmp-" + std::to_string(::getpid());
  OutputGuard guard(tmp, wall_limit_s, "--wall-limit " + a.wall_limit);
  model::ScenarioSpec spec = config::load_scenario(a.scenario, overrides);
  report_warnings(spec.warnings, a.strict);
  std::optional<analysis::ScaledWindows> scaled;
  if (!a.duration.empty()) {
    const double scenario_counted_s = spec.duration_s - spec.warmup_s;
    spec.duration_s = option_quantity("--duration", a.duration, static_cast<int>(core::Dimension::Seconds));
    if (spec.duration_s <= 0)
      throw core::UserError(fmt::format("--duration: must be positive, got \"{}\"", a.duration));
    if (spec.warmup_s >= spec.duration_s)
      throw core::UserError(fmt::format("--duration: {} is not longer than the scenario's warm-up ({})", a.duration,
                                        core::format_seconds(spec.warmup_s)));
    if (auto problem = config::run_size_problem(spec)) throw core::UserError("--duration: " + *problem);
    if (auto problem = config::sensor_log_problem(spec)) throw core::UserError("--duration: " + *problem);
    scaled = scale_windows(spec, scenario_counted_s, a.duration);
  }
  if (!a.seed.empty()) {
    std::uint64_t seed = 0;
    const auto [ptr, ec] = std::from_chars(a.seed.data(), a.seed.data() + a.seed.size(), seed);
    if (ec != std::errc() || ptr != a.seed.data() + a.seed.size())
      throw core::UserError(fmt::format("--seed: expected a whole number, 0 or more, got \"{}\"", a.seed));
    spec.seed = seed;
  }
  if (a.no_folder) return run_without_folder(a, spec, scaled, overrides);
  check_replaceable(out, {}, "-o", a.force);
  // Write everything into a temporary folder beside the target, then swap it in: nothing half-written, even
  // after a signal or --wall-limit (the guard removes it), and what a killed run left is removed here.
  core::remove_stale_temporaries(out, ".tmp-");
  std::error_code ec;
  fs::create_directories(tmp, ec);
  if (ec) throw core::UserError(fmt::format("-o: cannot create {}: {}", tmp.string(), ec.message()));
  try {
    const auto started = std::chrono::steady_clock::now();
    analysis::RunAnalysis analysis(spec, tmp);
    ProgressBar bar(fmt::format("run {}", spec.name));
    const Simulated run = simulate(a, spec, analysis, scaled, overrides, bar);
    const auto simulated = std::chrono::steady_clock::now();
    const auto summary = analysis.finish(run.totals);
    list_written_files(tmp);
    std::vector<std::string> ours;
    for (const auto& e : fs::directory_iterator(tmp)) ours.push_back(e.path().filename().string());
    check_replaceable(out, ours, "-o", a.force);
    guard.publish([&] { replace_folder(tmp, out); });
    bar.clear();
    if (is_verbose()) {
      const auto seconds = [](auto from, auto to) { return std::chrono::duration<double>(to - from).count(); };
      std::cerr << fmt::format("framesim run: simulated {} in {} of wall time, wrote the run folder in {}\n",
                               core::format_seconds(spec.duration_s), core::format_seconds(seconds(started, simulated)),
                               core::format_seconds(seconds(simulated, std::chrono::steady_clock::now())));
    }
    if (a.json || a.point_metrics) {
      print_json(summary, run, a.point_metrics);
    } else {
      std::cout << analysis.text(summary);
      std::cout << fmt::format(
          "\nrun folder: {}/ (summary.json, frames.csv, stages.csv, kernels.csv, timeseries.csv, trace.json, *.svg)\n",
          out.string());
    }
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  return 0;
}

}  // namespace

void report_warnings(const std::vector<core::Diagnostic>& warnings, bool strict) {
  if (warnings.empty()) return;
  if (strict) {
    std::vector<core::Diagnostic> errors = warnings;
    for (auto& e : errors) e.message += " (an error under --strict)";
    throw core::UserError(errors);
  }
  std::vector<std::string> lines;
  for (const auto& w : warnings) {
    core::Diagnostic shown = w;
    shown.message = "warning: " + shown.message;
    lines.push_back(shown.to_string());
  }
  print_warnings(lines);
}

Command add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* sub = app.add_subcommand("run", "simulate a scenario frame by frame and write its run folder");
  sub->add_option("scenario", args->scenario,
                  "scenario YAML (scenarios/*.yaml), or - for standard input (its relative paths from the working "
                  "directory)")
      ->required();
  sub->add_option("-o,--out", args->out,
                  "run folder (default: runs/<scenario file name without .yaml>); replaced whole by a rerun, refused "
                  "when it holds files framesim did not write");
  sub->add_flag("--force", args->force, "replace the run folder even if it holds files framesim did not write");
  sub->add_option("--duration", args->duration, "override the simulated duration, e.g. 60s");
  sub->add_option("--seed", args->seed, "override the scenario's random seed (a whole number, 0 or more)");
  sub->add_option("--set", args->set,
                  "change a key before running: stages.detector.unit=cpu, hardware.memory.dram.bandwidth=\"34 GB/s\", "
                  "network.detector.inputs.image.shape=[1,3,320,320] (repeatable)");
  sub->add_flag("--strict", args->strict,
                "warnings about the input (e.g. a measured trace of another network) are errors");
  sub->add_option("--wall-limit", args->wall_limit,
                  "stop the run after this much wall time, e.g. 10min: exit code 3, nothing written");
  sub->add_flag("--json", args->json, "print summary.json instead of the text summary");
  sub->add_option("--progress-file", args->progress_file,
                  "write the fraction simulated into this file as the run goes (for a sweep's progress within points)")
      ->group("");  // not listed in --help: the sweep's own plumbing
  sub->add_flag("--no-folder", args->no_folder, "print the summary only, write no run folder (a sweep's point)")
      ->excludes("-o")
      ->group("");
  sub->add_flag("--point-metrics", args->point_metrics,
                "print only what a sweep keeps of the run, one JSON line: its point's metrics, wall and CPU time")
      ->group("");  // not listed in --help: how a sweep's point reports
  sub->add_flag("--exact", args->exact,
                "every kernel as a SimGrid activity instead of framesim's own fluid model of SimGrid's sharing: the "
                "same decisions, agreeing with it to rounding (slower)");
  return {sub, [args] { return run_scenario(*args); }};
}

}  // namespace framesim::cli
