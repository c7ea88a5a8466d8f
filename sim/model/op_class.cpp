#include "model/op_class.hpp"

namespace framesim::model {

std::string_view op_class_name(OpClass c) {
  switch (c) {
    case OpClass::conv: return "conv";
    case OpClass::depthwise: return "depthwise";
    case OpClass::matmul: return "matmul";
    case OpClass::elementwise: return "elementwise";
    case OpClass::pooling: return "pooling";
    case OpClass::data_movement: return "data_movement";
  }
  return "?";
}

std::optional<OpClass> parse_op_class(std::string_view name) {
  for (OpClass c : kAllOpClasses)
    if (op_class_name(c) == name) return c;
  return std::nullopt;
}

std::vector<std::string> op_class_names() {
  std::vector<std::string> out;
  for (OpClass c : kAllOpClasses) out.emplace_back(op_class_name(c));
  return out;
}

}  // namespace framesim::model
