#include "core/text.hpp"

#include <algorithm>
#include <numeric>

namespace framesim::core {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (!best || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  // A typo is at most a third of the word (at least one edit) away.
  const std::size_t limit = std::max<std::size_t>(1, std::max(word.size(), std::size_t{3}) / 3);
  if (best && best_distance <= limit) return best;
  return std::nullopt;
}

std::string join_list(const std::vector<std::string>& items, std::string_view separator, bool quote) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    if (quote) out += '"';
    out += item;
    if (quote) out += '"';
  }
  return out;
}

}  // namespace framesim::core
