// Op classes: the families of kernels whose reachable fraction of the compute roof differs on real stacks
// (a tuned dense convolution reaches far more of peak than a depthwise one on the same tensor cores).
// A unit's efficiency may be given per op class (hardware/README.md, `efficiency.by_op`).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/enum_table.hpp"

namespace framesim::model {

enum class OpClass {
  conv,           // dense (and grouped, more than one channel per group) convolution
  depthwise,      // one input channel per group
  matmul,         // linear, matmul, attention
  elementwise,    // elementwise, activations, batchnorm, norms, softmax
  pooling,        // pooling and reductions
  data_movement,  // copies, gathers, resizes, custom ops with no stated arithmetic
};
inline constexpr std::size_t kOpClassCount = 6;
inline constexpr std::array<OpClass, kOpClassCount> kAllOpClasses{
    OpClass::conv, OpClass::depthwise, OpClass::matmul, OpClass::elementwise, OpClass::pooling, OpClass::data_movement};
/// The names of the op classes as files write them, in kAllOpClasses' order (the one mapping, core/enum_table.hpp).
inline constexpr auto kOpClassNames = core::enum_table<OpClass>({{OpClass::conv, "conv"},
                                                                 {OpClass::depthwise, "depthwise"},
                                                                 {OpClass::matmul, "matmul"},
                                                                 {OpClass::elementwise, "elementwise"},
                                                                 {OpClass::pooling, "pooling"},
                                                                 {OpClass::data_movement, "data_movement"}});

std::string_view op_class_name(OpClass c);
std::optional<OpClass> parse_op_class(std::string_view name);
/// Every op class name, for "allowed values" messages.
std::vector<std::string> op_class_names();

}  // namespace framesim::model
