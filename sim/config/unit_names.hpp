// The one message for a unit name a hardware file does not have, with the nearest name it does.
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/text.hpp"
#include "model/hardware.hpp"

namespace framesim::config {

/// "<hardware file> has no unit \"<name>\"" with " (did you mean \"...\"?)" when a unit's name is near it, or,
/// when none is and `list_units`, "; units: a, b".
inline std::string no_unit_message(const model::HardwareSpec& hw, const std::string& name, bool list_units = false) {
  std::vector<std::string> units;
  for (const auto& u : hw.units) units.push_back(u.name);
  std::string message = fmt::format("{} has no unit \"{}\"", hw.source_file, name);
  if (auto near = core::closest_match(name, units)) message += fmt::format(" (did you mean \"{}\"?)", *near);
  else if (list_units) message += fmt::format("; units: {}", core::join_list(units, ", "));
  return message;
}

}  // namespace framesim::config
