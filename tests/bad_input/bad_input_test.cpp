// The bad-input gallery: every file in tests/bad_input/cases/ is one test (see README.md there).
// Each case runs the framesim binary on a deliberately wrong input and checks the project's rule for
// bad input: exit code 2, a clear message naming file, line, column and key (the `# expect:` lines),
// nothing on stdout, nothing half-written (the --svg file is never created; `run` leaves neither its run
// folder nor its <out>.tmp-* folder behind), and never a crash.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "test_paths.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = FRAMESIM_SOURCE_DIR;
const fs::path kCases = kRoot / "tests" / "bad_input" / "cases";

/// Case file names, sorted, so that test names and order are stable.
std::vector<std::string> case_files() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kCases, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || name.empty() || name.front() == '.') continue;
    out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// A gtest-safe name made from the file name: hw_bandwidth_missing_unit.yaml -> hw_bandwidth_missing_unit_yaml.
std::string test_name(const std::string& file) {
  std::string out = file;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return out;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size()))
    text.replace(pos, from.size(), to);
  return text;
}

/// The leading block of '#' lines: `# command:`, `# expect:` (one or more), optional `# expect-lines:`.
struct Header {
  std::string command;
  std::vector<std::string> expect;
  std::optional<int> expect_lines;
  std::vector<std::string> problems;  // malformed header lines: a broken case must fail, not pass quietly
};

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

Header read_header(const std::string& text, const std::string& relative) {
  Header h;
  for (const std::string& line : split_lines(text)) {
    if (!starts_with(line, "#")) break;
    if (starts_with(line, "# command: ")) {
      if (!h.command.empty()) h.problems.push_back("more than one `# command:` line");
      h.command = replace_all(line.substr(std::strlen("# command: ")), "{file}", relative);
    } else if (starts_with(line, "# expect: ")) {
      h.expect.push_back(replace_all(line.substr(std::strlen("# expect: ")), "{file}", relative));
    } else if (starts_with(line, "# expect-lines: ")) {
      try {
        h.expect_lines = std::stoi(line.substr(std::strlen("# expect-lines: ")));
      } catch (const std::exception&) {
        h.problems.push_back("`# expect-lines:` needs a number: " + line);
      }
    } else if (starts_with(line, "# command") || starts_with(line, "# expect")) {
      h.problems.push_back("malformed header line (write `# command: ...` or `# expect: ...`): " + line);
    }
  }
  if (h.command.empty()) h.problems.push_back("no `# command:` line");
  if (h.expect.empty()) h.problems.push_back("no `# expect:` line");
  return h;
}

std::vector<std::string> split_words(const std::string& command) {
  std::vector<std::string> words;
  std::istringstream in(command);
  std::string word;
  while (in >> word) words.push_back(word == "''" ? std::string() : word);  // '' is an empty argument
  return words;
}

struct RunResult {
  bool exited = false;
  int exit_code = -1;
  int signal = 0;
  bool hung = false;
  std::string out;
  std::string err;
};

/// Runs framesim with `args` in the repository root; stdout and stderr go to files in `capture`.
RunResult run_framesim(const std::vector<std::string>& args, const fs::path& capture) {
  const fs::path out_path = capture / "stdout.txt";
  const fs::path err_path = capture / "stderr.txt";
  std::vector<std::string> storage;
  storage.push_back(FRAMESIM_BINARY);
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);

  RunResult r;
  const pid_t pid = ::fork();
  if (pid < 0) {
    r.err = std::string("fork failed: ") + std::strerror(errno);
    return r;
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls from here to exec.
    const int in_fd = ::open("/dev/null", O_RDONLY);
    const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in_fd < 0 || out_fd < 0 || err_fd < 0 || ::dup2(in_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 ||
        ::dup2(err_fd, 2) < 0 || ::chdir(kRoot.c_str()) != 0)
      ::_exit(126);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  // A hang is a failure too: the child is killed after kHangSeconds.
  constexpr int kHangSeconds = 30;
  int status = 0;
  for (int waited_ms = 0;; waited_ms += 10) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (waited_ms >= kHangSeconds * 1000) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      r.hung = true;
      break;
    }
    ::usleep(10000);
  }
  if (WIFEXITED(status)) {
    r.exited = true;
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  r.out = read_text(out_path);
  r.err = read_text(err_path);
  return r;
}

class BadInput : public ::testing::TestWithParam<std::string> {};

/// A case's private scratch folder: `capture` holds stdout/stderr, `written` is where the SVG or run folder would
/// go.
struct Scratch {
  fs::path dir, capture, written;
};

Scratch make_scratch(const std::string& file) {
  Scratch s;
  s.dir = fs::temp_directory_path() / ("framesim_bad_input_" + std::to_string(::getpid()) + "_" + test_name(file));
  s.capture = s.dir / "capture";
  s.written = s.dir / "written";
  fs::remove_all(s.dir);
  fs::create_directories(s.capture);
  fs::create_directories(s.written);
  return s;
}

/// The case's command as it is run, and what it must not leave behind.
struct Invocation {
  std::vector<std::string> args;
  fs::path svg;                       // budget: its --svg file
  fs::path run_out;                   // run: its -o folder when the case gives none
  std::vector<fs::path> run_targets;  // folders a `run` must not have created
  std::vector<bool> existed_before;   // per run target: there before the run (a case may point -o at one)
};

/// `args` with the outputs pointed into `written`: budget's --svg file; run's folder, which it writes through a
/// temporary folder beside it (<out>.tmp-<pid>), unless the case is about -o itself; run is quiet.
Invocation invocation(std::vector<std::string> args, const fs::path& written) {
  Invocation v;
  v.svg = written / "out.svg";
  v.run_out = written / "out";
  if (args.front() == "budget") {
    args.push_back("--svg");
    args.push_back(v.svg.string());
  }
  if (args.front() == "run") {
    const auto given = std::find_if(args.begin(), args.end(), [](const std::string& a) {
      return a == "-o" || a == "--out" || starts_with(a, "--out=");
    });
    if (given == args.end()) {
      args.push_back("-o");
      args.push_back(v.run_out.string());
      v.run_targets.push_back(v.run_out);
    } else if (starts_with(*given, "--out=")) {
      v.run_targets.push_back(kRoot / given->substr(std::strlen("--out=")));
    } else if (given + 1 != args.end()) {
      v.run_targets.push_back(kRoot / *(given + 1));
    }
    if (std::find(args.begin(), args.end(), "-q") == args.end() &&
        std::find(args.begin(), args.end(), "--quiet") == args.end())
      args.push_back("-q");
  }
  v.args = std::move(args);
  // What exists before the run (a case may point -o at an existing file or folder on purpose).
  for (const auto& t : v.run_targets) v.existed_before.push_back(fs::exists(fs::symlink_status(t)));
  return v;
}

/// The <target>.tmp-* folders beside a run target.
std::vector<fs::path> leftover_tmp(const fs::path& target) {
  std::vector<fs::path> out;
  std::error_code ec;
  const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const std::string prefix = target.filename().string() + ".tmp-";
  for (const auto& entry : fs::directory_iterator(parent, ec))
    if (starts_with(entry.path().filename().string(), prefix)) out.push_back(entry.path());
  return out;
}

/// Exit code 2: never a crash, never success.
void check_exit(const RunResult& r, std::vector<std::string>& problems) {
  if (r.hung) problems.push_back("framesim did not finish within 30 s on bad input: a hang");
  else if (!r.exited)
    problems.push_back("framesim was killed by signal " + std::to_string(r.signal) + " (" + strsignal(r.signal) +
                       "): a crash on bad input");
  else if (r.exit_code != 2)
    problems.push_back("exit code " + std::to_string(r.exit_code) + ", expected 2 for bad input");
}

/// Every expected message, verbatim, as a whole line of stderr; exactly `# expect-lines:` lines when given;
/// nothing on stdout (no report printed for an input that was rejected).
void check_messages(const Header& header, const RunResult& r, std::vector<std::string>& problems) {
  const std::vector<std::string> err_lines = split_lines(r.err);
  for (const auto& want : header.expect)
    if (std::find(err_lines.begin(), err_lines.end(), want) == err_lines.end())
      problems.push_back("missing line on stderr:\n      " + want);
  if (header.expect_lines && static_cast<int>(err_lines.size()) != *header.expect_lines)
    problems.push_back("expected exactly " + std::to_string(*header.expect_lines) + " line(s) on stderr, got " +
                       std::to_string(err_lines.size()) + " (one report per mistake)");
  if (!r.out.empty()) problems.push_back("stdout is not empty (" + std::to_string(r.out.size()) + " bytes)");
}

/// Nothing half-written: neither the SVG nor a temporary file next to it; no run folder where -o pointed (unless
/// it was there before) and no <out>.tmp-* folder beside it. Leftovers outside the scratch folder are removed
/// after being reported.
void check_nothing_written(const Invocation& v, const fs::path& written, std::vector<std::string>& problems) {
  if (fs::exists(v.svg)) problems.push_back("the SVG was written although the input is bad");
  for (const auto& entry : fs::directory_iterator(written))
    if (entry.path() != v.svg && entry.path() != v.run_out &&
        !starts_with(entry.path().filename().string(), "out.tmp-"))
      problems.push_back("file left behind: " + entry.path().filename().string());
  for (std::size_t i = 0; i < v.run_targets.size(); ++i) {
    const fs::path& t = v.run_targets[i];
    if (!v.existed_before[i] && fs::exists(fs::symlink_status(t))) {
      problems.push_back("the run folder " + t.string() + " was written although the input is bad");
      if (t != v.run_out) fs::remove_all(t);
    }
    for (const auto& tmp : leftover_tmp(t)) {
      problems.push_back("temporary run folder left behind: " + tmp.string());
      std::error_code ignored;
      fs::remove_all(tmp, ignored);
    }
  }
}

/// No crash text, even when the exit code happens to be 2 ("terminate called", not "terminate": an
/// "unterminated quoted field" is a fine message).
void check_no_crash_text(const RunResult& r, std::vector<std::string>& problems) {
  for (const char* bad : {"internal error", "terminate called", "Segmentation fault", "what():"})
    if (r.err.find(bad) != std::string::npos) problems.push_back(std::string("stderr mentions \"") + bad + "\"");
}

/// One failure listing every problem of the case, with the command to rerun it and what it printed.
void report(const std::string& relative, const std::vector<std::string>& problems, const std::vector<std::string>& args,
            const RunResult& r) {
  if (problems.empty()) return;
  std::string shown = "framesim";
  for (const auto& a : args) shown += " '" + a + "'";
  std::string text;
  for (const auto& p : problems) text += "  - " + p + "\n";
  ADD_FAILURE() << relative << ":\n"
                << text << "  command: (cd " << kRoot.string() << " && " << shown << ")\n"
                << "  stderr:\n"
                << r.err << "  stdout:\n"
                << r.out.substr(0, 1500) << (r.out.size() > 1500 ? "...\n" : "");
}

TEST_P(BadInput, Case) {
  const std::string file = GetParam();
  const std::string relative = "tests/bad_input/cases/" + file;
  const Header header = read_header(read_text(kCases / file), relative);
  for (const auto& p : header.problems) ADD_FAILURE() << relative << ": " << p;
  if (!header.problems.empty()) return;

  std::vector<std::string> args = split_words(header.command);
  ASSERT_FALSE(args.empty()) << relative << ": empty `# command:`";

  const Scratch scratch = make_scratch(file);
  const Invocation v = invocation(std::move(args), scratch.written);
  const RunResult r = run_framesim(v.args, scratch.capture);
  std::vector<std::string> problems;
  check_exit(r, problems);
  check_messages(header, r, problems);
  check_nothing_written(v, scratch.written, problems);
  check_no_crash_text(r, problems);
  report(relative, problems, v.args, r);

  std::error_code ignored;
  fs::remove_all(scratch.dir, ignored);
}

std::string case_test_name(const ::testing::TestParamInfo<std::string>& param) { return test_name(param.param); }

INSTANTIATE_TEST_SUITE_P(bad_input, BadInput, ::testing::ValuesIn(case_files()), case_test_name);

// The gallery itself: present, large enough, and every file name gives a distinct test name.
TEST(bad_input_gallery, HasCases) {
  const auto files = case_files();
  EXPECT_GE(files.size(), 40u) << "the gallery lives in " << kCases;
  EXPECT_EQ(files.size(), static_cast<std::size_t>(FRAMESIM_BAD_INPUT_CASE_COUNT))
      << "cases were added or removed since the last build: rebuild so that each one is its own CTest test";
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(test_name(f));
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end())
      << "two case files map to one test name (only letters and digits are kept)";
}

}  // namespace
