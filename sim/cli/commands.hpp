// The framesim subcommands. Each registers its options on the app and returns the function that runs it.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "config/override.hpp"
#include "core/error.hpp"
#include "model/hardware.hpp"
#include "model/network.hpp"
#include "model/precision.hpp"
#include "run_details.hpp"

namespace framesim::cli {

/// A registered subcommand and the function that runs it once its options are parsed.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_budget_command(CLI::App& app);
/// When `budget` was given a hardware file but no network (CLI11 refused the command line): the message that
/// says what is missing with the usage, or names the scenario (or network) given in the hardware's place.
std::optional<std::string> budget_missing_argument(const CLI::App& app);
Command add_ops_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_import_command(CLI::App& app);
Command add_sweep_command(CLI::App& app);
Command add_merge_command(CLI::App& app);
Command add_map_command(CLI::App& app);
Command add_bench_command(CLI::App& app);
Command add_bench_child_command(CLI::App& app);
Command add_calibrate_command(CLI::App& app);
Command add_validate_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_keys_command(CLI::App& app);
Command add_schema_command(CLI::App& app);
Command add_init_command(CLI::App& app);

/// `framesim validate FILE...`: checks each input file (its kind from its top-level keys, or `kind`) and every
/// file it names, without running anything; prints "FILE: ok (KIND)" or every problem. Returns 0 or 2.
int check_input_files(const std::vector<std::string>& files, const std::string& kind);
/// True for an argument `validate` checks as an input file (.yaml, .yml) rather than a measurement suite.
bool is_input_file(const std::string& argument);

/// Remembers the command line framesim was started with (argv[0] recorded as "framesim"); main calls it once.
void set_command_line(int argc, char** argv);

/// Where a run or sweep came from: framesim's version, the command line (the output folder written as <out>),
/// the resolved --set overrides, and the size and SHA-256 of every input file that exists.
analysis::Provenance provenance_record(const std::vector<std::string>& files,
                                       const std::vector<config::Override>& overrides);
/// provenance_record as JSON (a sweep's and a map's results).
nlohmann::json provenance(const std::vector<std::string>& files, const std::vector<config::Override>& overrides);

/// Prints `warnings` on stderr ("file:line:col: key: warning: ..."), or with `strict` throws them as a UserError.
void report_warnings(const std::vector<core::Diagnostic>& warnings, bool strict);

/// "NAME=1x3x224x224" (an --input option) -> (NAME, shape), or throws UserError.
std::pair<std::string, std::vector<std::int64_t>> parse_input(const std::string& text);

/// Parses a quantity given on the command line, or throws UserError naming the option.
double option_quantity(const std::string& option, const std::string& text, int dimension);

/// --precision: the precision every layer is to run at, or throws UserError listing the precisions.
model::LayerPrecision option_precision(const std::string& text);

/// --unit: the index in `hw` of the unit named `wanted` or, when `wanted` is empty, of the first unit with a roof
/// for every precision the networks compute in (else the first unit). Throws UserError when there is no such unit,
/// or when a network computes in a precision the unit has no roof for (the first such network).
std::size_t option_unit(const model::HardwareSpec& hw, const std::vector<const model::NetworkSpec*>& networks,
                        const std::string& wanted);

/// What --measured (and calibrate's MEASURED) accepts: every format trace::read_measured_trace tells apart.
std::string measured_formats_help();

/// --operating-point: the index of the operating point named `text` in `unit`, or throws UserError listing them.
std::size_t option_operating_point(const model::ComputeUnitSpec& unit, const std::string& text);

}  // namespace framesim::cli
