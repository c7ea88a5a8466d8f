// `framesim sweep SWEEP.yaml -j N -o DIR [--shard I/N] [--emit slurm]` and `framesim merge DIR... -o OUT`.
// Every point is one `framesim run` in its own process (SimGrid allows one engine per process), a child forked
// from this one once it has loaded everything (sweep_pool.hpp: no exec, no loading per point). A point's
// result is written atomically to DIR/points/NNNNNN.json with the hash of everything it depends on, so a rerun
// skips finished points and `kill -9` loses at most the points in flight. Shards (Slurm job arrays, GNU
// parallel) write separate folders that `framesim merge` gathers into one table.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/console.hpp"
#include "cli/output_guard.hpp"
#include "cli/sweep_pool.hpp"
#include "config/scenario.hpp"
#include "config/sweep.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "json_text.hpp"
#include "run_summary.hpp"
#include "summary_fields.hpp"
#include "sweep_report.hpp"

namespace framesim::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// FNV-1a, 64 bits: a stable hash of text (the same on every machine and run).
std::uint64_t fnv1a(const std::string& text, std::uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string hex(std::uint64_t h) { return fmt::format("{:016x}", h); }

/// The sweep's identity: its name, scenario, mode and axes (shards of one sweep share it).
std::string sweep_hash(const config::SweepSpec& s) {
  std::string text = s.name + "\n" + s.scenario.generic_string() + "\n" + s.duration.value_or("") + "\n" +
                     std::to_string(static_cast<int>(s.mode)) + "\n" + std::to_string(s.samples) + "\n" +
                     std::to_string(s.seed) + "\n";
  for (const auto& a : s.axes) {
    text += a.path + ":";
    for (const auto& v : a.values) text += v + "|";
    text += fmt::format("{}:{}:{}:{}:{}\n", a.range, a.low, a.high, a.log_scale, a.integer);
  }
  return hex(fnv1a(text));
}

json sweep_description(const config::SweepSpec& s, std::size_t points) {
  json axes = json::array();
  for (const auto& a : s.axes) axes.push_back(a.path);
  return {{"name", s.name},        {"file", s.source_file}, {"scenario", s.scenario.generic_string()},
          {"hash", sweep_hash(s)}, {"points", points},      {"axes", axes}};
}

/// A point's hash: the sweep, its overrides, and the content of every file its scenario reads.
std::string point_hash(const std::string& sweep, const config::SweepPoint& p, const model::ScenarioSpec& spec) {
  std::string text = sweep + "\n";
  for (const auto& o : p.overrides) text += o.path + "=" + o.value_yaml + "\n";
  std::set<std::string> files{spec.source_file, spec.hardware.source_file};
  for (const auto& n : spec.networks)
    if (!n.network.source_file.empty()) files.insert(n.network.source_file);
  for (const auto& f : files) {
    std::error_code ec;
    if (fs::is_regular_file(f, ec)) text += f + "\n" + core::read_file(f) + "\n";
  }
  return hex(fnv1a(text));
}

struct Shard {
  std::size_t index = 0, count = 1;
};

Shard parse_shard(const std::string& text) {
  Shard s;
  if (!text.empty()) {
    const auto slash = text.find('/');
    try {
      if (slash == std::string::npos) throw std::invalid_argument(text);
      s.index = std::stoul(text.substr(0, slash));
      s.count = std::stoul(text.substr(slash + 1));
    } catch (const std::exception&) {
      throw core::UserError(fmt::format("--shard: expected I/N (e.g. 0/4), got \"{}\"", text));
    }
  } else if (const char* id = std::getenv("SLURM_ARRAY_TASK_ID")) {
    // A Slurm job array: this task's slice of the points.
    const char* count = std::getenv("SLURM_ARRAY_TASK_COUNT");
    const char* min = std::getenv("SLURM_ARRAY_TASK_MIN");
    if (!count) throw core::UserError("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not: give --shard I/N");
    s.index = std::stoul(id) - (min ? std::stoul(min) : 0);
    s.count = std::stoul(count);
  }
  if (s.count == 0 || s.index >= s.count)
    throw core::UserError(fmt::format("--shard: the index must be below the count, got {}/{}", s.index, s.count));
  return s;
}

struct SweepArgs {
  std::string file;
  std::string out;
  int jobs = 1;
  std::string shard;
  std::string emit;
  bool keep_runs = false;
  std::string costs_file;  // --costs-file: the points' CPU costs as JSON (what `framesim bench` reads)
};

struct Running {
  std::size_t point = 0;
  double started_s = 0;
};

/// The fraction simulated so far of a running point, from the progress file its `framesim run` rewrites
/// (0 until it has written one).
double point_progress(const fs::path& work) {
  std::ifstream in(work / "progress");
  double fraction = 0;
  if (!(in >> fraction)) return 0;
  return std::clamp(fraction, 0.0, 1.0);
}

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

fs::path point_file(const fs::path& dir, std::size_t index) {
  return dir / "points" / fmt::format("{:06}.json", index);
}

/// Reads every point file under `dirs`, checking they belong to one sweep; the results in index order.
std::vector<analysis::SweepResult> gather(const std::vector<fs::path>& dirs, json& sweep) {
  std::map<std::size_t, analysis::SweepResult> found;
  std::map<std::size_t, std::string> source;
  for (const auto& dir : dirs) {
    if (!fs::is_directory(dir / "points"))
      throw core::UserError(fmt::format("{}: not a sweep folder (no points/ in it)", dir.string()));
    for (const auto& entry : fs::directory_iterator(dir / "points")) {
      if (entry.path().extension() != ".json") continue;
      json p;
      try {
        p = json::parse(core::read_own_file(entry.path()));
      } catch (const json::exception& e) {
        throw core::UserError(fmt::format("{}: not a point result: {}", entry.path().string(), e.what()));
      }
      if (sweep.is_null()) sweep = p["sweep"];
      if (p["sweep"]["hash"] != sweep["hash"])
        throw core::UserError(fmt::format("{}: belongs to another sweep ({} vs {})", entry.path().string(),
                                          p["sweep"]["name"].get<std::string>(), sweep["name"].get<std::string>()));
      const auto index = p["index"].get<std::size_t>();
      analysis::SweepResult r{index, p["labels"].get<std::vector<std::string>>(), p["metrics"]};
      if (auto it = found.find(index); it != found.end() && it->second.metrics != r.metrics)
        throw core::UserError(
            fmt::format("point {} differs between {} and {}", index, source[index], entry.path().string()));
      found[index] = r;
      source[index] = entry.path().string();
    }
  }
  std::vector<analysis::SweepResult> out;
  for (auto& [i, r] : found) out.push_back(std::move(r));
  return out;
}

/// Exit code of a point's child process that could not create its stdout.json in its work folder.
constexpr int kExitNoCapture = 125;

/// Why a point's simulation failed: what it wrote on stderr (without the trailing newline), or, when that is
/// empty or unreadable, how it ended and why its output could not be kept (a full or read-only disk).
std::string failure_reason(const fs::path& work, int status) {
  std::string said;
  try {
    said = core::read_own_file(work / "stderr.txt");
  } catch (const core::UserError&) {
  }
  while (!said.empty() && (said.back() == '\n' || said.back() == '\r')) said.pop_back();
  if (!said.empty()) return said;
  std::string how = WIFSIGNALED(status) ? fmt::format("killed by signal {}", WTERMSIG(status))
                                        : fmt::format("exit code {}", WEXITSTATUS(status));
  if (WIFEXITED(status) && WEXITSTATUS(status) == kExitNoCapture) how = "could not start";
  // The likely reason, found again: can the work folder take a file?
  const fs::path probe = work / "probe.txt";
  std::string why = "it said nothing";
  try {
    core::write_file_atomic(probe, "framesim\n");
    std::error_code ignored;
    fs::remove(probe, ignored);
  } catch (const core::UserError& e) {
    why = e.what();
  }
  return fmt::format("the simulation ended ({}) and its output could not be kept: {}", how, why);
}

/// Writes results.csv, results.json, pareto.svg and report.html for a complete sweep, and prints the answers.
void write_answers(const fs::path& dir, const json& sweep, const std::vector<analysis::SweepResult>& results,
                   const json& provenance) {
  const auto axes = sweep["axes"].get<std::vector<std::string>>();
  const auto answers = analysis::answer_sweep(results, axes);
  const std::string title = fmt::format("sweep {}", sweep["name"].get<std::string>());
  core::write_files_atomic(
      dir,
      {{"results.csv", analysis::sweep_csv(results, axes)},
       {"results.json", analysis::json_text(analysis::sweep_json(sweep, results, axes, answers, provenance)) + "\n"},
       {"pareto.svg", analysis::sweep_svg(title, results, answers, axes)},
       {"report.html", analysis::sweep_html(title, results, axes, answers, provenance)}},
      "-o");
  std::cout << analysis::sweep_text(title, results, axes, answers);
  std::cout << fmt::format("\nresults: {}/results.csv, results.json, pareto.svg, report.html\n", dir.string());
}

std::string slurm_script(const SweepArgs& a, std::size_t points, const std::string& self) {
  const std::size_t tasks = std::min<std::size_t>(points, 64);
  const fs::path dir = fs::absolute(a.out);
  return fmt::format(R"(#!/bin/bash
# A Slurm job array for the sweep {file}: {points} points in {tasks} tasks, each running its share
# (framesim reads SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT). Submit with `sbatch {script}`; when
# every task has finished, gather the shards: framesim merge {dir}/shard-* -o {dir}
#SBATCH --job-name=framesim-sweep
#SBATCH --array=0-{last}
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --output={dir}/slurm-%A_%a.out
cd {cwd}
exec {self} sweep {file_abs} -o {dir}/shard-${{SLURM_ARRAY_TASK_ID}} -j 1
)",
                     fmt::arg("file", a.file), fmt::arg("points", points), fmt::arg("tasks", tasks),
                     fmt::arg("script", (dir / "sweep.sbatch").string()), fmt::arg("dir", dir.string()),
                     fmt::arg("last", tasks - 1), fmt::arg("cwd", fs::current_path().string()), fmt::arg("self", self),
                     fmt::arg("file_abs", fs::absolute(a.file).string()));
}

/// Every point's hash and the files the points read (the sweep file first). Every point is loaded (and so
/// validated) before anything runs: a bad key path or value is an error here, every problem at once.
struct LoadedPoints {
  std::vector<std::string> hashes;  // per point
  std::vector<std::string> inputs;  // the sweep file and every file a point reads
};

LoadedPoints load_points(const config::SweepSpec& spec, const std::vector<config::SweepPoint>& points,
                         const std::string& sweep_id) {
  LoadedPoints out{{}, {spec.source_file}};
  auto& hashes = out.hashes;
  auto& inputs = out.inputs;
  core::Diagnostics problems;
  std::set<std::string> seen;
  for (const auto& p : points) {
    try {
      const auto s = config::load_scenario(spec.scenario, p.overrides);
      hashes.push_back(point_hash(sweep_id, p, s));
      inputs.insert(inputs.end(), s.input_files.begin(), s.input_files.end());
    } catch (const core::UserError& e) {
      for (const auto& d : e.diagnostics())
        if (seen.insert(d.to_string()).second) problems.add(d);
      hashes.emplace_back();
    }
  }
  problems.throw_if_any();
  return out;
}

/// Work folders per invocation (DIR/work/PID): what a killed sweep left half-done is removed, a live one's kept.
void remove_dead_work_folders(const fs::path& dir) {
  if (!fs::is_directory(dir / "work")) return;
  for (const auto& entry : fs::directory_iterator(dir / "work")) {
    const std::string name = entry.path().filename().string();
    const bool alive = name.find_first_not_of("0123456789") == std::string::npos &&
                       ::kill(static_cast<pid_t>(std::stol(name)), 0) == 0;
    if (!alive) fs::remove_all(entry.path());
  }
}

/// The points of this shard not done yet (a point is done when its result file holds its hash); `done_before`
/// counts the others.
std::vector<std::size_t> points_to_run(const std::vector<config::SweepPoint>& points, const Shard& shard,
                                       const fs::path& dir, const std::vector<std::string>& hashes,
                                       std::size_t& done_before) {
  std::vector<std::size_t> todo;
  for (const auto& p : points) {
    if (p.index % shard.count != shard.index) continue;
    const auto file = point_file(dir, p.index);
    if (fs::exists(file)) {
      try {
        if (json::parse(core::read_own_file(file))["hash"] == hashes[p.index]) {
          ++done_before;
          continue;
        }
      } catch (const json::exception&) {
      }
    }
    todo.push_back(p.index);
  }
  return todo;
}

/// Forks the child that simulates point `p` (number `index`) in work_root/NNNNNN (`framesim run` on the loaded sweep,
/// sweep_pool.hpp), its stdout the point's summary.json; returns its pid. `parent` is the sweep's pid.
pid_t launch_point(const std::string& self, const config::SweepSpec& spec, const config::SweepPoint& p,
                   std::size_t index, const fs::path& work_root, pid_t parent, bool keep_run) {
  const fs::path work = work_root / fmt::format("{:06}", index);
  std::vector<std::string> args{
      self, "run", spec.scenario.string(), "-q", "--point-metrics", "--progress-file", (work / "progress").string()};
  // The run folder only when it is kept: else the summary alone (the same numbers, nothing written and removed).
  if (keep_run) args.insert(args.begin() + 3, {"-o", (work / "run").string()});
  else args.emplace_back("--no-folder");
  if (spec.duration) args.insert(args.end(), {"--duration", *spec.duration});
  for (const auto& o : p.overrides) args.insert(args.end(), {"--set", o.path + "=" + o.value_yaml});
  core::create_folders(work);
  std::cout.flush();  // nothing buffered here may end up in the point's output
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw core::UserError("sweep: cannot fork");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a killed sweep takes its simulations with it
    unblock_guarded_signals();
    if (::getppid() != parent) std::_Exit(127);
    const int out = ::open((work / "stdout.json").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open((work / "stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) std::_Exit(kExitNoCapture);  // nowhere for the result to go: said by the parent
    ::dup2(out, STDOUT_FILENO);
    if (err >= 0) ::dup2(err, STDERR_FILENO);  // else the sweep's own stderr: the reason is not lost
    run_point_child(args);  // `framesim run ARGS` in this fresh child of the loaded sweep (sweep_pool.hpp)
  }
  return pid;
}

/// A finished point's result file (written atomically: a point is done once it exists): the sweep, the point's
/// index, hash, labels and overrides, and its metrics (analysis::point_metrics of its run's summary).
void write_point_result(const fs::path& dir, const json& description, const config::SweepPoint& p,
                        const std::string& hash, const json& metrics) {
  json result{{"sweep", description}, {"index", p.index},           {"hash", hash},
              {"labels", p.labels},   {"overrides", json::array()}, {"metrics", metrics}};
  for (const auto& o : p.overrides) result["overrides"].push_back({{"path", o.path}, {"value", o.value_yaml}});
  core::write_file_atomic(point_file(dir, p.index), analysis::json_text(result) + "\n");
}

/// The note on how fast the sweep went: points per minute, and per point the process time, the simulation's
/// part and the overhead; then the points' CPU costs.
void print_throughput(std::size_t ran, double start, int jobs, double point_wall, double simulated_wall,
                      const PointCosts& costs) {
  const double minutes = (now_s() - start) / 60.0;
  print_note(fmt::format(
      "{} in {}: {} points per minute with {}; per point {} of process time, "
      "{} of it simulating, {} of overhead",
      core::counted(ran, "point"), core::format_seconds(now_s() - start),
      core::format_number(static_cast<double>(ran) / minutes, 3), core::counted(static_cast<std::size_t>(jobs), "job"),
      core::format_seconds(point_wall / static_cast<double>(ran)),
      core::format_seconds(simulated_wall / static_cast<double>(ran)),
      core::format_seconds((point_wall - simulated_wall) / static_cast<double>(ran))));
  print_note(costs.text());
}

/// Progress once a point has finished: the bar on a terminal, else a note at every tenth of the points.
void show_finished(ProgressBar& bar, const std::string& name, std::size_t finished, std::size_t failed,
                   std::size_t total, double start) {
  const double elapsed = now_s() - start;
  const double eta = finished > 0 ? elapsed / static_cast<double>(finished) * static_cast<double>(total - finished) : 0;
  const std::string failures_text = failed ? fmt::format(" ({} failed)", failed) : std::string();
  if (bar.enabled()) {
    bar.set_label(fmt::format("sweep {} {}/{}{}", name, finished, total, failures_text));
    bar.update(static_cast<double>(finished) / static_cast<double>(std::max<std::size_t>(1, total)), eta);
  } else if (finished == total || finished % std::max<std::size_t>(1, total / 10) == 0) {
    print_note(fmt::format("[{}/{}] {}%  elapsed {}  ETA {}{}", finished, total,
                           finished * 100 / std::max<std::size_t>(1, total), core::format_seconds(elapsed),
                           core::format_seconds(eta), failures_text));
  }
}

/// --emit slurm: the job array script in DIR, and how to submit it.
void emit_slurm(const SweepArgs& a, const fs::path& dir, std::size_t points, const std::string& self) {
  core::create_folders(dir);
  core::write_file_atomic(dir / "sweep.sbatch", slurm_script(a, points, self));
  std::cout << fmt::format("{}: a job array for {}; submit it with sbatch {}\n", (dir / "sweep.sbatch").string(),
                           core::counted(points, "point"), (dir / "sweep.sbatch").string());
}

/// Runs a sweep's points to do, `a.jobs` at a time, each in a forked child: keeps each finished point's result,
/// shows progress, and tallies the points' costs and failures.
class PointRunner {
 public:
  PointRunner(const SweepArgs& a, const config::SweepSpec& spec, const std::vector<config::SweepPoint>& points,
              const std::vector<std::string>& hashes, const json& description, fs::path dir, fs::path work_root,
              std::string self, pid_t parent, const std::vector<std::size_t>& todo)
      : a_(a),
        spec_(spec),
        points_(points),
        hashes_(hashes),
        description_(description),
        dir_(std::move(dir)),
        work_root_(std::move(work_root)),
        self_(std::move(self)),
        parent_(parent),
        todo_(todo),
        bar_(fmt::format("sweep {}", spec.name)) {}

  /// Runs every point to do, waiting for the last.
  void run() {
    start_s_ = now_s();
    std::size_t next = 0;
    while (next < todo_.size() || !running_.empty()) {
      while (next < todo_.size() && static_cast<int>(running_.size()) < a_.jobs) launch(todo_[next++]);
      int status = 0;
      struct rusage usage {};
      const pid_t pid = ::wait4(-1, &status, bar_.enabled() ? WNOHANG : 0, &usage);
      if (pid == 0) {
        show_partial();
        ::usleep(200000);
        continue;
      }
      if (pid > 0 && running_.count(pid)) finish(pid, status, usage);
    }
    bar_.clear();
  }

  /// After run(): the throughput note, the costs file, and the failures (a UserError when any point failed).
  void report() const {
    const std::size_t ran = todo_.size() - failed_;
    if (ran > 0) print_throughput(ran, start_s_, a_.jobs, point_wall_s_, simulated_wall_s_, costs_);
    if (!a_.costs_file.empty()) {
      const PointCosts::PerPoint p = costs_.per_point();
      const json j{{"points", p.points},
                   {"cpu_s_per_point", p.cpu_s},
                   {"simulating_cpu_s_per_point", p.simulating_s},
                   {"overhead_cpu_s_per_point", p.overhead_s},
                   {"sweep_process_cpu_s_per_point", p.sweep_s}};
      core::write_file_atomic(a_.costs_file, analysis::json_text(j) + "\n");
    }
    for (const auto& f : failures_) std::cerr << "failed: " << f << "\n";
    if (failed_ > 0)
      throw core::UserError(
          fmt::format("{} of {} points failed (see above); rerun to retry them", failed_, todo_.size()));
  }

 private:
  void launch(std::size_t index) {
    running_[launch_point(self_, spec_, points_[index], index, work_root_, parent_, a_.keep_runs)] = {index, now_s()};
  }

  void finish(pid_t pid, int status, const struct rusage& usage) {
    const Running r = running_[pid];
    running_.erase(pid);
    const auto& p = points_[r.point];
    const fs::path work = work_root_ / fmt::format("{:06}", r.point);
    const double wall = now_s() - r.started_s;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ++failed_;
      failures_.push_back(fmt::format("point {}: {}", r.point, failure_reason(work, status)));
    } else {
      // What `framesim run --point-metrics` printed: the point's metrics and the run's wall and CPU time.
      const std::string said_file = (work / "stdout.json").string();
      const auto said = analysis::read_point_output(analysis::read_json_file(said_file), said_file);
      simulated_wall_s_ += *said.run.wall_s;
      costs_.add(usage, *said.run.cpu_s);
      point_wall_s_ += wall;
      if (a_.keep_runs) {
        core::create_folders(dir_ / "runs");
        fs::remove_all(dir_ / "runs" / fmt::format("{:06}", r.point));
        fs::rename(work / "run", dir_ / "runs" / fmt::format("{:06}", r.point));
      }
      write_point_result(dir_, description_, p, hashes_[p.index], said.metrics);  // the point is done
    }
    fs::remove_all(work);
    ++finished_;
    show_finished(bar_, spec_.name, finished_, failed_, todo_.size(), start_s_);
  }

  /// Progress within points: while waiting, the bar also counts the fraction each running point has simulated,
  /// so it moves (and the estimate holds) during long points, not only when one finishes.
  void show_partial() {
    if (!bar_.enabled() || todo_.empty()) return;
    double partial = 0;
    for (const auto& [pid, r] : running_) partial += point_progress(work_root_ / fmt::format("{:06}", r.point));
    const double fraction = (static_cast<double>(finished_) + partial) / static_cast<double>(todo_.size());
    const double elapsed = now_s() - start_s_;
    bar_.update(fraction, fraction > 0 ? elapsed / fraction * (1 - fraction) : 0);
  }

  const SweepArgs& a_;
  const config::SweepSpec& spec_;
  const std::vector<config::SweepPoint>& points_;
  const std::vector<std::string>& hashes_;
  const json& description_;
  fs::path dir_, work_root_;
  std::string self_;
  pid_t parent_;
  const std::vector<std::size_t>& todo_;
  ProgressBar bar_;
  std::map<pid_t, Running> running_;
  std::size_t finished_ = 0, failed_ = 0;
  double start_s_ = 0, simulated_wall_s_ = 0, point_wall_s_ = 0;
  std::vector<std::string> failures_;
  PointCosts costs_;
};

int run_sweep(const SweepArgs& a) {
  const config::SweepSpec spec = config::load_sweep(a.file);
  const auto points = config::expand_sweep(spec);
  const std::string sweep_id = sweep_hash(spec);
  const json description = sweep_description(spec, points.size());
  const fs::path dir =
      a.out.empty() ? fs::path("runs") / ("sweep-" + fs::path(a.file).stem().string()) : fs::path(a.out);
  const std::string self = fs::read_symlink("/proc/self/exe").string();

  // Every point is loaded (and so validated) before anything runs.
  const LoadedPoints loaded = load_points(spec, points, sweep_id);
  const auto& hashes = loaded.hashes;
  const auto& inputs = loaded.inputs;

  if (a.emit == "slurm") {
    emit_slurm(a, dir, points.size(), self);
    return 0;
  }
  if (!a.emit.empty()) throw core::UserError(fmt::format("--emit: \"{}\" is not one of \"slurm\"", a.emit));

  const Shard shard = parse_shard(a.shard);
  core::create_folders(dir / "points");
  remove_dead_work_folders(dir);
  const fs::path work_root = dir / "work" / std::to_string(::getpid());
  const pid_t parent = ::getpid();
  core::create_folders(work_root);
  // Ctrl-C: this invocation's work folder goes (a simulation in flight, dying with the sweep, may leave a part
  // that the next invocation removes), the finished points stay, and the message says how to resume.
  const OutputGuard guard(
      work_root, 0, "",
      fmt::format("the points finished so far are kept in {}: the same command resumes", (dir / "points").string()));

  std::size_t done_before = 0;
  const std::vector<std::size_t> todo = points_to_run(points, shard, dir, hashes, done_before);
  print_note(fmt::format("sweep {}: {}{}, {} already done, {} to run with {}", spec.name,
                         core::counted(points.size(), "point"),
                         shard.count > 1 ? fmt::format(" (shard {}/{})", shard.index, shard.count) : std::string(),
                         done_before, todo.size(), core::counted(static_cast<std::size_t>(a.jobs), "job")));

  if (!todo.empty()) prepare_point_children(inputs);
  PointRunner runner{a, spec, points, hashes, description, dir, work_root, self, parent, todo};
  runner.run();
  fs::remove_all(work_root);
  std::error_code ignored;
  fs::remove(dir / "work", ignored);  // only if empty
  runner.report();

  // What this folder's points were run from, for a merge of shards to carry into its results.json.
  const json recorded = provenance(inputs, {});
  core::write_file_atomic(dir / "provenance.json", analysis::json_text(recorded) + "\n");
  json sweep;
  const auto results = gather({dir}, sweep);
  if (results.size() == points.size()) {
    write_answers(dir, description, results, recorded);
  } else {
    std::cout << fmt::format(
        "{}: {} of {} points done; when every shard is done: framesim merge SHARD_DIRS... -o OUT\n", dir.string(),
        results.size(), points.size());
  }
  return 0;
}

/// The input files (name, digest, size) the shards in `dirs` were run from, from each one's provenance.json: the
/// same in every shard that has one, else the merge is refused (the shards' points came from different files).
/// Empty when no shard recorded them (a sweep folder written before framesim recorded its inputs).
std::vector<analysis::InputFile> shards_inputs(const std::vector<fs::path>& dirs) {
  std::vector<analysis::InputFile> inputs;
  std::optional<fs::path> first;
  for (const auto& dir : dirs) {
    const std::string file = (dir / "provenance.json").string();
    if (!fs::exists(file)) continue;
    analysis::Provenance recorded;
    analysis::read_fields(analysis::read_json_file(file), "", file, recorded);
    if (!first) {
      first = dir;
      inputs = std::move(recorded.inputs);
      continue;
    }
    const auto& these = recorded.inputs;
    if (these == inputs) continue;
    // Name the first file that differs, so the user knows which edit separates the shards.
    std::string what = "their lists of input files differ";
    for (std::size_t i = 0; i < std::min(inputs.size(), these.size()); ++i)
      if (inputs[i] != these[i]) {
        what = fmt::format("{} differs (SHA-256 {}... in the first, {}... in the second)", these[i].file,
                           inputs[i].sha256.substr(0, 12), these[i].sha256.substr(0, 12));
        break;
      }
    throw core::UserError(
        fmt::format("merge: {} and {} were run from different inputs: {}", first->string(), dir.string(), what));
  }
  return inputs;
}

struct MergeArgs {
  std::vector<std::string> dirs;
  std::string out;
};

int run_merge(const MergeArgs& a) {
  std::vector<fs::path> dirs(a.dirs.begin(), a.dirs.end());
  json sweep;
  const auto results = gather(dirs, sweep);
  if (sweep.is_null()) throw core::UserError("merge: no point results in the given folders");
  const auto total = sweep["points"].get<std::size_t>();
  if (results.size() != total) {
    std::vector<std::string> missing;
    std::set<std::size_t> have;
    for (const auto& r : results) have.insert(r.index);
    for (std::size_t i = 0; i < total && missing.size() < 20; ++i)
      if (!have.count(i)) missing.push_back(std::to_string(i));
    throw core::UserError(fmt::format("merge: {} of {} points found; missing {}{}", results.size(), total,
                                      fmt::join(missing, ", "), missing.size() == 20 ? ", ..." : ""));
  }
  analysis::Provenance record = provenance_record({}, {});
  record.inputs = shards_inputs(dirs);  // refused before anything is written
  json merged = json::object();
  analysis::write_fields(merged, record);
  const fs::path out(a.out);
  core::create_folders(out / "points");
  for (const auto& dir : dirs) {
    if (fs::equivalent(dir / "points", out / "points")) continue;  // merging into this folder: its points are there
    for (const auto& entry : fs::directory_iterator(dir / "points"))
      core::write_file_atomic(out / "points" / entry.path().filename(), core::read_own_file(entry.path()));
  }
  write_answers(out, sweep, results, merged);
  return 0;
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* sub = app.add_subcommand("sweep", "run a design-space sweep: one simulation per point, results, Pareto front");
  sub->add_option("sweep", args->file, "sweep YAML (scenarios/sweeps/*.yaml)")->required();
  sub->add_option("-o,--out", args->out, "sweep folder (default: runs/sweep-<sweep file name without .yaml>)");
  sub->add_option("-j,--jobs", args->jobs, "simulations at once (default 1)")->check(CLI::Range(1, 1024));
  sub->add_option("--shard", args->shard, "run only points I, I+N, I+2N...: I/N (default: from SLURM_ARRAY_TASK_ID)");
  set_completion_words(sub->add_option("--emit", args->emit, "write a job script instead of running: slurm"),
                       {"slurm"});
  sub->add_flag("--keep-runs", args->keep_runs, "keep every point's run folder under runs/");
  sub->add_option("--costs-file", args->costs_file,
                  "write the points' CPU costs (per point: the whole, simulating, overhead) to this JSON file")
      ->group("");  // not listed in --help: how `framesim bench` reads the sweep overhead
  return {sub, [args] { return run_sweep(*args); }};
}

Command add_merge_command(CLI::App& app) {
  auto args = std::make_shared<MergeArgs>();
  auto* sub = app.add_subcommand("merge", "gather the shard folders of one sweep into one table and its answers");
  sub->add_option("dirs", args->dirs, "shard folders")->required();
  sub->add_option("-o,--out", args->out, "the merged sweep folder")->required();
  return {sub, [args] { return run_merge(*args); }};
}

}  // namespace framesim::cli
