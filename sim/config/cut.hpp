// Where a cut of a network between two units may be written: `stages.<stage>.split[].at` in a scenario and a
// map space's split points are both checked by cut_layer (defined in split.cpp), so both refuse the same cuts.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "model/network.hpp"

namespace framesim::config {

/// The layer a cut written as `at` (an index or a layer name) starts, if it is one after the first and inside
/// `net`; otherwise nothing, and `problem` says why.
std::optional<std::size_t> cut_layer(const std::string& at, const model::NetworkSpec& net, std::string& problem);

}  // namespace framesim::config
