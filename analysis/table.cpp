#include "table.hpp"

#include <algorithm>

namespace framesim::analysis {

std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

Table::Table(std::vector<std::string> header, std::vector<Align> align)
    : header_(std::move(header)), align_(std::move(align)) {
  const bool defaulted = align_.empty();  // no alignment given: the first column (names) left, numbers right
  align_.resize(header_.size(), Align::right);
  if (defaulted && !align_.empty()) align_[0] = Align::left;
}

void Table::add(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
}

std::string Table::render(int indent) const {
  std::vector<std::size_t> width(header_.size(), 0);
  for (std::size_t c = 0; c < header_.size(); ++c) width[c] = display_width(header_[c]);
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], display_width(row[c]));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out(static_cast<std::size_t>(indent), ' ');
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::size_t pad = width[c] - display_width(cells[c]);
      const bool last = c + 1 == cells.size();
      if (align_[c] == Align::right) out += std::string(pad, ' ') + cells[c];
      else out += cells[c] + (last ? "" : std::string(pad, ' '));
      if (!last) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header_);
  for (const auto& row : rows_) out += line(row);
  return out;
}

}  // namespace framesim::analysis
