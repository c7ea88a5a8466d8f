// Small text helpers shared by every library: suggestions for misspelt names and list joining.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace framesim::core {

/// Edit distance between two strings (bytes), counting a swap of neighbouring characters as one edit.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` if it is close enough to be a likely typo, else nothing.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// "a, b, c" (each item quoted when `quote`).
std::string join_list(const std::vector<std::string>& items, std::string_view separator = ", ", bool quote = false);

}  // namespace framesim::core
