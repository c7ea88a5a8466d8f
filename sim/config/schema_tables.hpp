// What the key tables (schema_hardware.cpp, schema_network.cpp, schema_scenario.cpp) share: the bound on shape
// dimensions and the lists of names their choices are made of. Internal to config/.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "config/schema.hpp"
#include "model/hardware.hpp"

namespace framesim::config::schema::tables {

/// Shape dimensions and op parameters are at most 2^31 - 1 (config/readers.hpp, kMaxParam).
inline constexpr std::int64_t kMaxDimension = 2147483647;

inline std::vector<std::string> names_of(std::initializer_list<std::string_view> names) {
  return {names.begin(), names.end()};
}

/// The keys of a table declared section by section, in the order given.
inline std::vector<Key> joined(std::initializer_list<std::vector<Key>> parts) {
  std::vector<Key> out;
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

}  // namespace framesim::config::schema::tables
