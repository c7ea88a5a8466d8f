// `framesim keys`, `framesim schema` and `framesim init`: the key declarations (config/schema.hpp) as a
// reference, a JSON Schema and a template; and `framesim validate FILE...`, the input check without a run.
#include <filesystem>
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/console.hpp"
#include "cli/key_reference.hpp"
#include "config/hardware.hpp"
#include "config/input_kind.hpp"
#include "config/map_space.hpp"
#include "config/network.hpp"
#include "config/runtime.hpp"
#include "config/scenario.hpp"
#include "config/sweep.hpp"
#include "core/files.hpp"
#include "core/text.hpp"
#include "model/plan.hpp"
#include "model/replay.hpp"

namespace framesim::cli {

namespace fs = std::filesystem;
using config::schema::Table;

namespace {

std::vector<std::string> kind_names() {
  std::vector<std::string> out;
  for (const Table* t : config::schema::file_tables()) out.push_back(t->name);
  return out;
}

/// The table of the kind named on the command line, or a UserError naming the kinds.
const Table& table_named(const std::string& option, const std::string& name) {
  if (const Table* t = config::schema::file_table(name)) return *t;
  std::string message = fmt::format("{}: \"{}\" is not a kind of file; the kinds: {}", option, core::quote_capped(name),
                                    core::join_list(kind_names(), ", "));
  if (auto near = core::closest_match(name, kind_names())) message += fmt::format(" (did you mean \"{}\"?)", *near);
  throw core::UserError(message);
}

std::vector<std::string> split_dots(const std::string& path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    out.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

/// The key `written` names in `table`: a declared pattern ("memory.<level>.bandwidth") or a path as written in
/// a file ("memory.dram.bandwidth"). Otherwise a UserError with the nearest key.
std::pair<const Table*, const config::schema::Key*> find_key(const Table& table, const std::string& written) {
  if (const auto* k = table.find(written)) return {&table, k};
  if (auto m = config::schema::match(table, written)) return {m->table, m->key};
  // A bare name ("capacity") that is declared deeper: where, as `keys` takes it.
  if (written.find('.') == std::string::npos) {
    std::vector<std::string> deeper;
    for (const auto& f : config::schema::flatten(table)) {
      const auto dot = f.path.rfind('.');
      if (dot != std::string::npos && f.path.substr(dot + 1) == written) deeper.push_back(f.path);
    }
    if (!deeper.empty())
      throw core::UserError(fmt::format(
          "the {} keys have no \"{}\" at the top; it is declared at {} (give the whole "
          "path: framesim keys {} {})",
          table.name, core::quote_capped(written), core::join_list(deeper, ", "), table.name, deeper.front()));
  }
  // The longest prefix that is declared, and the keys under it.
  const auto parts = split_dots(written);
  for (std::size_t n = parts.size() - 1; n + 1 > 0; --n) {
    std::string prefix;
    for (std::size_t i = 0; i < n; ++i) prefix += (i ? "." : "") + parts[i];
    const Table* holder = &table;
    std::string pattern;
    if (n > 0) {
      auto m = config::schema::match(table, prefix);
      if (!m) continue;
      holder = m->key->fragment ? m->key->fragment : m->table;
      pattern = m->key->fragment ? "" : m->key->path;
    }
    std::vector<std::string> names;
    for (const auto* c : holder->children(pattern)) {
      if (c->name() == "[]") continue;
      if (!c->named()) names.emplace_back(c->name());
      else if (auto allowed = config::schema::placeholder_names(c->name()))  // "<precision>": the precisions
        names.insert(names.end(), allowed->begin(), allowed->end());
    }
    std::string message = fmt::format("the {} keys have no \"{}\"", table.name, core::quote_capped(written));
    if (pattern == "layers[]") message += " (an op's own parameters: `framesim ops`)";
    if (auto near = core::closest_match(parts[n], names)) {
      message +=
          fmt::format(" (did you mean \"{}\"?)", core::quote_capped((prefix.empty() ? "" : prefix + ".") + *near));
    } else if (!names.empty()) {
      message += fmt::format("; the keys {}: {}", prefix.empty() ? "at the top" : "under " + core::quote_capped(prefix),
                             core::join_list(names, ", "));
    }
    throw core::UserError(message);
  }
  throw core::UserError(fmt::format("the {} keys have no \"{}\"", table.name, core::quote_capped(written)));
}

struct KeysArgs {
  std::string kind;
  std::string key;
  bool markdown = false;
};

int run_keys(const KeysArgs& a) {
  if (a.markdown) {
    if (!a.kind.empty()) throw core::UserError("keys --markdown: prints every kind; give no KIND");
    std::cout << keys_markdown();
    return 0;
  }
  if (a.kind.empty()) {
    std::cout << "The kinds of input file (`framesim keys KIND` lists a kind's keys, `framesim keys KIND KEY` one "
                 "key):\n\n";
    for (const Table* t : config::schema::file_tables()) std::cout << fmt::format("  {:<10} {}\n", t->name, t->title);
    return 0;
  }
  const Table& table = table_named("keys", a.kind);
  if (a.key.empty()) {
    std::cout << keys_text(table);
    return 0;
  }
  const auto [holder, key] = find_key(table, a.key);
  std::cout << key_text(*holder, *key);
  return 0;
}

struct SchemaArgs {
  std::string kind;
};

int run_schema(const SchemaArgs& a) {
  std::cout << json_schema(table_named("schema", a.kind)).dump(2) << "\n";
  return 0;
}

struct InitArgs {
  std::string kind;
  std::string out;
  bool force = false;
};

int run_init(const InitArgs& a) {
  const Table& table = table_named("init", a.kind);
  const std::string text = init_template(table);
  // Printed unless -o names a file: nothing lands in the working directory unasked.
  const fs::path out = fs::path(a.out);
  if (a.out.empty() || a.out == "-") {
    std::cout << text;
    return 0;
  }
  std::error_code ec;
  if (fs::exists(out, ec) && !a.force)
    throw core::UserError(fmt::format("init: {} exists; give --force to replace it, or -o another file", out.string()));
  if (fs::is_directory(out, ec)) throw core::UserError(fmt::format("init: {} is a folder", out.string()));
  core::write_file_atomic(out, text);
  print_note(
      fmt::format("{}: a {} template; `framesim validate {}` checks it", out.string(), table.name, out.string()));
  return 0;
}

/// What a run of scenario `spec` (read from `path`) would warn about its replayed measurements
/// (model::replay_measured: a measured time faster than its kernel's memory bound), without running it.
std::vector<core::Diagnostic> replay_warnings(const model::ScenarioSpec& spec, const fs::path& path) {
  std::vector<core::Diagnostic> out;
  for (const auto& stage : spec.stages) {
    if (stage.measured.empty() || stage.work.kind != model::WorkSpec::Kind::network) continue;
    const auto& net = spec.networks[static_cast<std::size_t>(stage.work.network)].network;
    const auto plan = model::plan_network(net, spec.hardware, stage.unit);
    for (auto& w : model::replay_measured(spec.hardware, stage, net, plan).warnings)
      out.push_back({{path == "-" ? "<stdin>" : path.string()}, "stages." + stage.name + ".measured", std::move(w)});
  }
  return out;
}

/// Checks one file as `kind` (and every file it names); throws UserError with every problem.
void check_file(const fs::path& path, const std::string& kind) {
  if (kind == "hardware") {
    config::load_hardware(path);
  } else if (kind == "network") {
    config::load_network(path);
  } else if (kind == "runtime") {
    config::load_runtime(path);
  } else if (kind == "scenario") {
    const auto spec = config::load_scenario(path);
    auto warnings = spec.warnings;
    for (auto& w : replay_warnings(spec, path)) warnings.push_back(std::move(w));
    report_warnings(warnings, false);
  } else if (kind == "map") {
    config::load_map_space(path);  // its stages are checked against a scenario by `framesim map`
  } else {
    const auto sweep = config::load_sweep(path);
    // Every point's scenario, as `framesim sweep` loads them before it runs anything.
    core::Diagnostics problems;
    std::set<std::string> seen;
    for (const auto& p : config::expand_sweep(sweep)) {
      try {
        config::load_scenario(sweep.scenario, p.overrides);
      } catch (const core::UserError& e) {
        for (const auto& d : e.diagnostics())
          if (seen.insert(d.to_string()).second) problems.add(d);
      }
    }
    problems.throw_if_any();
  }
}

}  // namespace

bool is_input_file(const std::string& argument) {
  if (argument == "-") return true;  // standard input
  const auto ext = fs::path(argument).extension();
  return ext == ".yaml" || ext == ".yml";
}

int check_input_files(const std::vector<std::string>& files, const std::string& kind) {
  if (!kind.empty()) table_named("validate --kind", kind);
  bool failed = false;
  for (const auto& file : files) {
    try {
      const std::string k = kind.empty() ? config::input_kind(file) : kind;
      check_file(file, k);
      std::cout << fmt::format("{}: ok ({})\n", file == "-" ? "<stdin>" : file, k);
    } catch (const core::UserError& e) {
      for (const auto& d : e.diagnostics()) std::cerr << d.to_string() << "\n";
      failed = true;
    }
  }
  return failed ? 2 : 0;
}

Command add_keys_command(CLI::App& app) {
  auto args = std::make_shared<KeysArgs>();
  auto* sub = app.add_subcommand("keys",
                                 "the keys of hardware, network, scenario, sweep and runtime files: unit, range, "
                                 "default, description, example");
  set_completion_words(
      sub->add_option("kind", args->kind, "hardware, network, scenario, sweep, runtime or map (none: list the kinds)"),
      kind_names());
  sub->add_option("key", args->key,
                  "one key in full, as written in a file (memory.dram.bandwidth) or declared "
                  "(memory.<level>.bandwidth)");
  sub->add_flag("--markdown", args->markdown, "print docs/schema.md (every kind) instead");
  return {sub, [args] { return run_keys(*args); }};
}

Command add_schema_command(CLI::App& app) {
  auto args = std::make_shared<SchemaArgs>();
  auto* sub =
      app.add_subcommand("schema", "the JSON Schema of a kind of file, for editors (docs/schema/*.schema.json)");
  set_completion_words(
      sub->add_option("kind", args->kind, "hardware, network, scenario, sweep, runtime or map")->required(),
      kind_names());
  return {sub, [args] { return run_schema(*args); }};
}

Command add_init_command(CLI::App& app) {
  auto args = std::make_shared<InitArgs>();
  auto* sub = app.add_subcommand("init", "write a commented template of a kind of file, every key explained");
  set_completion_words(
      sub->add_option("kind", args->kind, "hardware, network, scenario, sweep, runtime or map")->required(),
      kind_names());
  sub->add_option("-o,--output", args->out,
                  "the file to write (e.g. KIND.yaml: the scenario template names hardware.yaml and the sweep "
                  "template scenario.yaml); without it, or with -, the template is printed");
  sub->add_flag("--force", args->force, "replace the file if it exists");
  return {sub, [args] { return run_init(*args); }};
}

}  // namespace framesim::cli
