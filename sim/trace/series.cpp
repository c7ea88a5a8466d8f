#include "trace/series.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/text.hpp"

namespace framesim::trace {

namespace {

struct Column {
  int index = -1;
  double scale = 0;  // 0: cells carry units
};

const std::vector<std::pair<std::string, double>> kTimeColumns{{"time", 0},       {"time_s", 1},
                                                               {"time_ms", 1e-3}, {"time_us", 1e-6},
                                                               {"time_ns", 1e-9}, {"timestamp_ns", 1e-9}};

std::optional<double> bare_number(const std::string& text) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::vector<SeriesPoint> parse_series(const std::string& text, const std::string& display_path,
                                      const std::optional<ValueColumn>& value) {
  core::Diagnostics d;
  std::string csv_error;
  int csv_line = 0;
  const auto rows = core::parse_csv(text, &csv_error, &csv_line);
  if (!csv_error.empty()) d.add({display_path, csv_line, 1}, "", csv_error);
  if (rows.empty()) {
    d.add({display_path, 1, 1}, "", "no header: expected a line like \"time_s\" or \"time_s,rate\"");
    d.throw_if_any();
  }
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
    if (!matched) {
      std::string message = fmt::format("unknown column \"{}\"", cell.text);
      if (auto near = core::closest_match(cell.text, known)) message += fmt::format(" (did you mean \"{}\"?)", *near);
      else message += fmt::format("; columns: {}", core::join_list(known, ", "));
      d.add({display_path, header.line, cell.column}, "header", message);
    }
  }
  if (time.index < 0) d.add({display_path, header.line, 1}, "header", "no time column (time, time_s, time_ms, time_us, time_ns or timestamp_ns)");
  if (value && val.index < 0)
    d.add({display_path, header.line, 1}, "header", fmt::format("no {} column ({})", value->name, [&] {
            std::vector<std::string> names{value->name};
            for (const auto& [n, s] : value->bare) names.push_back(n);
            return core::join_list(names, ", ");
          }()));
  d.throw_if_any();

  auto read = [&](const core::CsvCell& cell, int line, double scale, core::Dimension dim,
                  const std::string& column) -> std::optional<double> {
    if (scale == 0) {
      auto q = core::parse_quantity(cell.text, dim);
      if (!q.value) d.add({display_path, line, cell.column}, column, q.error);
      return q.value;
    }
    auto v = bare_number(cell.text);
    if (!v) d.add({display_path, line, cell.column}, column, fmt::format("expected a number, got \"{}\"", cell.text));
    return v ? std::optional<double>(*v * scale) : std::nullopt;
  };
  std::vector<SeriesPoint> out;
  std::optional<double> first;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (row.cells.size() != header.cells.size()) {
      d.add({display_path, row.line, 1}, "",
            fmt::format("expected {} columns like the header, got {}", header.cells.size(), row.cells.size()));
      continue;
    }
    const auto& tcell = row.cells[static_cast<std::size_t>(time.index)];
    auto t = read(tcell, row.line, time.scale, core::Dimension::Seconds, header.cells[static_cast<std::size_t>(time.index)].text);
    std::optional<double> v = 0.0;
    if (value)
      v = read(row.cells[static_cast<std::size_t>(val.index)], row.line, val.scale, value->dimension,
               header.cells[static_cast<std::size_t>(val.index)].text);
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
