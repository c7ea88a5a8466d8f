// Reading where a stage's network runs: `stages.<stage>.split` (cuts across units) and the problems that
// compiling the split and the units' fallbacks finds (model/placement.hpp), placed in the scenario file.
// Internal to config/ (the scenario reader: scenario.cpp, scenario_stages.cpp); cut_layer is in config/cut.hpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/cut.hpp"
#include "config/yaml.hpp"
#include "model/placement.hpp"
#include "model/scenario.hpp"

namespace framesim::config {

/// The cuts written at `node` (a mapping {at, unit} or a list of them) for a stage on unit `stage_unit`
/// running `net`: ascending, each inside the network, each on a unit with a roof for the layers it gets.
/// Problems are reported at their keys.
std::vector<model::SplitSpec> read_split(const Node& node, const model::NetworkSpec& net, const model::HardwareSpec& hw,
                                         std::size_t stage_unit);

/// Compiles `spec`'s splits and fallbacks (model::compile_placements); each problem is reported at its stage's
/// `split` key when it has one, else at its `network` key (`stage_nodes`: the stages' nodes, in `spec` order).
void compile_stage_placements(model::ScenarioSpec& spec, const std::vector<Node>& stage_nodes);

}  // namespace framesim::config
