// Accelerator hand-off work, derived from the network instead of typed in. A DLA or NPU stage run through a
// real runtime (TensorRT, an NPU SDK) costs its host unit time on every inference: the input tensors are
// reformatted from the host's layout into the accelerator's before it runs (TensorRT's reformat kernels,
// e.g. linear fp32 to NC/32HW32 int8), the outputs back after, and the engine is launched. A unit declares
// it once (`handoff` in the hardware file, HandoffSpec); every stage on that unit then gets, per item:
//
//   before: reformat of the inputs    bytes = sum_inputs  elements x (bits_acc + bits_host) / 8 / efficiency
//   before: the launch                time  = launch (at the host's nominal clock)
//   after:  reformat of the outputs   bytes = sum_outputs elements x (bits_acc + bits_host) / 8 / efficiency
//
// each reformat read once in one layout and written once in the other at the host's outermost writable level
// (its DRAM): a kernel with no arithmetic, so its time alone is bytes / B_host (the roofline) plus the host's
// dispatch overhead. bits_acc is the tensor's precision in the network, bits_host `host_precision` (unset:
// the same); efficiency < 1 counts the bursts a strided layout change wastes (the bytes the DRAM moves, so
// their energy too). Alone a DLA stage then takes t_reformat_in + launch + t_network + t_reformat_out: the
// side work runs before and after the stage's kernels and the stage waits for it (sim/engine/README.md).
#pragma once

#include <cstddef>
#include <vector>

#include "model/hardware.hpp"
#include "model/network.hpp"
#include "model/scenario.hpp"

namespace framesim::model {

/// Bytes the host moves to reformat `tensors` (ids into net.tensors) of `net` for `handoff` (see the header).
double reformat_bytes(const NetworkSpec& net, const std::vector<int>& tensors, const HandoffSpec& handoff);

/// The level a host's reformats read and write: the outermost writable level on its path.
std::size_t handoff_level(const HardwareSpec& hw, const ComputeUnitSpec& host);

/// The side work a stage running `net` on unit `unit` places on its host for every item, from the unit's
/// `handoff` (empty without one): the input reformat and the launch before, the output reformat after.
std::vector<SideWorkSpec> handoff_side_work(const HardwareSpec& hw, std::size_t unit, const NetworkSpec& net);

/// Time of one side job alone on an idle SoC at the nominal clocks (the budget's estimate of its work on its
/// unit, at its mean scale): what a stage's slowdown against running alone counts it as (analysis/slowdown.hpp).
double side_work_alone_s(const ScenarioSpec& spec, const SideWorkSpec& side);

}  // namespace framesim::model
