#include "cli/app.hpp"

#include <algorithm>
#include <cctype>
#include <iostream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "cli/console.hpp"
#include "core/text.hpp"

namespace framesim::cli {

namespace {

int g_quiet = 0;    // how many times -q was given (on framesim or on its command)
int g_verbose = 0;  // the same for -v

std::string upper(std::string text) {
  for (char& c : text) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

/// Every spelling of an option with its dashes: {"-o", "--out"}; empty for a positional argument.
std::vector<std::string> spellings(const CLI::Option& option) {
  std::vector<std::string> out;
  for (const auto& s : option.get_snames()) out.push_back("-" + s);
  for (const auto& l : option.get_lnames()) out.push_back("--" + l);
  return out;
}

bool takes_value(const CLI::Option& option) { return option.get_expected_max() > 0; }
bool repeatable(const CLI::Option& option) { return option.get_items_expected_max() > 1; }

/// The placeholder of an option's value or of a positional argument: --duration -> DURATION, scenario -> SCENARIO.
std::string placeholder(const CLI::Option& option) {
  if (!option.get_lnames().empty()) return upper(option.get_lnames().front());
  if (!option.get_snames().empty()) return upper(option.get_snames().front());
  return upper(option.get_name());
}

/// The options a user gives by name (help first), and the positional arguments, of one command.
struct CommandOptions {
  std::vector<const CLI::Option*> named, positional;
};
CommandOptions options_of(const CLI::App& command) {
  CommandOptions out;
  for (const CLI::Option* o : command.get_options()) {
    if (o->get_group().empty()) continue;  // hidden
    (o->nonpositional() ? out.named : out.positional).push_back(o);
  }
  return out;
}

bool starts_with(const std::string& text, std::string_view prefix) { return text.rfind(prefix, 0) == 0; }

}  // namespace

void add_verbosity_flags(CLI::App& app) {
  auto add = [](CLI::App& to) {
    to.add_flag("-q,--quiet", g_quiet, "only errors and the final result: no progress, notes or warnings");
    to.add_flag("-v,--verbose", g_verbose, "every warning (not only the first ten), and timings on stderr");
  };
  add(app);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) add(*sub);
}

Verbosity parsed_verbosity() {
  if (g_quiet > 0) return Verbosity::quiet;
  return g_verbose > 0 ? Verbosity::verbose : Verbosity::normal;
}

std::vector<const CLI::App*> visible_commands(const CLI::App& app) {
  std::vector<const CLI::App*> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }))
    out.push_back(sub);
  return out;
}

std::optional<std::string> typo_message(const CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> names;
  for (const CLI::App* sub : visible_commands(app)) names.push_back(sub->get_name());
  // The command: the first word that is not an option (framesim's own options are all flags).
  const CLI::App* command = nullptr;
  std::size_t i = 0;
  for (; i < args.size() && args[i] != "--"; ++i) {
    if (starts_with(args[i], "-")) continue;
    try {
      command = app.get_subcommand(args[i]);
    } catch (const CLI::OptionNotFound&) {
    }
    if (command) break;
    if (auto near = core::closest_match(args[i], names))
      return fmt::format("framesim: unknown command \"{}\" (did you mean \"{}\"?)", args[i], *near);
    return fmt::format("framesim: unknown command \"{}\"; the commands: {}", args[i], core::join_list(names, ", "));
  }
  if (!command) return std::nullopt;
  std::set<std::string> known;
  std::set<char> short_flags;
  for (const CLI::App* scope : {&app, command}) {
    for (const CLI::Option* o : scope->get_options()) {
      for (const auto& s : spellings(*o)) known.insert(s);
      if (!takes_value(*o))
        for (const auto& s : o->get_snames()) short_flags.insert(s.front());
    }
  }
  std::vector<std::string> long_names;
  for (const CLI::Option* o : command->get_options())
    for (const auto& s : spellings(*o))
      if (starts_with(s, "--")) long_names.push_back(s);
  for (++i; i < args.size() && args[i] != "--"; ++i) {
    const std::string& a = args[i];
    // Not an option: a value, a negative number ("-5"), a lone "-".
    if (a.size() < 2 || a[0] != '-' || std::isdigit(static_cast<unsigned char>(a[1])) || a[1] == '.') continue;
    const std::string name = a.substr(0, a.find('='));
    if (known.count(name)) continue;
    if (a[1] != '-' && std::all_of(a.begin() + 1, a.end(), [&](char c) { return short_flags.count(c) > 0; }))
      continue;  // several short flags together: -qv
    const std::string where = "framesim " + command->get_name();
    if (auto near = core::closest_match(name, long_names))
      return fmt::format("{}: unknown option \"{}\" (did you mean \"{}\"?)", where, name, *near);
    return fmt::format("{}: unknown option \"{}\"; `{} --help` lists its options", where, name, where);
  }
  return std::nullopt;
}

namespace {

std::map<const CLI::Option*, std::vector<std::string>>& completion_words() {
  static std::map<const CLI::Option*, std::vector<std::string>> words;
  return words;
}

}  // namespace

void set_completion_words(const CLI::Option* option, std::vector<std::string> words) {
  completion_words()[option] = std::move(words);
}

std::string bash_completion(const CLI::App& app) {
  const auto commands = visible_commands(app);
  // "COMMAND OPTION" (an option's value) and "COMMAND N" (the N-th positional, from 0) -> the words offered.
  std::string word_cases;
  for (const CLI::App* c : commands) {
    const auto opts = options_of(*c);
    for (const CLI::Option* o : opts.named) {
      const auto w = completion_words().find(o);
      if (w == completion_words().end()) continue;
      for (const auto& s : spellings(*o))
        word_cases +=
            fmt::format("    \"{} {}\") words=\"{}\" ;;\n", c->get_name(), s, core::join_list(w->second, " "));
    }
    for (std::size_t i = 0; i < opts.positional.size(); ++i) {
      const auto w = completion_words().find(opts.positional[i]);
      if (w != completion_words().end())
        word_cases +=
            fmt::format("    \"{} {}\") words=\"{}\" ;;\n", c->get_name(), i, core::join_list(w->second, " "));
    }
  }
  std::vector<std::string> command_names, global;
  for (const CLI::App* c : commands) command_names.push_back(c->get_name());
  for (const CLI::Option* o : options_of(app).named)
    for (const auto& s : spellings(*o)) global.push_back(s);
  std::string cases, names_pattern;
  for (const CLI::App* c : commands) {
    std::vector<std::string> all, valued;
    for (const CLI::Option* o : options_of(*c).named) {
      for (const auto& s : spellings(*o)) {
        all.push_back(s);
        if (takes_value(*o)) valued.push_back(s);
      }
    }
    cases += fmt::format("    {})\n      opts=\"{}\"\n      valued=\"{}\"\n      ;;\n", c->get_name(),
                         core::join_list(all, " "), core::join_list(valued, " "));
  }
  return fmt::format(
      R"(# bash completion for framesim, generated from its command-line definition by `framesim completion bash`.
# Use: source <(framesim completion bash), or save it as ~/.local/share/bash-completion/completions/framesim.
_framesim() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
  local commands="{commands}"
  local command="" at=0 i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case " $commands " in
      *" ${{COMP_WORDS[i]}} "*) command="${{COMP_WORDS[i]}}"; at=$i; break ;;
    esac
  done
  if [[ -z "$command" ]]; then
    if [[ "$cur" == -* ]]; then
      COMPREPLY=($(compgen -W "{global}" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    fi
    return
  fi
  local opts="" valued=""
  case "$command" in
{cases}  esac
  # Which positional the word being completed is: the words after the command that are neither options nor
  # an option's value.
  local positional=0 skip=0
  for ((i = at + 1; i < COMP_CWORD; i++)); do
    if ((skip)); then skip=0; continue; fi
    if [[ " $valued " == *" ${{COMP_WORDS[i]}} "* ]]; then skip=1
    elif [[ "${{COMP_WORDS[i]}}" != -* ]]; then ((positional++)); fi
  done
  local words="" key="$command $positional"
  [[ " $valued " == *" $prev "* ]] && key="$command $prev"
  case "$key" in
{word_cases}  esac
  if [[ -n "$words" && "$cur" != -* ]]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  elif [[ " $valued " == *" $prev "* ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  elif [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}}
complete -o filenames -o bashdefault -F _framesim framesim
)",
      fmt::arg("commands", core::join_list(command_names, " ")), fmt::arg("global", core::join_list(global, " ")),
      fmt::arg("cases", cases), fmt::arg("word_cases", word_cases));
}

namespace {

/// `text` safe in a roff line: backslashes and hyphens escaped, a leading control character neutralised.
std::string roff(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
  }
  if (!out.empty() && (out.front() == '.' || out.front() == '\'')) out = "\\&" + out;
  return out;
}

std::string roff_option(const CLI::Option& o) {
  std::vector<std::string> parts;
  for (const auto& s : spellings(o)) parts.push_back("\\fB" + roff(s) + "\\fR");
  std::string out = core::join_list(parts, ", ");
  if (takes_value(o)) out += " \\fI" + placeholder(o) + "\\fR";
  if (repeatable(o)) out += " ...";
  return out;
}

std::string roff_options(const std::vector<const CLI::Option*>& options) {
  std::string out;
  for (const CLI::Option* o : options) out += ".TP\n" + roff_option(*o) + "\n" + roff(o->get_description()) + "\n";
  return out;
}

}  // namespace

std::string man_page(const CLI::App& app) {
  std::string out = fmt::format(".TH FRAMESIM 1 \"\" \"framesim {}\" \"User Commands\"\n", FRAMESIM_VERSION);
  out += ".SH NAME\nframesim \\- " + roff(app.get_description().substr(app.get_description().find(':') + 2)) + "\n";
  out +=
      ".SH SYNOPSIS\n.B framesim\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGUMENTS\\fR]\n.br\n.B framesim\n"
      "\\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR\n";
  out +=
      ".SH DESCRIPTION\nframesim answers before the hardware exists: a static roofline budget "
      "(\\fBframesim budget\\fR) and a trace\\-driven discrete\\-event simulation on SimGrid "
      "(\\fBframesim run\\fR). Quantities are written with units (\"50 GB/s\", \"12 ms\", \"4 TOPS\").\n";
  out += ".SH OPTIONS OF EVERY COMMAND\n";
  std::vector<const CLI::Option*> common;
  for (const CLI::Option* o : options_of(app).named)
    if (o->get_name() != "--version") common.push_back(o);
  out += roff_options(common);
  out += ".SH COMMANDS\n";
  for (const CLI::App* c : visible_commands(app)) {
    const auto opts = options_of(*c);
    std::string synopsis = "framesim " + c->get_name();
    for (const CLI::Option* p : opts.positional) {
      std::string arg = placeholder(*p) + (repeatable(*p) ? " ..." : "");
      synopsis += " " + (p->get_required() ? arg : "[" + arg + "]");
    }
    out += ".SS \"" + roff(synopsis) + "\"\n" + roff(c->get_description()) + "\n";
    std::vector<const CLI::Option*> own;
    for (const CLI::Option* o : opts.positional) own.push_back(o);
    for (const CLI::Option* o : opts.named) {
      const auto s = spellings(*o);
      const bool shared =
          std::any_of(common.begin(), common.end(), [&](const CLI::Option* g) { return spellings(*g) == s; });
      if (!shared) own.push_back(o);
    }
    for (const CLI::Option* o : own) {
      out += ".TP\n";
      out += o->nonpositional() ? roff_option(*o) : "\\fI" + placeholder(*o) + "\\fR" + (repeatable(*o) ? " ..." : "");
      out += "\n" + roff(o->get_description()) + "\n";
    }
  }
  out += R"(.SH EXIT STATUS
.TP
.B 0
success
.TP
.B 1
a failure that is not the input's fault (while simulating or writing); the message says what
.TP
.B 2
bad input or a bad command line: one line per problem naming the file, line, column and key (or the option); nothing is written
.TP
.B 3
\fBrun \-\-wall\-limit\fR reached; nothing is written
.TP
.B 128+N
stopped by signal N (SIGINT 130, SIGTERM 143); the temporary output is removed first
.SH FILES
A run writes its folder (default \fIruns/<scenario file name>\fR) through a temporary \fI<folder>.tmp\-<pid>\fR
swapped in when complete; \fI.framesim\-files\fR in it lists what framesim wrote there.
.SH SEE ALSO
README.md, scenarios/README.md, hardware/README.md and traces/README.md in the framesim source tree.
)";
  return out;
}

Command add_completion_command(CLI::App& app) {
  auto shell = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("completion", "print the shell completion script: source <(framesim completion bash)");
  set_completion_words(sub->add_option("shell", *shell, "the shell (bash)")->required()->check(CLI::IsMember({"bash"})),
                       {"bash"});
  return {sub, [&app, shell] {  // `shell` lives as long as the option that writes it
            std::cout << bash_completion(app);
            return 0;
          }};
}

Command add_manpage_command(CLI::App& app) {
  auto* sub =
      app.add_subcommand("manpage", "print the man page (roff): framesim manpage > framesim.1; man -l framesim.1");
  return {sub, [&app] {
            std::cout << man_page(app);
            return 0;
          }};
}

}  // namespace framesim::cli
