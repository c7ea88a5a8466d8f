// The machine-readable block in an example's header: the `# expect:` lines, the single source of every
// number an example promises (examples/README.md describes the format). One parser, used by the examples
// test; it shares no code with framesim.
//
//   # expect: SELECTOR = VALUE ± TOLERANCE     TOLERANCE absolute (in VALUE's unit), or relative as `0.1%`
//   # expect: SELECTOR contains "TEXT"         the selected value, as JSON text, contains TEXT
//
// SELECTOR names a value in the run folder:
//   a summary.json path:  windows.all.stages.sa.service_s.max, frames.drops_by."slow: queue_full"
//                         (dot-separated keys; a key with dots or spaces is quoted; a number indexes an array)
//   a CSV cell:           stages.csv[stage=acc,frame=0].end_s  (the one row whose columns equal the values:
//                         as text, or as numbers within 1e-9 relative; then the column)
#pragma once

#include <cctype>
#include <cmath>
#include <cstddef>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace framesim::examples {

/// A CSV cell: the file in the run folder, the columns a row must match, the column to read.
struct CsvCell {
  std::string file;
  std::vector<std::pair<std::string, std::string>> match;
  std::string column;
};

/// One `# expect:` line.
struct Expectation {
  int line = 0;                        // 1-based line in the scenario file
  std::string selector;                // as written
  std::optional<CsvCell> csv;          // a CSV cell, or else
  std::vector<std::string> json_path;  // summary.json keys from the root
  bool is_text = false;                // `contains` rather than a number
  std::string text;                    // for `contains`
  double value = 0;
  double tolerance = 0;  // absolute, after converting a relative one
};

/// A malformed `# expect:` line: `what()` names the line.
class ExpectError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

inline std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

/// A whole string as a finite double, or nothing.
inline std::optional<double> number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t used = 0;
  try {
    const double v = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

/// A comment that means to be an expectation: `expect`, in any case and with any ending (`Expect`, `expects`,
/// `expected`), then a colon. Prose that starts with "expected" and has no colon after the word is not one.
inline bool looks_like_expect(const std::string& comment) {
  std::size_t i = 0;
  while (i < comment.size() && std::isalpha(static_cast<unsigned char>(comment[i]))) ++i;
  std::string word = comment.substr(0, i);
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (word.rfind("expect", 0) != 0) return false;
  while (i < comment.size() && comment[i] == ' ') ++i;
  return i < comment.size() && comment[i] == ':';
}

/// Splits a summary.json path at dots outside double quotes; quotes are removed.
inline std::vector<std::string> json_path(const std::string& selector, const std::string& where) {
  std::vector<std::string> keys(1);
  bool quoted = false, was_quoted = false;
  for (const char c : selector) {
    if (c == '"') {
      quoted = !quoted;
      was_quoted = true;
    } else if (c == '.' && !quoted) {
      if (keys.back().empty() && !was_quoted) throw ExpectError(where + ": empty key in \"" + selector + "\"");
      keys.emplace_back();
      was_quoted = false;
    } else {
      keys.back() += c;
    }
  }
  if (quoted) throw ExpectError(where + ": unclosed quote in \"" + selector + "\"");
  if (keys.back().empty() && !was_quoted) throw ExpectError(where + ": empty key in \"" + selector + "\"");
  return keys;
}

/// `FILE.csv[COL=VAL,...].COLUMN`
inline CsvCell csv_cell(const std::string& selector, const std::string& where) {
  const auto open = selector.find('[');
  const auto close = selector.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open || close + 1 >= selector.size() ||
      selector[close + 1] != '.')
    throw ExpectError(where + ": a CSV cell is FILE.csv[COLUMN=VALUE,...].COLUMN, got \"" + selector + "\"");
  CsvCell cell;
  cell.file = selector.substr(0, open);
  cell.column = selector.substr(close + 2);
  const std::string inside = selector.substr(open + 1, close - open - 1);
  std::size_t start = 0;
  while (start <= inside.size()) {
    const auto comma = inside.find(',', start);
    const std::string part = inside.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto eq = part.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == part.size())
      throw ExpectError(where + ": row condition \"" + part + "\" is not COLUMN=VALUE");
    cell.match.emplace_back(trim(part.substr(0, eq)), trim(part.substr(eq + 1)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (cell.column.empty()) throw ExpectError(where + ": no column after the row in \"" + selector + "\"");
  return cell;
}

}  // namespace detail

/// The largest tolerance an expectation may state, relative to its value (a zero value: absolute 1e-9):
/// an expectation looser than this could not catch a wrong engine.
inline constexpr double kLoosestRelativeTolerance = 0.02;

/// Every `# expect:` line of `text` (a scenario file), in order. A comment line that starts with
/// `expect` but does not parse throws: a typo must not silently drop a check.
inline std::vector<Expectation> parse_expectations(const std::string& text, const std::string& file_name) {
  std::vector<Expectation> out;
  std::size_t begin = 0;
  int line_number = 0;
  while (begin < text.size()) {
    auto end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = detail::trim(text.substr(begin, end - begin));
    begin = end + 1;
    ++line_number;
    if (line.empty() || line[0] != '#') continue;
    const std::string comment = detail::trim(line.substr(1));
    if (!detail::looks_like_expect(comment)) continue;
    const std::string where = file_name + ":" + std::to_string(line_number);
    if (comment.rfind("expect:", 0) != 0) throw ExpectError(where + ": write `# expect: ...`");
    const std::string body = detail::trim(comment.substr(7));
    Expectation e;
    e.line = line_number;
    std::string rest;
    if (const auto eq = body.find(" = "); eq != std::string::npos) {
      e.selector = detail::trim(body.substr(0, eq));
      rest = detail::trim(body.substr(eq + 3));
      const auto pm = rest.find("±");
      if (pm == std::string::npos) throw ExpectError(where + ": `= VALUE ± TOLERANCE` needs the ±");
      const auto value = detail::number(detail::trim(rest.substr(0, pm)));
      std::string tolerance_text = detail::trim(rest.substr(pm + std::string("±").size()));
      const bool relative = !tolerance_text.empty() && tolerance_text.back() == '%';
      if (relative) tolerance_text = detail::trim(tolerance_text.substr(0, tolerance_text.size() - 1));
      const auto tolerance = detail::number(tolerance_text);
      if (!value) throw ExpectError(where + ": the value \"" + detail::trim(rest.substr(0, pm)) + "\" is not a number");
      if (!tolerance || *tolerance < 0) throw ExpectError(where + ": the tolerance is not a number >= 0");
      e.value = *value;
      e.tolerance = relative ? *tolerance / 100 * std::fabs(*value) : *tolerance;
      const double loosest = e.value == 0 ? 1e-9 : kLoosestRelativeTolerance * std::fabs(e.value);
      if (e.tolerance > loosest) {
        std::ostringstream message;
        message << where << ": the tolerance is looser than " << kLoosestRelativeTolerance * 100
                << " % of the value (1e-9 for a zero): it could not catch a wrong result";
        throw ExpectError(message.str());
      }
    } else if (const auto c = body.find(" contains "); c != std::string::npos) {
      e.selector = detail::trim(body.substr(0, c));
      rest = detail::trim(body.substr(c + 10));
      if (rest.size() < 2 || rest.front() != '"' || rest.back() != '"')
        throw ExpectError(where + ": `contains` takes a \"quoted text\"");
      e.is_text = true;
      e.text = rest.substr(1, rest.size() - 2);
    } else {
      throw ExpectError(where + ": write `SELECTOR = VALUE ± TOLERANCE` or `SELECTOR contains \"TEXT\"`");
    }
    if (e.selector.empty()) throw ExpectError(where + ": no selector");
    const auto dot_csv = e.selector.find(".csv[");
    if (dot_csv != std::string::npos) e.csv = detail::csv_cell(e.selector, where);
    else e.json_path = detail::json_path(e.selector, where);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace framesim::examples
