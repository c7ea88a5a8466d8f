// Where a network's weights live on one unit's memory path, as a share of each layer's stored weights per level.
// Two placements, from the hardware file's declared levels (plan.hpp uses both):
//   - the runtime's (the estimate): a profile's `weights` level; else on chip when every weight fits beside the
//     activation peak (`weight_caching: whole`), or as many as fit there in execution order with the rest
//     streamed from the path's last level (`partial`, the Edge TPU compiler's parameter caching);
//   - the best case (the bound): every on-chip level's whole declared capacity holds weights (activations are
//     not charged against it), filled first with the layers that read the most weight bytes per op, the rest
//     in the fastest off-chip level that holds them. No runtime keeps more weights on chip than the capacity,
//     so none streams fewer bytes: the bound never exceeds what the hardware can do. When every weight fits,
//     every weight is on chip.
#pragma once

#include <utility>
#include <vector>

#include "model/hardware.hpp"
#include "model/network.hpp"

namespace framesim::model {

/// Per layer: (level, fraction of its stored weights) pairs summing to 1 (empty for a layer without weights).
struct WeightPlacement {
  std::vector<std::vector<std::pair<int, double>>> of_layer;
  std::vector<double> stored_at;  // stored weight bytes per level (index into HardwareSpec::memory)
  int home = -1;                  // the level holding the streamed rest (or everything): the plan's weight_level
};

/// The runtime's placement; `peak_activation_bytes` is the plan's largest live set (charged against each on-chip
/// level a partial cache fills).
WeightPlacement runtime_weight_placement(const NetworkSpec& net, const HardwareSpec& hw, const ComputeUnitSpec& unit,
                                         double peak_activation_bytes);

/// The best case no runtime can beat (see above).
WeightPlacement best_weight_placement(const NetworkSpec& net, const HardwareSpec& hw, const ComputeUnitSpec& unit);

}  // namespace framesim::model
