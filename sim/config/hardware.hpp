// hardware/*.yaml -> HardwareSpec. See hardware/README.md for the schema.
#pragma once

#include <filesystem>

#include "model/hardware.hpp"

namespace framesim::config {

/// Loads and validates a hardware file. Throws core::UserError listing every problem found.
model::HardwareSpec load_hardware(const std::filesystem::path& path);
/// The same from text (tests); `display_path` names it in messages.
model::HardwareSpec parse_hardware(const std::string& text, const std::string& display_path);

}  // namespace framesim::config
