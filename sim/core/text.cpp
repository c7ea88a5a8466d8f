#include "core/text.hpp"

#include <algorithm>

namespace framesim::core {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insertions, deletions, substitutions and swaps of neighbours cost one.
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
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
