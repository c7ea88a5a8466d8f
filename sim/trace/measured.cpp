// What the readers of measured times share, the plain CSV reader, telling the formats apart (read_measured_trace,
// by the rows of measured_formats(), measured_format_table.cpp), and measurements by recorded name
// (to_measurements). Each other format has its own reader: tflite_profile.cpp,
// pytorch_trace.cpp, tensorrt_profile.cpp, nsys_trace.cpp, onnxruntime_profile.cpp; matching is measured_match.cpp.
#include "trace/measured.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string_view>

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

/// The name a plain or TFLite entry is listed under: a TFLite node under its (first) output tensor's name.
const std::string& recorded_name(const MeasuredTrace& trace, const MeasuredEntry& e) {
  return trace.format == MeasuredFormat::tflite_profile && !e.aliases.empty() ? e.aliases.front() : e.name;
}

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

/// The first line of `text` that only one text format has: benchmark_model's section titles and table bars,
/// Nsight Systems' columns in nanoseconds ("Start (ns)") beside a "Name".
MeasuredFile::Marker first_marker(const std::string& text) {
  std::size_t scan = 0;
  while (scan < text.size()) {
    std::size_t eol = text.find('\n', scan);
    if (eol == std::string::npos) eol = text.size();
    const std::string_view l = trim(std::string_view(text).substr(scan, eol - scan));
    if (is_tflite_profile_line(l)) return MeasuredFile::Marker::tflite;
    if (!l.starts_with("#") && l.find(" (ns)") != std::string_view::npos && l.find("Name") != std::string_view::npos)
      return MeasuredFile::Marker::nsys;
    scan = eol + 1;
  }
  return MeasuredFile::Marker::none;
}

/// The row of measured_formats() that recognises `file`, among the binary rows or the text ones: the rows that
/// are not fallbacks first, in table order, then the fallbacks; nullptr when none does.
const MeasuredFormatTraits* recognise(const MeasuredFile& file, bool binary) {
  for (bool fallback : {false, true})
    for (const auto& row : measured_formats())
      if (row.binary == binary && row.fallback == fallback && row.recognises(file)) return &row;
  return nullptr;
}

}  // namespace

MeasuredTrace parse_plain_csv(const std::string& text, const std::string& display_path) {
  MeasuredTrace trace;
  trace.path = display_path;
  trace.format = MeasuredFormat::plain_csv;
  for (auto& m : parse_measurements_csv(text, display_path)) {
    MeasuredEntry e;
    e.name = m.name;
    e.time_s = m.time_s;
    trace.entries.push_back(std::move(e));
  }
  trace.notes.push_back(
      fmt::format("{}: {}", measured_format_name(trace.format), core::counted(trace.entries.size(), "row")));
  return trace;
}

MeasuredTrace parse_measured_trace(const std::string& text_in, const std::string& display_path) {
  if (text_in.size() >= 2 && static_cast<unsigned char>(text_in[0]) == 0x1f &&
      static_cast<unsigned char>(text_in[1]) == 0x8b)
    throw core::UserError(
        {core::Diagnostic{{display_path, 1, 1}, "", "a gzip-compressed file: decompress it first (gunzip)"}});
  // A binary format (SQLite: Nsight Systems) is recognised on its bytes; every other format is text and must be
  // UTF-8.
  if (const auto* row = recognise(MeasuredFile(text_in, display_path), true))
    return row->read(MeasuredFile(text_in, display_path));
  const std::string text = text_of_trace(text_in, display_path);
  // Skip leading blank and '#' comment lines to see what the content is.
  MeasuredFile file(text, display_path);
  skip_comment_lines(text, file.pos, file.line);
  std::size_t first = file.pos;
  while (first < text.size() && (text[first] == ' ' || text[first] == '\t' || text[first] == '\r')) ++first;
  file.json = first < text.size() && (text[first] == '{' || text[first] == '[');
  if (file.json) {
    file.json_head = json_head(text, first, std::size_t{64} * 1024);
    if (file.json_head.starts_with("{\"Layers\":"))
      throw core::UserError({core::Diagnostic{
          {display_path, file.line, 1},
          "",
          "this is trtexec's layer information (--exportLayerInfo): it holds no times; give the profile "
          "(--exportProfile) and put this file beside it, named like the profile with \"profile\" replaced by "
          "\"layers\""}});
  } else {
    file.marker = first_marker(text);
  }
  const auto* row = recognise(file, false);
  FRAMESIM_ASSERT(row != nullptr, "the fallback rows recognise any JSON and any other text");
  return row->read(file);
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
      trace.notes.push_back(
          fmt::format("no layer information beside it ({}): the ONNX nodes of each layer are read from its name",
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

}  // namespace framesim::trace
