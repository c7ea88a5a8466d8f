#include "trace/csv_table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/files.hpp"
#include "core/text.hpp"

namespace framesim::trace {

std::optional<double> whole_number(std::string_view text) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string text_of_trace(const std::string& text, const std::string& display_path) {
  std::string_view body = text;
  if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);  // a byte order mark: accepted, not content
  if (auto bad = core::invalid_utf8_offset(body)) {
    const auto [line, column] = core::line_column(body, *bad);
    throw core::UserError({core::Diagnostic{
        {display_path, line, column},
        "",
        fmt::format("the text is not valid UTF-8 (byte 0x{:02X})", static_cast<unsigned char>(body[*bad]))}});
  }
  return std::string(body);
}

std::vector<core::CsvRow> read_table(const std::string& text, const std::string& display_path,
                                     std::string_view header_example, core::Diagnostics& d) {
  std::string csv_error;
  int csv_error_line = 0;
  auto rows = core::parse_csv(text, &csv_error, &csv_error_line);
  if (!csv_error.empty()) d.add({display_path, csv_error_line, 1}, "", csv_error);
  if (rows.empty()) {
    d.add({display_path, 1, 1}, "", fmt::format("no header: expected a line like {}", header_example));
    d.throw_if_any();
  }
  return rows;
}

void report_unknown_column(const core::CsvRow& header, const core::CsvCell& cell, const std::vector<std::string>& known,
                           const std::string& display_path, core::Diagnostics& d) {
  std::string message = fmt::format("unknown column \"{}\"", core::quote_capped(cell.text));
  if (auto near = core::closest_match(cell.text, known)) message += fmt::format(" (did you mean \"{}\"?)", *near);
  else message += fmt::format("; columns: {}", core::join_list(known, ", "));
  d.add({display_path, header.line, cell.column}, "header", message);
}

bool has_header_width(const core::CsvRow& row, const core::CsvRow& header, const std::string& display_path,
                      core::Diagnostics& d) {
  if (row.cells.size() == header.cells.size()) return true;
  d.add({display_path, row.line, 1}, "",
        fmt::format("expected {} columns like the header, got {}", header.cells.size(), row.cells.size()));
  return false;
}

std::map<std::string, int> header_index(const core::CsvRow& header, const std::vector<std::string>& known,
                                        const std::string& display_path, core::Diagnostics& d) {
  std::map<std::string, int> index;
  for (std::size_t i = 0; i < header.cells.size(); ++i) {
    const auto& cell = header.cells[i];
    if (std::find(known.begin(), known.end(), cell.text) == known.end()) {
      report_unknown_column(header, cell, known, display_path, d);
      continue;
    }
    if (!index.emplace(cell.text, static_cast<int>(i)).second)
      d.add({display_path, header.line, cell.column}, "header", fmt::format("column \"{}\" twice", cell.text));
  }
  return index;
}

const core::CsvCell* NamedTable::cell(const core::CsvRow& row, const std::string& name) const {
  auto it = index.find(name);
  return it == index.end() ? nullptr : &row.cells[static_cast<std::size_t>(it->second)];
}

NamedTable read_named_table(const std::filesystem::path& path, std::string_view header_example,
                            const std::vector<std::string>& known, const std::vector<std::string>& required,
                            core::Diagnostics& d) {
  NamedTable t;
  t.display_path = path.lexically_normal().generic_string();
  t.folder = path.parent_path();
  t.rows = read_table(core::read_file(path), t.display_path, header_example, d);
  const core::CsvRow& header = t.rows.front();
  t.index = header_index(header, known, t.display_path, d);
  for (const auto& column : required) {
    if (t.index.count(column)) continue;
    d.add({t.display_path, header.line, 1}, "header", fmt::format("no {} column", column));
    t.complete = false;
  }
  return t;
}

std::optional<double> read_cell(const core::CsvCell& cell, int line, double scale, core::Dimension dimension,
                                const std::string& column, const std::string& display_path, core::Diagnostics& d) {
  if (scale == 0) {
    auto q = core::parse_quantity(cell.text, dimension);
    if (!q.value) d.add({display_path, line, cell.column}, column, q.error);
    return q.value;
  }
  const auto v = whole_number(cell.text);
  if (!v) {
    d.add({display_path, line, cell.column}, column,
          fmt::format("expected a number, got \"{}\"", core::quote_capped(cell.text)));
    return std::nullopt;
  }
  if (auto problem = core::quantity_range_problem(*v * scale, dimension)) {
    d.add({display_path, line, cell.column}, column,
          fmt::format("\"{}\" is out of range ({})", core::quote_capped(cell.text), *problem));
    return std::nullopt;
  }
  return *v * scale;
}

}  // namespace framesim::trace
