#include "config/split.hpp"

#include <fmt/format.h>

#include "config/schema.hpp"
#include "config/unit_names.hpp"
#include "core/text.hpp"
#include "model/budget.hpp"

namespace framesim::config {

namespace {

std::optional<Node> child(const Node& node, std::string_view key) {
  if (!node.is_map()) return std::nullopt;
  for (auto& [k, v] : node.entries())
    if (k == key) return v;
  return std::nullopt;
}

}  // namespace

std::optional<std::size_t> cut_layer(const std::string& at, const model::NetworkSpec& net, std::string& problem) {
  const std::size_t n = net.layers.size();
  std::size_t first = 0;
  if (!at.empty() && at.find_first_not_of("0123456789") == std::string::npos && at.size() < 10) {
    first = static_cast<std::size_t>(std::stoul(at));
  } else if (auto l = net.find_layer(at)) {
    first = static_cast<std::size_t>(*l);
  } else {
    std::vector<std::string> names;
    for (const auto& layer : net.layers) names.push_back(layer.name);
    std::string message = fmt::format("network {} has no layer \"{}\" (give a layer name or an index)", net.name, at);
    if (auto near = core::closest_match(at, names)) message += fmt::format(" (did you mean \"{}\"?)", *near);
    problem = message;
    return std::nullopt;
  }
  if (first == 0 || first >= n) {
    problem = fmt::format("must be a layer after the first and within the network: 1 .. {} ({} has {} layers)", n - 1,
                          net.name, n);
    return std::nullopt;
  }
  return first;
}

std::vector<model::SplitSpec> read_split(const Node& node, const model::NetworkSpec& net, const model::HardwareSpec& hw,
                                         std::size_t stage_unit) {
  std::vector<model::SplitSpec> out;
  auto read_one = [&](const Node& item) {
    MapReader m(item, schema::scenario_table(), "stages.<stage>.split");
    if (!m.ok()) return;
    const auto at_node = m.required("at");  // an index or a layer name: any scalar
    const auto at = at_node ? at_node->text() : std::nullopt;
    auto unit_name = m.text("unit");
    if (!at || !unit_name) return;
    std::string problem;
    const auto first = cut_layer(*at, net, problem);
    if (!first) {
      m.get("at")->error(problem);
      return;
    }
    auto unit = hw.find_unit(*unit_name);
    if (!unit) {
      m.get("unit")->error(no_unit_message(hw, *unit_name));
      return;
    }
    const std::size_t previous_unit = out.empty() ? stage_unit : out.back().unit;
    if (!out.empty() && *first <= out.back().first_layer) {
      m.get("at")->error(fmt::format("cuts must be in ascending layer order: {} does not come after {}", *first,
                                     out.back().first_layer));
      return;
    }
    if (*unit == previous_unit) {
      m.get("unit")->error(
          fmt::format("the layers before this cut already run on {}: a cut changes the unit", hw.units[*unit].name));
      return;
    }
    out.push_back({*first, *unit});
  };
  if (node.is_sequence()) {
    for (const Node& item : node.items()) read_one(item);
  } else {
    read_one(node);
  }
  return out;
}

void compile_stage_placements(model::ScenarioSpec& spec, const std::vector<Node>& stage_nodes) {
  // Every part needs a roof for what it computes on its unit (the stage's own unit is checked with its network).
  bool roofs_ok = true;
  for (std::size_t i = 0; i < spec.stages.size() && i < stage_nodes.size(); ++i) {
    const auto& s = spec.stages[i];
    if (s.work.kind != model::WorkSpec::Kind::network) continue;
    const auto& net = spec.networks[static_cast<std::size_t>(s.work.network)].network;
    const auto placed = model::place_layers(spec.hardware, net, s.unit, s.split);
    if (!placed.problems.empty()) continue;  // reported below
    for (const auto& part : model::cut_network(net, placed.unit_of_layer)) {
      if (part.unit == s.unit) continue;
      const auto missing = model::missing_roofs(part.network, spec.hardware.units[part.unit]);
      if (missing.empty()) continue;
      std::vector<std::string> need;
      for (auto p : missing) need.emplace_back(model::precision_name(p));
      const auto where = child(stage_nodes[i], "split");
      (where ? *where : stage_nodes[i])
          .error(fmt::format("layers [{}, {}) go to unit \"{}\", which has no roof for {}", part.first_layer,
                             part.end_layer, spec.hardware.units[part.unit].name, core::join_list(need, ", ")));
      roofs_ok = false;
    }
  }
  if (!roofs_ok) return;
  for (const auto& p : model::compile_placements(spec)) {
    const Node& stage = stage_nodes[p.stage];
    auto where = child(stage, "split");
    if (!where) where = child(stage, "network");
    (where ? *where : stage).error(fmt::format("stage {}: {}", spec.stages[p.stage].name, p.message));
  }
}

}  // namespace framesim::config
