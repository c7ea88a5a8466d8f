#include "config/network_writer.hpp"

#include <yaml-cpp/yaml.h>

namespace framesim::config {

namespace {

void emit_param(YAML::Emitter& out, const model::ParamValue& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
          out << YAML::Flow << YAML::BeginSeq;
          for (auto e : x) out << e;
          out << YAML::EndSeq;
        } else if constexpr (std::is_same_v<T, model::Precision>) {
          out << std::string(model::precision_name(x));
        } else if constexpr (std::is_same_v<T, bool>) {
          out << YAML::TrueFalseBool << x;
        } else {
          out << x;
        }
      },
      v);
}

}  // namespace

std::string network_to_yaml(const model::NetworkSpec& net, const std::vector<std::string>& header) {
  YAML::Emitter out;
  for (const auto& line : header) out << YAML::Comment(line) << YAML::Newline;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << net.name;
  if (!net.description.empty()) out << YAML::Key << "description" << YAML::Value << net.description;
  out << YAML::Key << "fusion" << YAML::Value << std::string(model::fusion_mode_name(net.fusion));
  out << YAML::Key << "inputs" << YAML::Value << YAML::BeginMap;
  for (int t : net.inputs) {
    const auto& tensor = net.tensors[static_cast<std::size_t>(t)];
    out << YAML::Key << tensor.name << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "shape" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (auto d : tensor.shape) out << d;
    out << YAML::EndSeq;
    out << YAML::Key << "precision" << YAML::Value << std::string(model::precision_name(tensor.precision));
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  std::vector<int> group_of(net.layers.size(), -1);
  for (std::size_t g = 0; g < net.groups.size(); ++g)
    for (int l : net.groups[g]) group_of[static_cast<std::size_t>(l)] = static_cast<int>(g);
  out << YAML::Key << "layers" << YAML::Value << YAML::BeginSeq;
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const auto& layer = net.layers[i];
    out << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << layer.name;
    out << YAML::Key << "op" << YAML::Value << layer.op;
    out << YAML::Key << "inputs" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (int t : layer.inputs) out << net.tensors[static_cast<std::size_t>(t)].name;
    out << YAML::EndSeq;
    out << YAML::Key << "precision" << YAML::Value;
    const std::string short_name = model::layer_precision_name(layer.precision);
    const auto reparsed = model::parse_layer_precision(short_name);
    if (reparsed && reparsed->weights == layer.precision.weights &&
        reparsed->activations == layer.precision.activations && reparsed->compute == layer.precision.compute) {
      out << short_name;
    } else {  // e.g. bf16 weights beside fp16 activations: name each part
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "weights" << YAML::Value
          << std::string(model::precision_name(layer.precision.weights)) << YAML::Key << "activations" << YAML::Value
          << std::string(model::precision_name(layer.precision.activations)) << YAML::Key << "compute" << YAML::Value
          << std::string(model::precision_name(layer.precision.compute)) << YAML::EndMap;
    }
    for (const auto& [key, value] : layer.params) {
      out << YAML::Key << key << YAML::Value;
      emit_param(out, value);
    }
    if (group_of[i] >= 0) out << YAML::Key << "group" << YAML::Value << "fused" + std::to_string(group_of[i]);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "outputs" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (int t : net.outputs) out << net.tensors[static_cast<std::size_t>(t)].name;
  out << YAML::EndSeq;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace framesim::config
