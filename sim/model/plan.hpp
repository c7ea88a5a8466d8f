// How a network runs on one compute unit: its kernels (fusion groups, one launch each), the memory
// level that holds each tensor (the capacity rule), and the bytes each kernel moves at each level.
// Shared by the budget, the engine and the tests; knows nothing of SimGrid or YAML.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "model/hardware.hpp"
#include "model/network.hpp"

namespace framesim::model {

/// The shape of one layer's arithmetic, what a unit's datapath geometry acts on (hardware.hpp, UnitGeometry):
/// its ops, the reduction length per output element K = ops / (2 x output elements) and the output channels
/// per group N (a depthwise layer: its channels, with K its window).
struct ShapeOps {
  OpClass op_class = OpClass::conv;
  Precision precision = Precision::fp32;
  double ops = 0;
  double reduction = 0;  // K
  double channels = 0;   // N (depthwise: C)
  double outputs = 0;    // output elements: ops / (2 K)
};

/// One launch: a fusion group. Intermediates inside it never touch memory.
struct Kernel {
  std::string name;         // "conv1+bn1+relu1+add1"
  std::vector<int> layers;  // executed layers, in order; layers[0] is the anchor
  std::vector<int> folded;  // batchnorms folded into the anchor's weights: they cost nothing
  /// Activation patterns automatic fusion took into the epilogue ("SiLU x*sigmoid(x)", "hardswish ...", "GELU",
  /// "scale/offset with constant operands"), as runtimes (TensorRT, TFLite delegates) fuse them.
  std::vector<std::string> fused_patterns;
  PerPrecision<double> ops;  // arithmetic by compute precision
  /// The same arithmetic split by op class (each member layer's class): what per-class efficiencies apply to.
  /// Ops of ops[p] not found here run at the precision's efficiency (hand-built kernels).
  std::array<PerPrecision<double>, kOpClassCount> ops_by_class{};
  double total_ops = 0;
  /// The conv, depthwise and matmul layers' shapes (part of ops_by_class): where geometry applies.
  std::vector<ShapeOps> shapes;
  std::vector<double> bytes;  // per memory level (index into HardwareSpec::memory)
  double total_bytes = 0;
  double weight_bytes = 0;  // weight bytes read (part of `bytes`)
  /// Bytes per level with the weights where no runtime can beat (weight_placement.hpp, the best case) and
  /// activations where they would fit beside none: what the bound (peak roofs) reads. Empty: `bytes`.
  std::vector<double> bound_bytes;

  // Traversals: full reads or writes of activation tensors in memory (the seed's fusion measure).
  int traversals_unfused = 0;       // if every member ran as its own kernel
  int traversals = 0;               // as fused
  int tail_traversals_unfused = 0;  // the same without the anchor's own input reads
  int tail_traversals = 0;
  double activation_bytes_unfused = 0;  // activation bytes those traversals move
  double activation_bytes = 0;
};

struct LevelFootprint {
  std::size_t level = 0;
  double weight_bytes = 0;
  double activation_bytes = 0;  // peak live activations placed here
  double state_bytes = 0;
  double capacity_bytes = 0;
  bool fits() const { return weight_bytes + activation_bytes + state_bytes <= capacity_bytes; }
};

struct ExecutionPlan {
  std::size_t unit = 0;
  std::vector<Kernel> kernels;                // execution order
  std::vector<int> kernel_of_layer;           // kernel index per layer
  std::vector<int> tensor_level;              // level holding each tensor's storage; -1 never stored
  int weight_level = -1;                      // the level holding the streamed weights (or every weight)
  std::vector<double> weight_bytes_at;        // stored weight bytes per level: the runtime's placement
  std::vector<double> bound_weight_bytes_at;  // the same for the best case the bound uses
  int state_level = -1;
  int activation_home = -1;               // outermost writable level of the unit's path
  double peak_activation_bytes = 0;       // largest live set of stored activations
  std::size_t peak_kernel = 0;            // where it happens
  std::vector<LevelFootprint> footprint;  // per level of the unit's path that holds something
  bool fits() const;
};

struct PlanOptions {
  bool fuse = true;  // false: every layer its own kernel, batchnorm not folded (the "before" view)
};

/// Groups layers into kernels per the network's fusion mode (explicit groups, then automatic
/// epilogue fusion and batchnorm folding), places tensors, and counts bytes per level.
/// Precondition: the network was validated (explicit groups contiguous, layers topological).
ExecutionPlan plan_network(const NetworkSpec& net, const HardwareSpec& hw, std::size_t unit,
                           const PlanOptions& options = {});

}  // namespace framesim::model
