// `framesim map SCENARIO [--space FILE] [--units STAGE=U,...] ... -o DIR -j N`: which unit each stage runs on,
// split where, in which precision and at which priority, and which clock cap each unit runs under, searched by
// simulation. The static pass
// (map_search.cpp) discards mappings that cannot fit; the mappings the search picks are simulated in batches,
// each batch one `framesim sweep` (its -j, --shard, resume: a batch's finished points are never rerun); the
// answer is the best mapping written as a scenario file (and rerun to check it reproduces), the baselines side
// by side, the Pareto front and report.html.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <set>
#include <thread>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/console.hpp"
#include "cli/map_search.hpp"
#include "config/map_space.hpp"
#include "config/scenario.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "json_text.hpp"
#include "map_report.hpp"
#include "run_summary.hpp"

namespace framesim::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct MapArgs {
  std::string scenario;
  std::string space;
  std::vector<std::string> units, splits, precisions, priorities, clock_caps;
  std::string objective, strategy, duration;
  std::size_t budget = 0;
  std::optional<std::uint64_t> seed;
  std::string out;
  int jobs = 1;
  std::string shard;
  std::string emit;
};

/// STAGE=A,B,C (an option) -> (STAGE, [A, B, C]).
std::pair<std::string, std::vector<std::string>> stage_list(const std::string& option, const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw core::UserError(fmt::format("{}: expected STAGE=VALUE,VALUE..., got \"{}\"", option, text));
  std::vector<std::string> values;
  std::string rest = text.substr(eq + 1);
  for (std::size_t start = 0;;) {
    const auto comma = rest.find(',', start);
    values.push_back(rest.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i].empty()) throw core::UserError(fmt::format("{}: an empty value in \"{}\"", option, text));
    if (std::find(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(i), values[i]) !=
        values.begin() + static_cast<std::ptrdiff_t>(i))
      throw core::UserError(fmt::format("{}: \"{}\" is listed twice in \"{}\"", option, values[i], text));
  }
  return {text.substr(0, eq), values};
}

/// The space: the map file, then the options (a stage's list given as an option replaces the file's).
config::MapSpace space_of(const MapArgs& a) {
  config::MapSpace space;
  if (!a.space.empty()) space = config::load_map_space(a.space);
  auto stage = [&](const std::string& name) -> config::MapStageChoices& {
    for (auto& s : space.stages)
      if (s.stage == name) return s;
    space.stages.push_back({name, {}, {}, {}, {}, {}, {}});
    return space.stages.back();
  };
  for (const auto& t : a.units) {
    auto [name, values] = stage_list("--units", t);
    stage(name).units = values;
  }
  for (const auto& t : a.splits) {
    auto [name, values] = stage_list("--splits", t);
    stage(name).splits = values;
    stage(name).split_origins.clear();  // given as an option: no place in the file
  }
  for (const auto& t : a.precisions) {
    auto [name, values] = stage_list("--precisions", t);
    stage(name).precisions = values;
  }
  for (const auto& t : a.priorities) {
    auto [name, values] = stage_list("--priorities", t);
    auto& s = stage(name);
    s.priorities.clear();
    for (const auto& v : values) {
      int p = 0;
      try {
        std::size_t used = 0;
        p = std::stoi(v, &used);
        if (used != v.size()) throw std::invalid_argument(v);
      } catch (const std::exception&) {
        throw core::UserError(fmt::format("--priorities: \"{}\" is not an integer", v));
      }
      if (std::find(s.priorities.begin(), s.priorities.end(), p) != s.priorities.end())
        throw core::UserError(fmt::format("--priorities: {} is listed twice in \"{}\"", p, t));
      s.priorities.push_back(p);
    }
  }
  for (const auto& t : a.clock_caps) {
    auto [unit_name, values] = stage_list("--clock-caps", t);
    const std::string unit = unit_name;  // clang 14 cannot capture a structured binding in a lambda
    auto it = std::find_if(space.clock_caps.begin(), space.clock_caps.end(),
                           [&](const config::MapClockCaps& c) { return c.unit == unit; });
    if (it == space.clock_caps.end()) it = space.clock_caps.insert(space.clock_caps.end(), {unit, {}, {}, {}});
    it->points = values;
    it->point_origins.clear();  // given as an option: no place in the file
  }
  if (!a.objective.empty()) {
    if (a.objective != "energy" && a.objective != "p99")
      throw core::UserError(fmt::format("--objective: \"{}\" is not one of energy, p99", a.objective));
    space.objective = a.objective;
  }
  if (!a.strategy.empty()) {
    if (a.strategy != "auto" && a.strategy != "exhaustive" && a.strategy != "local" && a.strategy != "genetic")
      throw core::UserError(
          fmt::format("--strategy: \"{}\" is not one of auto, exhaustive, local, genetic", a.strategy));
    space.strategy = a.strategy;
  }
  if (a.budget > 0) space.budget = a.budget;
  if (a.seed) space.seed = *a.seed;
  if (!a.duration.empty()) {
    option_quantity("--duration", a.duration, static_cast<int>(core::Dimension::Seconds));
    space.duration = a.duration;
  }
  if (space.stages.empty() && space.clock_caps.empty())
    throw core::UserError(
        "map: no search space: give --space FILE or --units/--splits/--precisions/--priorities/--clock-caps");
  if (space.name.empty()) space.name = fs::path(a.scenario).stem().string();
  return space;
}

/// What a run's summary.json says about a mapping: per sink its sustained p99, the sustained drops, energy.
Outcome outcome_of(const analysis::RunSummary& summary, const std::vector<std::string>& sinks, double deadline_s) {
  Outcome o;
  const auto& w = summary.sustained;
  o.worst_p99_s = 0;
  for (const auto& s : sinks) {
    const auto st = w.stage_latency_s.find(s);
    const double p99 =
        st != w.stage_latency_s.end() && st->second.p99 ? *st->second.p99 : std::numeric_limits<double>::infinity();
    o.path_p99_s[s] = p99;
    o.worst_p99_s = std::max(o.worst_p99_s, p99);
    if (!(p99 <= deadline_s)) ++o.missing_paths;
  }
  o.dropped = w.misses.dropped;
  if (summary.energy_per_frame_J.mean) o.energy_J = *summary.energy_per_frame_J.mean;
  o.meets = o.worst_p99_s <= deadline_s && o.dropped == 0;
  return o;
}

class Driver {
 public:
  Driver(const MapArgs& a, const config::MapSpace& space, const model::ScenarioSpec& base, const MapSearch& search)
      : a_(a), space_(space), base_(base), search_(search), dir_(out_dir(a)) {
    if (!a.shard.empty()) {
      const auto slash = a.shard.find('/');
      try {
        if (slash == std::string::npos) throw std::invalid_argument(a.shard);
        shard_.index = std::stoul(a.shard.substr(0, slash));
        shard_.count = std::stoul(a.shard.substr(slash + 1));
      } catch (const std::exception&) {
        throw core::UserError(fmt::format("--shard: expected I/N (e.g. 0/4), got \"{}\"", a.shard));
      }
      if (shard_.count == 0 || shard_.index >= shard_.count)
        throw core::UserError(fmt::format("--shard: the index must be below the count, got {}", a.shard));
    }
    for (const auto& s : base.stages) {
      bool feeds = false;
      for (const auto& t : base.stages)
        for (const auto& in : t.inputs) feeds = feeds || (!in.sensor && &base.stages[in.index] == &s);
      if (!feeds) sinks_.push_back(s.name);
    }
  }

  static fs::path out_dir(const MapArgs& a) {
    return a.out.empty() ? fs::path("runs") / ("map-" + fs::path(a.scenario).stem().string()) : fs::path(a.out);
  }
  const fs::path& dir() const { return dir_; }
  std::size_t used() const { return done_.size(); }
  std::size_t left() const { return space_.budget > used() ? space_.budget - used() : 0; }
  bool known(const Mapping& m) const { return done_.count(m) > 0; }
  const Outcome& outcome(const Mapping& m) const { return done_.at(m).first; }
  const std::vector<Mapping>& order() const { return order_; }
  const analysis::RunSummary& summary(const Mapping& m) const { return done_.at(m).second; }
  const fs::path& run_of(const Mapping& m) const { return run_dirs_.at(m); }

  /// Simulates the mappings of `batch` not simulated yet (at most what the budget leaves), as one sweep. The
  /// empty mapping stands for the scenario as written (when the space does not hold it): a batch of its own.
  void evaluate(const std::vector<Mapping>& batch) {
    std::vector<Mapping> todo;
    std::set<Mapping> seen;
    for (auto& m : batch)
      if (!known(m) && seen.insert(m).second && todo.size() < left()) todo.push_back(m);
    if (todo.empty()) return;
    auto overrides = [&](const Mapping& m) {
      if (!m.empty()) return search_.overrides(m);
      // The first stage's own unit again: the file unchanged.
      const auto& s = base_.stages.front();
      const std::string stage = s.part_of.empty() ? s.name : s.part_of;
      return std::vector<config::Override>{{"stages." + stage + ".unit", base_.hardware.units[s.unit].name, {}}};
    };
    const std::size_t number = batches_++;
    const fs::path file = dir_ / "batches" / fmt::format("{:03}.yaml", number);
    const fs::path out = dir_ / "batches" / fmt::format("{:03}", number);
    std::string text = fmt::format(
        "# yaml-language-server: $schema=../../../docs/schema/sweep.schema.json\n"
        "# Batch {} of framesim map {}: the mappings the search picked, one point each.\n"
        "name: map-{}-{:03}\nscenario: {}\nmode: zip\n",
        number, space_.name, space_.name, number, json(fs::absolute(a_.scenario).lexically_normal().string()).dump());
    if (space_.duration) text += fmt::format("duration: {}\n", json(*space_.duration).dump());
    text += "axes:\n";
    const auto paths = overrides(todo.front());
    for (std::size_t k = 0; k < paths.size(); ++k) {
      text += fmt::format("  {}: [", paths[k].path);
      for (std::size_t i = 0; i < todo.size(); ++i) text += (i ? ", " : "") + overrides(todo[i])[k].value_yaml;
      text += "]\n";
    }
    fs::create_directories(file.parent_path());
    core::write_file_atomic(file, text);
    const std::string self = fs::read_symlink("/proc/self/exe").string();
    // With --shard I/N, shard I writes its share of the batch to out/shard-I (as `framesim sweep` shards do) and
    // waits until every other shard has written its own.
    const fs::path mine = shard_.count > 1 ? out / fmt::format("shard-{}", shard_.index) : out;
    std::vector<std::string> args{
        self, "sweep", file.string(), "-o", mine.string(), "-j", std::to_string(a_.jobs), "--keep-runs", "-q"};
    if (shard_.count > 1) args.insert(args.end(), {"--shard", fmt::format("{}/{}", shard_.index, shard_.count)});
    const std::string log = mine.string() + ".log";
    for (bool ran = false;; ran = true) {
      if (!ran) run_child(args, log);
      if (complete(out, todo.size())) break;
      if (shard_.count == 1)
        throw core::UserError(fmt::format("map: batch {} did not finish: {}", file.string(),
                                          fs::exists(log) ? core::read_own_file(log) : std::string()));
      std::this_thread::sleep_for(std::chrono::seconds(2));
    }
    for (std::size_t i = 0; i < todo.size(); ++i) {
      const fs::path run = run_folder(out, i);
      const auto summary = analysis::read_run_summary_file((run / "summary.json").string());
      done_[todo[i]] = {outcome_of(summary, sinks_, base_.deadline_s), summary};
      run_dirs_[todo[i]] = run;
      order_.push_back(todo[i]);
    }
  }

  const std::vector<std::string>& sinks() const { return sinks_; }

 private:
  /// Where point `i` of a batch's sweep keeps its run: its shard's folder when sharded.
  fs::path run_folder(const fs::path& out, std::size_t i) const {
    const fs::path dir = shard_.count > 1 ? out / fmt::format("shard-{}", i % shard_.count) : out;
    return dir / "runs" / fmt::format("{:06}", i);
  }
  bool complete(const fs::path& out, std::size_t points) const {
    for (std::size_t i = 0; i < points; ++i)
      if (!fs::exists(run_folder(out, i) / "summary.json")) return false;
    return true;
  }

  /// Runs `args` with its output in `log` (a batch's sweep prints its own table: the map prints the answer).
  static void run_child(const std::vector<std::string>& args, const std::string& log) {
    const pid_t pid = ::fork();
    if (pid < 0) throw core::UserError("map: cannot fork");
    if (pid == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        ::dup2(fd, STDOUT_FILENO);
        ::dup2(fd, STDERR_FILENO);
      }
      std::vector<char*> argv;
      for (const auto& s : args) argv.push_back(const_cast<char*>(s.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      std::_Exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
  }

  const MapArgs& a_;
  struct {
    std::size_t index = 0, count = 1;
  } shard_;
  const config::MapSpace& space_;
  const model::ScenarioSpec& base_;
  const MapSearch& search_;
  fs::path dir_;
  std::vector<std::string> sinks_;
  std::map<Mapping, std::pair<Outcome, analysis::RunSummary>> done_;
  std::map<Mapping, fs::path> run_dirs_;
  std::vector<Mapping> order_;
  std::size_t batches_ = 0;
};

/// The best of the mappings of the space simulated so far (the scenario as written, when outside it, is not one).
std::optional<Mapping> best_of(const Driver& d, const std::string& objective) {
  std::optional<Mapping> best;
  for (const auto& m : d.order())
    if (!m.empty() && (!best || MapSearch::better(d.outcome(m), d.outcome(*best), objective))) best = m;
  return best;
}

/// Local search: from the best of what is simulated, simulate every statically fitting neighbour not simulated
/// yet (one batch), move to the best if it improves; at a local optimum restart from the best-ranked mapping not
/// simulated, until the budget is spent or no restart is left.
void local_search(Driver& d, const MapSearch& search, const std::vector<Mapping>& ranked,
                  const std::string& objective) {
  std::size_t next_seed = 0;
  std::optional<Mapping> current = best_of(d, objective);
  while (d.left() > 0) {
    if (!current) break;
    std::vector<Mapping> batch;
    for (const auto& n : search.neighbours(*current))
      if (!d.known(n) && search.judge(n).fits) batch.push_back(n);
    std::optional<Mapping> improved;
    if (!batch.empty()) {
      d.evaluate(batch);
      for (const auto& n : batch)
        if (d.known(n) && MapSearch::better(d.outcome(n), d.outcome(*current), objective) &&
            (!improved || MapSearch::better(d.outcome(n), d.outcome(*improved), objective)))
          improved = n;
    }
    if (improved) {
      current = improved;
      continue;
    }
    while (next_seed < ranked.size() && d.known(ranked[next_seed])) ++next_seed;
    if (next_seed >= ranked.size()) break;
    d.evaluate({ranked[next_seed]});
    current = ranked[next_seed];
  }
}

/// --emit slurm: a job array script in the map's folder; every task runs the same (deterministic) search on its
/// shard of each batch, in one shared folder.
void emit_slurm(const MapArgs& a, const fs::path& dir) {
  if (a.space.empty()) throw core::UserError("--emit slurm: give the search space as a file (--space FILE)");
  std::string options = "--space '" + fs::absolute(a.space).string() + "'";
  if (!a.objective.empty()) options += " --objective " + a.objective;
  if (!a.strategy.empty()) options += " --strategy " + a.strategy;
  if (a.budget > 0) options += fmt::format(" --budget {}", a.budget);
  if (a.seed) options += fmt::format(" --seed {}", *a.seed);
  if (!a.duration.empty()) options += " --duration '" + a.duration + "'";
  const int tasks = std::max(1, a.jobs);
  fs::create_directories(dir);
  const fs::path script = dir / "map.sbatch";
  core::write_file_atomic(
      script,
      fmt::format("#!/bin/bash\n# framesim map as a Slurm job array of {} tasks: each runs the same search on its "
                  "share of every batch\n# (DIR/batches/NNN/shard-I), waiting for the others' shares between "
                  "batches. Submit with sbatch {}.\n#SBATCH --job-name=framesim-map\n#SBATCH --array=0-{}\n"
                  "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\ncd '{}'\nexec '{}' map '{}' {} -o '{}' --shard "
                  "${{SLURM_ARRAY_TASK_ID}}/{}\n",
                  tasks, script.string(), tasks - 1, fs::current_path().string(),
                  fs::read_symlink("/proc/self/exe").string(), fs::absolute(a.scenario).string(), options,
                  fs::absolute(dir).string(), tasks));
  std::cout << fmt::format("{}: a job array of {} tasks (-j); submit it with sbatch {}\n", script.string(), tasks,
                           script.string());
}

/// The winner `m` as a scenario file of its own (best.yaml, and best-hardware.yaml when it changes the hardware)
/// into report.best_file; rerun, it must give the same frames and stages byte for byte (report.reproduced).
void write_best(const MapArgs& a, const config::MapSpace& space, const MapSearch& search, const Driver& d,
                const Mapping& m, analysis::MapReport& report) {
  auto overrides = search.overrides(m);
  if (space.duration) overrides.push_back({"duration", json(*space.duration).dump(), {}});
  const fs::path best_file = d.dir() / "best.yaml";
  const auto written = config::scenario_with_overrides(
      a.scenario, overrides, d.dir(),
      {fmt::format("The best mapping framesim map found for {}: {}", a.scenario, search.label(m)),
       "Run it: framesim run " + best_file.string()},
      "best-hardware.yaml");
  if (written.hardware) core::write_file_atomic(d.dir() / "best-hardware.yaml", *written.hardware);
  core::write_file_atomic(best_file, written.scenario);
  report.best_file = best_file.string();
  const fs::path rerun = d.dir() / "best-run";
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string command =
      fmt::format("'{}' run '{}' -o '{}' -q --force > /dev/null", self, best_file.string(), rerun.string());
  if (std::system(command.c_str()) == 0) {
    std::vector<std::string> same, differ;
    for (const char* f : {"frames.csv", "stages.csv"})
      (core::read_own_file(rerun / f) == core::read_own_file(d.run_of(m) / f) ? same : differ).emplace_back(f);
    report.reproduced = differ.empty()
                            ? fmt::format(" (rerun: {} identical byte for byte)", core::join_list(same, ", "))
                            : fmt::format(" (rerun: {} DIFFER)", core::join_list(differ, ", "));
  } else {
    report.reproduced = " (its rerun failed)";
  }
}

/// A mapping's metrics in map.json and mappings.csv: its simulated outcome and its static verdict.
json mapping_metrics(const Outcome& o, const StaticVerdict& v, double deadline_s) {
  json paths = json::object();
  for (const auto& [s, p] : o.path_p99_s) paths[s] = std::isfinite(p) ? json(p) : json(nullptr);
  return {{"p99_s", std::isfinite(o.worst_p99_s) ? json(o.worst_p99_s) : json(nullptr)},
          {"energy_mean_J", std::isfinite(o.energy_J) ? json(o.energy_J) : json(nullptr)},
          {"deadline_s", deadline_s},
          {"meets_deadline", o.meets},
          {"dropped", o.dropped},
          {"path_p99_s", paths},
          {"static",
           {{"max_utilisation", v.max_utilisation},
            {"worst_path_floor_s", v.worst_path_floor_s},
            {"energy_per_frame_J", v.energy_J}}}};
}

int run_map(const MapArgs& a) {
  const config::MapSpace space = space_of(a);
  const model::ScenarioSpec base = config::load_scenario(a.scenario);
  const MapSearch search(a.scenario, base, space);
  if (!a.emit.empty() && a.emit != "slurm")
    throw core::UserError(fmt::format("--emit: \"{}\" is not one of \"slurm\"", a.emit));
  Driver d(a, space, base, search);
  if (a.emit == "slurm") {
    emit_slurm(a, d.dir());
    return 0;
  }

  std::size_t kept = 0;
  const auto ranked = search.ranked(static_cast<std::size_t>(std::min(search.space_size(), 1e6)), kept);
  std::string strategy = space.strategy;
  if (strategy == "auto") strategy = kept <= space.budget ? "exhaustive" : "local";
  print_note(fmt::format("map {}: {} mappings, {} fit statically; {} search, at most {} simulations", space.name,
                         core::format_number(search.space_size(), 6), kept, strategy, space.budget));

  // The baselines first: the user's own choices, everything on the GPU, one network per unit.
  std::vector<std::pair<std::string, Mapping>> baselines;
  if (auto m = search.own()) baselines.emplace_back("your scenario", *m);
  for (const auto& u : base.hardware.units)
    if (u.kind == model::UnitKind::gpu) {
      if (auto m = search.all_on(u.name)) baselines.emplace_back("all on " + u.name, *m);
      break;
    }
  if (auto m = search.one_per_unit()) baselines.emplace_back("one network per unit", *m);
  const bool written_in_space = !baselines.empty() && baselines.front().first == "your scenario";
  if (!written_in_space) d.evaluate({Mapping{}});  // the scenario as written, in a batch of its own
  std::vector<Mapping> first;
  for (const auto& [role, m] : baselines) first.push_back(m);
  if (!written_in_space) baselines.insert(baselines.begin(), {"your scenario", Mapping{}});
  if (strategy == "exhaustive") {
    first.insert(first.end(), ranked.begin(), ranked.end());
    d.evaluate(first);
  } else if (strategy == "genetic") {
    d.evaluate(first);
    GeneticHooks hooks;
    hooks.evaluate = [&](const std::vector<Mapping>& batch) { d.evaluate(batch); };
    hooks.known = [&](const Mapping& m) { return d.known(m); };
    hooks.better = [&](const Mapping& x, const Mapping& y) {
      return MapSearch::better(d.outcome(x), d.outcome(y), space.objective);
    };
    hooks.left = [&] { return d.left(); };
    genetic_search(search, ranked, std::clamp<std::size_t>(space.budget / 4, 2, 16), space.seed, hooks);
  } else {
    for (std::size_t i = 0; i < ranked.size() && i < 2; ++i) first.push_back(ranked[i]);
    d.evaluate(first);
    local_search(d, search, ranked, space.objective);
  }

  // The answer.
  analysis::MapReport report;
  report.title = "map " + space.name;
  report.objective = space.objective;
  report.space_size = search.space_size();
  report.static_kept = kept;
  report.simulations = d.used();
  report.strategy = strategy == "genetic" ? fmt::format("genetic, seed {}", space.seed) : strategy;
  for (const auto& axis : search.axes()) report.stages.push_back(axis.stage);
  const auto best = best_of(d, space.objective);
  for (std::size_t i = 0; i < d.order().size(); ++i) {
    const Mapping& m = d.order()[i];
    analysis::MapRow row;
    row.label = m.empty() ? "the scenario as written" : search.label(m);
    row.run = d.run_of(m).string();
    std::vector<std::string> roles;
    if (best && m == *best) roles.emplace_back("best");
    for (const auto& [role, bm] : baselines)
      if (bm == m) {
        roles.push_back(role);
        report.baselines.emplace_back(role, i);
      }
    row.role = core::join_list(roles, ", ");
    row.result.index = i;
    for (std::size_t k = 0; k < search.axes().size(); ++k)
      row.result.labels.push_back(m.empty() ? "as written" : search.axes()[k].options[m[k]].label);
    row.result.metrics = mapping_metrics(d.outcome(m), m.empty() ? StaticVerdict{} : search.judge(m), base.deadline_s);
    const analysis::RunSummary& summary = d.summary(m);
    row.why = {summary.sustained_tail, summary.slowdown, summary.throttled_fraction};
    if (best && m == *best) report.best = i;
    report.rows.push_back(std::move(row));
  }
  if (report.best) {
    const Mapping& m = *best;
    const analysis::MapRow& winner = report.rows[*report.best];
    // Against everything on the GPU when that is a baseline, else against the first other baseline.
    std::optional<std::size_t> against;
    for (const auto& [role, i] : report.baselines)
      if (i != *report.best && (!against || role.rfind("all on ", 0) == 0)) against = i;
    if (against) {
      analysis::MapRow baseline = report.rows[*against];
      for (const auto& [role, i] : report.baselines)
        if (i == *against && role.rfind("all on ", 0) == 0) baseline.role = role;
      report.why = analysis::why_wins(winner, baseline);
    }
    write_best(a, space, search, d, m, report);
  }
  report.provenance = provenance(base.input_files, {});
  const auto answers = analysis::map_answers(report);
  core::write_file_atomic(d.dir() / "mappings.csv", analysis::map_csv(report));
  core::write_file_atomic(d.dir() / "map.json", analysis::json_text(analysis::map_json(report, answers)) + "\n");
  core::write_file_atomic(d.dir() / "pareto.svg", analysis::sweep_svg(
                                                      report.title,
                                                      [&] {
                                                        std::vector<analysis::SweepResult> r;
                                                        for (const auto& row : report.rows) r.push_back(row.result);
                                                        return r;
                                                      }(),
                                                      answers, report.stages));
  core::write_file_atomic(d.dir() / "report.html", analysis::map_html(report, answers));
  std::cout << analysis::map_text(report, answers);
  std::cout << fmt::format("\nresults: {}/map.json, mappings.csv, pareto.svg, report.html\n", d.dir().string());
  return 0;
}

}  // namespace

Command add_map_command(CLI::App& app) {
  auto args = std::make_shared<MapArgs>();
  auto* sub =
      app.add_subcommand("map",
                         "search which unit, split, precision and priority each stage takes and which clock cap each "
                         "unit, by simulation");
  sub->add_option("scenario", args->scenario, "the scenario YAML")->required();
  sub->add_option("--space", args->space, "the search space (a map file: framesim keys map)");
  sub->add_option("--units", args->units, "STAGE=U1,U2: units a stage may run on (repeatable)");
  sub->add_option("--splits", args->splits, "STAGE=K1,K2: cut points (layer index or name) to try");
  sub->add_option("--precisions", args->precisions, "STAGE=P1,P2: precisions to try");
  sub->add_option("--priorities", args->priorities, "STAGE=N1,N2: priorities to try");
  sub->add_option("--clock-caps", args->clock_caps,
                  "UNIT=P1,P2: clock caps to try (operating points by name or frequency; repeatable)");
  set_completion_words(sub->add_option("--objective", args->objective, "energy (default) or p99"), {"energy", "p99"});
  set_completion_words(sub->add_option("--strategy", args->strategy, "auto (default), exhaustive, local or genetic"),
                       {"auto", "exhaustive", "local", "genetic"});
  sub->add_option("--seed", args->seed, "the genetic search's seed (default 1)")->check(CLI::Range(0.0, 4294967295.0));
  sub->add_option("--budget", args->budget, "simulations at most (default 50)")->check(CLI::Range(1, 10000));
  sub->add_option("--duration", args->duration, "simulated time of every run (default: the scenario's)");
  sub->add_option("-o,--out", args->out, "the map folder (default: runs/map-<scenario name>)");
  sub->add_option("-j,--jobs", args->jobs, "simulations at once (default 1)")->check(CLI::Range(1, 1024));
  sub->add_option("--shard", args->shard, "run only shard I/N of every batch, waiting for the others (Slurm)");
  set_completion_words(sub->add_option("--emit", args->emit, "write a job script instead of running: slurm"),
                       {"slurm"});
  return {sub, [args] { return run_map(*args); }};
}

}  // namespace framesim::cli
