#include "config/hardware.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "config/efficiency_reader.hpp"
#include "config/readers.hpp"
#include "config/scheduler.hpp"
#include "config/yaml.hpp"
#include "core/text.hpp"
#include "model/network.hpp"

namespace framesim::config {

using core::Dimension;
using model::ComputeUnitSpec;
using model::HardwareSpec;
using model::MemoryLevelSpec;

namespace {

/// Longest dispatch overhead per kernel (README "Limits"): a launch costs microseconds, never seconds.
constexpr double kMaxDispatchOverhead_s = 1.0;
/// Longest output cost per output element (README "Limits").
constexpr double kMaxOutputCost_s = 1e-6;

const schema::Table& kKeys = schema::hardware_table();

/// The declaration at `pattern` (a key the reader walks itself: a per-precision table's entries).
const schema::Key& declared(std::string_view pattern) {
  const schema::Key* k = kKeys.find(pattern);
  FRAMESIM_ASSERT(k != nullptr, "undeclared hardware key " + std::string(pattern));
  return *k;
}

/// "\"fp23\" is not a precision (did you mean \"fp32\"?)", or the allowed names when none is near.
std::string not_one_of(const std::string& key, std::string_view what, const std::vector<std::string>& names) {
  if (auto near = core::closest_match(key, names))
    return fmt::format("\"{}\" is not {} (did you mean \"{}\"?)", key, what, *near);
  return fmt::format("\"{}\" is not {}; allowed: {}", key, what, core::join_list(names, ", "));
}

/// A per-precision table: `{fp32: "2 TFLOP/s", int8: "8 TOPS"}`. With `peaks`, every precision must have a peak.
/// Keys in `skip` are left to the caller.
template <class Read>
void read_per_precision(const Node& node, model::PerPrecision<double>& out, Read read, std::string_view what = "",
                        const model::PerPrecision<double>* peaks = nullptr,
                        std::initializer_list<std::string_view> skip = {}) {
  for (auto& [key, value] : node.entries()) {
    if (std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
    auto p = model::parse_precision(key);
    if (!p) {
      value.error(not_one_of(key, "a precision", model::precision_names()));
      continue;
    }
    if (peaks && !(*peaks)[*p]) {
      value.error(fmt::format("{} for {} but no peak for {}", what, key, key));
      continue;
    }
    if (auto v = read(value)) out[*p] = *v;
  }
}

/// Reads the `source:` text of the mapping at key path `path` into `sources` (see HardwareSpec::sources).
void read_source(const MapReader& m, const std::string& path, std::map<std::string, std::string>& sources) {
  if (auto text = m.text("source")) sources[path] = *text;
}

/// Operating points, highest frequency first.
template <class Point, class Read>
std::vector<Point> read_points(const Node& node, Read read) {
  std::vector<Point> points;
  std::set<std::string> names;
  std::optional<double> previous;
  for (const Node& item : node.items()) {
    Point p = read(item);
    if (p.name.empty()) p.name = fmt::format("op{}", points.size());
    if (!names.insert(p.name).second) item.error(fmt::format("operating point \"{}\" is given twice", p.name));
    if (previous && p.frequency_Hz >= *previous && p.frequency_Hz > 0)
      item.error("operating points must be listed from the highest frequency down");
    if (p.frequency_Hz > 0) previous = p.frequency_Hz;
    points.push_back(p);
  }
  if (node.is_sequence() && points.empty()) node.error("needs at least one operating point");
  return points;
}

/// The declaration at `pattern` of `table` (a hardware file's or a runtime profile's efficiency keys).
const schema::Key& declared_in(const schema::Table& table, std::string_view pattern) {
  const schema::Key* k = table.find(pattern);
  FRAMESIM_ASSERT(k != nullptr, "undeclared key " + std::string(pattern));
  return *k;
}

/// An efficiency of every precision, or of the precisions a map names: `0.6` or `{fp16: 0.6, int8: 0.5}`.
/// Keys in `skip` are left to the caller. Precisions must have a peak when the unit has peaks.
void read_precision_efficiency(const Node& node, model::PerPrecision<double>& out, const ComputeUnitSpec& unit,
                               const schema::Table& table, std::initializer_list<std::string_view> skip = {}) {
  if (node.is_map()) {
    const schema::Key& key = declared_in(table, "units.<unit>.efficiency.<precision>");
    read_per_precision(
        node, out, [&](const Node& v) { return v.number(key); }, "efficiency",
        unit.peak_ops_per_s.any() ? &unit.peak_ops_per_s : nullptr, skip);
  } else if (auto e = node.number(declared_in(table, "units.<unit>.efficiency"))) {
    for (model::Precision p : model::kAllPrecisions) out[p] = *e;
  }
}

}  // namespace

void read_unit_efficiency(const Node& node, ComputeUnitSpec& unit, const schema::Table& table) {
  read_precision_efficiency(node, unit.efficiency, unit, table, {"all", "by_op"});
  if (!node.is_map()) return;
  std::optional<Node> by_op;
  for (auto& [key, value] : node.entries()) {
    if (key == "by_op") by_op = value;
    if (key != "all") continue;
    if (auto e = value.number(declared_in(table, "units.<unit>.efficiency.all")))
      for (model::Precision p : model::kAllPrecisions)
        if (!unit.efficiency[p]) unit.efficiency[p] = *e;
  }
  if (!by_op) return;
  if (!by_op->is_map()) {
    by_op->error("expected a map of op class -> efficiency, e.g. {depthwise: 0.3, conv: 0.7}");
    return;
  }
  for (auto& [key, value] : by_op->entries()) {
    auto c = model::parse_op_class(key);
    if (!c) {
      value.error(not_one_of(key, "an op class", model::op_class_names()));
      continue;
    }
    read_precision_efficiency(value, unit.efficiency_by_op[static_cast<std::size_t>(*c)], unit, table);
  }
}

std::optional<double> read_output_cost(const MapReader& m) {
  auto c = m.quantity("output_cost");
  if (c && *c > kMaxOutputCost_s) {
    m.get("output_cost")
        ->error(fmt::format("must be at most {} (an epilogue per output element costs nanoseconds)",
                            core::format_seconds(kMaxOutputCost_s)));
    return std::nullopt;
  }
  return c;
}

namespace {

/// `geometry: {array: [rows, cols], lanes: N, source}` (model/hardware.hpp, UnitGeometry).
model::UnitGeometry read_geometry(const Node& node, const std::string& unit_name,
                                  std::map<std::string, std::string>& sources) {
  model::UnitGeometry g;
  MapReader m(node, kKeys, "units.<unit>.geometry");
  if (!m.ok()) return g;
  if (auto array = m.get("array")) {
    std::vector<int> dims;
    for (const Node& item : array->items())
      if (auto v = item.integer(declared("units.<unit>.geometry.array[]"))) dims.push_back(static_cast<int>(*v));
    if (array->is_sequence() && array->yaml().size() != 2) array->error("expected [rows, columns], e.g. [64, 64]");
    else if (dims.size() == 2) {
      g.array_rows = dims[0];
      g.array_cols = dims[1];
    }
  }
  if (auto lanes = m.integer("lanes")) g.lanes = static_cast<int>(*lanes);
  if (!m.has("array") && !m.has("lanes")) node.error("needs array or lanes");
  read_source(m, "units." + unit_name + ".geometry", sources);
  return g;
}

/// `contention: {slowdown: [[utilisation, factor], ...], source}`: a curve that starts at (0, 1), with the
/// others' utilisation increasing in [0, 1] and the factor never below 1 and never falling.
model::ContentionCurve read_contention(const Node& node, const std::string& level_name,
                                       std::map<std::string, std::string>& sources) {
  model::ContentionCurve curve;
  MapReader m(node, kKeys, "memory.<level>.contention");
  read_source(m, "memory." + level_name + ".contention", sources);
  auto points = m.required("slowdown");
  if (!points) return curve;
  double last_utilisation = 0;
  double last_factor = 1;
  for (const Node& item : points->items()) {
    const auto pair = item.items();
    if (!item.is_sequence() || pair.size() != 2) {
      if (item.is_sequence()) item.error("expected a point [utilisation, factor], like [0.5, 1.3]");
      continue;
    }
    const auto utilisation = pair[0].number(Range::fraction);
    const auto factor = pair[1].number(Range::positive);
    if (!utilisation || !factor) continue;
    if (*factor < 1) {
      pair[1].error(fmt::format("a slowdown factor is at least 1 (load never makes memory faster), got {}",
                                core::format_number(*factor)));
      continue;
    }
    if (*utilisation == 0 && *factor != 1) {
      pair[1].error("at utilisation 0 the factor must be 1 (a master alone is not slowed)");
      continue;
    }
    if (!curve.points.empty() && *utilisation <= last_utilisation) {
      pair[0].error(fmt::format("utilisations must increase along the curve: {} after {}",
                                core::format_number(*utilisation), core::format_number(last_utilisation)));
      continue;
    }
    if (*factor < last_factor) {
      pair[1].error(fmt::format("the slowdown curve must not fall: {} after {} (it must be monotonic)",
                                core::format_number(*factor), core::format_number(last_factor)));
      continue;
    }
    last_utilisation = *utilisation;
    last_factor = *factor;
    curve.points.emplace_back(*utilisation, *factor);
  }
  if (points->is_sequence() && points->yaml().size() == 0) points->error("needs at least one point");
  return curve;
}

MemoryLevelSpec read_level(const std::string& name, const Node& node, std::map<std::string, std::string>& sources) {
  MemoryLevelSpec level;
  level.name = name;
  MapReader m(node, kKeys, "memory.<level>");
  if (auto k = m.choice("kind", model::kMemoryKinds)) level.kind = *k;
  level.capacity_bytes = m.quantity("capacity").value_or(1);
  level.bandwidth_Bps = m.quantity("bandwidth").value_or(1);
  level.efficiency = m.number_or_default("efficiency");
  level.latency_s = m.quantity_or_default("latency");
  level.energy_per_byte_J = m.quantity_or_default("energy_per_byte");
  level.line_bytes = m.quantity_or_default("line");
  read_source(m, "memory." + name, sources);
  if (auto c = m.get("contention")) level.contention = read_contention(*c, name, sources);
  if (auto ops = m.get("operating_points")) {
    level.operating_points = read_points<model::MemoryOperatingPoint>(*ops, [](const Node& item) {
      model::MemoryOperatingPoint p;
      MapReader r(item, kKeys, "memory.<level>.operating_points[]");
      p.name = r.text("name").value_or("");
      p.frequency_Hz = r.quantity("frequency").value_or(0.0);
      return p;
    });
  }
  return level;
}

/// A unit's memory path lists its levels innermost first (placement, hardware/README.md): on-chip levels before
/// off-chip ones, registers before scratchpads and caches, those from the smallest up (a smaller level further
/// out could never hold what did not fit nearer), then DRAM, then flash. A path in another order is refused with
/// the order expected.
void check_path_order(const Node& where, const std::vector<std::size_t>& path, const HardwareSpec& hw) {
  auto rank = [&](std::size_t level) {
    const MemoryLevelSpec& l = hw.memory[level];
    switch (l.kind) {
      case model::MemoryKind::registers: return std::pair{0, 0.0};
      case model::MemoryKind::sram:
      case model::MemoryKind::cache: return std::pair{1, l.capacity_bytes};
      case model::MemoryKind::dram: return std::pair{2, 0.0};
      case model::MemoryKind::flash: return std::pair{3, 0.0};
    }
    return std::pair{3, 0.0};
  };
  std::vector<std::size_t> expected = path;
  std::stable_sort(expected.begin(), expected.end(), [&](std::size_t a, std::size_t b) { return rank(a) < rank(b); });
  if (expected == path) return;
  auto names = [&](const std::vector<std::size_t>& levels) {
    std::vector<std::string> out;
    for (std::size_t l : levels)
      out.push_back(fmt::format("{} ({}{})", hw.memory[l].name, model::memory_kind_name(hw.memory[l].kind),
                                rank(l).first == 1 ? ", " + core::format_capacity(hw.memory[l].capacity_bytes) : ""));
    return "[" + core::join_list(out, ", ") + "]";
  };
  where.error(
      fmt::format("levels are listed innermost first: registers, then sram and cache levels from the "
                  "smallest, then dram, then flash; expected {}, got {}",
                  names(expected), names(path)));
}

/// `handoff: {unit, reformat, efficiency, launch, host_precision}` of unit `self` (model/handoff.hpp): the host is
/// another unit of the file, read once every unit is known.
model::HandoffSpec read_handoff(const Node& node, const HardwareSpec& hw, std::size_t self) {
  model::HandoffSpec h;
  MapReader m(node, kKeys, "units.<unit>.handoff");
  if (!m.ok()) return h;
  if (auto host = m.text("unit")) {
    std::vector<std::string> names;
    for (const auto& u : hw.units) names.push_back(u.name);
    if (auto u = hw.find_unit(*host); !u) {
      std::string message = fmt::format("no unit \"{}\"", *host);
      if (auto near = core::closest_match(*host, names)) message += fmt::format(" (did you mean \"{}\"?)", *near);
      else message += fmt::format("; units: {}", core::join_list(names, ", "));
      m.get("unit")->error(message);
    } else if (*u == self) {
      m.get("unit")->error("the host of a hand-off is another unit than the accelerator itself");
    } else {
      h.unit = *u;
    }
  }
  if (auto reformat = m.get("reformat")) {
    h.input = h.output = false;
    for (const Node& item : reformat->items())
      if (auto which = item.choice({"input", "output"})) (*which == "input" ? h.input : h.output) = true;
  }
  h.efficiency = m.number_or_default("efficiency");
  h.launch_s = m.quantity_or_default("launch");
  if (auto p = m.choice("host_precision")) h.host_precision = model::parse_precision(*p);
  return h;
}

ComputeUnitSpec read_unit(const std::string& name, const Node& node, const HardwareSpec& hw,
                          std::map<std::string, std::string>& sources, std::optional<Node>& handoff) {
  ComputeUnitSpec unit;
  unit.name = name;
  MapReader m(node, kKeys, "units.<unit>");
  if (auto k = m.choice("kind", model::kUnitKinds)) unit.kind = *k;
  unit.cores = static_cast<int>(m.integer_or_default("cores"));
  if (auto sched = m.get("scheduler")) unit.scheduler = read_scheduler(*sched);
  if (auto peak = m.required("peak")) {
    read_per_precision(*peak, unit.peak_ops_per_s,
                       [](const Node& v) { return v.quantity(declared("units.<unit>.peak.<precision>")); });
    if (peak->is_map() && !unit.peak_ops_per_s.any()) peak->error("needs a peak for at least one precision");
  }
  if (auto eff = m.get("efficiency")) read_unit_efficiency(*eff, unit, kKeys);
  unit.dispatch_overhead_s = m.quantity_or_default("dispatch_overhead");
  if (unit.dispatch_overhead_s > kMaxDispatchOverhead_s)
    m.get("dispatch_overhead")
        ->error(fmt::format("must be at most {} (a kernel launch costs microseconds)",
                            core::format_seconds(kMaxDispatchOverhead_s)));
  if (m.has("outstanding")) unit.outstanding_bytes = m.quantity("outstanding");
  unit.output_cost_s = read_output_cost(m).value_or(0.0);
  unit.contention_sensitivity = m.number_or_default("contention_sensitivity");
  unit.overlap = m.number_or_default("overlap");
  unit.weight_caching = m.choice_or_default("weight_caching", model::kWeightCaching);
  handoff = m.get("handoff");
  if (auto by_op = m.get("overlap_by_op")) {
    for (auto& [key, value] : by_op->entries()) {
      auto c = model::parse_op_class(key);
      if (!c) {
        value.error(not_one_of(key, "an op class", model::op_class_names()));
        continue;
      }
      unit.overlap_by_op[static_cast<std::size_t>(*c)] =
          value.number(declared("units.<unit>.overlap_by_op.<op_class>"));
    }
  }
  if (auto g = m.get("geometry")) unit.geometry = read_geometry(*g, name, sources);
  if (auto mem = m.required("memory")) {
    std::set<std::string> seen;
    std::vector<std::string> level_names;
    for (const auto& l : hw.memory) level_names.push_back(l.name);
    for (const Node& item : mem->items()) {
      auto s = item.text();
      if (!s) continue;
      auto lv = hw.find_level(*s);
      if (!lv && hw.memory.empty()) continue;  // no levels at all: reported under memory
      if (!lv) {
        std::string message = fmt::format("no memory level \"{}\"", *s);
        if (auto near = core::closest_match(*s, level_names)) message += fmt::format(" (did you mean \"{}\"?)", *near);
        else message += fmt::format("; levels: {}", core::join_list(level_names, ", "));
        item.error(message);
        continue;
      }
      if (!seen.insert(*s).second) {
        item.error(fmt::format("memory level \"{}\" is listed twice", *s));
        continue;
      }
      unit.memory_path.push_back(*lv);
    }
    if (mem->is_sequence() && mem->yaml().size() == 0) mem->error("needs at least one memory level");
    check_path_order(*mem, unit.memory_path, hw);
    if (!unit.memory_path.empty()) {
      bool writable = false;
      for (std::size_t lv : unit.memory_path) writable = writable || model::is_writable(hw.memory[lv].kind);
      if (!writable) mem->error("needs a writable level for activations (flash is read-only)");
    }
  }
  if (auto ops = m.get("operating_points")) {
    unit.operating_points = read_points<model::OperatingPoint>(*ops, [](const Node& item) {
      model::OperatingPoint p;
      MapReader r(item, kKeys, "units.<unit>.operating_points[]");
      p.name = r.text("name").value_or("");
      p.frequency_Hz = r.quantity("frequency").value_or(0.0);
      p.voltage_V = r.quantity_or_default("voltage");
      if (r.has("static_power")) p.static_power_W = r.quantity("static_power");
      return p;
    });
  }
  if (unit.operating_points.empty()) unit.operating_points.push_back({"nominal", 1.0, 1.0, std::nullopt});
  unit.static_power_W = m.quantity_or_default("static_power");
  if (auto e = m.get("energy_per_op")) {
    read_per_precision(
        *e, unit.energy_per_op_J,
        [](const Node& v) { return v.quantity(declared("units.<unit>.energy_per_op.<precision>")); }, "energy per op",
        &unit.peak_ops_per_s);
  }
  if (auto busy = m.get("busy_power")) {
    if (m.has("energy_per_op")) {
      busy->error("give either energy_per_op or busy_power, not both");
    } else if (auto watts = m.quantity("busy_power")) {
      // Busy power is the whole unit running at its effective roof (peak x efficiency): the dynamic part
      // spread over those operations.
      const double dynamic = *watts - unit.static_power_W;
      if (dynamic <= 0) {
        busy->error(fmt::format("must exceed static_power ({} W)", core::format_number(unit.static_power_W)));
      } else {
        for (model::Precision p : model::kAllPrecisions)
          if (unit.peak_ops_per_s[p])
            unit.energy_per_op_J[p] = dynamic / (*unit.peak_ops_per_s[p] * unit.efficiency_for(p));
      }
    }
  }
  read_source(m, "units." + name, sources);
  return unit;
}

/// The unit named at `item` (a fallback, a reformat unit): its index, else a problem with a did-you-mean.
std::optional<std::size_t> named_unit(const Node& item, const HardwareSpec& hw) {
  auto s = item.text();
  if (!s) return std::nullopt;
  if (auto u = hw.find_unit(*s)) return u;
  std::vector<std::string> names;
  for (const auto& u : hw.units) names.push_back(u.name);
  std::string message = fmt::format("no unit \"{}\"", *s);
  if (auto near = core::closest_match(*s, names)) message += fmt::format(" (did you mean \"{}\"?)", *near);
  else message += fmt::format("; units: {}", core::join_list(names, ", "));
  item.error(message);
  return std::nullopt;
}

/// `capabilities` of unit `index` (read once every unit is known: its fallback names another unit).
void read_capabilities(const Node& node, std::size_t index, HardwareSpec& hw,
                       std::map<std::string, std::string>& sources) {
  if (!node.is_map()) return;  // reported by read_unit
  std::optional<Node> capabilities;
  for (auto& [key, value] : node.entries())
    if (key == "capabilities") capabilities = value;
  ComputeUnitSpec& unit = hw.units[index];
  if (auto& c = capabilities) {
    MapReader cr(*c, kKeys, "units.<unit>.capabilities");
    model::UnitCapabilities caps;
    if (auto classes = cr.get("op_classes"))
      for (const Node& item : classes->items())
        if (auto name = item.choice(model::op_class_names())) caps.op_classes.push_back(*model::parse_op_class(*name));
    if (auto ops = cr.get("ops")) {
      const auto known = model::op_names();
      for (const Node& item : ops->items()) {
        auto name = item.text();
        if (!name) continue;
        if (!model::find_op(*name)) {
          std::string message = fmt::format("no op \"{}\" (framesim ops lists them)", *name);
          if (auto near = core::closest_match(*name, known)) message += fmt::format(" (did you mean \"{}\"?)", *near);
          item.error(message);
          continue;
        }
        caps.ops.push_back(*name);
      }
    }
    if (auto precisions = cr.get("precisions"))
      for (const Node& item : precisions->items())
        if (auto name = item.choice(model::precision_names()))
          caps.precisions.push_back(*model::parse_precision(*name));
    if (cr.has("max_tensor")) caps.max_tensor_bytes = cr.quantity("max_tensor");
    if (auto f = cr.get("fallback")) {
      caps.fallback = named_unit(*f, hw);
      if (caps.fallback && *caps.fallback == index) {
        f->error("a unit cannot fall back to itself");
        caps.fallback.reset();
      }
    }
    read_source(cr, "units." + unit.name + ".capabilities", sources);
    unit.capabilities = std::move(caps);
  }
}

model::ThermalSpec read_thermal(const Node& node, const HardwareSpec& hw, std::map<std::string, std::string>& sources) {
  model::ThermalSpec t;
  MapReader m(node, kKeys, "thermal");
  t.ambient_C = m.quantity("ambient").value_or(25.0);
  t.resistance_K_per_W = m.quantity("resistance").value_or(1.0);
  t.capacitance_J_per_K = m.quantity("capacitance").value_or(1.0);
  auto trip = m.quantity("trip");
  auto release = m.quantity("release");
  read_source(m, "thermal", sources);
  if (trip) t.trip_C = *trip;
  if (release) t.release_C = *release;
  if (trip && release && *release >= *trip)
    m.get("release")->error(fmt::format("must be below trip ({} C)", core::format_number(*trip)));
  if (trip && *trip <= t.ambient_C)
    m.get("trip")->error(fmt::format("must be above ambient ({} C)", core::format_number(t.ambient_C)));
  if (auto g = m.required("governor")) {
    MapReader gov(*g, kKeys, "thermal.governor");
    t.governor_period_s = gov.quantity("period").value_or(0.1);
    t.policy = gov.choice_or_default("policy", model::kGovernorPolicies);
    if (auto throttle = gov.get("throttle")) {
      std::vector<std::string> names;
      for (const auto& u : hw.units) names.push_back(u.name);
      for (const auto& l : hw.memory) names.push_back(l.name);
      for (const Node& item : throttle->items()) {
        auto s = item.text();
        if (!s) continue;
        if (std::find(names.begin(), names.end(), *s) == names.end()) {
          std::string message = fmt::format("no unit or memory level \"{}\"", *s);
          if (auto near = core::closest_match(*s, names)) message += fmt::format(" (did you mean \"{}\"?)", *near);
          item.error(message);
          continue;
        }
        t.throttled.push_back(*s);
      }
    }
  }
  return t;
}

}  // namespace

model::HardwareSpec read_hardware(const Node& root) {
  HardwareSpec hw;
  hw.source_file = root.document().display_path();
  MapReader m(root, kKeys, "");
  if (!m.ok()) return hw;
  hw.name = m.text("name").value_or("");
  hw.description = m.text("description").value_or("");
  std::map<std::string, std::string> sources;  // the `source:` texts, kept in hw.sources once all is read
  read_source(m, "", sources);
  if (auto memory = m.required("memory")) {
    for (auto& [name, node] : memory->entries()) hw.memory.push_back(read_level(name, node, sources));
    if (memory->is_map() && hw.memory.empty()) memory->error("needs at least one memory level");
  }
  if (auto units = m.required("units")) {
    std::vector<std::optional<Node>> handoffs;  // per unit: its `handoff`, read once every unit is known
    for (auto& [name, node] : units->entries()) {
      if (hw.find_level(name)) node.error(fmt::format("\"{}\" names both a unit and a memory level", name));
      hw.units.push_back(read_unit(name, node, hw, sources, handoffs.emplace_back()));
    }
    if (units->is_map() && hw.units.empty()) units->error("needs at least one compute unit");
    for (std::size_t u = 0; u < handoffs.size(); ++u)
      if (handoffs[u]) hw.units[u].handoff = read_handoff(*handoffs[u], hw, u);
    std::size_t index = 0;
    for (auto& [name, node] : units->entries()) read_capabilities(node, index++, hw, sources);
  }
  for (auto& level : hw.memory)
    for (const auto& unit : hw.units)
      for (std::size_t lv : unit.memory_path)
        if (hw.memory[lv].name == level.name) level.users.push_back(unit.name);
  if (auto thermal = m.get("thermal")) hw.thermal = read_thermal(*thermal, hw, sources);
  hw.sources = std::move(sources);
  return hw;
}

model::HardwareSpec load_hardware(const std::filesystem::path& path) {
  core::Diagnostics diagnostics;
  auto doc = Document::load(path, diagnostics);
  auto hw = read_hardware(Node(doc, doc->root(), ""));
  diagnostics.throw_if_any();
  return hw;
}

model::HardwareSpec parse_hardware(const std::string& text, const std::string& display_path) {
  core::Diagnostics diagnostics;
  auto doc = Document::parse(text, display_path, diagnostics);
  auto hw = read_hardware(Node(doc, doc->root(), ""));
  diagnostics.throw_if_any();
  return hw;
}

}  // namespace framesim::config
