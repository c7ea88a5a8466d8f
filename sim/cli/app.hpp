// What every framesim command shares: -q / -v, a did-you-mean for a misspelt command or option, and the
// documents generated from the command-line definition itself (bash completion, the man page), so that they
// list exactly the commands and options that exist.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/console.hpp"

namespace framesim::cli {

/// Adds -q/--quiet and -v/--verbose to `app` and to every subcommand registered so far (call it last); main
/// reads them with parsed_verbosity().
void add_verbosity_flags(CLI::App& app);
/// The verbosity the parsed command line asks for.
Verbosity parsed_verbosity();

/// The subcommands a user sees (the internal ones, in the group "", left out), in the order registered.
std::vector<const CLI::App*> visible_commands(const CLI::App& app);

/// When `args` (argv without argv[0]) name a command that does not exist, or give a command an option it does
/// not have, the message saying so, with the closest name when one is close enough: `framesim: unknown command
/// "rnu" (did you mean "run"?)`, `framesim run: unknown option "--durration" (did you mean "--duration"?)`.
std::optional<std::string> typo_message(const CLI::App& app, const std::vector<std::string>& args);

/// The words bash completion offers for `option`'s value (a positional or an option taking a value), e.g. the
/// kinds of file for `keys KIND`; without any, it offers file names.
void set_completion_words(const CLI::Option* option, std::vector<std::string> words);

/// The bash completion script of `app`: its commands, each command's options, the words set for an argument or
/// an option's value (set_completion_words), file names for the rest.
std::string bash_completion(const CLI::App& app);
/// The man page of `app` (roff, section 1): every command with its arguments and options, the exit codes.
std::string man_page(const CLI::App& app);

/// `framesim completion bash` and `framesim manpage`: print the two documents above.
Command add_completion_command(CLI::App& app);
Command add_manpage_command(CLI::App& app);

}  // namespace framesim::cli
