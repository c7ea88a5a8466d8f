// The files a scenario names (its hardware, a runtime profile, its networks, time series) and what it changes in
// or adds to the hardware's world (the enclosure's thermal block, background memory traffic).
#include <algorithm>

#include <fmt/format.h>

#include "config/readers.hpp"
#include "config/runtime.hpp"
#include "config/scenario_reader.hpp"
#include "core/files.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "trace/import.hpp"

namespace framesim::config {

using core::Dimension;

namespace {

const schema::Table& kKeys = schema::scenario_table();

/// The scenario key declared at `pattern` (one the reader walks itself).
const schema::Key& declared(std::string_view pattern) {
  const schema::Key* k = kKeys.find(pattern);
  FRAMESIM_ASSERT(k != nullptr, "undeclared scenario key " + std::string(pattern));
  return *k;
}

/// A network file read cleanly (nothing wrong in it, no override changing it) and what it said, kept for the next
/// reads of the same path with the same text in this process and in the processes it forks: a sweep's points read
/// the same network files, and reading one is the most of loading a scenario. At most kMaxNetworksKept.
struct ReadNetwork {
  std::string path, text;
  model::NetworkSpec network;
};
constexpr std::size_t kMaxNetworksKept = 32;

std::vector<ReadNetwork>& networks_read() {
  static auto* const kept = new std::vector<ReadNetwork>();  // never destroyed: a point ends without freeing it
  return *kept;
}

}  // namespace

model::NetworkSpec ScenarioReader::read_network_file(const std::filesystem::path& path, const std::string& prefix) {
  const std::string text = core::read_file(path);
  const bool overridden = std::any_of(overrides_.begin(), overrides_.end(),
                                      [&](const Override& o) { return o.path.rfind(prefix, 0) == 0; });
  auto& kept = networks_read();
  if (!overridden)
    for (const auto& k : kept)
      if (k.path == path.string() && k.text == text) return k.network;
  const std::size_t before = diagnostics_.size();
  auto doc = Document::load(path, text, diagnostics_);
  apply(*doc, prefix);
  model::NetworkSpec net = read_network(Node(doc, doc->root(), ""));
  if (!overridden && diagnostics_.size() == before && kept.size() < kMaxNetworksKept)
    kept.push_back({path.string(), text, net});
  return net;
}

void ScenarioReader::read_hardware_file(const Node& node) {
  auto written = node.text();
  if (!written) return;
  const auto path = input_path(node.document(), *written);
  try {
    auto doc = Document::load(path, diagnostics_);
    apply(*doc, "hardware.");
    spec_.hardware = read_hardware(Node(doc, doc->root(), ""));
    hardware_loaded_ = true;
  } catch (const core::UserError& e) {
    forward(e, node);
  }
}

void ScenarioReader::read_runtime_file(const Node& node) {
  auto written = node.text();
  if (!written || !hardware_loaded_) return;
  try {
    spec_.hardware = model::apply_runtime(spec_.hardware, load_runtime(input_path(node.document(), *written)));
  } catch (const core::UserError& e) {
    forward(e, node);
  }
}

void ScenarioReader::read_thermal_overrides(const Node& node) {
  MapReader m(node, kKeys, "thermal");
  if (!m.ok()) return;
  if (hardware_loaded_ && !spec_.hardware.thermal) {
    node.error(fmt::format("{} has no thermal block: there is no thermal model to change", spec_.hardware.source_file));
    return;
  }
  if (!spec_.hardware.thermal) return;
  auto& th = *spec_.hardware.thermal;
  if (auto v = m.quantity("ambient")) {
    th.ambient_C = *v;
    spec_.ambient_C = *v;
  }
  if (auto v = m.quantity("resistance")) th.resistance_K_per_W = *v;
  if (auto v = m.quantity("capacitance")) th.capacitance_J_per_K = *v;
  if (auto v = m.quantity("trip")) th.trip_C = *v;
  if (auto v = m.quantity("release")) th.release_C = *v;
  if (m.has("initial")) spec_.initial_temperature_C = m.quantity("initial");
  if (auto t = m.get("ambient_trace")) {
    if (m.has("ambient")) m.get("ambient")->error("give either ambient or ambient_trace, not both");
    const trace::ValueColumn temperature{"temperature", Dimension::Celsius, {{"temperature_C", 1.0}}};
    if (auto points = read_series_at(*t, temperature)) {
      for (const auto& p : *points) spec_.ambient_profile_C.emplace_back(p.time_s, p.value);
      if (!spec_.ambient_profile_C.empty()) th.ambient_C = spec_.ambient_profile_C.front().second;
    }
  }
  auto at = [&](std::initializer_list<std::string_view> keys) {
    for (auto k : keys)
      if (auto n = m.get(k)) return *n;
    return node;
  };
  if (th.release_C >= th.trip_C)
    at({"release", "trip"})
        .error(fmt::format("release ({} C) must be below trip ({} C)", core::format_number(th.release_C),
                           core::format_number(th.trip_C)));
  if (th.trip_C <= th.ambient_C)
    at({"trip", "ambient"})
        .error(fmt::format("trip ({} C) must be above ambient ({} C)", core::format_number(th.trip_C),
                           core::format_number(th.ambient_C)));
}

void ScenarioReader::read_networks(const Node& node) {
  for (auto& [name, value] : node.entries()) {
    // A path, or {file: PATH, precision: P, fusion: MODE}: every layer at one precision (e.g. fp16 on a
    // GPU), and the fusion mode the runtime applies.
    std::optional<std::string> written;
    std::optional<model::LayerPrecision> precision;
    std::optional<model::FusionMode> fusion;
    trace::ImportOptions import_options;
    if (value.is_map()) {
      MapReader r(value, kKeys, "networks.<network>");
      written = r.text("file");
      if (auto inputs = r.get("inputs")) {
        // Shapes for a model file's dynamic inputs: {NAME: [1, 3, 224, 224]}.
        for (auto& [input, shape] : inputs->entries()) {
          model::Shape dims;
          for (const Node& d : shape.items())
            if (auto v = d.integer(declared("networks.<network>.inputs.<input>[]"))) dims.push_back(*v);
          import_options.input_shapes[input] = dims;
        }
      }
      fusion = read_fusion(r);
      if (auto p = r.get("precision")) {
        if (auto t = p->text()) {
          precision = model::parse_layer_precision(*t);
          if (!precision)
            p->error(fmt::format("\"{}\" is not a precision; use one of {} or wXaY like w4a16", *t,
                                 core::join_list(model::precision_names(), ", ")));
        }
      }
    } else {
      written = value.text();
    }
    declared_networks_.insert(name);  // reported here if it fails: stages naming it say nothing more
    if (!written) continue;
    const auto path = input_path(value.document(), *written);
    if (path.extension() == ".onnx" || path.extension() == ".tflite") {
      // A model file, imported on the fly (what `framesim import` would write).
      try {
        auto imported = trace::import_model(path, import_options);
        model::NetworkSpec net = std::move(imported.network);
        if (precision) net = model::with_precision(net, *precision);
        if (fusion) net.fusion = *fusion;
        for (const auto& w : imported.warnings) spec_.notes.push_back(fmt::format("network {}: {}", name, w));
        spec_.networks.push_back({name, std::move(net)});
      } catch (const core::UserError& e) {
        forward(e, value);
      }
      continue;
    }
    if (!import_options.input_shapes.empty())
      value.error("inputs gives shapes to a model file (.onnx, .tflite); a network YAML states its own");
    try {
      const std::size_t before = diagnostics_.size();
      model::NetworkSpec net = read_network_file(path, "network." + name + ".");
      if (precision && diagnostics_.size() == before) net = model::with_precision(net, *precision);
      if (fusion) net.fusion = *fusion;
      spec_.networks.push_back({name, std::move(net)});
    } catch (const core::UserError& e) {
      forward(e, value);
    }
  }
}

std::optional<std::vector<trace::SeriesPoint>> ScenarioReader::read_series_at(
    const Node& node, const std::optional<trace::ValueColumn>& value) {
  auto written = node.text();
  if (!written) return std::nullopt;
  try {
    return trace::read_series(input_path(node.document(), *written), value);
  } catch (const core::UserError& e) {
    forward(e, node);
    return std::nullopt;
  }
}

std::string ScenarioReader::no_level_message(const std::string& level) const {
  std::vector<std::string> names;
  for (const auto& l : spec_.hardware.memory) names.push_back(l.name);
  std::string message = fmt::format("{} has no memory level \"{}\"", spec_.hardware.source_file, level);
  if (auto near = core::closest_match(level, names)) message += fmt::format(" (did you mean \"{}\"?)", *near);
  else message += fmt::format("; levels: {}", core::join_list(names, ", "));
  return message;
}

void ScenarioReader::read_background(const Node& node) {
  for (auto& [name, value] : node.entries()) {
    MapReader m(value, kKeys, "background.<name>");
    model::BackgroundSpec b;
    b.name = name;
    if (auto level = m.text("memory"); level && hardware_loaded_) {
      if (auto lv = spec_.hardware.find_level(*level)) b.level = *lv;
      else m.get("memory")->error(no_level_message(*level));
    }
    if (m.has("rate") && m.has("profile")) {
      m.get("profile")->error("give either rate or profile, not both");
    } else if (auto p = m.get("profile")) {
      // Traffic over time: (time, rate) steps, each rate holding until the next row.
      const trace::ValueColumn rate{
          "rate", Dimension::BytesPerSecond, {{"rate_Bps", 1.0}, {"rate_GBps", 1e9}}, /*non_negative=*/true};
      if (auto points = read_series_at(*p, rate)) {
        for (const auto& point : *points) {
          if (point.value < 0) {
            p->error(fmt::format("rates must not be negative ({} at {})", core::format_bandwidth(point.value),
                                 core::format_seconds(point.time_s)));
            break;
          }
          b.profile.emplace_back(point.time_s, point.value);
          b.rate_Bps = std::max(b.rate_Bps, point.value);
        }
      }
    } else {
      b.rate_Bps = m.quantity("rate", MapReader::Need::required).value_or(0);
    }
    spec_.background.push_back(std::move(b));
  }
}

}  // namespace framesim::config
