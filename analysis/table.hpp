// Plain-text tables for terminal reports: columns sized to their content, numbers right-aligned.
#pragma once

#include <string>
#include <vector>

namespace framesim::analysis {

class Table {
 public:
  enum class Align { left, right };
  explicit Table(std::vector<std::string> header, std::vector<Align> align = {});
  void add(std::vector<std::string> row);
  bool empty() const { return rows_.empty(); }
  /// Renders with `indent` spaces before each line and two spaces between columns.
  std::string render(int indent = 2) const;

 private:
  std::vector<std::string> header_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

/// Display width of UTF-8 text (code points; every character framesim prints is one column wide).
std::size_t display_width(const std::string& s);

}  // namespace framesim::analysis
