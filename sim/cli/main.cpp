// framesim: the command-line entry point. Maps user errors to exit code 2 and prints them.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/console.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

int main(int argc, char** argv) {
  // An uncaught exception is a framesim bug: remove what is half-written, then abort as usual.
  static const std::terminate_handler previous = std::set_terminate([] {
    framesim::core::run_internal_error_cleanup();
    if (previous) previous();
    std::abort();
  });
  CLI::App app{"framesim: will this perception pipeline meet its frame budget on this SoC?"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "framesim " FRAMESIM_VERSION);
  framesim::cli::set_command_line(argc, argv);
  std::vector<framesim::cli::Command> commands{
      framesim::cli::add_run_command(app),      framesim::cli::add_budget_command(app),
      framesim::cli::add_import_command(app),   framesim::cli::add_sweep_command(app),
      framesim::cli::add_merge_command(app),    framesim::cli::add_map_command(app),
      framesim::cli::add_bench_command(app),    framesim::cli::add_bench_child_command(app),
      framesim::cli::add_ops_command(app),      framesim::cli::add_calibrate_command(app),
      framesim::cli::add_validate_command(app), framesim::cli::add_compare_command(app),
      framesim::cli::add_keys_command(app),     framesim::cli::add_schema_command(app),
      framesim::cli::add_init_command(app)};
  // Last: they describe every command registered above, and -q/-v go on each.
  commands.push_back(framesim::cli::add_completion_command(app));
  commands.push_back(framesim::cli::add_manpage_command(app));
  framesim::cli::add_verbosity_flags(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A misspelt command or option gets its did-you-mean; anything else CLI11's own message.
    if (auto typo = framesim::cli::typo_message(app, std::vector<std::string>(argv + 1, argv + argc))) {
      std::cerr << *typo << "\n";
      return 2;
    }
    if (auto missing = framesim::cli::budget_missing_argument(app);
        missing && dynamic_cast<const CLI::RequiredError*>(&e)) {
      std::cerr << *missing << "\n";
      return 2;
    }
    // Within a command, the message names it ("framesim run: scenario is required") and where its help is.
    for (const auto* sub : app.get_subcommands(nullptr))
      if (sub->parsed()) {
        std::cerr << fmt::format("framesim {}: {}\nRun `framesim {} --help` for its arguments.\n", sub->get_name(),
                                 e.what(), sub->get_name());
        return 2;
      }
    app.exit(e);
    return 2;
  }
  // An empty value (`--duration ''`, `-o ''`) would silently mean the option's default: refused.
  for (const CLI::App* sub : app.get_subcommands())
    for (const CLI::Option* opt : sub->get_options()) {
      if (opt->count() == 0 || opt->get_expected_min() == 0) continue;
      const auto& results = opt->results();
      if (std::any_of(results.begin(), results.end(), [](const std::string& r) { return r.empty(); })) {
        std::cerr << fmt::format("{}: the value is empty; give one, or leave the {} out\n",
                                 opt->get_positional() ? opt->get_name(true) : opt->get_name(),
                                 opt->get_positional() ? "argument" : "option");
        return 2;
      }
    }
  framesim::cli::set_verbosity(framesim::cli::parsed_verbosity());
  const auto wall_start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  try {
    for (const auto& command : commands) {
      if (!command.app->parsed()) continue;
      const int code = command.run();
      if (framesim::cli::is_verbose()) {
        const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
        const double cpu_s = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
        std::cerr << fmt::format("framesim {}: {} wall, {} CPU\n", command.app->get_name(),
                                 framesim::core::format_seconds(wall_s), framesim::core::format_seconds(cpu_s));
      }
      return code;
    }
  } catch (const framesim::core::UserError& e) {
    for (const auto& d : e.diagnostics()) std::cerr << d.to_string() << "\n";
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    // A file framesim could not read or write (read-only folder, full disk, a file in the way): the path and the
    // system's reason, and exit code 2 as for any input the user can fix.
    std::string paths = e.path1().string();
    if (!e.path2().empty()) paths += " -> " + e.path2().string();
    std::cerr << fmt::format("{}: {}\n", paths.empty() ? std::string("framesim") : paths, e.code().message());
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "framesim: out of memory: the input asks for more than this machine has\n";
    return 2;
  } catch (const std::exception& e) {
    // Not the input's fault (a failure while simulating or writing): said plainly, exit code 1.
    std::cerr << "framesim: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
