// Placing a network on units: what a unit can run (its capabilities), where the layers it refuses go (its
// fallback), a network split across units, and what handing a tensor from one unit to the next costs.
//
// A stage whose layers end up on more than one unit (a split, or a fallback) is compiled into a chain of
// ordinary stages the engine already runs, before the simulation sees the scenario:
//   part 0 (layers [0, k1) on unit A) -> reformat 1 -> [launch 1] -> part 1 (layers [k1, k2) on unit B) -> ...
// - a part is a network stage on its unit: the tensors it hands over are graph outputs, written to its
//   activation home (DRAM); the next part reads them there as graph inputs (plan.cpp places graph inputs and
//   outputs at the home level), so the tensor crossing the shared level is costed by the plan itself;
// - a part on a unit with a `handoff` (an accelerator, model/handoff.hpp) gets that unit's hand-off side work
//   for its own inputs and outputs: the reformat of every tensor handed to it (or the network's input) before
//   it and the launch, the reformat of every tensor it hands on (or the network's output) after it, on the
//   host. A hand-over between units without a handoff costs the tensor's bytes only. The written side work
//   of the stage goes to its first part (before) and its last (after).
// Every part and side job contends for its unit and the bus as any stage does. The last part keeps the
// stage's name (what reads the stage reads it); the others are named "<stage>.part<i>".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "model/hardware.hpp"
#include "model/network.hpp"
#include "model/scenario.hpp"

namespace framesim::model {

/// Why `unit` cannot run `layer` of `net` by its declared capabilities ("op matmul is not among dla0's ops"),
/// or nothing when it can (always for a unit without capabilities, and for a free reshape).
std::optional<std::string> refusal(const ComputeUnitSpec& unit, const NetworkSpec& net, const LayerSpec& layer);

/// The unit of every layer of `net` for a stage on unit `unit` with cuts `split` (ascending first layers):
/// the cut's unit, or its fallback for a layer that unit refuses. `fell_back[i]` marks the latter. A layer
/// that neither the unit nor its fallback can run is a problem (text naming the layer and both reasons).
/// A reshape runs where the layer before it runs (the first one where the next layer runs).
struct LayerPlacement {
  std::vector<std::size_t> unit_of_layer;
  std::vector<bool> fell_back;
  std::vector<std::string> problems;
};
LayerPlacement place_layers(const HardwareSpec& hw, const NetworkSpec& net, std::size_t unit,
                            const std::vector<SplitSpec>& split);

/// A run of consecutive layers on one unit, and the bytes handed to it from parts on other units.
struct NetworkPart {
  std::size_t unit = 0;
  std::size_t first_layer = 0, end_layer = 0;  // [first, end)
  NetworkSpec network;                         // those layers alone: handed-over tensors are graph inputs/outputs
  double handover_in_bytes = 0;                // tensors it reads that a part on another unit produced
};
/// `net` cut into parts where `unit_of_layer` changes (one part when it never does).
std::vector<NetworkPart> cut_network(const NetworkSpec& net, const std::vector<std::size_t>& unit_of_layer);

/// Layers [first, end) of `net` as a network of their own: tensors they read that other layers produce become
/// graph inputs, tensors they produce that later layers (or the network's outputs) read become graph outputs;
/// explicit fusion groups are cut at the boundaries.
NetworkSpec network_slice(const NetworkSpec& net, std::size_t first, std::size_t end);

/// The innermost memory level on the paths of both units (where a hand-over goes through), or none.
std::optional<std::size_t> shared_level(const HardwareSpec& hw, std::size_t a, std::size_t b);

/// A problem compiling stage `stage` (index into the stages as read), for config/ to place in the file.
struct PlacementProblem {
  std::size_t stage = 0;
  std::string message;
};

/// `spec` with every stage whose layers span several units compiled into chained parts and hand-overs (see
/// the header comment); stage indices in inputs, tasks and chains follow. Problems leave `spec` unchanged.
std::vector<PlacementProblem> compile_placements(ScenarioSpec& spec);

}  // namespace framesim::model
