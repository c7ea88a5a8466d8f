// Measured times from TFLite benchmark_model's op profile (--enable_op_profiling=true
// --profiling_output_csv_file=F): the reader behind read_measured_trace for that format (measured.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>

#include "core/error.hpp"
#include "core/units.hpp"
#include "trace/csv_table.hpp"
#include "trace/measured_formats.hpp"

namespace framesim::trace {

namespace {

// ---------------------------------------------------------------------------------------------------------------
// TFLite benchmark_model op profile (--enable_op_profiling=true --profiling_output_csv_file=F)
//
// The file is what tflite::benchmark::ProfilingListener writes: a section per phase, each with the tables of
// tensorflow::StatsCalculator in CSV form:
//   Profiling Info for Benchmark Initialization:
//   ============================== Run Order ==============================
//   node type, start, first, avg_ms, %, cdf%, mem KB, times called, name
//   AllocateTensors, 0, 0.029, 0.029, 100%, 100%, 0, 1, AllocateTensors/0
//   (blank line, more tables, "Timings (microseconds): count=1 ...", "N nodes observed")
//   Operator-wise Profiling Info for Regular Benchmark Runs:
//   ============================== Run Order ==============================
//   node type, start, first, avg_ms, %, cdf%, mem KB, times called, name
//   CONV_2D, 0, 0.11, 0.0930388, 44.8994%, 44.8994%, 0, 1, [sequential_11/conv2d_33/Conv2D]:0
//   ...
//   ============================== Top by Computation Time ============================== (same rows again)
//   Number of nodes executed: 12
//   ============================== Summary by node type ==============================
//   node type, count, avg_ms, avg %, cdf %, mem KB, times called
//   Timings (microseconds): count=50 first=... curr=... min=... max=... avg=... std=...
// Models with several subgraphs repeat the tables under "Primary graph profile:" / "Subgraph (index: N) profile:";
// delegates add "Delegate internal:" tables. Fields are separated by ", " and not quoted: a node type
// ("Convolution (NHWC, F32) IGEMM") or a name ("[out_a, out_b]:7") may contain ", " itself.
// Per inference, a node takes avg_ms x times called (avg_ms is per call; times called is per run).
// ---------------------------------------------------------------------------------------------------------------

const std::string_view kTfliteRuns = "Operator-wise Profiling Info for Regular Benchmark Runs:";
const std::string_view kTfliteInit = "Profiling Info for Benchmark Initialization:";
const std::string_view kTfliteBar = "==============================";

struct Field {
  std::string_view text;  // trimmed
  std::size_t begin = 0;  // offset of the trimmed text in the line
  std::size_t end = 0;
};

std::vector<Field> split_commas(std::string_view line) {
  std::vector<Field> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    const std::size_t stop = comma == std::string_view::npos ? line.size() : comma;
    std::size_t b = start, e = stop;
    while (b < e && (line[b] == ' ' || line[b] == '\t')) ++b;
    while (e > b && (line[e - 1] == ' ' || line[e - 1] == '\t' || line[e - 1] == '\r')) --e;
    out.push_back({line.substr(b, e - b), b, e});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

/// The other names of a TFLite node, most specific first: "[a/b;c/d, e]:12" answers to "a/b", "c/d", "a/b;c/d",
/// "e" and "a/b;c/d, e" (outputs separated by ", ", names the converter merged by ';').
std::vector<std::string> tflite_aliases(const std::string& name) {
  std::vector<std::string> out;
  auto add = [&](std::string_view s) {
    s = trim(s);
    if (!s.empty() && s != name && std::find(out.begin(), out.end(), s) == out.end()) out.emplace_back(s);
  };
  const std::size_t close = name.rfind("]:");
  if (name.empty() || name.front() != '[' || close == std::string::npos) return out;
  const std::string_view inner = std::string_view(name).substr(1, close - 1);
  std::size_t start = 0;
  while (start <= inner.size()) {
    std::size_t comma = inner.find(", ", start);
    if (comma == std::string_view::npos) comma = inner.size();
    const std::string_view output = inner.substr(start, comma - start);
    std::size_t s = 0;
    while (s <= output.size()) {
      std::size_t semi = output.find(';', s);
      if (semi == std::string_view::npos) semi = output.size();
      add(output.substr(s, semi - s));
      s = semi + 1;
    }
    add(output);
    start = comma + 2;
  }
  add(inner);
  return out;
}

struct TfliteHeader {
  int fields = 0;
  int line = 0;
  std::vector<std::string> names;  // lower-case column names
  int avg = -1, times = -1;        // column indices
};

/// One row of a Run Order table (`line`, number `line_no`) under `header`: the node, its time per inference and its
/// aliases; nullopt after adding the row's problem to `problems`.
std::optional<MeasuredEntry> read_run_order_row(std::string_view line, int line_no, const TfliteHeader& header,
                                                Problems& problems) {
  const auto fields = split_commas(line);
  const int numeric = header.fields - 2;  // between the node type and the name
  if (static_cast<int>(fields.size()) < header.fields) {
    problems.add(line_no, 1, "",
                 fmt::format("expected {} fields like the header on line {}, got {} (truncated line?)", header.fields,
                             header.line, fields.size()));
    return std::nullopt;
  }
  auto parse_field = [&](const Field& f, int column) -> std::optional<double> {
    std::string_view s = f.text;
    if (header.names[static_cast<std::size_t>(column)].find('%') != std::string::npos && !s.empty() && s.back() == '%')
      s.remove_suffix(1);
    return whole_number(s);
  };
  // The node type may itself contain ", ": the numbers start at the first field from which `numeric`
  // fields in a row read as numbers.
  int first = -1;
  for (int i = 1; i + numeric < static_cast<int>(fields.size()) && first < 0; ++i) {
    bool all = true;
    for (int c = 0; c < numeric && all; ++c)
      all = parse_field(fields[static_cast<std::size_t>(i) + static_cast<std::size_t>(c)], c + 1).has_value();
    if (all) first = i;
  }
  if (first < 0) {
    for (int c = 0; c < numeric; ++c) {
      const Field& f = fields[1 + static_cast<std::size_t>(c)];
      if (!parse_field(f, c + 1)) {
        problems.add(line_no, static_cast<int>(f.begin) + 1, header.names[static_cast<std::size_t>(c) + 1],
                     fmt::format("expected a number, got \"{}\"", std::string(f.text)));
        break;
      }
    }
    return std::nullopt;
  }
  const Field& avg_field = fields[static_cast<std::size_t>(first + header.avg - 1)];
  const double avg_ms = *parse_field(avg_field, header.avg);
  double calls = 1;
  if (header.times >= 0) {
    const Field& times_field = fields[static_cast<std::size_t>(first + header.times - 1)];
    calls = *parse_field(times_field, header.times);
    if (calls < 0 || calls != std::floor(calls)) {
      problems.add(line_no, static_cast<int>(times_field.begin) + 1, "times called",
                   fmt::format("expected a whole number of calls, got \"{}\"", std::string(times_field.text)));
      return std::nullopt;
    }
    if (auto problem = count_problem(calls)) {
      problems.add(line_no, static_cast<int>(times_field.begin) + 1, "times called", *problem);
      return std::nullopt;
    }
  }
  const std::string& avg_name = header.names[static_cast<std::size_t>(header.avg)];
  if (avg_ms < 0) {
    problems.add(line_no, static_cast<int>(avg_field.begin) + 1, avg_name,
                 fmt::format("must not be negative, got \"{}\"", std::string(avg_field.text)));
    return std::nullopt;
  }
  // The time per inference (avg_ms x calls) is a time like any other (duration_problem).
  if (auto problem = duration_problem(avg_ms * std::max(calls, 1.0), 1e-3)) {
    problems.add(line_no, static_cast<int>(avg_field.begin) + 1, avg_name,
                 calls > 1 ? fmt::format("{} x {} calls: {}", std::string(avg_field.text), calls, *problem) : *problem);
    return std::nullopt;
  }
  const Field& name_field = fields[static_cast<std::size_t>(first) + static_cast<std::size_t>(numeric)];
  const std::string name(trim(line.substr(name_field.begin)));
  const std::string type(trim(line.substr(0, fields[static_cast<std::size_t>(first - 1)].end)));
  if (name.empty()) {
    problems.add(line_no, static_cast<int>(name_field.begin) + 1, "name", "empty node name");
    return std::nullopt;
  }
  if (type.empty()) {
    problems.add(line_no, 1, "node type", "empty node type");
    return std::nullopt;
  }
  MeasuredEntry e;
  e.name = name;
  e.op = type;
  // times called is calls per run (integer division by the number of runs): 0 means "less than once".
  e.time_s = avg_ms * 1e-3 * std::max(calls, 1.0);
  e.aliases = tflite_aliases(name);
  e.line = line_no;
  return e;
}

/// The integer right after the first `marker` in `t` ("count=50" -> 50); `fallback` when there is none.
int number_after(std::string_view t, std::string_view marker, int fallback) {
  int n = fallback;
  const auto at = t.find(marker);
  if (at == std::string_view::npos) return fallback;
  const std::string_view rest = t.substr(at + marker.size());
  std::from_chars(rest.data(), rest.data() + rest.size(), n);
  return n;
}

/// Where the reader is in a profile: which section, and in which part of a table.
enum class Section { none, init, runs };
enum class Table { none, run_order_header, run_order_rows, other_header, other_rows };

/// A table's header line, after its title: for a Run Order table its columns into `header` (Table::run_order_rows
/// follows); any other table's rows, or a table whose header is not one, are skipped (Table::other_rows).
Table read_table_header(std::string_view line, std::string_view t, int line_no, int last_title_line, Table table,
                        TfliteHeader& header, Problems& problems) {
  if (t.find('\t') != std::string_view::npos || t.starts_with("[node type]")) {
    problems.add(line_no, 1, "",
                 "this is benchmark_model's console output (tab-separated), not its CSV: run it with "
                 "--enable_op_profiling=true --profiling_output_csv_file=FILE and give FILE");
    problems.throw_if_any();
  }
  const auto fields = split_commas(line);
  if (fields.empty() || lower(fields.front().text) != "node type") {
    problems.add(line_no, 1, "",
                 fmt::format("expected a table header starting \"node type, \" after the title on line {}, got "
                             "\"{}\"",
                             last_title_line, std::string(t.substr(0, 80))));
    return Table::other_rows;
  }
  if (table == Table::other_header) return Table::other_rows;
  header = TfliteHeader{};
  header.line = line_no;
  header.fields = static_cast<int>(fields.size());
  for (const auto& f : fields) header.names.push_back(lower(f.text));
  for (std::size_t i = 0; i < header.names.size(); ++i) {
    if (header.names[i] == "avg_ms" || header.names[i] == "avg ms") header.avg = static_cast<int>(i);
    if (header.names[i] == "times called") header.times = static_cast<int>(i);
  }
  if (header.avg < 0 || header.names.back() != "name" || header.fields < 3) {
    problems.add(line_no, 1, "",
                 "expected the Run Order header \"node type, start, first, avg_ms, %, cdf%, mem KB, times called, "
                 "name\"");
    return Table::other_rows;
  }
  return Table::run_order_rows;
}

/// The sections a profile must have: the regular runs (not only the initialization), with a Run Order table.
void check_sections(bool seen_runs, bool seen_init, int init_line, int runs_line, int run_order_tables,
                    Problems& problems) {
  if (!seen_runs) {
    problems.add(seen_init ? init_line : 1, 1, "",
                 seen_init ? "only the initialization profile is here: no \"Operator-wise Profiling Info for Regular "
                             "Benchmark Runs:\" section (did benchmark_model finish its runs?)"
                           : "no \"Operator-wise Profiling Info for Regular Benchmark Runs:\" section: not a "
                             "benchmark_model op profile");
  } else if (run_order_tables == 0 && problems.empty()) {
    problems.add(runs_line, 1, "", "the regular-runs section has no Run Order table (truncated file?)");
  }
}

/// What was read: the nodes, from how many tables, over how many runs; delegate-internal rows.
void add_profile_notes(MeasuredTrace& trace, int run_count, int run_order_tables, bool delegate_rows) {
  trace.notes.push_back(
      fmt::format("{}: {} nodes from the Run Order table{} of the regular runs, avg_ms x times "
                  "called per inference{}",
                  measured_format_name(trace.format), trace.entries.size(), run_order_tables > 1 ? "s" : "",
                  run_count > 0 ? fmt::format(", averaged by benchmark_model over {} runs", run_count) : ""));
  if (delegate_rows)
    trace.notes.emplace_back(
        "delegate-internal rows are included under their own names (\"Delegate/...\"); they match "
        "no layer unless a layer has that name");
}

}  // namespace

MeasuredTrace parse_tflite_profile(const std::string& text, const std::string& path) {
  MeasuredTrace trace;
  trace.path = path;
  trace.format = MeasuredFormat::tflite_profile;
  Problems problems(path);

  Section section = Section::none;
  Table table = Table::none;
  bool seen_runs = false, seen_init = false, delegate = false;
  int runs_line = 0, init_line = 0, last_title_line = 0, run_count = 0, run_order_tables = 0, subgraph = 0;
  bool delegate_rows = false;  // rows of "Delegate internal:" tables were read
  TfliteHeader header;
  int rows_in_table = 0;
  auto close_table = [&](bool at_end) {
    if (table == Table::run_order_rows && section == Section::runs && rows_in_table == 0)
      problems.add(header.line, 1, "", "the Run Order table has no rows (truncated file?)");
    if (table == Table::run_order_header || table == Table::other_header)
      problems.add(last_title_line, 1, "",
                   fmt::format("a table title without its header line{}", at_end ? " (truncated file?)" : ""));
    table = Table::none;
  };

  std::size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string_view line(text.data() + pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string_view t = trim(line);
    if (line.starts_with("#")) continue;  // comments (framesim's own convention, as in the plain CSV)
    if (t.empty()) {
      if (table != Table::none) close_table(false);
      continue;
    }
    if (t == kTfliteRuns || t == kTfliteInit) {
      if (table != Table::none) close_table(false);
      section = t == kTfliteRuns ? Section::runs : Section::init;
      if (section == Section::runs) {
        if (seen_runs) problems.add(line_no, 1, "", "a second regular-runs section (two profiles in one file?)");
        seen_runs = true;
        runs_line = line_no;
      } else if (!seen_init) {
        seen_init = true;
        init_line = line_no;
      }
      delegate = false;
      subgraph = 0;
      continue;
    }
    if (t.starts_with(kTfliteBar)) {
      if (table != Table::none) close_table(false);
      std::string_view title = t.substr(kTfliteBar.size());
      if (const auto bar = title.find(kTfliteBar); bar != std::string_view::npos) title = title.substr(0, bar);
      title = trim(title);
      table = title == "Run Order" ? Table::run_order_header : Table::other_header;
      last_title_line = line_no;
      continue;
    }
    if (t.starts_with("Primary graph ")) {
      subgraph = 0;
      continue;
    }
    if (t.starts_with("Subgraph (index: ")) {
      subgraph = number_after(t, "Subgraph (index: ", 0);
      if (t.back() == ':') continue;  // "Subgraph (index: 1) profile:"
      // else "Subgraph (index: 1) Timings (microseconds): ..." - a summary line
      if (table != Table::none) close_table(false);
      continue;
    }
    if (t.starts_with("Delegate internal:")) {
      if (table != Table::none) close_table(false);
      delegate = true;
      continue;
    }
    if (t.starts_with("Timings (microseconds):")) {
      if (table != Table::none) close_table(false);
      if (section == Section::runs && subgraph == 0 && !delegate) run_count = number_after(t, "count=", run_count);
      continue;
    }
    if (t.starts_with("Memory (bytes):") || t.starts_with("Number of nodes executed:") ||
        (t.size() > 15 && t.substr(t.size() - 15) == " nodes observed")) {
      if (table != Table::none) close_table(false);
      continue;
    }
    if (table == Table::run_order_header || table == Table::other_header) {
      table = read_table_header(line, t, line_no, last_title_line, table, header, problems);
      if (table == Table::run_order_rows) {
        rows_in_table = 0;
        if (section == Section::runs) ++run_order_tables;
      }
      continue;
    }
    if (table == Table::other_rows) continue;
    if (table == Table::run_order_rows) {
      ++rows_in_table;
      if (section != Section::runs) continue;
      auto e = read_run_order_row(line, line_no, header, problems);
      if (!e) continue;
      trace.entries.push_back(std::move(*e));
      delegate_rows = delegate_rows || delegate;
      continue;
    }
    problems.add(line_no, 1, "",
                 fmt::format("not part of a benchmark_model op profile: \"{}\"", std::string(t.substr(0, 80))));
  }
  if (table != Table::none) close_table(true);
  check_sections(seen_runs, seen_init, init_line, runs_line, run_order_tables, problems);
  problems.throw_if_any();
  trace.iterations = std::max(run_count, 1);
  add_profile_notes(trace, run_count, run_order_tables, delegate_rows);
  return trace;
}

bool is_tflite_profile_line(std::string_view line) {
  return line == kTfliteRuns || line == kTfliteInit || line.starts_with(kTfliteBar);
}

}  // namespace framesim::trace
