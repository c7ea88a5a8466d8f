// Runtime profiles: the software stack as part of the model. A hardware file describes silicon; the runtime that
// runs a network on it (TensorRT, TFLite with a delegate, X-CUBE-AI, TFLM with CMSIS-NN, microTVM, ONNX Runtime
// with an execution provider, Plumerai, the Edge TPU compiler) decides how much of the roof each op class
// reaches, what a kernel launch costs, which layers it fuses and where the weights live. A profile is a layer
// over one hardware file (runtimes/*.yaml, config/runtime.hpp reads it); `apply_runtime` lays it over the spec
// and names it there (HardwareSpec::runtime), so every estimate made from the result says which profile it
// came from. The bound (peak roofs) is untouched by a profile: it holds for every runtime.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/enum_table.hpp"
#include "core/error.hpp"
#include "model/hardware.hpp"
#include "model/op_class.hpp"
#include "model/precision.hpp"

namespace framesim::model {

/// What a runtime sets on one compute unit. Unset fields keep the hardware file's value.
struct RuntimeUnitProfile {
  std::string unit;
  core::SourceLocation at, weights_at;  // where the unit's mapping and its `weights` are written (for messages)
  bool has_efficiency = false;          // true: `efficiency` and `efficiency_by_op` replace the file's whole table
  PerPrecision<double> efficiency;
  std::array<PerPrecision<double>, kOpClassCount> efficiency_by_op{};
  /// Each precision the efficiency mapping names (`{int8: 0.4}`, `by_op: {conv: {int8: 0.5}}`), where it is
  /// named and its key path: laid over a unit with peaks, each must be one of them (as in a hardware file).
  struct NamedPrecision {
    Precision precision;
    core::SourceLocation at;
    std::string key;
  };
  std::vector<NamedPrecision> named_precisions;
  std::optional<double> dispatch_overhead_s;
  std::optional<double> output_cost_s;
  std::optional<std::string> weights;  // memory level holding the weights
  std::optional<bool> fuses;           // false: every layer its own kernel (`fusion: none`)
  std::optional<WeightCaching> weight_caching;
};
/// The names of RuntimeUnit::fuses (`units.<unit>.fusion`).
inline constexpr auto kRuntimeFusion = core::enum_table<bool>({{true, "auto"}, {false, "none"}});

struct RuntimeProfile {
  std::string name;         // "x-cube-ai-8.0"
  std::string description;  // one line
  std::string source;       // where its figures come from (a fit: which rows)
  std::string source_file;  // the YAML it came from
  std::string hardware;     // the `name:` of the hardware file it was made for
  core::SourceLocation hardware_at;
  std::vector<RuntimeUnitProfile> units;
};

/// `hw` with `profile` laid over it and named in HardwareSpec::runtime / runtime_file. Throws core::UserError
/// (naming the profile's file) when it was made for another hardware file, or names a unit or memory level the
/// file lacks, or puts the weights on a level outside the unit's memory path.
HardwareSpec apply_runtime(const HardwareSpec& hw, const RuntimeProfile& profile);

/// The profile that turns `base` into `tuned` on unit `unit` (efficiencies, overhead; the weights level and
/// fusion as `tuned` has them when they differ from `base`): what `framesim calibrate --write-runtime` writes.
RuntimeProfile runtime_from(const HardwareSpec& base, const HardwareSpec& tuned, std::size_t unit,
                            const std::string& name);

/// "x-cube-ai-8.0 (runtimes/stm32h7a3_x-cube-ai-8.0.yaml)", or "none (the hardware file's efficiencies)".
std::string runtime_label(const HardwareSpec& hw);

}  // namespace framesim::model
