#include "model/op_class.hpp"

namespace framesim::model {

std::string_view op_class_name(OpClass c) { return kOpClassNames.name(c); }

std::optional<OpClass> parse_op_class(std::string_view name) { return kOpClassNames.value(name); }

std::vector<std::string> op_class_names() { return kOpClassNames.names(); }

}  // namespace framesim::model
