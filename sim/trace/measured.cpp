#include "trace/measured.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "trace/csv_table.hpp"
#include "trace/json_reader.hpp"
#include "trace/measured_formats.hpp"

namespace framesim::trace {

namespace {

struct TimeColumn {
  std::string name;
  double scale;  // 0: cells carry their own unit
};

const std::vector<TimeColumn> kTimeColumns{
    {"time", 0}, {"time_s", 1}, {"time_ms", 1e-3}, {"time_us", 1e-6}, {"time_ns", 1e-9}};
const std::vector<std::string> kNameColumns{"layer", "name", "kernel"};

}  // namespace

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

void skip_comment_lines(const std::string& text, std::size_t& pos, int& line) {
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    const std::string_view l = trim(std::string_view(text).substr(pos, eol - pos));
    if (!l.empty() && l.front() != '#') break;
    pos = eol + 1;
    ++line;
  }
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view measured_format_name(MeasuredFormat f) {
  switch (f) {
    case MeasuredFormat::plain_csv: return "plain CSV";
    case MeasuredFormat::pytorch_trace: return "PyTorch profiler trace";
    case MeasuredFormat::tflite_profile: return "TFLite benchmark_model op profile";
    case MeasuredFormat::tensorrt_profile: return "TensorRT trtexec profile";
    case MeasuredFormat::nsys_csv: return "Nsight Systems cuda_gpu_trace CSV";
    case MeasuredFormat::nsys_sqlite: return "Nsight Systems SQLite export";
    case MeasuredFormat::onnxruntime_profile: return "ONNX Runtime profile";
  }
  return "?";
}

std::string_view match_method_name(MatchMethod m) {
  switch (m) {
    case MatchMethod::name: return "name";
    case MatchMethod::alias: return "alias";
    case MatchMethod::order: return "order";
    case MatchMethod::origin: return "origin";
  }
  return "?";
}

std::string_view entry_fate_name(EntryFate f) {
  switch (f) {
    case EntryFate::matched: return "matched";
    case EntryFate::merged: return "merged";
    case EntryFate::split: return "split";
    case EntryFate::data_movement: return "data movement";
    case EntryFate::unmatched: return "unmatched";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------------------------
// Plain CSV
// ---------------------------------------------------------------------------------------------------------------

std::vector<model::Measurement> parse_measurements_csv(const std::string& text, const std::string& display_path) {
  core::Diagnostics d;
  const auto rows = read_table(text_of_trace(text, display_path), display_path, "\"layer,time\"", d);
  const auto& header = rows.front();
  int name_col = -1;
  int time_col = -1;
  double scale = 0;
  std::vector<std::string> known = kNameColumns;
  for (const auto& t : kTimeColumns) known.push_back(t.name);
  for (std::size_t c = 0; c < header.cells.size(); ++c) {
    const auto& cell = header.cells[c];
    bool matched = false;
    for (const auto& n : kNameColumns)
      if (cell.text == n) {
        if (name_col >= 0) d.add({display_path, header.line, cell.column}, cell.text, "a second layer-name column");
        name_col = static_cast<int>(c);
        matched = true;
      }
    for (const auto& t : kTimeColumns)
      if (cell.text == t.name) {
        if (time_col >= 0) d.add({display_path, header.line, cell.column}, cell.text, "a second time column");
        time_col = static_cast<int>(c);
        scale = t.scale;
        matched = true;
      }
    if (!matched) report_unknown_column(header, cell, known, display_path, d);
  }
  if (name_col < 0) d.add({display_path, header.line, 1}, "header", "no layer column (layer, name or kernel)");
  if (time_col < 0)
    d.add({display_path, header.line, 1}, "header", "no time column (time, time_s, time_ms, time_us or time_ns)");
  d.throw_if_any();

  std::vector<model::Measurement> out;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (!has_header_width(row, header, display_path, d)) continue;
    const auto& name = row.cells[static_cast<std::size_t>(name_col)];
    const auto& time = row.cells[static_cast<std::size_t>(time_col)];
    if (name.text.empty())
      d.add({display_path, row.line, name.column}, header.cells[static_cast<std::size_t>(name_col)].text,
            "empty layer name");
    const std::string& column = header.cells[static_cast<std::size_t>(time_col)].text;
    const auto seconds = read_cell(time, row.line, scale, core::Dimension::Seconds, column, display_path, d);
    if (!seconds) continue;
    if (*seconds < 0) {
      d.add({display_path, row.line, time.column}, column, fmt::format("must not be negative, got \"{}\"", time.text));
      continue;
    }
    out.push_back({name.text, *seconds});
  }
  if (out.empty() && d.empty()) d.add({display_path, header.line, 1}, "", "no measurements after the header");
  d.throw_if_any();
  return out;
}

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

MeasuredTrace parse_tflite(const std::string& text, const std::string& path) {
  MeasuredTrace trace;
  trace.path = path;
  trace.format = MeasuredFormat::tflite_profile;
  Problems problems(path);

  enum class Section { none, init, runs } section = Section::none;
  enum class Table { none, run_order_header, run_order_rows, other_header, other_rows } table = Table::none;
  bool seen_runs = false, seen_init = false, delegate = false;
  int runs_line = 0, init_line = 0, last_title_line = 0, run_count = 0, run_order_tables = 0, subgraph = 0;
  std::set<int> subgraphs;
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
      int index = 0;
      const std::string_view rest = t.substr(std::string_view("Subgraph (index: ").size());
      std::from_chars(rest.data(), rest.data() + rest.size(), index);
      subgraph = index;
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
      if (section == Section::runs && subgraph == 0 && !delegate) {
        const auto c = t.find("count=");
        if (c != std::string_view::npos) {
          const std::string_view n = t.substr(c + 6);
          std::from_chars(n.data(), n.data() + n.size(), run_count);
        }
      }
      continue;
    }
    if (t.starts_with("Memory (bytes):") || t.starts_with("Number of nodes executed:") ||
        (t.size() > 15 && t.substr(t.size() - 15) == " nodes observed")) {
      if (table != Table::none) close_table(false);
      continue;
    }
    if (table == Table::run_order_header || table == Table::other_header) {
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
        table = Table::other_rows;
        continue;
      }
      if (table == Table::other_header) {
        table = Table::other_rows;
        continue;
      }
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
        table = Table::other_rows;
        continue;
      }
      table = Table::run_order_rows;
      rows_in_table = 0;
      if (section == Section::runs) ++run_order_tables;
      continue;
    }
    if (table == Table::other_rows) continue;
    if (table == Table::run_order_rows) {
      ++rows_in_table;
      if (section != Section::runs) continue;
      const auto fields = split_commas(line);
      const int numeric = header.fields - 2;  // between the node type and the name
      if (static_cast<int>(fields.size()) < header.fields) {
        problems.add(line_no, 1, "",
                     fmt::format("expected {} fields like the header on line {}, got {} (truncated line?)",
                                 header.fields, header.line, fields.size()));
        continue;
      }
      auto parse_field = [&](const Field& f, int column) -> std::optional<double> {
        std::string_view s = f.text;
        if (header.names[static_cast<std::size_t>(column)].find('%') != std::string::npos && !s.empty() &&
            s.back() == '%')
          s.remove_suffix(1);
        return whole_number(s);
      };
      // The node type may itself contain ", ": the numbers start at the first field from which `numeric`
      // fields in a row read as numbers.
      int first = -1;
      for (int i = 1; i + numeric < static_cast<int>(fields.size()) && first < 0; ++i) {
        bool all = true;
        for (int c = 0; c < numeric && all; ++c)
          all = parse_field(fields[static_cast<std::size_t>(i + c)], c + 1).has_value();
        if (all) first = i;
      }
      if (first < 0) {
        for (int c = 0; c < numeric; ++c) {
          const Field& f = fields[static_cast<std::size_t>(1 + c)];
          if (!parse_field(f, c + 1)) {
            problems.add(line_no, static_cast<int>(f.begin) + 1, header.names[static_cast<std::size_t>(c + 1)],
                         fmt::format("expected a number, got \"{}\"", std::string(f.text)));
            break;
          }
        }
        continue;
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
          continue;
        }
      }
      if (avg_ms < 0) {
        problems.add(line_no, static_cast<int>(avg_field.begin) + 1, header.names[static_cast<std::size_t>(header.avg)],
                     fmt::format("must not be negative, got \"{}\"", std::string(avg_field.text)));
        continue;
      }
      const Field& name_field = fields[static_cast<std::size_t>(first + numeric)];
      const std::string name(trim(line.substr(name_field.begin)));
      const std::string type(trim(line.substr(0, fields[static_cast<std::size_t>(first - 1)].end)));
      if (name.empty()) {
        problems.add(line_no, static_cast<int>(name_field.begin) + 1, "name", "empty node name");
        continue;
      }
      if (type.empty()) {
        problems.add(line_no, 1, "node type", "empty node type");
        continue;
      }
      MeasuredEntry e;
      e.name = name;
      e.op = type;
      // times called is calls per run (integer division by the number of runs): 0 means "less than once".
      e.time_s = avg_ms * 1e-3 * std::max(calls, 1.0);
      e.aliases = tflite_aliases(name);
      e.line = line_no;
      trace.entries.push_back(std::move(e));
      if (delegate)
        subgraphs.insert(-1);
      else
        subgraphs.insert(subgraph);
      continue;
    }
    problems.add(line_no, 1, "",
                 fmt::format("not part of a benchmark_model op profile: \"{}\"", std::string(t.substr(0, 80))));
  }
  if (table != Table::none) close_table(true);
  if (!seen_runs) {
    problems.add(seen_init ? init_line : 1, 1, "",
                 seen_init ? "only the initialization profile is here: no \"Operator-wise Profiling Info for Regular "
                             "Benchmark Runs:\" section (did benchmark_model finish its runs?)"
                           : "no \"Operator-wise Profiling Info for Regular Benchmark Runs:\" section: not a "
                             "benchmark_model op profile");
  } else if (run_order_tables == 0 && problems.empty()) {
    problems.add(runs_line, 1, "", "the regular-runs section has no Run Order table (truncated file?)");
  }
  problems.throw_if_any();
  trace.iterations = std::max(run_count, 1);
  trace.notes.push_back(
      fmt::format("{}: {} nodes from the Run Order table{} of the regular runs, avg_ms x times "
                  "called per inference{}",
                  measured_format_name(trace.format), trace.entries.size(), run_order_tables > 1 ? "s" : "",
                  run_count > 0 ? fmt::format(", averaged by benchmark_model over {} runs", run_count) : ""));
  if (subgraphs.count(-1))
    trace.notes.push_back(
        "delegate-internal rows are included under their own names (\"Delegate/...\"); they match "
        "no layer unless a layer has that name");
  return trace;
}

// ---------------------------------------------------------------------------------------------------------------
// PyTorch profiler (Kineto) trace
// ---------------------------------------------------------------------------------------------------------------

enum class EventKind { op, range, step, launch, gpu };

struct Event {
  EventKind kind = EventKind::op;
  std::string name;
  std::string thread;  // "pid/tid"
  double ts_us = 0, dur_us = 0;
  std::optional<std::int64_t> correlation, external_id;
  std::vector<std::int64_t> dims;
  int line = 0;
  int parent = -1;  // enclosing CPU event on the same thread (index into events)
  double gpu_us = 0;
  int depth = 0;
};

bool is_op_name(std::string_view name) { return name.find("::") != std::string_view::npos; }

std::optional<EventKind> classify(const std::string& cat, const std::string& name) {
  const std::string c = lower(cat);
  if (name.starts_with("ProfilerStep#") && (c == "cpu_op" || c == "user_annotation" || c == "operator"))
    return EventKind::step;
  if (c == "cpu_op" || c == "operator") return is_op_name(name) ? EventKind::op : EventKind::range;
  if (c == "user_annotation") return EventKind::range;
  if (c == "cuda_runtime" || c == "cuda_driver" || c == "runtime") return EventKind::launch;
  if (c == "kernel" || c == "gpu_memcpy" || c == "gpu_memset") return EventKind::gpu;
  return std::nullopt;  // python_function, gpu_user_annotation, ac2g flows, metadata, counters, ...
}

MeasuredTrace parse_pytorch(const std::string& text, const std::string& path, std::size_t start, int start_line) {
  MeasuredTrace trace;
  trace.path = path;
  trace.format = MeasuredFormat::pytorch_trace;
  Problems problems(path);
  std::vector<Event> events;
  // B/E pairs per thread, turned into complete events.
  std::map<std::string, std::vector<std::size_t>> open_begins;
  std::size_t unmatched_ends = 0;

  auto id_of = [](const Json& v) -> std::string {
    if (v.type == Json::Type::string) return v.text;
    return fmt::format("{}", v.number);
  };
  auto on_event = [&](const Json& e, const std::string& here) {
    if (e.type != Json::Type::object) {
      problems.add(e.line, e.column, here,
                   fmt::format("expected an event (an object), got {}", json_type_name(e.type)));
      return;
    }
    const Json* ph = e.find("ph");
    if (!ph) {
      problems.add(e.line, e.column, here, "missing \"ph\" (the event type: \"X\", \"B\", \"E\", \"i\", \"M\", ...)");
      return;
    }
    if (ph->type != Json::Type::string) {
      problems.add(ph->line, ph->column, here + ".ph",
                   fmt::format("expected a string like \"X\", got {}", json_type_name(ph->type)));
      return;
    }
    const std::string& phase = ph->text;
    if (phase != "X" && phase != "B" && phase != "E") return;  // metadata, instants, counters, flows
    const JsonFields fields(e, here, problems);
    auto text_field = [&](const char* key, bool required) { return fields.text(key, required); };
    auto number_field = [&](const Json* holder, const std::string& holder_path, const char* key, bool required,
                            const char* what) {
      return JsonFields(*holder, holder_path, problems).number(key, required, what);
    };
    const std::optional<std::string> cat = text_field("cat", false);
    const std::optional<std::string> name = text_field("name", phase != "E");
    const std::optional<double> ts = number_field(&e, here, "ts", true, "the start in microseconds");
    std::optional<double> dur;
    if (phase == "X") {
      dur = number_field(&e, here, "dur", true, "the duration in microseconds");
      if (dur && *dur < 0) {
        const Json* v = e.find("dur");
        problems.add(v->line, v->column, here + ".dur", fmt::format("must not be negative, got {}", *dur));
        return;
      }
    }
    std::string thread;
    for (const char* key : {"pid", "tid"}) {
      const Json* v = e.find(key);
      if (v && v->type != Json::Type::number && v->type != Json::Type::string) {
        problems.add(v->line, v->column, fmt::format("{}.{}", here, key),
                     fmt::format("expected a number or a string, got {}", json_type_name(v->type)));
        return;
      }
      thread += (thread.empty() ? "" : "/") + (v ? id_of(*v) : std::string("0"));
    }
    const Json* args = e.find("args");
    if (args && args->type != Json::Type::object) {
      problems.add(args->line, args->column, here + ".args",
                   fmt::format("expected an object, got {}", json_type_name(args->type)));
      return;
    }
    if (!ts || (phase != "E" && !name) || (phase == "X" && !dur)) return;
    if (phase == "E") {
      auto& stack = open_begins[thread];
      if (stack.empty()) {
        ++unmatched_ends;
        return;
      }
      Event& begun = events[stack.back()];
      stack.pop_back();
      begun.dur_us = std::max(0.0, *ts - begun.ts_us);
      return;
    }
    const auto kind = classify(cat.value_or(is_op_name(*name) ? "cpu_op" : ""), *name);
    if (!kind) return;
    Event ev;
    ev.kind = *kind;
    ev.name = *name;
    ev.thread = thread;
    ev.ts_us = *ts;
    ev.dur_us = dur.value_or(0.0);
    ev.line = e.line;
    if (args) {
      const std::string args_path = here + ".args";
      if (auto c = number_field(args, args_path, "correlation", false, "the CUDA correlation id"))
        ev.correlation = static_cast<std::int64_t>(*c);
      if (auto x = number_field(args, args_path, "External id", false, "the id linking GPU work to its op"))
        ev.external_id = static_cast<std::int64_t>(*x);
      if (const Json* dims = args->find("Input Dims")) {
        if (dims->type != Json::Type::array) {
          problems.add(dims->line, dims->column, args_path + ".Input Dims",
                       fmt::format("expected an array of input shapes, got {}", json_type_name(dims->type)));
          return;
        }
        // The first input that is a tensor (a list of integers): TensorLists and scalars are not compared.
        for (const Json& input : dims->items) {
          if (input.type != Json::Type::array || input.items.empty()) continue;
          bool integers = true;
          for (const Json& d : input.items) integers = integers && d.type == Json::Type::number;
          if (integers)
            for (const Json& d : input.items) ev.dims.push_back(static_cast<std::int64_t>(d.number));
          break;
        }
      }
    }
    if (phase == "B") open_begins[thread].push_back(events.size());
    events.push_back(std::move(ev));
  };

  JsonReader reader(text, path, start, start_line);
  reader.read_trace(on_event);
  problems.throw_if_any();
  std::size_t unclosed = 0;
  for (const auto& [thread, stack] : open_begins) unclosed += stack.size();

  std::size_t cpu_events = 0;
  for (const auto& ev : events) cpu_events += ev.kind == EventKind::op || ev.kind == EventKind::range;
  if (cpu_events == 0)
    problems.add(reader.events_line(), reader.events_column(), "traceEvents",
                 "no cpu_op or user_annotation events: not a PyTorch profiler trace with operator times (profile "
                 "with torch.profiler and export_chrome_trace)");
  problems.throw_if_any();

  // Nesting of CPU-side events (ops, ranges, steps, runtime launches) per thread, by time containment.
  std::vector<std::size_t> order(events.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Event& x = events[a];
    const Event& y = events[b];
    if (x.thread != y.thread) return x.thread < y.thread;
    if (x.ts_us != y.ts_us) return x.ts_us < y.ts_us;
    if (x.dur_us != y.dur_us) return x.dur_us > y.dur_us;
    return static_cast<int>(x.kind) < static_cast<int>(y.kind);  // a step holds a range holds an op holds a launch
  });
  {
    std::vector<std::size_t> stack;
    std::string thread;
    for (std::size_t i : order) {
      Event& ev = events[i];
      if (ev.kind == EventKind::gpu) continue;
      if (ev.thread != thread) {
        stack.clear();
        thread = ev.thread;
      }
      while (!stack.empty() && events[stack.back()].ts_us + events[stack.back()].dur_us <= ev.ts_us) stack.pop_back();
      if (!stack.empty()) {
        ev.parent = static_cast<int>(stack.back());
        ev.depth = events[stack.back()].depth + 1;
      }
      if (ev.kind != EventKind::launch) stack.push_back(i);
    }
  }

  // GPU work to its launch (correlation id), else to the op with its External id.
  std::unordered_map<std::int64_t, std::size_t> launch_of, op_of_external;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i].kind == EventKind::launch && events[i].correlation) launch_of[*events[i].correlation] = i;
    if (events[i].kind == EventKind::op && events[i].external_id) op_of_external.emplace(*events[i].external_id, i);
  }
  std::size_t gpu_events = 0, by_correlation = 0, by_external = 0, orphans = 0;
  double gpu_total_us = 0;
  for (const Event& ev : events) {
    if (ev.kind != EventKind::gpu) continue;
    ++gpu_events;
    int owner = -1;
    if (ev.correlation) {
      if (auto it = launch_of.find(*ev.correlation); it != launch_of.end()) {
        owner = static_cast<int>(it->second);
        ++by_correlation;
      }
    }
    if (owner < 0 && ev.external_id) {
      if (auto it = op_of_external.find(*ev.external_id); it != op_of_external.end()) {
        owner = static_cast<int>(it->second);
        ++by_external;
      }
    }
    if (owner < 0) {
      ++orphans;
      continue;
    }
    gpu_total_us += ev.dur_us;
    for (int p = owner; p >= 0; p = events[static_cast<std::size_t>(p)].parent)
      events[static_cast<std::size_t>(p)].gpu_us += ev.dur_us;
  }
  trace.gpu_time = by_correlation + by_external > 0;

  // Steps (ProfilerStep#N): the iterations, in time order.
  std::vector<std::size_t> steps;
  for (std::size_t i = 0; i < events.size(); ++i)
    if (events[i].kind == EventKind::step) steps.push_back(i);
  std::sort(steps.begin(), steps.end(),
            [&](std::size_t a, std::size_t b) { return events[a].ts_us < events[b].ts_us; });
  std::unordered_map<std::size_t, int> step_index;
  for (std::size_t k = 0; k < steps.size(); ++k) step_index[steps[k]] = static_cast<int>(k);

  // The entries of each iteration: ranges, and ops that no other op holds (their time includes what they call).
  struct Slot {
    std::size_t event;
    int iteration;
    int parent_slot;  // enclosing range's slot, -1
  };
  std::vector<std::size_t> timeline;
  for (std::size_t i = 0; i < events.size(); ++i)
    if (events[i].kind == EventKind::op || events[i].kind == EventKind::range) timeline.push_back(i);
  std::stable_sort(timeline.begin(), timeline.end(), [&](std::size_t a, std::size_t b) {
    if (events[a].ts_us != events[b].ts_us) return events[a].ts_us < events[b].ts_us;
    return events[a].depth < events[b].depth;
  });
  std::size_t outside_steps = 0;
  std::unordered_map<std::size_t, int> slot_of_event;
  std::vector<Slot> slots;
  for (std::size_t i : timeline) {
    const Event& ev = events[i];
    int iteration = 0;
    int range_parent = -1;
    bool under_op = false;
    bool in_step = false;
    for (int p = ev.parent; p >= 0; p = events[static_cast<std::size_t>(p)].parent) {
      const Event& anc = events[static_cast<std::size_t>(p)];
      if (anc.kind == EventKind::op) under_op = true;
      if (anc.kind == EventKind::range && range_parent < 0) {
        if (auto it = slot_of_event.find(static_cast<std::size_t>(p)); it != slot_of_event.end())
          range_parent = it->second;
      }
      if (anc.kind == EventKind::step) {
        iteration = step_index[static_cast<std::size_t>(p)];
        in_step = true;
        break;
      }
    }
    if (under_op) continue;
    if (!steps.empty() && !in_step) {
      ++outside_steps;
      continue;
    }
    slot_of_event[i] = static_cast<int>(slots.size());
    slots.push_back({i, iteration, range_parent});
  }

  // Average over iterations: the k-th occurrence of a name in one iteration is the k-th in every other.
  std::map<std::string, std::size_t> entry_of_key;
  std::vector<std::string> slot_key(slots.size());
  std::map<std::pair<int, std::string>, int> seen;
  std::vector<double> sums;
  std::vector<int> counts;
  for (std::size_t s = 0; s < slots.size(); ++s) {
    const Event& ev = events[slots[s].event];
    const bool range = ev.kind == EventKind::range;
    const std::string base = (range ? "R|" : "O|") + ev.name;
    const int occurrence = seen[{slots[s].iteration, base}]++;
    slot_key[s] = base + "|" + std::to_string(occurrence);
    const double time_us = trace.gpu_time ? ev.gpu_us : ev.dur_us;
    auto it = entry_of_key.find(slot_key[s]);
    if (it == entry_of_key.end()) {
      MeasuredEntry e;
      e.name = ev.name;
      e.op = range ? "" : ev.name;
      e.range = range;
      e.input_dims = ev.dims;
      e.line = ev.line;
      if (slots[s].parent_slot >= 0) {
        auto pt = entry_of_key.find(slot_key[static_cast<std::size_t>(slots[s].parent_slot)]);
        if (pt != entry_of_key.end()) e.parent = static_cast<int>(pt->second);
      }
      it = entry_of_key.emplace(slot_key[s], trace.entries.size()).first;
      trace.entries.push_back(std::move(e));
      sums.push_back(0);
      counts.push_back(0);
    }
    sums[it->second] += time_us;
    counts[it->second] += 1;
  }
  for (std::size_t k = 0; k < trace.entries.size(); ++k) {
    trace.entries[k].time_s = sums[k] / counts[k] * 1e-6;
    trace.entries[k].iterations = counts[k];
  }
  trace.iterations = std::max<int>(1, static_cast<int>(steps.size()));

  std::size_t ops = 0, ranges = 0;
  for (const auto& e : trace.entries) (e.range ? ranges : ops) += 1;
  trace.notes.push_back(
      steps.empty()
          ? fmt::format("{}: {} top-level ops and {} ranges (no ProfilerStep ranges: repeated passes are found when "
                        "matching)",
                        measured_format_name(trace.format), ops, ranges)
          : fmt::format("{}: {} top-level ops and {} ranges per step, averaged over {} profiler steps (ProfilerStep#)",
                        measured_format_name(trace.format), ops, ranges, steps.size()));
  if (trace.gpu_time) {
    trace.notes.push_back(fmt::format(
        "times are GPU time: {} of {} kernel/memcpy events ({:.4g} ms in all) attributed to the op that launched "
        "them, {} through the correlation id of their cuda_runtime launch{}; ops that launch nothing take 0",
        by_correlation + by_external, gpu_events, gpu_total_us * 1e-3, by_correlation,
        by_external ? fmt::format(", {} through their External id", by_external) : std::string()));
  } else {
    trace.notes.push_back("times are the ops' CPU time (the trace has no GPU kernel events)");
  }
  if (orphans > 0)
    trace.notes.push_back(
        fmt::format("{} GPU events have no launch with their correlation id nor an op with their "
                    "External id: left out",
                    orphans));
  if (outside_steps > 0)
    trace.notes.push_back(fmt::format("{} ops and ranges outside every ProfilerStep: left out", outside_steps));
  if (unmatched_ends > 0)
    trace.notes.push_back(fmt::format("{} \"E\" events without a \"B\": ignored", unmatched_ends));
  if (unclosed > 0)
    trace.notes.push_back(fmt::format("{} \"B\" events never closed by an \"E\": taken as 0 long", unclosed));
  return trace;
}

// ---------------------------------------------------------------------------------------------------------------
// Matching PyTorch ops to layers by order: op types on both sides reduced to one class.
// ---------------------------------------------------------------------------------------------------------------

/// The class of a framesim layer op for order matching.
std::string layer_class(const model::LayerSpec& layer) {
  static const std::map<std::string, std::string, std::less<>> kSame{
      {"linear", "gemm"}, {"matmul", "gemm"}, {"relu6", "clip"}, {"clip", "clip"}, {"flatten", "reshape"}};
  if (auto it = kSame.find(layer.op); it != kSame.end()) return it->second;
  return layer.op;
}

/// The class of a PyTorch op ("aten::conv2d", "aten::relu_") for order matching; empty when framesim has none.
std::string torch_class(std::string_view op) {
  static const std::map<std::string, std::string, std::less<>> kTable{
      {"conv2d", "conv2d"},
      {"convolution", "conv2d"},
      {"_convolution", "conv2d"},
      {"cudnn_convolution", "conv2d"},
      {"mkldnn_convolution", "conv2d"},
      {"_conv_depthwise2d", "conv2d"},
      {"thnn_conv2d", "conv2d"},
      {"linear", "gemm"},
      {"addmm", "gemm"},
      {"mm", "gemm"},
      {"matmul", "gemm"},
      {"bmm", "gemm"},
      {"baddbmm", "gemm"},
      {"batch_norm", "batchnorm"},
      {"native_batch_norm", "batchnorm"},
      {"_native_batch_norm_legit_no_training", "batchnorm"},
      {"cudnn_batch_norm", "batchnorm"},
      {"relu", "relu"},
      {"relu6", "clip"},
      {"hardtanh", "clip"},
      {"clamp", "clip"},
      {"clip", "clip"},
      {"leaky_relu", "leaky_relu"},
      {"sigmoid", "sigmoid"},
      {"tanh", "tanh"},
      {"gelu", "gelu"},
      {"silu", "silu"},
      {"hardswish", "hardswish"},
      {"hardsigmoid", "hardsigmoid"},
      {"exp", "exp"},
      {"log", "log"},
      {"sqrt", "sqrt"},
      {"abs", "abs"},
      {"neg", "neg"},
      {"reciprocal", "reciprocal"},
      {"erf", "erf"},
      {"add", "add"},
      {"sub", "sub"},
      {"mul", "mul"},
      {"div", "div"},
      {"maximum", "max"},
      {"minimum", "min"},
      {"pow", "pow"},
      {"max_pool2d", "maxpool"},
      {"max_pool2d_with_indices", "maxpool"},
      {"avg_pool2d", "avgpool"},
      {"adaptive_avg_pool2d", "global_avgpool"},
      {"mean", "global_avgpool"},
      {"adaptive_max_pool2d", "global_maxpool"},
      {"layer_norm", "layernorm"},
      {"native_layer_norm", "layernorm"},
      {"rms_norm", "rmsnorm"},
      {"softmax", "softmax"},
      {"_softmax", "softmax"},
      {"embedding", "embedding"},
      {"scaled_dot_product_attention", "attention"},
      {"_scaled_dot_product_flash_attention", "attention"},
      {"_scaled_dot_product_efficient_attention", "attention"},
      {"reshape", "reshape"},
      {"view", "reshape"},
      {"flatten", "reshape"},
      {"_unsafe_view", "reshape"},
      {"squeeze", "reshape"},
      {"unsqueeze", "reshape"},
      {"permute", "transpose"},
      {"transpose", "transpose"},
      {"cat", "concat"},
      {"concat", "concat"},
      {"pad", "pad"},
      {"constant_pad_nd", "pad"},
      {"reflection_pad2d", "pad"},
      {"replication_pad2d", "pad"},
      {"slice", "slice"},
      {"narrow", "slice"},
      {"clone", "copy"},
      {"copy", "copy"},
      {"upsample_nearest2d", "resize"},
      {"upsample_bilinear2d", "resize"},
      {"_upsample_nearest_exact2d", "resize"},
      {"to", "cast"},
      {"_to_copy", "cast"}};
  if (!op.starts_with("aten::")) return "";
  std::string_view base = op.substr(6);
  if (!base.empty() && base.back() == '_' && base.front() != '_') base.remove_suffix(1);  // in place: relu_
  if (auto it = kTable.find(base); it != kTable.end()) return it->second;
  return "";
}

/// A range's dotted or slashed suffixes, longest first: "model.layer1.0.conv_a" -> "layer1.0.conv_a", "0.conv_a",
/// "conv_a".
std::vector<std::string> range_suffixes(const std::string& name) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < name.size(); ++i)
    if ((name[i] == '.' || name[i] == '/') && i + 1 < name.size()) out.push_back(name.substr(i + 1));
  return out;
}

/// The name a plain or TFLite entry is listed under: a TFLite node under its (first) output tensor's name.
const std::string& recorded_name(const MeasuredTrace& trace, const MeasuredEntry& e) {
  return trace.format == MeasuredFormat::tflite_profile && !e.aliases.empty() ? e.aliases.front() : e.name;
}

}  // namespace

namespace {

/// The first `n` characters of `text` from `pos` that are not JSON white space, for telling JSON formats apart.
std::string json_head(const std::string& text, std::size_t pos, std::size_t n) {
  std::string out;
  bool in_string = false;
  for (; pos < text.size() && out.size() < n; ++pos) {
    const char c = text[pos];
    if (c == '"') in_string = !in_string;
    if (!in_string && (c == ' ' || c == '\t' || c == '\r' || c == '\n')) continue;
    out += c;
  }
  return out;
}

/// ONNX Runtime's profile: an array of events whose categories are "Session" and "Node" (PyTorch's are cpu_op,
/// kernel, ...). Looks at the first 64 KiB.
bool looks_like_onnxruntime(const std::string& head) {
  return head.find("\"cat\":\"Session\"") != std::string::npos || head.find("\"cat\":\"Node\"") != std::string::npos;
}

}  // namespace

MeasuredTrace parse_measured_trace(const std::string& text_in, const std::string& display_path) {
  // Skip leading blank and '#' comment lines to see what the content is.
  std::size_t pos = 0;
  int line = 1;
  if (text_in.size() >= 2 && static_cast<unsigned char>(text_in[0]) == 0x1f &&
      static_cast<unsigned char>(text_in[1]) == 0x8b)
    throw core::UserError(
        {core::Diagnostic{{display_path, 1, 1}, "", "a gzip-compressed file: decompress it first (gunzip)"}});
  // SQLite (Nsight Systems) is binary; every other format is text and must be UTF-8.
  if (text_in.starts_with(std::string_view("SQLite format 3\0", 16))) return parse_nsys_sqlite(text_in, display_path);
  const std::string checked = text_of_trace(text_in, display_path);
  const std::string& text = checked;
  skip_comment_lines(text, pos, line);
  std::size_t first = pos;
  while (first < text.size() && (text[first] == ' ' || text[first] == '\t' || text[first] == '\r')) ++first;
  if (first < text.size() && (text[first] == '{' || text[first] == '[')) {
    const std::string head = json_head(text, first, 64 * 1024);
    if (head.starts_with("[{\"count\":") ||
        (head.starts_with("[{") && head.find("\"averageMs\":") != std::string::npos)) {
      JsonReader reader(text, display_path, pos, line);
      return parse_tensorrt_profile(reader.read_document("a trtexec profile"), display_path);
    }
    if (head.starts_with("{\"Layers\":"))
      throw core::UserError({core::Diagnostic{
          {display_path, line, 1},
          "",
          "this is trtexec's layer information (--exportLayerInfo): it holds no times; give the profile "
          "(--exportProfile) and put this file beside it, named like the profile with \"profile\" replaced by "
          "\"layers\""}});
    if (head.starts_with("[") && looks_like_onnxruntime(head)) {
      JsonReader reader(text, display_path, pos, line);
      return parse_onnxruntime_profile(reader.read_document("an ONNX Runtime profile"), display_path);
    }
    return parse_pytorch(text, display_path, pos, line);
  }

  // benchmark_model's profile: its section titles and table bars are unmistakable. Nsight Systems' reports:
  // columns in nanoseconds ("Start (ns)") beside a "Name".
  std::size_t scan = 0;
  while (scan < text.size()) {
    std::size_t eol = text.find('\n', scan);
    if (eol == std::string::npos) eol = text.size();
    const std::string_view l = trim(std::string_view(text).substr(scan, eol - scan));
    if (l == kTfliteRuns || l == kTfliteInit || l.starts_with(kTfliteBar)) return parse_tflite(text, display_path);
    if (!l.starts_with("#") && l.find(" (ns)") != std::string_view::npos && l.find("Name") != std::string_view::npos)
      return parse_nsys_csv(text, display_path);
    scan = eol + 1;
  }

  MeasuredTrace trace;
  trace.path = display_path;
  trace.format = MeasuredFormat::plain_csv;
  for (auto& m : parse_measurements_csv(text, display_path)) {
    MeasuredEntry e;
    e.name = m.name;
    e.time_s = m.time_s;
    trace.entries.push_back(std::move(e));
  }
  trace.notes.push_back(fmt::format("{}: {}", measured_format_name(trace.format), core::counted(trace.entries.size(), "row")));
  return trace;
}

std::filesystem::path tensorrt_layer_info_path(const std::filesystem::path& profile) {
  std::string name = profile.filename().string();
  const std::size_t at = name.rfind("profile");
  if (at == std::string::npos) return {};
  name.replace(at, 7, "layers");
  return profile.parent_path() / name;
}

MeasuredTrace read_measured_trace(const std::filesystem::path& path) {
  const std::string display = path.lexically_normal().generic_string();
  MeasuredTrace trace = parse_measured_trace(core::read_file(path), display);
  if (trace.format == MeasuredFormat::tensorrt_profile) {
    const std::filesystem::path info = tensorrt_layer_info_path(path);
    std::error_code ec;
    if (!info.empty() && std::filesystem::is_regular_file(info, ec))
      add_tensorrt_layer_info(trace, core::read_file(info), info.lexically_normal().generic_string());
    else
      trace.notes.push_back(fmt::format(
          "no layer information beside it ({}): the ONNX nodes of each layer are read from its name",
          info.empty() ? "its name has no \"profile\" to replace by \"layers\""
                       : info.lexically_normal().generic_string() + " is missing"));
  }
  return trace;
}

std::vector<model::Measurement> to_measurements(const MeasuredTrace& trace) {
  std::vector<model::Measurement> out;
  if (trace.format == MeasuredFormat::pytorch_trace) {
    // A range name seen several times (one per forward pass when the trace has no steps) is averaged. A range
    // holding no other range stands for its ops; ops directly in a range that holds ranges ("backbone") or in
    // none are listed as "aten::conv2d #k".
    std::vector<bool> holds_ranges(trace.entries.size(), false);
    for (const auto& e : trace.entries)
      if (e.range && e.parent >= 0) holds_ranges[static_cast<std::size_t>(e.parent)] = true;
    std::map<std::string, std::pair<std::size_t, int>> range_slot;  // name -> (index in out, occurrences)
    std::map<std::string, int> occurrence;
    for (const auto& e : trace.entries) {
      if (e.range) {
        auto [it, fresh] = range_slot.try_emplace(e.name, out.size(), 0);
        if (fresh) out.push_back({e.name, 0.0});
        auto& [slot, count] = it->second;
        out[slot].time_s = (out[slot].time_s * count + e.time_s) / (count + 1);
        ++count;
      } else if (e.parent < 0 || holds_ranges[static_cast<std::size_t>(e.parent)]) {
        out.push_back({fmt::format("{} #{}", e.name, ++occurrence[e.name]), e.time_s});
      }
    }
    return out;
  }
  for (const auto& e : trace.entries) out.push_back({recorded_name(trace, e), e.time_s});
  return out;
}

std::vector<model::Measurement> read_measurements(const std::filesystem::path& path) {
  return to_measurements(read_measured_trace(path));
}

MatchedMeasurements match_measurements(const MeasuredTrace& trace, const model::NetworkSpec& net) {
  if (trace.format == MeasuredFormat::tensorrt_profile || trace.format == MeasuredFormat::nsys_csv ||
      trace.format == MeasuredFormat::nsys_sqlite || trace.format == MeasuredFormat::onnxruntime_profile)
    return match_by_origin(trace, net);
  MatchedMeasurements out;
  out.format = trace.format;
  out.notes = trace.notes;
  std::map<std::string, int, std::less<>> layer_index;
  for (std::size_t l = 0; l < net.layers.size(); ++l) layer_index[net.layers[l].name] = static_cast<int>(l);

  std::vector<double> layer_time(net.layers.size(), 0.0);
  std::vector<std::vector<LayerMatch>> found(net.layers.size());
  std::vector<model::Measurement> passthrough;
  auto credit = [&](int layer, const std::string& recorded, MatchMethod method, double time_s) {
    layer_time[static_cast<std::size_t>(layer)] += time_s;
    found[static_cast<std::size_t>(layer)].push_back(
        {net.layers[static_cast<std::size_t>(layer)].name, recorded, method, time_s});
  };
  auto lookup = [&](const std::string& name) -> int {
    auto it = layer_index.find(name);
    return it == layer_index.end() ? -1 : it->second;
  };

  if (trace.format != MeasuredFormat::pytorch_trace) {
    for (const auto& e : trace.entries) {
      int layer = lookup(e.name);
      MatchMethod method = MatchMethod::name;
      if (layer < 0)
        for (const auto& a : e.aliases)
          if ((layer = lookup(a)) >= 0) {
            method = MatchMethod::alias;
            break;
          }
      if (layer >= 0)
        credit(layer, e.name, method, e.time_s);
      else
        passthrough.push_back({recorded_name(trace, e), e.time_s});
    }
  } else {
    // 1. Ranges named after layers (record_function("conv1"), or a module path ending in the layer's name).
    std::vector<int> range_layer(trace.entries.size(), -1);
    std::vector<MatchMethod> range_method(trace.entries.size(), MatchMethod::name);
    for (std::size_t i = 0; i < trace.entries.size(); ++i) {
      const auto& e = trace.entries[i];
      if (!e.range) continue;
      int layer = lookup(e.name);
      if (layer < 0)
        for (const auto& suffix : range_suffixes(e.name))
          if ((layer = lookup(suffix)) >= 0) {
            range_method[i] = MatchMethod::alias;
            break;
          }
      range_layer[i] = layer;
    }
    // The matched range an entry lies in (-1: none), and each matched range's time without the matched ranges
    // inside it.
    auto matched_ancestor = [&](std::size_t i) {
      for (int p = trace.entries[i].parent; p >= 0; p = trace.entries[static_cast<std::size_t>(p)].parent)
        if (range_layer[static_cast<std::size_t>(p)] >= 0) return p;
      return -1;
    };
    std::vector<double> exclusive(trace.entries.size(), 0.0);
    for (std::size_t i = 0; i < trace.entries.size(); ++i)
      if (range_layer[i] >= 0) exclusive[i] = trace.entries[i].time_s;
    for (std::size_t i = 0; i < trace.entries.size(); ++i)
      if (range_layer[i] >= 0)
        if (int a = matched_ancestor(i); a >= 0) exclusive[static_cast<std::size_t>(a)] -= trace.entries[i].time_s;
    // A range name recorded several times (once per forward pass when the trace has no steps): the mean.
    std::vector<std::string> plain_ranges;
    std::map<std::string, std::tuple<int, MatchMethod, double, int>> by_range;  // name -> layer, method, sum, count
    std::vector<std::string> range_order;
    for (std::size_t i = 0; i < trace.entries.size(); ++i) {
      if (!trace.entries[i].range) continue;
      const std::string& name = trace.entries[i].name;
      if (range_layer[i] >= 0) {
        auto [it, fresh] = by_range.try_emplace(name, range_layer[i], range_method[i], 0.0, 0);
        if (fresh) range_order.push_back(name);
        std::get<2>(it->second) += std::max(0.0, exclusive[i]);
        std::get<3>(it->second) += 1;
      } else if (std::find(plain_ranges.begin(), plain_ranges.end(), name) == plain_ranges.end()) {
        plain_ranges.push_back(name);
      }
    }
    int most_repeated = 1;
    for (const auto& name : range_order) {
      const auto& [layer, method, sum, count] = by_range[name];
      credit(layer, name, method, sum / count);
      most_repeated = std::max(most_repeated, count);
    }
    if (most_repeated > 1 && trace.iterations == 1)
      out.notes.push_back(
          fmt::format("layer-named ranges recorded up to {} times (forward passes): averaged", most_repeated));

    // 2. Top-level ops outside matched ranges, by order within their class.
    std::map<std::string, std::vector<std::size_t>> ops_by_class;
    std::vector<std::size_t> unclassified;
    std::size_t inside_ranges = 0;
    std::map<std::string, int> occurrence_of_op;  // "aten::conv2d" -> occurrences so far (for names like "#3")
    std::vector<std::string> occurrence_name(trace.entries.size());
    for (std::size_t i = 0; i < trace.entries.size(); ++i) {
      const auto& e = trace.entries[i];
      if (e.range) continue;
      if (matched_ancestor(i) >= 0) {
        ++inside_ranges;
        continue;
      }
      occurrence_name[i] = fmt::format("{} #{}", e.op, ++occurrence_of_op[e.op]);
      const std::string c = torch_class(e.op);
      if (c.empty())
        unclassified.push_back(i);
      else
        ops_by_class[c].push_back(i);
    }
    std::map<std::string, std::vector<int>> layers_by_class;
    for (std::size_t l = 0; l < net.layers.size(); ++l)
      if (found[l].empty()) layers_by_class[layer_class(net.layers[l])].push_back(static_cast<int>(l));
    // Repetitions: the same op sequence several times is several forward passes (when the trace has no steps).
    std::map<int, std::size_t> votes;
    for (const auto& [c, ops] : ops_by_class) {
      auto it = layers_by_class.find(c);
      if (it == layers_by_class.end() || it->second.empty() || ops.size() % it->second.size() != 0) continue;
      votes[static_cast<int>(ops.size() / it->second.size())] += ops.size();
    }
    int repeats = 1;
    std::size_t best_votes = 0;
    for (const auto& [n, v] : votes)
      if (v > best_votes) {
        best_votes = v;
        repeats = n;
      }
    std::vector<std::string> dim_mismatches, count_mismatches;
    std::size_t order_matched = 0;
    for (const auto& [c, ops] : ops_by_class) {
      auto it = layers_by_class.find(c);
      const std::size_t n = it == layers_by_class.end() ? 0 : it->second.size();
      if (n == 0 || ops.size() != n * static_cast<std::size_t>(repeats)) {
        for (std::size_t i : ops) passthrough.push_back({occurrence_name[i], trace.entries[i].time_s});
        if (n > 0)
          count_mismatches.push_back(fmt::format("{} {} ops but {} {} layers{}", ops.size(), c, n, c,
                                                 repeats > 1 ? fmt::format(" x {} passes", repeats) : ""));
        continue;
      }
      for (std::size_t j = 0; j < ops.size(); ++j) {
        const auto& e = trace.entries[ops[j]];
        const int layer = it->second[j % n];
        if (j < n) {
          // One match per layer: the mean over the passes, under the first pass's name.
          double sum = 0;
          for (std::size_t r = j; r < ops.size(); r += n) sum += trace.entries[ops[r]].time_s;
          credit(layer, occurrence_name[ops[j]] + (repeats > 1 ? fmt::format(" (mean of {} passes)", repeats) : ""),
                 MatchMethod::order, sum / repeats);
          ++order_matched;
        }
        const auto& spec = net.layers[static_cast<std::size_t>(layer)];
        // (aten::addmm and aten::baddbmm take the bias first: their first input is not the layer's.)
        const bool bias_first = e.op == "aten::addmm" || e.op == "aten::baddbmm";
        if (!e.input_dims.empty() && !spec.inputs.empty() && !bias_first) {
          const auto& shape = net.tensors[static_cast<std::size_t>(spec.inputs.front())].shape;
          if (shape != e.input_dims && dim_mismatches.size() < 1000)
            dim_mismatches.push_back(fmt::format("{} reads {} but {} reads {}", occurrence_name[ops[j]],
                                                 model::shape_to_string(e.input_dims), spec.name,
                                                 model::shape_to_string(shape)));
        }
      }
    }
    for (std::size_t i : unclassified) passthrough.push_back({occurrence_name[i], trace.entries[i].time_s});

    if (order_matched > 0) {
      out.notes.push_back(fmt::format(
          "ops outside named ranges matched by order: the k-th op of a type is the k-th layer of that type "
          "(aten::conv2d -> conv2d, aten::linear/addmm/matmul -> linear or matmul, aten::batch_norm -> batchnorm, "
          "...){}",
          repeats > 1 ? fmt::format("; the op sequence holds {} passes over the network: averaged", repeats) : ""));
    }
    if (!count_mismatches.empty())
      out.notes.push_back("not matched by order, the counts disagree: " + core::join_list(count_mismatches, "; "));
    if (!dim_mismatches.empty()) {
      std::vector<std::string> shown(
          dim_mismatches.begin(),
          dim_mismatches.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(3, dim_mismatches.size())));
      out.notes.push_back(fmt::format("input dims disagree for {} order-matched ops (is the order right?): {}{}",
                                      dim_mismatches.size(), core::join_list(shown, "; "),
                                      dim_mismatches.size() > shown.size() ? "; ..." : ""));
    }
    if (!plain_ranges.empty()) {
      std::vector<std::string> shown(
          plain_ranges.begin(),
          plain_ranges.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(5, plain_ranges.size())));
      out.notes.push_back(fmt::format("ranges not named after a layer (their ops were matched on their own): {}{}",
                                      core::join_list(shown, ", "), plain_ranges.size() > shown.size() ? ", ..." : ""));
    }
    if (inside_ranges > 0)
      out.notes.push_back(fmt::format("{} op{} inside layer-named ranges count{} towards those layers", inside_ranges,
                                      inside_ranges == 1 ? "" : "s", inside_ranges == 1 ? "s" : ""));
  }

  // Measurements per layer, in network order; then what matched no layer.
  std::size_t by_name = 0, by_alias = 0, by_order = 0, doubled = 0;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    if (found[l].empty()) continue;
    out.measurements.push_back({net.layers[l].name, layer_time[l]});
    if (found[l].size() > 1) ++doubled;
    for (const auto& m : found[l]) {
      out.matches.push_back(m);
      (m.method == MatchMethod::name ? by_name : m.method == MatchMethod::alias ? by_alias : by_order) += 1;
    }
  }
  for (auto& m : passthrough) out.measurements.push_back(std::move(m));
  std::vector<std::string> methods;
  if (by_name) methods.push_back(fmt::format("{} by name", by_name));
  if (by_alias)
    methods.push_back(fmt::format("{} by alias ({})", by_alias,
                                  trace.format == MeasuredFormat::tflite_profile
                                      ? "the node's output tensor name"
                                      : "a range name ending in the layer's"));
  if (by_order) methods.push_back(fmt::format("{} by order", by_order));
  std::size_t layers_matched = 0;
  for (const auto& f : found) layers_matched += !f.empty();
  out.notes.push_back(fmt::format("matched {} of {} layers of {}{}{}{}", layers_matched, net.layers.size(), net.name,
                                  methods.empty() ? "" : ": ", core::join_list(methods, ", "),
                                  passthrough.empty()
                                      ? std::string()
                                      : fmt::format("; {} recorded name{} matching no layer (a fused kernel's name "
                                                    "still matches)",
                                                    passthrough.size(), passthrough.size() == 1 ? "" : "s")));
  if (doubled > 0)
    out.notes.push_back(fmt::format("{} layer{} matched several recorded entries: their times are summed", doubled,
                                    doubled == 1 ? "" : "s"));
  return out;
}

}  // namespace framesim::trace
