// Reading a CSV table with a header, as the plain measured-times CSV (measured.cpp) and the time series
// (series.cpp) both do: one place for the steps and messages they share, so both word a problem alike.
// Internal to trace/.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace framesim::trace {

/// A whole-string number (from_chars: no leading '+', no spaces), finite; nullopt otherwise.
std::optional<double> whole_number(std::string_view text);

/// `text` of a trace file without a leading byte order mark. Throws core::UserError at the line and column of
/// the first byte that is not valid UTF-8 (names in reports and JSON must be text).
std::string text_of_trace(const std::string& text, const std::string& display_path);

/// The rows of `text`, the header first. A CSV syntax error is added to `d`; a text without a header throws
/// core::UserError with what `d` holds and "no header: expected a line like <header_example>".
std::vector<core::CsvRow> read_table(const std::string& text, const std::string& display_path,
                                     std::string_view header_example, core::Diagnostics& d);

/// Adds "unknown column" for a header cell that is none of `known`, naming the nearest or listing them all.
void report_unknown_column(const core::CsvRow& header, const core::CsvCell& cell, const std::vector<std::string>& known,
                           const std::string& display_path, core::Diagnostics& d);

/// Column name -> index of every known header cell; an unknown column (report_unknown_column) or one named
/// twice is added to `d`.
std::map<std::string, int> header_index(const core::CsvRow& header, const std::vector<std::string>& known,
                                        const std::string& display_path, core::Diagnostics& d);

/// A table whose header names its columns: the rows (header first) and column name -> index.
struct NamedTable {
  std::string display_path;      // the file as messages name it
  std::filesystem::path folder;  // where the file is: relative paths in it start here
  std::vector<core::CsvRow> rows;
  std::map<std::string, int> index;
  bool complete = true;  // every required column is there
  /// The cell of column `name` in `row`, nullptr when the table has no such column.
  const core::CsvCell* cell(const core::CsvRow& row, const std::string& name) const;
};

/// read_table of the file at `path`, then header_index against `known`, and "no <column> column" for each of
/// `required` missing.
NamedTable read_named_table(const std::filesystem::path& path, std::string_view header_example,
                            const std::vector<std::string>& known, const std::vector<std::string>& required,
                            core::Diagnostics& d);

/// True if `row` has as many cells as `header`; otherwise adds a problem for the row.
bool has_header_width(const core::CsvRow& row, const core::CsvRow& header, const std::string& display_path,
                      core::Diagnostics& d);

/// A cell's value in SI units: a quantity with its unit when `scale` is 0, else a bare number times `scale`.
/// A bad cell is added to `d` under `column` (its header name) and gives nullopt.
std::optional<double> read_cell(const core::CsvCell& cell, int line, double scale, core::Dimension dimension,
                                const std::string& column, const std::string& display_path, core::Diagnostics& d);

}  // namespace framesim::trace
