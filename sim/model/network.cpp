// Networks as data: shapes, tensors' storage and consumers, totals over the layers, and the names of the enums
// network.hpp declares. What a layer's operations and bytes are is computed from its op (ops.cpp).
#include <algorithm>
#include <cmath>

#include "model/network.hpp"

namespace framesim::model {

std::string shape_to_string(const Shape& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out += "x";
    out += std::to_string(s[i]);
  }
  return out.empty() ? "scalar" : out;
}

double shape_elements(const Shape& s) {
  double n = 1;
  for (auto d : s) n *= static_cast<double>(d);
  return n;
}

double effective_bytes(const Access& a, double line_bytes) {
  if (a.rows <= 0 || a.bytes <= 0) return a.bytes;
  const double row_bytes = a.bytes / a.rows;
  return a.rows * std::ceil(row_bytes / line_bytes) * line_bytes;
}

std::string_view param_type_name(ParamType t) {
  switch (t) {
    case ParamType::integer: return "an integer";
    case ParamType::integers: return "an integer or a list of integers";
    case ParamType::boolean: return "true or false";
    case ParamType::text: return "a string";
    case ParamType::number: return "a number";
    case ParamType::precision: return "a precision";
  }
  return "?";
}

std::string_view fusion_mode_name(FusionMode m) { return kFusionModes.name(m); }

OpClass default_op_class(OpKind kind) {
  switch (kind) {
    case OpKind::linear:
    case OpKind::matmul:
    case OpKind::attention: return OpClass::matmul;
    case OpKind::conv2d: return OpClass::conv;
    case OpKind::pool:
    case OpKind::global_pool: return OpClass::pooling;
    case OpKind::elementwise:
    case OpKind::activation:
    case OpKind::batchnorm:
    case OpKind::norm:
    case OpKind::softmax: return OpClass::elementwise;
    case OpKind::embedding:
    case OpKind::reshape:
    case OpKind::copy:
    case OpKind::resize:
    case OpKind::custom: return OpClass::data_movement;
  }
  return OpClass::data_movement;
}

bool LayerSpec::epilogue_fusable() const {
  return kind == OpKind::elementwise || kind == OpKind::activation || kind == OpKind::batchnorm ||
         kind == OpKind::reshape || (kind == OpKind::custom && op_class == OpClass::elementwise);
}

double NetworkSpec::total_params() const {
  double n = 0;
  for (const auto& l : layers) n += l.params_count;
  return n;
}
double NetworkSpec::total_weight_bytes() const {
  double n = 0;
  for (const auto& l : layers) n += l.weight_bytes;
  return n;
}
double NetworkSpec::total_ops() const {
  double n = 0;
  for (const auto& l : layers) n += l.ops;
  return n;
}
double NetworkSpec::total_state_bytes() const {
  double n = 0;
  for (const auto& l : layers) n += l.state_bytes;
  return n;
}

std::vector<int> NetworkSpec::consumers(int tensor) const {
  std::vector<int> out;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& ins = layers[i].inputs;
    if (std::find(ins.begin(), ins.end(), tensor) != ins.end()) out.push_back(static_cast<int>(i));
  }
  return out;
}

ConsumerIndex::ConsumerIndex(const NetworkSpec& net) : consumers_(net.tensors.size()), aliases_(net.tensors.size()) {
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    for (int t : net.layers[i].inputs) {
      auto& list = consumers_[static_cast<std::size_t>(t)];
      if (list.empty() || list.back() != static_cast<int>(i)) list.push_back(static_cast<int>(i));
    }
  }
  for (std::size_t t = 0; t < net.tensors.size(); ++t)
    if (net.tensors[t].alias_of >= 0)
      aliases_[static_cast<std::size_t>(net.tensors[t].alias_of)].push_back(static_cast<int>(t));
}

bool ConsumerIndex::used(int tensor, const std::vector<int>& outputs) const {
  auto direct = [&](int t) { return !of(t).empty() || std::find(outputs.begin(), outputs.end(), t) != outputs.end(); };
  if (direct(tensor)) return true;
  for (int a : aliases_[static_cast<std::size_t>(tensor)])
    if (direct(a)) return true;
  return false;
}

int NetworkSpec::storage_of(int tensor) const {
  while (tensors[static_cast<std::size_t>(tensor)].alias_of >= 0)
    tensor = tensors[static_cast<std::size_t>(tensor)].alias_of;
  return tensor;
}

std::optional<int> NetworkSpec::find_layer(std::string_view layer_name) const {
  for (std::size_t i = 0; i < layers.size(); ++i)
    if (layers[i].name == layer_name) return static_cast<int>(i);
  return std::nullopt;
}

}  // namespace framesim::model
