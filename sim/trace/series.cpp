#include "trace/series.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/text.hpp"
#include "trace/csv_table.hpp"

namespace framesim::trace {

namespace {

struct Column {
  int index = -1;
  double scale = 0;  // 0: cells carry units
};

const std::vector<std::pair<std::string, double>> kTimeColumns{
    {"time", 0}, {"time_s", 1}, {"time_ms", 1e-3}, {"time_us", 1e-6}, {"time_ns", 1e-9}, {"timestamp_ns", 1e-9}};

}  // namespace

std::vector<SeriesPoint> parse_series(const std::string& text, const std::string& display_path,
                                      const std::optional<ValueColumn>& value) {
  core::Diagnostics d;
  const auto rows = read_table(text_of_trace(text, display_path), display_path, "\"time_s\" or \"time_s,rate\"", d);
  const auto& header = rows.front();
  Column time, val;
  std::vector<std::string> known;
  for (const auto& [n, s] : kTimeColumns) known.push_back(n);
  if (value) {
    known.push_back(value->name);
    for (const auto& [n, s] : value->bare) known.push_back(n);
  }
  for (std::size_t c = 0; c < header.cells.size(); ++c) {
    const auto& cell = header.cells[c];
    bool matched = false;
    for (const auto& [n, s] : kTimeColumns)
      if (cell.text == n) {
        if (time.index >= 0) d.add({display_path, header.line, cell.column}, "header", "a second time column");
        time = {static_cast<int>(c), s};
        matched = true;
      }
    if (value) {
      if (cell.text == value->name) {
        val = {static_cast<int>(c), 0};
        matched = true;
      }
      for (const auto& [n, s] : value->bare)
        if (cell.text == n) {
          val = {static_cast<int>(c), s};
          matched = true;
        }
    }
    if (!matched) report_unknown_column(header, cell, known, display_path, d);
  }
  if (time.index < 0)
    d.add({display_path, header.line, 1}, "header",
          "no time column (time, time_s, time_ms, time_us, time_ns or timestamp_ns)");
  if (value && val.index < 0)
    d.add({display_path, header.line, 1}, "header", fmt::format("no {} column ({})", value->name, [&] {
            std::vector<std::string> names{value->name};
            for (const auto& [n, s] : value->bare) names.push_back(n);
            return core::join_list(names, ", ");
          }()));
  d.throw_if_any();

  std::vector<SeriesPoint> out;
  std::optional<double> first;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (!has_header_width(row, header, display_path, d)) continue;
    const auto& tcell = row.cells[static_cast<std::size_t>(time.index)];
    auto t = read_cell(tcell, row.line, time.scale, core::Dimension::Seconds,
                       header.cells[static_cast<std::size_t>(time.index)].text, display_path, d);
    std::optional<double> v = 0.0;
    if (value)
      v = read_cell(row.cells[static_cast<std::size_t>(val.index)], row.line, val.scale, value->dimension,
                    header.cells[static_cast<std::size_t>(val.index)].text, display_path, d);
    if (v && value && value->non_negative && *v < 0) {
      const auto& vcell = row.cells[static_cast<std::size_t>(val.index)];
      d.add({display_path, row.line, vcell.column}, header.cells[static_cast<std::size_t>(val.index)].text,
            fmt::format("must not be negative, got \"{}\"", core::quote_capped(vcell.text)));
      continue;
    }
    if (!t || !v) continue;
    if (!first) first = *t;
    const double rel = *t - *first;
    if (!out.empty() && rel < out.back().time_s) {
      d.add({display_path, row.line, tcell.column}, header.cells[static_cast<std::size_t>(time.index)].text,
            fmt::format("times must not decrease: \"{}\" comes after a later time", tcell.text));
      continue;
    }
    out.push_back({rel, *v});
  }
  if (out.empty() && d.empty()) d.add({display_path, header.line, 1}, "", "no rows after the header");
  d.throw_if_any();
  return out;
}

std::vector<SeriesPoint> read_series(const std::filesystem::path& path, const std::optional<ValueColumn>& value) {
  return parse_series(core::read_file(path), path.lexically_normal().generic_string(), value);
}

}  // namespace framesim::trace
