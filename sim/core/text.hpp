// Small text helpers shared by every library: suggestions for misspelt names and list joining.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace framesim::core {

/// Edit distance between two strings (bytes), counting a swap of neighbouring characters as one edit.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` if it is close enough to be a likely typo, else nothing.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// `text` as an error message quotes it: at most `max_chars` characters (UTF-8 aware), then "…" when cut.
/// A 10-MB value is never echoed whole.
std::string quote_capped(std::string_view text, std::size_t max_chars = 80);

/// Byte offset of the first byte of `text` that is not valid UTF-8 (overlong forms, surrogates and code
/// points above U+10FFFF included), or nothing when all of it is valid.
std::optional<std::size_t> invalid_utf8_offset(std::string_view text);

/// `text` with each byte that is not part of valid UTF-8 replaced by U+FFFD (for names read from binary files).
std::string to_valid_utf8(std::string_view text);

/// 1-based line and column (in bytes) of byte `offset` of `text`.
std::pair<int, int> line_column(std::string_view text, std::size_t offset);

/// "a, b, c" (each item quoted when `quote`).
std::string join_list(const std::vector<std::string>& items, std::string_view separator = ", ", bool quote = false);

/// "1 warning", "3 warnings", "0 jobs": `count` and the noun, plural unless the count is one. `plural` is the
/// plural when it is not the noun plus "s" ("1 entry", "2 entries"). Every count framesim prints goes through it.
std::string counted(std::size_t count, std::string_view noun, std::string_view plural = {});

/// "a size", "an energy": the indefinite article before `noun` (by its first letter: a, e, i, o, u take "an").
std::string with_article(std::string_view noun);

}  // namespace framesim::core
