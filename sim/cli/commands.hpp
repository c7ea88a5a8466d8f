// The framesim subcommands. Each registers its options on the app and returns the function that runs it.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace framesim::cli {

/// A registered subcommand and the function that runs it once its options are parsed.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_budget_command(CLI::App& app);
Command add_ops_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_import_command(CLI::App& app);
Command add_sweep_command(CLI::App& app);
Command add_merge_command(CLI::App& app);
Command add_bench_command(CLI::App& app);
Command add_bench_child_command(CLI::App& app);
Command add_calibrate_command(CLI::App& app);

/// "NAME=1x3x224x224" (an --input option) -> (NAME, shape), or throws UserError.
std::pair<std::string, std::vector<std::int64_t>> parse_input(const std::string& text);

/// Parses a quantity given on the command line, or throws UserError naming the option.
double option_quantity(const std::string& option, const std::string& text, int dimension);

}  // namespace framesim::cli
