#include "trace/measured.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace framesim::trace {

namespace {

struct TimeColumn {
  std::string name;
  double scale;  // 0: cells carry their own unit
};

const std::vector<TimeColumn> kTimeColumns{{"time", 0}, {"time_s", 1}, {"time_ms", 1e-3}, {"time_us", 1e-6},
                                           {"time_ns", 1e-9}};
const std::vector<std::string> kNameColumns{"layer", "name", "kernel"};

}  // namespace

std::vector<model::Measurement> parse_measurements_csv(const std::string& text, const std::string& display_path) {
  core::Diagnostics d;
  std::string csv_error;
  int csv_error_line = 0;
  const auto rows = core::parse_csv(text, &csv_error, &csv_error_line);
  if (!csv_error.empty()) d.add({display_path, csv_error_line, 1}, "", csv_error);
  if (rows.empty()) {
    d.add({display_path, 1, 1}, "", "no header: expected a line like \"layer,time\"");
    d.throw_if_any();
  }
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
    if (!matched) {
      std::string message = fmt::format("unknown column \"{}\"", cell.text);
      if (auto near = core::closest_match(cell.text, known)) message += fmt::format(" (did you mean \"{}\"?)", *near);
      else message += fmt::format("; columns: {}", core::join_list(known, ", "));
      d.add({display_path, header.line, cell.column}, "header", message);
    }
  }
  if (name_col < 0) d.add({display_path, header.line, 1}, "header", "no layer column (layer, name or kernel)");
  if (time_col < 0)
    d.add({display_path, header.line, 1}, "header", "no time column (time, time_s, time_ms, time_us or time_ns)");
  d.throw_if_any();

  std::vector<model::Measurement> out;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (row.cells.size() != header.cells.size()) {
      d.add({display_path, row.line, 1}, "",
            fmt::format("expected {} columns like the header, got {}", header.cells.size(), row.cells.size()));
      continue;
    }
    const auto& name = row.cells[static_cast<std::size_t>(name_col)];
    const auto& time = row.cells[static_cast<std::size_t>(time_col)];
    if (name.text.empty()) d.add({display_path, row.line, name.column}, header.cells[static_cast<std::size_t>(name_col)].text, "empty layer name");
    double seconds = 0;
    const std::string& column = header.cells[static_cast<std::size_t>(time_col)].text;
    if (scale == 0) {
      auto q = core::parse_quantity(time.text, core::Dimension::Seconds);
      if (!q.value) {
        d.add({display_path, row.line, time.column}, column, q.error);
        continue;
      }
      seconds = *q.value;
    } else {
      double v = 0;
      auto [ptr, ec] = std::from_chars(time.text.data(), time.text.data() + time.text.size(), v);
      if (ec != std::errc() || ptr != time.text.data() + time.text.size() || !std::isfinite(v)) {
        d.add({display_path, row.line, time.column}, column, fmt::format("expected a number, got \"{}\"", time.text));
        continue;
      }
      seconds = v * scale;
    }
    if (seconds < 0) {
      d.add({display_path, row.line, time.column}, column, fmt::format("must not be negative, got \"{}\"", time.text));
      continue;
    }
    out.push_back({name.text, seconds});
  }
  if (out.empty() && d.empty()) d.add({display_path, header.line, 1}, "", "no measurements after the header");
  d.throw_if_any();
  return out;
}

std::vector<model::Measurement> read_measurements(const std::filesystem::path& path) {
  const std::string display = path.lexically_normal().generic_string();
  return parse_measurements_csv(core::read_file(path), display);
}

}  // namespace framesim::trace
