// framesim: the command-line entry point. Maps user errors to exit code 2 and prints them.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "core/error.hpp"

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
  const std::vector<framesim::cli::Command> commands{framesim::cli::add_run_command(app),
                                                     framesim::cli::add_budget_command(app),
                                                     framesim::cli::add_import_command(app),
                                                     framesim::cli::add_sweep_command(app),
                                                     framesim::cli::add_merge_command(app),
                                                     framesim::cli::add_bench_command(app),
                                                     framesim::cli::add_bench_child_command(app),
                                                     framesim::cli::add_ops_command(app),
                                                     framesim::cli::add_calibrate_command(app),
                                                     framesim::cli::add_validate_command(app),
                                                     framesim::cli::add_compare_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  try {
    for (const auto& command : commands)
      if (command.app->parsed()) return command.run();
  } catch (const framesim::core::UserError& e) {
    for (const auto& d : e.diagnostics()) std::cerr << d.to_string() << "\n";
    return 2;
  } catch (const std::exception& e) {
    // Not the input's fault (a failure while simulating or writing): said plainly, exit code 1.
    std::cerr << "framesim: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
