// What the key tables (schema_hardware.cpp, schema_network.cpp, schema_scenario.cpp) share: the bound on shape
// dimensions and the lists of names their choices are made of. Internal to config/.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "model/hardware.hpp"

namespace framesim::config::schema::tables {

/// Shape dimensions and op parameters are at most 2^31 - 1 (config/readers.hpp, kMaxParam).
inline constexpr std::int64_t kMaxDimension = 2147483647;

inline std::vector<std::string> names_of(std::initializer_list<std::string_view> names) {
  return {names.begin(), names.end()};
}

}  // namespace framesim::config::schema::tables
