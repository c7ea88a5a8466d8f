#include "config/hardware_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <string_view>

#include "config/schema.hpp"
#include "core/error.hpp"

namespace framesim::config {

using core::Dimension;

namespace {

struct UnitChoice {
  std::string_view symbol;
  std::vector<std::pair<std::string_view, double>> prefixes;  // "" for none
};

const std::vector<std::pair<std::string_view, double>> kLarge{{"", 1},    {"k", 1e3},  {"M", 1e6},
                                                              {"G", 1e9}, {"T", 1e12}, {"P", 1e15}};
const std::vector<std::pair<std::string_view, double>> kSmall{{"", 1},     {"m", 1e-3},  {"u", 1e-6},
                                                              {"n", 1e-9}, {"p", 1e-12}, {"f", 1e-15}};
const std::vector<std::pair<std::string_view, double>> kIec{
    {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0}};

std::vector<UnitChoice> choices(Dimension d, bool float_ops) {
  switch (d) {
    case Dimension::Bytes: {
      auto all = kLarge;
      all.insert(all.end(), kIec.begin(), kIec.end());
      return {{"B", all}};
    }
    case Dimension::BytesPerSecond: return {{"B/s", kLarge}};
    case Dimension::OpsPerSecond: return {{float_ops ? "FLOP/s" : "OP/s", kLarge}};
    case Dimension::Seconds: return {{"s", kSmall}};
    case Dimension::Hertz: return {{"Hz", kLarge}};
    case Dimension::Watts: return {{"W", kSmall}};
    case Dimension::Joules:
    case Dimension::JoulesPerByte:
    case Dimension::JoulesPerOp: return {{"J", kSmall}};
    case Dimension::Volts: return {{"V", kSmall}};
    case Dimension::Celsius: return {{"C", {{"", 1}}}};
    case Dimension::KelvinPerWatt: return {{"C/W", {{"", 1}}}};
    case Dimension::JoulesPerKelvin: return {{"J/C", kLarge}};
    default: return {};
  }
}

std::string_view base_symbol(Dimension d, bool float_ops) {
  auto c = choices(d, float_ops);
  return c.empty() ? "" : c.front().symbol;
}

/// The declared default of a key of `table` (its fallback, as the reader takes it when the key is absent): a value
/// equal to it is left out of the written file, so the writer and the reader agree on one default.
double declared_default(const schema::Table& table, std::string_view path) {
  const schema::Key* key = table.find(path);
  FRAMESIM_ASSERT(key != nullptr, "hardware writer: no declaration of " + std::string(path));
  const auto value = schema::fallback_value(*key);
  FRAMESIM_ASSERT(value.has_value(), "hardware writer: " + std::string(path) + " is declared without a fallback");
  return *value;
}

double unit_default(std::string_view path) { return declared_default(schema::hardware_table(), path); }

bool parses_to(const std::string& text, Dimension d, double value) {
  const auto q = core::parse_quantity(text, d);
  return q.value && *q.value == value;
}

/// A YAML-safe plain scalar (a name used as a key or list item), else double-quoted.
bool plain_safe(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  std::string lower = s;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* reserved : {"true", "false", "yes", "no", "on", "off", "null", "y", "n"})
    if (lower == reserved) return false;
  return true;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        else out += c;
    }
  }
  return out + "\"";
}

std::string name_scalar(const std::string& s) { return plain_safe(s) ? s : quoted(s); }

/// The shortest text of a plain number that from_chars reads back exactly.
std::string exact_number(double v) { return fmt::format("{}", v); }

class Writer {
 public:
  Writer(const HardwareYamlOptions& options, const std::map<std::string, std::string>& sources)
      : options_(options), sources_(sources) {}

  void comment_lines(const std::vector<std::string>& lines) {
    for (const auto& l : lines) out_ << (l.empty() ? "#" : "# " + l) << "\n";
  }
  /// `key: value` at `indent`, with the comment registered for `path` if any.
  void line(int indent, const std::string& key, const std::string& value, const std::string& path) {
    std::string text =
        std::string(static_cast<std::size_t>(indent), ' ') + key + ":" + (value.empty() ? "" : " " + value);
    if (auto it = options_.comments.find(path); it != options_.comments.end()) text += "  # " + it->second;
    out_ << text << "\n";
  }
  void source(int indent, const std::string& path) {
    if (auto it = sources_.find(path); it != sources_.end())
      line(indent, "source", quoted(it->second), path + (path.empty() ? "" : ".") + "source");
  }
  void raw(const std::string& text) { out_ << text << "\n"; }
  std::string str() const { return out_.str(); }

 private:
  const HardwareYamlOptions& options_;
  const std::map<std::string, std::string>& sources_;  // HardwareSpec::sources
  std::ostringstream out_;
};

std::string q(double v, Dimension d, bool float_ops = true) { return quoted(exact_quantity(v, d, float_ops)); }

/// `geometry:` (model/hardware.hpp, UnitGeometry), when the unit declares one.
void write_geometry(Writer& w, const model::UnitGeometry& g, const std::string& path) {
  if (!g.any()) return;
  w.line(4, "geometry", "", path + ".geometry");
  if (g.array_rows > 0)
    w.line(6, "array", fmt::format("[{}, {}]", g.array_rows, g.array_cols), path + ".geometry.array");
  if (g.lanes > 0) w.line(6, "lanes", std::to_string(g.lanes), path + ".geometry.lanes");
  w.source(6, path + ".geometry");
}

void write_level(Writer& w, const model::MemoryLevelSpec& level) {
  const std::string path = "memory." + level.name;
  w.line(2, name_scalar(level.name), "", path);
  w.line(4, "kind", std::string(model::memory_kind_name(level.kind)), path + ".kind");
  w.line(4, "capacity", q(level.capacity_bytes, Dimension::Bytes), path + ".capacity");
  w.line(4, "bandwidth", q(level.bandwidth_Bps, Dimension::BytesPerSecond), path + ".bandwidth");
  w.line(4, "efficiency", exact_number(level.efficiency), path + ".efficiency");
  w.line(4, "latency", q(level.latency_s, Dimension::Seconds), path + ".latency");
  w.line(4, "energy_per_byte", q(level.energy_per_byte_J, Dimension::JoulesPerByte), path + ".energy_per_byte");
  w.line(4, "line", q(level.line_bytes, Dimension::Bytes), path + ".line");
  if (!level.operating_points.empty()) {
    w.line(4, "operating_points", "", path + ".operating_points");
    for (const auto& p : level.operating_points)
      w.raw(fmt::format("      - {{name: {}, frequency: {}}}", quoted(p.name), q(p.frequency_Hz, Dimension::Hertz)));
  }
  if (level.contention) {
    w.line(4, "contention", "", path + ".contention");
    w.line(6, "slowdown", "", path + ".contention.slowdown");
    for (const auto& [utilisation, factor] : level.contention->points)
      w.raw(fmt::format("        - [{}, {}]", exact_number(utilisation), exact_number(factor)));
    w.source(6, path + ".contention");
  }
  w.source(4, path);
}

/// True when the reader would have made these operating points itself (the unit gave none).
bool default_points(const std::vector<model::OperatingPoint>& points) {
  return points.size() == 1 && points[0].name == "nominal" && points[0].frequency_Hz == 1.0 &&
         points[0].voltage_V == 1.0 && !points[0].static_power_W;
}

/// `scheduler:` when it is not the default (priority): a policy name, or a mapping with a quantum or switch cost.
void write_scheduler(Writer& w, const model::SchedulerSpec& s, const std::string& path) {
  const std::string policy(model::scheduling_policy_name(s.policy));
  const double default_switch_cost_s = declared_default(schema::scheduler_table(), "switch_cost");
  if (s.quantum_s == 0 && s.switch_cost_s == default_switch_cost_s) {
    if (s.policy != model::SchedulingPolicy::priority) w.line(4, "scheduler", policy, path);
    return;
  }
  w.line(4, "scheduler", "", path);
  w.line(6, "policy", policy, path + ".policy");
  if (s.quantum_s > 0) w.line(6, "quantum", q(s.quantum_s, Dimension::Seconds), path + ".quantum");
  if (s.switch_cost_s != default_switch_cost_s)
    w.line(6, "switch_cost", q(s.switch_cost_s, Dimension::Seconds), path + ".switch_cost");
}

/// A unit's efficiency: one number when every precision has the same (what a single number in the file gives), else
/// a map over the precisions with a peak (the only ones a map may name); then the op classes' own (`by_op`).
void write_efficiency(Writer& w, const model::ComputeUnitSpec& unit, const std::string& path) {
  using model::Precision;
  const bool by_op = unit.has_efficiency_by_op();
  if (single_efficiency(unit) && !by_op) {
    w.line(4, "efficiency", exact_number(*unit.efficiency[Precision::fp32]), path + ".efficiency");
  } else if (single_efficiency(unit) || by_op ||
             std::any_of(model::kAllPrecisions.begin(), model::kAllPrecisions.end(),
                         [&](Precision p) { return unit.efficiency[p] && unit.peak_ops_per_s[p]; })) {
    w.line(4, "efficiency", "", path + ".efficiency");
    if (single_efficiency(unit)) {
      w.line(6, "all", exact_number(*unit.efficiency[Precision::fp32]), path + ".efficiency.all");
    } else {
      for (Precision p : model::kAllPrecisions)
        if (unit.efficiency[p] && unit.peak_ops_per_s[p])
          w.line(6, std::string(model::precision_name(p)), exact_number(*unit.efficiency[p]),
                 path + ".efficiency." + std::string(model::precision_name(p)));
    }
    if (by_op) w.line(6, "by_op", "", path + ".efficiency.by_op");
    for (model::OpClass c : model::kAllOpClasses) {
      const auto& per = unit.efficiency_by_op[static_cast<std::size_t>(c)];
      const std::string name(model::op_class_name(c));
      std::vector<Precision> given;
      for (Precision p : model::kAllPrecisions)
        if (per[p] && unit.peak_ops_per_s[p]) given.push_back(p);
      if (given.empty()) continue;
      const bool same = std::all_of(given.begin(), given.end(), [&](Precision p) { return *per[p] == *per[given[0]]; });
      std::size_t peaks = 0;
      for (Precision p : model::kAllPrecisions) peaks += unit.peak_ops_per_s[p] ? 1 : 0;
      if (same && given.size() == peaks) {
        w.line(8, name, exact_number(*per[given[0]]), path + ".efficiency.by_op." + name);
        continue;
      }
      w.line(8, name, "", path + ".efficiency.by_op." + name);
      for (Precision p : given)
        w.line(10, std::string(model::precision_name(p)), exact_number(*per[p]),
               path + ".efficiency.by_op." + name + "." + std::string(model::precision_name(p)));
    }
  }
}

/// A unit's capabilities (what it can run, and where what it cannot falls back to), when it declares them.
void write_capabilities(Writer& w, const model::HardwareSpec& hw, const model::ComputeUnitSpec& unit,
                        const std::string& path) {
  if (const auto& caps = unit.capabilities) {
    w.line(4, "capabilities", "", path + ".capabilities");
    w.source(6, path + ".capabilities");
    auto list = [&](const std::vector<std::string>& names) {
      std::string text;
      for (const auto& n : names) text += (text.empty() ? "" : ", ") + name_scalar(n);
      return "[" + text + "]";
    };
    std::vector<std::string> classes, precisions;
    for (auto c : caps->op_classes) classes.emplace_back(model::op_class_name(c));
    for (auto p : caps->precisions) precisions.emplace_back(model::precision_name(p));
    if (!classes.empty()) w.line(6, "op_classes", list(classes), path + ".capabilities.op_classes");
    if (!caps->ops.empty()) w.line(6, "ops", list(caps->ops), path + ".capabilities.ops");
    if (!precisions.empty()) w.line(6, "precisions", list(precisions), path + ".capabilities.precisions");
    if (caps->max_tensor_bytes)
      w.line(6, "max_tensor", q(*caps->max_tensor_bytes, Dimension::Bytes), path + ".capabilities.max_tensor");
    if (caps->fallback)
      w.line(6, "fallback", name_scalar(hw.units[*caps->fallback].name), path + ".capabilities.fallback");
  }
}

void write_unit(Writer& w, const model::HardwareSpec& hw, const model::ComputeUnitSpec& unit) {
  using model::Precision;
  const std::string path = "units." + unit.name;
  w.line(2, name_scalar(unit.name), "", path);
  w.line(4, "kind", std::string(model::unit_kind_name(unit.kind)), path + ".kind");
  w.line(4, "cores", std::to_string(unit.cores), path + ".cores");
  w.line(4, "peak", "", path + ".peak");
  for (Precision p : model::kAllPrecisions)
    if (unit.peak_ops_per_s[p])
      w.line(6, std::string(model::precision_name(p)),
             q(*unit.peak_ops_per_s[p], Dimension::OpsPerSecond, model::is_float(p)),
             path + ".peak." + std::string(model::precision_name(p)));
  write_efficiency(w, unit, path);
  w.line(4, "dispatch_overhead", q(unit.dispatch_overhead_s, Dimension::Seconds), path + ".dispatch_overhead");
  if (unit.output_cost_s > 0)
    w.line(4, "output_cost", q(unit.output_cost_s, Dimension::Seconds), path + ".output_cost");
  if (unit.outstanding_bytes)
    w.line(4, "outstanding", q(*unit.outstanding_bytes, Dimension::Bytes), path + ".outstanding");
  if (unit.contention_sensitivity != unit_default("units.<unit>.contention_sensitivity"))
    w.line(4, "contention_sensitivity", exact_number(unit.contention_sensitivity), path + ".contention_sensitivity");
  if (unit.weight_caching != model::WeightCaching::whole)
    w.line(4, "weight_caching", std::string(model::kWeightCaching.name(unit.weight_caching)), path + ".weight_caching");
  if (unit.overlap != unit_default("units.<unit>.overlap"))
    w.line(4, "overlap", exact_number(unit.overlap), path + ".overlap");
  if (std::any_of(unit.overlap_by_op.begin(), unit.overlap_by_op.end(), [](const auto& o) { return o.has_value(); })) {
    w.line(4, "overlap_by_op", "", path + ".overlap_by_op");
    for (model::OpClass c : model::kAllOpClasses)
      if (const auto& o = unit.overlap_by_op[static_cast<std::size_t>(c)]) {
        const std::string name(model::op_class_name(c));
        w.line(6, name, exact_number(*o), path + ".overlap_by_op." + name);
      }
  }
  if (const auto& h = unit.handoff) {
    w.line(4, "handoff", "", path + ".handoff");
    w.line(6, "unit", name_scalar(hw.units[h->unit].name), path + ".handoff.unit");
    if (!h->input || !h->output) {
      std::string which = h->input ? "input" : h->output ? "output" : "";
      w.line(6, "reformat", "[" + which + "]", path + ".handoff.reformat");
    }
    if (h->efficiency != unit_default("units.<unit>.handoff.efficiency"))
      w.line(6, "efficiency", exact_number(h->efficiency), path + ".handoff.efficiency");
    if (h->launch_s != unit_default("units.<unit>.handoff.launch"))
      w.line(6, "launch", q(h->launch_s, Dimension::Seconds), path + ".handoff.launch");
    if (h->host_precision)
      w.line(6, "host_precision", std::string(model::precision_name(*h->host_precision)),
             path + ".handoff.host_precision");
  }
  write_geometry(w, unit.geometry, path);
  std::string levels;
  for (std::size_t lv : unit.memory_path) levels += (levels.empty() ? "" : ", ") + name_scalar(hw.memory[lv].name);
  w.line(4, "memory", "[" + levels + "]", path + ".memory");
  if (!default_points(unit.operating_points)) {
    w.line(4, "operating_points", "", path + ".operating_points");
    for (const auto& p : unit.operating_points) {
      std::string item = fmt::format("      - {{name: {}, frequency: {}, voltage: {}", quoted(p.name),
                                     q(p.frequency_Hz, Dimension::Hertz), q(p.voltage_V, Dimension::Volts));
      if (p.static_power_W) item += fmt::format(", static_power: {}", q(*p.static_power_W, Dimension::Watts));
      w.raw(item + "}");
    }
  }
  w.line(4, "static_power", q(unit.static_power_W, Dimension::Watts), path + ".static_power");
  if (unit.energy_per_op_J.any()) {
    w.line(4, "energy_per_op", "", path + ".energy_per_op");
    for (Precision p : model::kAllPrecisions)
      if (unit.energy_per_op_J[p])
        w.line(6, std::string(model::precision_name(p)), q(*unit.energy_per_op_J[p], Dimension::JoulesPerOp),
               path + ".energy_per_op." + std::string(model::precision_name(p)));
  }
  write_scheduler(w, unit.scheduler, path + ".scheduler");
  write_capabilities(w, hw, unit, path);
  w.source(4, path);
}

void write_thermal(Writer& w, const model::ThermalSpec& t) {
  w.line(0, "thermal", "", "thermal");
  w.line(2, "ambient", q(t.ambient_C, Dimension::Celsius), "thermal.ambient");
  w.line(2, "resistance", q(t.resistance_K_per_W, Dimension::KelvinPerWatt), "thermal.resistance");
  w.line(2, "capacitance", q(t.capacitance_J_per_K, Dimension::JoulesPerKelvin), "thermal.capacitance");
  w.line(2, "trip", q(t.trip_C, Dimension::Celsius), "thermal.trip");
  w.line(2, "release", q(t.release_C, Dimension::Celsius), "thermal.release");
  w.line(2, "governor", "", "thermal.governor");
  w.line(4, "period", q(t.governor_period_s, Dimension::Seconds), "thermal.governor.period");
  w.line(4, "policy", std::string(model::governor_policy_name(t.policy)), "thermal.governor.policy");
  if (!t.throttled.empty()) {
    std::string names;
    for (const auto& n : t.throttled) names += (names.empty() ? "" : ", ") + name_scalar(n);
    w.line(4, "throttle", "[" + names + "]", "thermal.governor.throttle");
  }
  w.source(2, "thermal");
}

}  // namespace

bool single_efficiency(const model::ComputeUnitSpec& unit) {
  for (model::Precision p : model::kAllPrecisions)
    if (!unit.efficiency[p] || *unit.efficiency[p] != *unit.efficiency[model::Precision::fp32]) return false;
  return true;
}

std::string exact_quantity(double value, Dimension dimension, bool float_ops) {
  const auto units = choices(dimension, float_ops);
  std::string best;
  int best_score = 1 << 30;
  for (const auto& u : units) {
    for (const auto& [prefix, factor] : u.prefixes) {
      const double mantissa = value / factor;
      const std::string text = fmt::format("{} {}{}", exact_number(mantissa), prefix, u.symbol);
      if (!parses_to(text, dimension, value)) continue;
      // Shortest wins; a mantissa below 1 ("0.5 GiB") or with an exponent only when nothing else is exact.
      int score = static_cast<int>(text.size());
      if (value != 0 && std::fabs(mantissa) < 1) score += 100;
      if (std::fabs(mantissa) >= 1000) score += 2;
      if (text.find('e') != std::string::npos) score += 200;
      if (score < best_score) {
        best_score = score;
        best = text;
      }
    }
  }
  if (!best.empty()) return best;
  return fmt::format("{} {}", exact_number(value), base_symbol(dimension, float_ops));
}

std::string write_hardware_yaml(const model::HardwareSpec& hw, const HardwareYamlOptions& options) {
  Writer w(options, hw.sources);
  w.comment_lines(options.header);
  w.line(0, "name", quoted(hw.name), "name");
  if (!hw.description.empty()) w.line(0, "description", quoted(hw.description), "description");
  w.source(0, "");
  w.line(0, "memory", "", "memory");
  for (const auto& level : hw.memory) write_level(w, level);
  w.line(0, "units", "", "units");
  for (const auto& unit : hw.units) write_unit(w, hw, unit);
  if (hw.thermal) write_thermal(w, *hw.thermal);
  return w.str();
}

}  // namespace framesim::config
