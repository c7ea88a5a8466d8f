#include "config/runtime.hpp"

#include <fmt/format.h>

#include "config/efficiency_reader.hpp"
#include "config/hardware_writer.hpp"
#include "config/yaml.hpp"
#include "core/units.hpp"

namespace framesim::config {

namespace {

/// Longest dispatch overhead per kernel, as in a hardware file (README "Limits").
constexpr double kMaxDispatchOverhead_s = 1.0;

const schema::Table& kKeys = schema::runtime_table();

/// The precisions an efficiency mapping names, at its top level and under by_op's classes (read_unit_efficiency
/// has refused what is not a precision already).
std::vector<model::RuntimeUnitProfile::NamedPrecision> named_precisions(const Node& efficiency,
                                                                        const std::string& path) {
  std::vector<model::RuntimeUnitProfile::NamedPrecision> named;
  const auto add_map = [&](const Node& node, const std::string& at) {
    if (!node.is_map()) return;
    for (const auto& [key, value] : node.entries())
      if (auto precision = model::parse_precision(key)) named.push_back({*precision, value.location(), at + "." + key});
  };
  add_map(efficiency, path);
  if (!efficiency.is_map()) return named;
  for (const auto& [key, value] : efficiency.entries())
    if (key == "by_op" && value.is_map())
      for (const auto& [op_class, per] : value.entries()) add_map(per, path + ".by_op." + op_class);
  return named;
}

model::RuntimeUnitProfile read_unit(const std::string& name, const Node& node) {
  model::RuntimeUnitProfile p;
  p.unit = name;
  p.at = node.location();
  MapReader m(node, kKeys, "units.<unit>");
  if (!m.ok()) return p;
  if (auto eff = m.get("efficiency")) {
    model::ComputeUnitSpec scratch;  // no peaks: any precision may be named
    read_unit_efficiency(*eff, scratch, kKeys);
    p.has_efficiency = true;
    p.efficiency = scratch.efficiency;
    p.efficiency_by_op = scratch.efficiency_by_op;
    p.named_precisions = named_precisions(*eff, "units." + name + ".efficiency");
  }
  if (auto o = m.quantity("dispatch_overhead")) {
    if (*o > kMaxDispatchOverhead_s)
      m.get("dispatch_overhead")
          ->error(fmt::format("must be at most {} (a kernel launch costs microseconds)",
                              core::format_seconds(kMaxDispatchOverhead_s)));
    p.dispatch_overhead_s = *o;
  }
  p.output_cost_s = read_output_cost(m);
  p.weights = m.text("weights");
  if (auto w = m.get("weights")) p.weights_at = w->location();
  if (auto f = m.choice("fusion", model::kRuntimeFusion)) p.fuses = *f;
  p.weight_caching = m.choice("weight_caching", model::kWeightCaching);
  return p;
}

model::RuntimeProfile read_runtime(const Node& root) {
  model::RuntimeProfile r;
  r.source_file = root.document().display_path();
  MapReader m(root, kKeys, "");
  if (!m.ok()) return r;
  r.name = m.text("runtime").value_or("");
  r.description = m.text("description").value_or("");
  r.source = m.text("source").value_or("");
  r.hardware = m.text("hardware").value_or("");
  if (auto h = m.get("hardware")) r.hardware_at = h->location();
  if (auto units = m.required("units")) {
    for (auto& [name, node] : units->entries()) r.units.push_back(read_unit(name, node));
    if (units->is_map() && r.units.empty()) units->error("needs at least one unit");
  }
  return r;
}

std::string number(double v) { return fmt::format("{:.6g}", v); }

/// A double-quoted YAML string.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') out += "\\n";
    else out += c;
  }
  return out + "\"";
}

}  // namespace

model::RuntimeProfile load_runtime(const std::filesystem::path& path) {
  core::Diagnostics diagnostics;
  auto doc = Document::load(path, diagnostics);
  auto r = read_runtime(Node(doc, doc->root(), ""));
  diagnostics.throw_if_any();
  return r;
}

model::RuntimeProfile parse_runtime(const std::string& text, const std::string& display_path) {
  core::Diagnostics diagnostics;
  auto doc = Document::parse(text, display_path, diagnostics);
  auto r = read_runtime(Node(doc, doc->root(), ""));
  diagnostics.throw_if_any();
  return r;
}

namespace {
/// The value every precision of `per` has, when all have the same one.
std::optional<double> uniform(const model::PerPrecision<double>& per) {
  std::optional<double> shared;
  for (model::Precision p : model::kAllPrecisions) {
    if (!per[p] || (shared && *shared != *per[p])) return std::nullopt;
    shared = per[p];
  }
  return shared;
}
}  // namespace

std::string runtime_yaml(const model::RuntimeProfile& profile, const std::string& schema_path) {
  std::string out = fmt::format("# yaml-language-server: $schema={}\n", schema_path);
  out += fmt::format("runtime: {}\n", quoted(profile.name));
  if (!profile.description.empty()) out += fmt::format("description: {}\n", quoted(profile.description));
  if (!profile.source.empty()) out += fmt::format("source: {}\n", quoted(profile.source));
  out += fmt::format("hardware: {}\n", quoted(profile.hardware));
  out += "units:\n";
  for (const auto& u : profile.units) {
    out += fmt::format("  {}:\n", u.unit);
    if (u.has_efficiency) {
      out += "    efficiency:\n";
      // An efficiency every precision shares is written once (`all`, or a class's number), as it was read: a
      // per-precision entry would name precisions the unit may have no peak for, which laying it over refuses.
      if (auto all = uniform(u.efficiency)) {
        out += fmt::format("      all: {}\n", number(*all));
      } else {
        for (model::Precision p : model::kAllPrecisions)
          if (u.efficiency[p]) out += fmt::format("      {}: {}\n", model::precision_name(p), number(*u.efficiency[p]));
      }
      bool any_class = false;
      for (model::OpClass c : model::kAllOpClasses) {
        const auto& per = u.efficiency_by_op[static_cast<std::size_t>(c)];
        if (!per.any()) continue;
        if (!any_class) out += "      by_op:\n";
        any_class = true;
        if (auto all = uniform(per)) {
          out += fmt::format("        {}: {}\n", model::op_class_name(c), number(*all));
          continue;
        }
        out += fmt::format("        {}: {{", model::op_class_name(c));
        bool first = true;
        for (model::Precision p : model::kAllPrecisions)
          if (per[p]) {
            out += fmt::format("{}{}: {}", first ? "" : ", ", model::precision_name(p), number(*per[p]));
            first = false;
          }
        out += "}\n";
      }
    }
    if (u.dispatch_overhead_s)
      out += fmt::format("    dispatch_overhead: \"{}\"\n",
                         exact_quantity(*u.dispatch_overhead_s, core::Dimension::Seconds));
    if (u.output_cost_s)
      out += fmt::format("    output_cost: \"{}\"\n", exact_quantity(*u.output_cost_s, core::Dimension::Seconds));
    if (u.weights) out += fmt::format("    weights: {}\n", quoted(*u.weights));
    if (u.fuses) out += fmt::format("    fusion: {}\n", model::kRuntimeFusion.name(*u.fuses));
    if (u.weight_caching) out += fmt::format("    weight_caching: {}\n", model::kWeightCaching.name(*u.weight_caching));
  }
  return out;
}

}  // namespace framesim::config
