// The one mapping between an enum's values and the names a file writes for them, kept beside the enum: the
// reader parses a name with it, the schema lists its names as a key's allowed values, and every writer names a
// value by it. A value the table lacks is never taken for another: a name it lacks is refused (the reader's
// allowed values are the table's), and naming a value it lacks is a framesim bug (an assert).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace framesim::core {

/// One value of `E` and its name as written in files ("drop_oldest").
template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

/// The names of the `N` values of `E`, in the order the schema lists them (the first is no default: defaults are
/// declared with their key).
template <class E, std::size_t N>
struct EnumTable {
  std::array<EnumName<E>, N> entries;

  /// The value named `name`, or nothing when no value has that name.
  constexpr std::optional<E> value(std::string_view name) const {
    for (const auto& e : entries)
      if (e.name == name) return e.value;
    return std::nullopt;
  }
  /// The name of `value` (a value missing from the table is a framesim bug).
  std::string_view name(E value) const {
    for (const auto& e : entries)
      if (e.value == value) return e.name;
    FRAMESIM_ASSERT(false, "a value missing from its enum's name table");
    return "";
  }
  /// Every name, in table order (a key's allowed values).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(N);
    for (const auto& e : entries) out.emplace_back(e.name);
    return out;
  }
  static constexpr std::size_t size() { return N; }
};

/// A table from a braced list: `enum_table<Overflow>({{Overflow::drop_oldest, "drop_oldest"}, ...})`.
template <class E, std::size_t N>
constexpr EnumTable<E, N> enum_table(const EnumName<E> (&entries)[N]) {
  EnumTable<E, N> t{};
  for (std::size_t i = 0; i < N; ++i) t.entries[i] = entries[i];
  return t;
}

}  // namespace framesim::core
