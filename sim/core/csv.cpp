#include "core/csv.hpp"

namespace framesim::core {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::vector<CsvRow> parse_csv(const std::string& text, std::string* error, int* error_line) {
  std::vector<CsvRow> rows;
  std::size_t i = 0;
  int line = 1;
  while (i < text.size()) {
    // Skip blank and comment lines.
    const std::size_t eol = text.find('\n', i);
    const std::size_t end = eol == std::string::npos ? text.size() : eol;
    std::string_view raw(text.data() + i, end - i);
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    if (raw.find_first_not_of(" \t") == std::string_view::npos || raw.front() == '#') {
      i = end + 1;
      ++line;
      continue;
    }
    CsvRow row;
    row.line = line;
    CsvCell cell;
    cell.column = 1;
    std::size_t line_start = i;
    bool quoted = false;
    bool done = false;
    while (!done) {
      if (i >= text.size()) {
        if (quoted) {
          if (error) *error = "unterminated quoted field";
          if (error_line) *error_line = row.line;
          return rows;
        }
        row.cells.push_back(cell);
        done = true;
        break;
      }
      const char c = text[i];
      if (quoted) {
        if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
          cell.text += '"';
          i += 2;
        } else if (c == '"') {
          quoted = false;
          ++i;
        } else {
          if (c == '\n') {
            ++line;
            line_start = i + 1;
          }
          cell.text += c;
          ++i;
        }
      } else if (c == '"' && cell.text.empty()) {
        quoted = true;
        ++i;
      } else if (c == ',') {
        row.cells.push_back(cell);
        cell = CsvCell{};
        cell.column = static_cast<int>(i + 2 - line_start);
        ++i;
      } else if (c == '\n' || c == '\r') {
        row.cells.push_back(cell);
        if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
        ++i;
        ++line;
        done = true;
      } else {
        cell.text += c;
        ++i;
      }
    }
    for (auto& c : row.cells) {
      const auto b = c.text.find_first_not_of(" \t");
      const auto e = c.text.find_last_not_of(" \t");
      c.text = b == std::string::npos ? std::string() : c.text.substr(b, e - b + 1);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace framesim::core
