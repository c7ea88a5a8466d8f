#include "core/text.hpp"

#include <algorithm>
#include <cstdint>

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
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  // A word far longer than every candidate is no typo of one (and its distance would cost length x length).
  std::size_t longest = 0;
  for (const auto& c : candidates) longest = std::max(longest, c.size());
  if (word.size() > 2 * longest + 3) return std::nullopt;
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

std::string quote_capped(std::string_view text, std::size_t max_chars) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    // Count the bytes that start a character (not UTF-8 continuation bytes).
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (chars == max_chars) return std::string(text.substr(0, i)) + "\u2026";
    ++chars;
  }
  return std::string(text);
}

std::optional<std::size_t> invalid_utf8_offset(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    std::uint32_t code = 0;
    if (c >= 0xC2 && c <= 0xDF) length = 2, code = c & 0x1Fu;
    else if (c >= 0xE0 && c <= 0xEF) length = 3, code = c & 0x0Fu;
    else if (c >= 0xF0 && c <= 0xF4) length = 4, code = c & 0x07u;
    else return i;
    if (i + length > n) return i;
    for (std::size_t k = 1; k < length; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      code = (code << 6) | (s[i + k] & 0x3Fu);
    }
    const bool overlong = (length == 3 && code < 0x800) || (length == 4 && code < 0x10000);
    if (overlong || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) return i;
    i += length;
  }
  return std::nullopt;
}

std::string to_valid_utf8(std::string_view text) {
  std::string out;
  while (auto bad = invalid_utf8_offset(text)) {
    out.append(text.substr(0, *bad));
    out += "\uFFFD";
    text.remove_prefix(*bad + 1);
  }
  out.append(text);
  return out;
}

std::pair<int, int> line_column(std::string_view text, std::size_t offset) {
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, static_cast<int>(offset - line_start + 1)};
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

std::string counted(std::size_t count, std::string_view noun, std::string_view plural) {
  if (count == 1) return "1 " + std::string(noun);
  return std::to_string(count) + " " + (plural.empty() ? std::string(noun) + "s" : std::string(plural));
}

std::string with_article(std::string_view noun) {
  const bool vowel = !noun.empty() && std::string_view("aeiouAEIOU").find(noun.front()) != std::string_view::npos;
  return (vowel ? "an " : "a ") + std::string(noun);
}

}  // namespace framesim::core
