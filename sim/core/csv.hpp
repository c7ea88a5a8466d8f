// Minimal CSV reading (RFC 4180 quoting) that keeps line and column numbers for messages.
#pragma once

#include <string>
#include <vector>

namespace framesim::core {

struct CsvCell {
  std::string text;
  int column = 0;  // 1-based character column where the cell starts
};

struct CsvRow {
  int line = 0;  // 1-based
  std::vector<CsvCell> cells;
};

/// Splits `text` into rows; blank lines and lines starting with '#' are skipped.
/// An unterminated quote is reported through `error` (line, message) and ends reading.
/// `text` as one CSV field: quoted (inner quotes doubled) when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& text);

std::vector<CsvRow> parse_csv(const std::string& text, std::string* error = nullptr, int* error_line = nullptr);

}  // namespace framesim::core
