#include "config/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "config/readers.hpp"
#include "config/runtime.hpp"
#include "config/scheduler.hpp"
#include "config/split.hpp"
#include "config/yaml.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "model/budget.hpp"
#include "model/handoff.hpp"
#include "trace/import.hpp"
#include "trace/measured.hpp"
#include "trace/series.hpp"

namespace framesim::config {

using core::Dimension;
using model::Distribution;
using model::ScenarioSpec;

namespace {

/// The node at `keys` under `from` ({"sensors", "camera", "rate"}), when the file has it there.
std::optional<Node> descend(Node from, const std::vector<std::string>& keys) {
  if (keys.empty()) return std::nullopt;
  for (const auto& k : keys) {
    if (!from.is_map()) return std::nullopt;
    const YAML::Node value = from.yaml()[k];
    if (!value) return std::nullopt;
    from = from.child(k, value);
  }
  return from;
}

// Limits of distribution parameters beyond the dimension's (README "Limits").
constexpr double kMaxLognormalSigma = 3.0;
constexpr double kMaxTimeStddev_s = 60.0;

const schema::Table& kKeys = schema::scenario_table();

/// The scenario key declared at `pattern` (one the reader walks itself).
const schema::Key& declared(std::string_view pattern) {
  const schema::Key* k = kKeys.find(pattern);
  FRAMESIM_ASSERT(k != nullptr, "undeclared scenario key " + std::string(pattern));
  return *k;
}

/// "3 ms", or {distribution: normal, mean: "3 ms", stddev: "0.3 ms"} and the like, for the key declared as
/// `decl` (a distribution: its dimension, and its range for the constant or the mean).
std::optional<Distribution> read_distribution(const Node& node, const schema::Key& decl) {
  const Dimension dim = decl.dimension;
  const Range range = decl.range;
  if (!node.is_map()) {
    if (auto v = node.quantity(dim, range)) return Distribution::fixed(*v);
    return std::nullopt;
  }
  MapReader m(node, schema::distribution_table(), "");
  auto kind = m.choice("distribution");
  if (!kind) return std::nullopt;
  Distribution d;
  auto need = [&](std::string_view key_name, Range r) -> std::optional<double> {
    auto n = m.required(key_name);
    return n ? n->quantity(dim, r) : std::nullopt;
  };
  auto forbid_others = [&](std::initializer_list<std::string_view> allowed) {
    for (std::string_view key : {"value", "mean", "stddev", "min", "max", "sigma"}) {
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end() || !m.has(key)) continue;
      m.get(key)->error(
          fmt::format("not a parameter of a {} distribution (it takes {})", *kind, fmt::join(allowed, ", ")));
    }
  };
  if (*kind == "constant") {
    forbid_others({"value"});
    d = Distribution::fixed(need("value", range).value_or(0));
  } else if (*kind == "normal") {
    forbid_others({"mean", "stddev"});
    d = {Distribution::Kind::normal, need("mean", Range::any).value_or(0),
         need("stddev", Range::non_negative).value_or(0)};
    if (dim == Dimension::Seconds && d.b > kMaxTimeStddev_s)
      m.get("stddev")->error(fmt::format("must be at most {} (a spread of hours is no jitter or work time)",
                                         core::format_seconds(kMaxTimeStddev_s)));
  } else if (*kind == "uniform") {
    forbid_others({"min", "max"});
    d = {Distribution::Kind::uniform, need("min", Range::any).value_or(0), need("max", Range::any).value_or(0)};
    if (d.b < d.a) m.get("max")->error("must not be below min");
  } else if (*kind == "lognormal") {
    forbid_others({"mean", "sigma"});
    d = {Distribution::Kind::lognormal, need("mean", Range::positive).value_or(1),
         m.number("sigma", MapReader::Need::required).value_or(0)};
    if (d.b > kMaxLognormalSigma)
      m.get("sigma")->error(
          fmt::format("must be at most {} (a factor of {:.0f} per sigma; a larger one is no "
                      "measurement of real hardware)",
                      kMaxLognormalSigma, std::exp(kMaxLognormalSigma)));
  } else {
    forbid_others({"mean"});
    d = {Distribution::Kind::exponential, need("mean", Range::positive).value_or(1), 0};
  }
  return d;
}

class ScenarioReader {
 public:
  ScenarioReader(const Node& root, core::Diagnostics& diagnostics, const std::vector<Override>& overrides)
      : root_(root), diagnostics_(diagnostics), overrides_(overrides), applied_(overrides.size(), false) {}

  /// Overrides whose path starts with `prefix` ("hardware.", "network.NAME."), applied to `doc`.
  void apply(Document& doc, const std::string& prefix) {
    for (std::size_t i = 0; i < overrides_.size(); ++i) {
      const auto& o = overrides_[i];
      if (o.path.rfind(prefix, 0) != 0) continue;
      applied_[i] = true;
      doc.apply_override(o.path.substr(prefix.size()), o.value_yaml, o.origin);
    }
  }

  /// Overrides that named something the scenario does not have.
  void report_unapplied() {
    for (std::size_t i = 0; i < overrides_.size(); ++i) {
      if (applied_[i]) continue;
      const auto& o = overrides_[i];
      if (o.path.rfind("network.", 0) == 0) {
        const std::vector<std::string> names(declared_networks_.begin(), declared_networks_.end());
        diagnostics_.add(o.origin, o.path,
                         fmt::format("the scenario has no network named so; its networks: {} (\"network.NAME.KEY\" "
                                     "changes KEY in that network's file)",
                                     names.empty() ? std::string("none") : core::join_list(names, ", ")));
      }
    }
  }

  ScenarioSpec read() {
    spec_.source_file = root_.document().display_path();
    spec_.input_files.push_back(spec_.source_file);
    MapReader m(root_, kKeys, "");
    if (!m.ok()) return std::move(spec_);
    spec_.name = m.text("name").value_or("");
    spec_.description = m.text("description").value_or("");
    if (auto hw = m.required("hardware")) read_hardware_file(*hw);
    if (auto rt = m.get("runtime")) read_runtime_file(*rt);
    if (auto nets = m.get("networks")) read_networks(*nets);
    spec_.seed = static_cast<std::uint64_t>(m.integer("seed").value_or(1));
    if (auto s = m.required("sensors")) read_sensors(*s);
    if (m.has("duration") && m.has("frames")) m.get("frames")->error("give either duration or frames, not both");
    if (auto d = m.quantity("duration")) spec_.duration_s = *d;
    if (auto f = m.integer("frames")) {
      if (!spec_.sensors.empty()) spec_.duration_s = static_cast<double>(*f) / spec_.sensors.front().rate_Hz;
    }
    if (!m.has("duration") && !m.has("frames")) root_.error("missing duration (a time like \"20 min\") or frames");
    spec_.warmup_s = m.quantity("warmup").value_or(0);
    if (spec_.warmup_s >= spec_.duration_s) m.get("warmup")->error("must be shorter than the run");
    if (auto w = m.get("windows")) {
      MapReader wr(*w, kKeys, "windows");
      spec_.cold_window_s = wr.quantity("cold").value_or(0);
      spec_.sustained_window_s = wr.quantity("sustained").value_or(0);
      const double counted = spec_.duration_s - spec_.warmup_s;
      for (const auto& [key, length] :
           {std::pair{"cold", spec_.cold_window_s}, {"sustained", spec_.sustained_window_s}})
        if (length > counted && counted > 0)
          wr.get(key)->error(fmt::format("{} is longer than the counted run ({} after the warm-up)",
                                         core::format_seconds(length), core::format_seconds(counted)));
    }
    const double first_rate = spec_.sensors.empty() ? 30.0 : spec_.sensors.front().rate_Hz;
    spec_.deadline_s = m.quantity("deadline").value_or(1.0 / first_rate);
    if (auto t = m.get("thermal")) read_thermal_overrides(*t);
    if (m.has("speed")) spec_.speed_mps = m.quantity("speed");
    spec_.sample_period_s = m.quantity("sample_period").value_or(0.1);
    if (m.has("contention_period")) spec_.contention_period_s = m.quantity("contention_period");
    if (auto t = m.get("trace")) {
      MapReader tr(*t, kKeys, "trace");
      spec_.kernel_trace_s = tr.quantity("kernels").value_or(1.0);
    }
    if (auto s = m.get("schedulers")) read_schedulers(*s);
    if (auto s = m.required("stages")) read_stages(*s);
    if (auto t = m.get("tasks")) read_tasks(*t);
    if (auto b = m.get("background")) read_background(*b);
    if (auto c = m.get("chains")) read_chains(*c);
    // Splits and fallbacks first: the checks below count the stages the engine will run.
    if (diagnostics_.empty() && hardware_loaded_) compile_stage_placements(spec_, stage_nodes_);
    if (auto problem = process_count_problem(spec_)) {
      root_.error(*problem);
      return std::move(spec_);
    }
    // Events per simulated second first: a rate far past any device (1 THz) is that rate's fault, whatever the
    // duration.
    // (Not after another problem: a refused quantum or rate would count as the value it was refused for.)
    if (const EventRate rate = simulated_event_rate(spec_);
        diagnostics_.empty() && rate.per_second > kMaxEventsPerSimulatedSecond) {
      const auto where =
          rate.largest_per_second > rate.per_second / 2 ? descend(root_, rate.largest_key) : std::nullopt;
      (where ? *where : root_)
          .error(fmt::format("about {:.3g} events per simulated second (frames x kernels, task releases, samples, time "
                             "slices){}; framesim simulates at most {:.0e} per simulated second",
                             rate.per_second,
                             where ? fmt::format(", {:.3g} of them from this rate", rate.largest_per_second) : "",
                             kMaxEventsPerSimulatedSecond));
      return std::move(spec_);
    }
    for (const auto& problem : {run_size_problem(spec_), sensor_log_problem(spec_)}) {
      if (!problem || !diagnostics_.empty()) continue;
      auto where = m.get("duration") ? m.get("duration") : m.get("frames");
      (where ? *where : root_).error(*problem);
    }
    return std::move(spec_);
  }

 private:
  /// The problems of a file named at `where`: those without a position (it cannot be opened) are reported
  /// where it is named, the others where they are in that file.
  void forward(const core::UserError& e, const Node& where) {
    for (const auto& d : e.diagnostics()) {
      if (d.where.line == 0) where.error(d.message);
      else diagnostics_.add(d);
    }
  }

  /// The path of an input file named in `doc`, recorded in the spec's input files.
  std::filesystem::path input_path(const Document& doc, const std::string& written) {
    auto path = resolve_path(doc, written);
    spec_.input_files.push_back(path.generic_string());
    return path;
  }

  void read_hardware_file(const Node& node) {
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

  /// `runtime:` a runtime profile laid over the hardware (model/runtime.hpp): every stage's estimates are its.
  void read_runtime_file(const Node& node) {
    auto written = node.text();
    if (!written || !hardware_loaded_) return;
    try {
      spec_.hardware = model::apply_runtime(spec_.hardware, load_runtime(input_path(node.document(), *written)));
    } catch (const core::UserError& e) {
      forward(e, node);
    }
  }

  /// The enclosure: what the scenario changes in the hardware's thermal block (ambient, R, C, trip, release)
  /// and the die temperature at the start.
  void read_thermal_overrides(const Node& node) {
    MapReader m(node, kKeys, "thermal");
    if (!m.ok()) return;
    if (hardware_loaded_ && !spec_.hardware.thermal) {
      node.error(
          fmt::format("{} has no thermal block: there is no thermal model to change", spec_.hardware.source_file));
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

  void read_networks(const Node& node) {
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
        auto doc = Document::load(path, diagnostics_);
        apply(*doc, "network." + name + ".");
        const std::size_t before = diagnostics_.size();
        model::NetworkSpec net = read_network(Node(doc, doc->root(), ""));
        if (precision && diagnostics_.size() == before) net = model::with_precision(net, *precision);
        if (fusion) net.fusion = *fusion;
        spec_.networks.push_back({name, std::move(net)});
      } catch (const core::UserError& e) {
        forward(e, value);
      }
    }
  }

  /// Reads a time series named by `node` (a path relative to the scenario); problems in the file are reported
  /// in the file, a file that cannot be opened where it is named.
  std::optional<std::vector<trace::SeriesPoint>> read_series_at(const Node& node,
                                                                const std::optional<trace::ValueColumn>& value) {
    auto written = node.text();
    if (!written) return std::nullopt;
    try {
      return trace::read_series(input_path(node.document(), *written), value);
    } catch (const core::UserError& e) {
      forward(e, node);
      return std::nullopt;
    }
  }

  void read_sensors(const Node& node) {
    for (auto& [name, value] : node.entries()) {
      model::SensorSpec s;
      s.name = name;
      MapReader m(value, kKeys, "sensors.<sensor>");
      if (auto t = m.get("trace")) {
        // A timestamp log replayed instead of rate and jitter; the rate is then the log's mean rate.
        for (const char* k : {"rate", "phase", "jitter"})
          if (m.has(k)) m.get(k)->error(fmt::format("{} does not go with trace (the log gives every capture time)", k));
        if (auto points = read_series_at(*t, std::nullopt)) {
          for (const auto& p : *points) s.timestamps_s.push_back(p.time_s);
          if (s.timestamps_s.size() < 2 || s.timestamps_s.back() <= 0) {
            t->error("a timestamp log needs at least two increasing times");
          } else {
            s.rate_Hz = static_cast<double>(s.timestamps_s.size() - 1) / s.timestamps_s.back();
          }
        }
        s.deadline_s = m.quantity("deadline");
        names_.emplace(name, std::pair{true, spec_.sensors.size()});
        spec_.sensors.push_back(s);
        continue;
      }
      s.rate_Hz = m.quantity("rate", MapReader::Need::required).value_or(30);
      s.phase_s = m.quantity("phase").value_or(0);
      if (auto j = m.get("jitter"))
        s.jitter_s = read_distribution(*j, m.declaration("jitter")).value_or(Distribution{});
      if (s.phase_s >= 1.0 / s.rate_Hz) m.get("phase")->error("must be shorter than the sensor's period");
      s.deadline_s = m.quantity("deadline");
      names_.emplace(name, std::pair{true, spec_.sensors.size()});
      spec_.sensors.push_back(s);
    }
    if (node.is_map() && spec_.sensors.empty()) node.error("needs at least one sensor");
  }

  /// Unit and cores shared by stages and tasks.
  std::optional<std::size_t> read_unit(const MapReader& m, bool required) {
    auto name = m.text("unit", required ? MapReader::Need::required : MapReader::Need::declared);
    if (!name || !hardware_loaded_) return std::nullopt;
    if (auto u = spec_.hardware.find_unit(*name)) return u;
    std::vector<std::string> units;
    for (const auto& u : spec_.hardware.units) units.push_back(u.name);
    std::string message = fmt::format("{} has no unit \"{}\"", spec_.hardware.source_file, *name);
    if (auto near = core::closest_match(*name, units)) message += fmt::format(" (did you mean \"{}\"?)", *near);
    else message += fmt::format("; units: {}", core::join_list(units, ", "));
    m.get("unit")->error(message);
    return std::nullopt;
  }

  model::WorkSpec read_work(const MapReader& m, std::optional<std::size_t> unit) {
    model::WorkSpec w;
    if (m.has("network") && m.has("work")) {
      m.get("work")->error("give either network or work, not both");
      return w;
    }
    if (auto n = m.get("network")) {
      auto name = n->text();
      if (!name) return w;
      auto it = std::find_if(spec_.networks.begin(), spec_.networks.end(),
                             [&](const auto& named) { return named.name == *name; });
      if (it == spec_.networks.end() && declared_networks_.count(*name)) return w;
      if (it == spec_.networks.end()) {
        std::vector<std::string> names;
        for (const auto& named : spec_.networks) names.push_back(named.name);
        if (names.empty()) {
          n->error(fmt::format("no network \"{}\": declare it under networks", *name));
        } else {
          std::string message = fmt::format("no network \"{}\"", *name);
          if (auto near = core::closest_match(*name, names)) message += fmt::format(" (did you mean \"{}\"?)", *near);
          else message += fmt::format("; networks: {}", core::join_list(names, ", "));
          n->error(message);
        }
        return w;
      }
      w.kind = model::WorkSpec::Kind::network;
      w.network = static_cast<int>(it - spec_.networks.begin());
      if (stage_precision_) w.network = network_at_precision(w.network, *stage_precision_);
      if (unit) {
        const auto& u = spec_.hardware.units[*unit];
        auto missing = model::missing_roofs(spec_.networks[static_cast<std::size_t>(w.network)].network, u);
        if (!missing.empty()) {
          std::vector<std::string> need;
          for (auto p : missing) need.emplace_back(model::precision_name(p));
          n->error(fmt::format("network \"{}\" computes in {} but unit \"{}\" has no roof for it", *name,
                               core::join_list(need, ", "), u.name));
        }
      }
    } else if (auto work = m.get("work")) {
      MapReader wr(*work, schema::work_table(), "");
      if (wr.has("time") && wr.has("ops")) {
        work->error("give either time or ops, not both");
      } else if (auto t = wr.get("time")) {
        w.kind = model::WorkSpec::Kind::time;
        w.time_s = read_distribution(*t, wr.declaration("time")).value_or(Distribution{});
        if (wr.has("bytes") || wr.has("precision")) work->error("bytes and precision go with ops, not with time");
      } else if (wr.has("ops")) {
        w.kind = model::WorkSpec::Kind::ops;
        w.ops = wr.quantity("ops").value_or(0);
        if (auto p = wr.get("precision")) {
          if (auto s = wr.choice("precision")) w.precision = *model::parse_precision(*s);
        }
        w.bytes_per_level.assign(spec_.hardware.memory.size(), 0.0);
        if (auto b = wr.get("bytes")) {
          for (auto& [level, value] : b->entries()) {
            if (!hardware_loaded_) continue;
            auto lv = spec_.hardware.find_level(level);
            if (!lv) {
              value.error(no_level_message(level));
              continue;
            }
            if (!unit) continue;  // the unit is reported already
            const auto& path = spec_.hardware.units[*unit].memory_path;
            if (std::count(path.begin(), path.end(), *lv) == 0) {
              value.error(fmt::format("unit \"{}\" does not reach memory level \"{}\"",
                                      spec_.hardware.units[*unit].name, level));
              continue;
            }
            w.bytes_per_level[*lv] = value.quantity(*schema::work_table().find("bytes.<level>")).value_or(0);
          }
        }
        if (unit && w.ops > 0 && !spec_.hardware.units[*unit].peak_ops_per_s[w.precision])
          (wr.has("precision") ? *wr.get("precision") : *wr.get("ops"))
              .error(fmt::format("unit \"{}\" has no {} roof", spec_.hardware.units[*unit].name,
                                 model::precision_name(w.precision)));
      } else {
        work->error("needs time or ops");
      }
    }
    if (auto v = m.get("variability")) {
      w.scale = read_distribution(*v, m.declaration("variability")).value_or(Distribution::fixed(1.0));
      if (w.kind == model::WorkSpec::Kind::none) v->error("variability needs a network or work to scale");
    }
    return w;
  }

  /// The network `index` at another precision (`stages.<stage>.precision`): one copy per network and
  /// precision, named "NETWORK@PRECISION".
  int network_at_precision(int index, const model::LayerPrecision& precision) {
    const auto& named = spec_.networks[static_cast<std::size_t>(index)];
    const std::string name = fmt::format("{}@{}", named.name, model::layer_precision_name(precision));
    for (std::size_t i = 0; i < spec_.networks.size(); ++i)
      if (spec_.networks[i].name == name) return static_cast<int>(i);
    model::NetworkSpec net = model::with_precision(named.network, precision);
    spec_.networks.push_back({name, std::move(net)});
    return static_cast<int>(spec_.networks.size()) - 1;
  }

  /// `cores`: how many of the unit's cores (a number), or exactly which (a list of core indices: partitioned
  /// scheduling, the work runs on those cores only). Sets `cores` (0: all) and `pinned`.
  void read_cores(const MapReader& m, std::optional<std::size_t> unit, int& cores, std::vector<int>& pinned) {
    cores = 0;
    auto node = m.get("cores");
    if (!node) return;
    const int unit_cores = unit ? spec_.hardware.units[*unit].cores : 64;
    const std::string unit_name = unit ? spec_.hardware.units[*unit].name : "";
    if (node->is_sequence()) {
      std::set<std::int64_t> seen;
      for (const Node& item : node->items()) {
        auto c = item.integer(0, unit_cores - 1);
        if (!c) continue;
        if (!seen.insert(*c).second) item.error(fmt::format("core {} is listed twice", *c));
        else pinned.push_back(static_cast<int>(*c));
      }
      if (node->items().empty()) node->error("needs at least one core index");
      cores = static_cast<int>(pinned.size());
      return;
    }
    auto n = m.integer("cores");
    if (!n) return;
    if (unit && *n > unit_cores) {
      node->error(fmt::format("unit \"{}\" has {} cores", unit_name, unit_cores));
      return;
    }
    cores = static_cast<int>(*n);
  }

  /// `schedulers: {unit: policy-or-map}`: replaces the hardware file's scheduler of each unit named.
  void read_schedulers(const Node& node) {
    for (auto& [name, value] : node.entries()) {
      auto unit = spec_.hardware.find_unit(name);
      if (!unit) {
        if (!hardware_loaded_) continue;
        std::vector<std::string> units;
        for (const auto& u : spec_.hardware.units) units.push_back(u.name);
        std::string message = fmt::format("{} has no unit \"{}\"", spec_.hardware.source_file, name);
        if (auto near = core::closest_match(name, units)) message += fmt::format(" (did you mean \"{}\"?)", *near);
        value.error(message);
        continue;
      }
      spec_.hardware.units[*unit].scheduler = read_scheduler(value);
    }
  }

  /// `chains: {name: [sensor, stage, ..., (task)]}`: each stage must read the element before it; a final task
  /// must read the last stage.
  void read_chains(const Node& node) {
    for (auto& [name, value] : node.entries()) {
      model::ChainSpec chain;
      chain.name = name;
      const auto items = value.items();
      if (!value.is_sequence() || items.size() < 2) {
        value.error(
            "a chain lists a sensor, then the stages it flows through (each reading the one before), "
            "optionally ending with the task that reads the last stage");
        continue;
      }
      bool ok = true;
      for (std::size_t k = 0; k < items.size() && ok; ++k) {
        auto element = items[k].text();
        if (!element) {
          ok = false;
          break;
        }
        auto it = names_.find(*element);
        if (k == 0) {
          ok = it != names_.end() && it->second.first;
          if (ok) chain.sensor = it->second.second;
          else items[k].error(fmt::format("a chain starts at a sensor; \"{}\" is not one", *element));
          continue;
        }
        const bool last = k + 1 == items.size();
        if (it == names_.end() && last) {
          auto task =
              std::find_if(spec_.tasks.begin(), spec_.tasks.end(), [&](const auto& t) { return t.name == *element; });
          ok = task != spec_.tasks.end() && !chain.stages.empty() && task->reads_stage == chain.stages.back();
          if (ok) chain.task = static_cast<std::size_t>(task - spec_.tasks.begin());
          else
            items[k].error(
                fmt::format("\"{}\" is not a stage, nor a task that reads \"{}\"", *element,
                            chain.stages.empty() ? std::string("a stage") : spec_.stages[chain.stages.back()].name));
          continue;
        }
        ok = it != names_.end() && !it->second.first;
        if (!ok) {
          items[k].error(fmt::format("\"{}\" is not a stage", *element));
          continue;
        }
        const std::size_t stage = it->second.second;
        const model::InputRef previous =
            chain.stages.empty() ? model::InputRef{true, chain.sensor} : model::InputRef{false, chain.stages.back()};
        const auto& inputs = spec_.stages[stage].inputs;
        auto edge = std::find_if(inputs.begin(), inputs.end(), [&](const model::InputRef& in) {
          return in.sensor == previous.sensor && in.index == previous.index;
        });
        ok = edge != inputs.end();
        if (!ok) {
          items[k].error(fmt::format("stage \"{}\" does not read \"{}\"", *element, items[k - 1].text().value_or("")));
          continue;
        }
        chain.stages.push_back(stage);
        chain.input_edges.push_back(static_cast<std::size_t>(edge - inputs.begin()));
      }
      if (ok && chain.stages.empty()) value.error("a chain needs at least one stage");
      else if (ok) spec_.chains.push_back(std::move(chain));
    }
  }

  /// `side_work`: one mapping `{unit, work | network, when: before | after}` or a list of them, each on a unit
  /// other than the stage's own (`stage_unit`).
  std::vector<model::SideWorkSpec> read_side_work(const Node& node, std::optional<std::size_t> stage_unit) {
    std::vector<model::SideWorkSpec> out;
    auto read_one = [&](const Node& item) {
      MapReader m(item, kKeys, "stages.<stage>.side_work");
      if (!m.ok()) return;
      model::SideWorkSpec side;
      auto unit = read_unit(m, true);
      if (unit && stage_unit && *unit == *stage_unit)
        m.get("unit")->error("side work goes to another unit than the stage's own (put it in the stage's work)");
      side.unit = unit.value_or(0);
      if (auto when = m.choice("when")) side.after = *when == "after";
      side.work = read_work(m, unit);
      if (side.work.kind == model::WorkSpec::Kind::none && !m.has("work") && !m.has("network"))
        item.error("side work needs work or network");
      out.push_back(side);
    };
    if (node.is_sequence()) {
      for (const Node& item : node.items()) read_one(item);
    } else {
      read_one(node);
    }
    return out;
  }

  void read_stages(const Node& node) {
    struct Pending {
      model::StageSpec spec;
      Node node;
      std::vector<Node> input_nodes;
      std::optional<Node> deadline;
    };
    std::vector<Pending> pending;
    for (auto& [name, value] : node.entries()) {
      if (names_.count(name)) {
        value.error(fmt::format("\"{}\" names both a sensor and a stage", name));
        continue;
      }
      MapReader m(value, kKeys, "stages.<stage>");
      Pending p{{}, value, {}, std::nullopt};
      auto& s = p.spec;
      s.name = name;
      auto unit = read_unit(m, true);
      s.unit = unit.value_or(0);
      read_cores(m, unit, s.cores, s.pinned);
      if (auto ins = m.required("inputs")) {
        for (const Node& i : ins->items()) {
          if (auto t = i.text()) {
            s.input_names.push_back(*t);
            p.input_nodes.push_back(i);
          }
        }
        if (ins->is_sequence() && s.input_names.empty()) ins->error("needs at least one input");
      }
      if (auto pol = m.choice("policy"))
        s.policy = *pol == "all" ? model::InputPolicy::all : model::InputPolicy::latest;
      if (auto q = m.get("queue")) {
        MapReader qr(*q, kKeys, "stages.<stage>.queue");
        if (auto depth = qr.integer("depth")) s.queue_depth = static_cast<int>(*depth);  // else model/scenario.hpp's
        if (auto o = qr.choice("overflow"))
          s.overflow = *o == "drop_oldest" ? model::Overflow::drop_oldest : model::Overflow::drop_newest;
      }
      s.priority = static_cast<int>(m.integer("priority").value_or(0));
      stage_precision_.reset();
      if (auto prec = m.get("precision")) {
        if (auto t = prec->text()) {
          stage_precision_ = model::parse_layer_precision(*t);
          if (!stage_precision_)
            prec->error(fmt::format("\"{}\" is not a precision; use one of {} or wXaY like w4a16", *t,
                                    core::join_list(model::precision_names(), ", ")));
          else if (!m.has("network")) prec->error("a precision applies to a network: the stage needs network");
        }
      }
      s.work = read_work(m, unit);
      stage_precision_.reset();
      if (auto sp = m.get("split")) {
        if (s.work.kind != model::WorkSpec::Kind::network) {
          if (!m.has("network")) sp->error("a split cuts a network: the stage needs network");
        } else if (unit) {
          s.split =
              read_split(*sp, spec_.networks[static_cast<std::size_t>(s.work.network)].network, spec_.hardware, *unit);
        }
      }
      if (m.has("slice")) s.slice_s = m.quantity("slice");
      // A slice is the stage's share of the frame budget (the deadline): longer than the whole, it is a typo.
      if (s.slice_s && *s.slice_s > spec_.deadline_s * (1 + 1e-12))
        m.get("slice")->error(
            fmt::format("{} is longer than the scenario's deadline ({}): a slice is the stage's share "
                        "of it",
                        core::format_seconds(*s.slice_s), core::format_seconds(spec_.deadline_s)));
      s.deadline_s = m.quantity("deadline");
      p.deadline = m.get("deadline");
      if (auto side = m.get("side_work")) s.side_work = read_side_work(*side, unit);
      // A unit with a `handoff` derives the host work of every network it runs (model/handoff.hpp).
      if (unit && s.work.kind == model::WorkSpec::Kind::network && s.work.network >= 0)
        for (auto& derived : model::handoff_side_work(spec_.hardware, *unit,
                                                      spec_.networks[static_cast<std::size_t>(s.work.network)].network))
          s.side_work.push_back(std::move(derived));
      if (auto meas = m.get("measured")) {
        if (s.work.kind != model::WorkSpec::Kind::network) {
          meas->error("measured layer times replay a network: the stage needs network");
        } else if (auto written = meas->text()) {
          const auto path = input_path(meas->document(), *written);
          try {
            // Matched to the stage's network: PyTorch op order and TFLite tensor names need it.
            const auto& net = spec_.networks[static_cast<std::size_t>(s.work.network)].network;
            const auto trace = trace::read_measured_trace(path);
            const auto matched = trace::match_measurements(trace, net);
            const auto verdict = trace::judge_match(trace, matched, net);
            if (verdict.error) meas->error(*verdict.error);
            if (verdict.warning) spec_.warnings.push_back({meas->location(), meas->path(), *verdict.warning});
            s.measured = matched.measurements;
            for (const auto& f : trace.frames) {
              auto& frame = s.measured_frames.emplace_back();
              frame.duration_s = f.end_s - f.start_s;
              for (const auto& span : f.spans)
                frame.spans.push_back({span.entry >= 0 ? trace.entries[static_cast<std::size_t>(span.entry)].name : "",
                                       span.start_s - f.start_s, span.duration_s, span.stream});
            }
            s.measured_file = path.generic_string();
            for (const auto& n : matched.notes) spec_.notes.push_back(fmt::format("stage {}: {}", name, n));
          } catch (const core::UserError& e) {
            forward(e, *meas);
          }
        }
      }
      names_.emplace(name, std::pair{false, pending.size()});
      pending.push_back(std::move(p));
    }
    if (node.is_map() && node.yaml().size() == 0) node.error("needs at least one stage");

    // Resolve inputs and order the DAG topologically (a stage after everything it reads).
    std::vector<std::string> all_names;
    for (const auto& [n, v] : names_) all_names.push_back(n);
    for (auto& p : pending) {
      std::set<std::string> seen;
      for (std::size_t i = 0; i < p.spec.input_names.size(); ++i) {
        const auto& in = p.spec.input_names[i];
        if (!seen.insert(in).second) {
          p.input_nodes[i].error(fmt::format("\"{}\" is listed twice", in));
          continue;
        }
        auto it = names_.find(in);
        if (it == names_.end()) {
          std::string message = fmt::format("no sensor or stage \"{}\"", in);
          if (auto near = core::closest_match(in, all_names)) message += fmt::format(" (did you mean \"{}\"?)", *near);
          p.input_nodes[i].error(message);
          continue;
        }
        if (!it->second.first && it->second.second == static_cast<std::size_t>(&p - pending.data())) {
          p.input_nodes[i].error("a stage cannot read its own output");
          continue;
        }
        p.spec.inputs.push_back({it->second.first, it->second.second});
      }
    }
    std::vector<int> order;
    std::vector<int> state(pending.size(), 0);  // 0 new, 1 on the path being explored, 2 done
    std::vector<std::size_t> path;
    std::optional<std::vector<std::size_t>> cycle;
    std::function<void(std::size_t)> visit = [&](std::size_t i) {
      if (state[i] == 2 || cycle) return;
      if (state[i] == 1) {
        cycle.emplace(std::find(path.begin(), path.end(), i), path.end());
        return;
      }
      state[i] = 1;
      path.push_back(i);
      for (const auto& in : pending[i].spec.inputs)
        if (!in.sensor) visit(in.index);
      path.pop_back();
      state[i] = 2;
      order.push_back(static_cast<int>(i));
    };
    for (std::size_t i = 0; i < pending.size() && !cycle; ++i) visit(i);
    if (cycle) {
      // Report at the cycle's first stage in the file, naming the whole loop.
      const std::size_t first = *std::min_element(cycle->begin(), cycle->end());
      std::vector<std::string> names;
      auto start = std::find(cycle->begin(), cycle->end(), first);
      for (std::size_t k = 0; k <= cycle->size(); ++k)
        names.push_back(pending[(*cycle)[static_cast<std::size_t>((start - cycle->begin() + static_cast<long>(k)) %
                                                                  static_cast<long>(cycle->size()))]]
                            .spec.name);
      std::reverse(names.begin(), names.end());  // in data-flow order: each reads the one before
      pending[first].node.error(
          fmt::format("stages form a cycle: {} (stages must form a DAG)", fmt::join(names, " -> ")));
      return;
    }
    std::vector<std::size_t> new_index(pending.size());
    for (std::size_t k = 0; k < order.size(); ++k) new_index[static_cast<std::size_t>(order[k])] = k;
    for (int i : order) {
      model::StageSpec s = pending[static_cast<std::size_t>(i)].spec;
      s.declared = static_cast<std::size_t>(i);
      for (auto& in : s.inputs)
        if (!in.sensor) in.index = new_index[in.index];
      spec_.stages.push_back(std::move(s));
    }
    for (auto& [n, v] : names_)
      if (!v.first) v.second = new_index[v.second];
    std::vector<std::optional<Node>> deadline_nodes;  // in the new order
    for (std::size_t i = 0; i < pending.size(); ++i) {
      stage_nodes_.push_back(pending[static_cast<std::size_t>(order[i])].node);
      deadline_nodes.push_back(pending[static_cast<std::size_t>(order[i])].deadline);
    }
    // A join of inputs from different sensors cannot wait for "the same frame".
    for (std::size_t i = 0; i < spec_.stages.size(); ++i) {
      const auto& s = spec_.stages[i];
      if (s.policy != model::InputPolicy::all || s.inputs.size() < 2) continue;
      std::set<std::size_t> sources;
      bool resolved = true;
      for (const auto& in : s.inputs) {
        const auto origin = origin_sensor(in);
        resolved = resolved && origin.has_value();
        if (origin) sources.insert(*origin);
      }
      if (!resolved) continue;  // an input that names nothing is reported already
      if (sources.size() > 1)
        stage_nodes_[i].error(fmt::format(
            "stage \"{}\" joins inputs from different sensors with policy all (same frame from every input); "
            "use policy: latest",
            s.name));
    }
    // An end-to-end deadline on a stage judges the paths that end there: it belongs on a sink.
    for (std::size_t i = 0; i < spec_.stages.size(); ++i) {
      if (!spec_.stages[i].deadline_s || !deadline_nodes[i]) continue;
      for (const auto& reader : spec_.stages)
        if (std::any_of(reader.inputs.begin(), reader.inputs.end(),
                        [i](const model::InputRef& in) { return !in.sensor && in.index == i; })) {
          deadline_nodes[i]->error(
              fmt::format("stage \"{}\" is read by \"{}\": a stage's deadline is for the paths ending "
                          "at it, so it goes on a sink (a stage no other stage reads)",
                          spec_.stages[i].name, reader.name));
          break;
        }
    }
  }

  /// The sensor a stage's trigger chain starts from.
  std::optional<std::size_t> origin_sensor(const model::InputRef& in) const {
    if (in.sensor) return in.index;
    const auto& inputs = spec_.stages[in.index].inputs;
    if (inputs.empty()) return std::nullopt;
    return origin_sensor(inputs.front());
  }

  void read_tasks(const Node& node) {
    for (auto& [name, value] : node.entries()) {
      MapReader m(value, kKeys, "tasks.<task>");
      model::TaskSpec t;
      t.name = name;
      t.rate_Hz = m.quantity("rate").value_or(100);
      t.phase_s = m.quantity("phase").value_or(0);
      auto unit = read_unit(m, false);
      t.unit = unit;
      read_cores(m, unit, t.cores, t.pinned);
      if (m.has("deadline")) t.deadline_s = m.quantity("deadline");
      t.priority = static_cast<int>(m.integer("priority").value_or(0));
      t.work = read_work(m, unit);
      if (t.work.kind != model::WorkSpec::Kind::none && !m.has("unit"))
        value.error("a task with work needs a unit to run on");
      if (auto r = m.get("reads")) {
        if (auto s = r->text()) {
          auto it = names_.find(*s);
          if (it != names_.end() && it->second.first) {
            r->error(fmt::format("\"{}\" is a sensor, not a stage: a task reads a stage's newest result", *s));
          } else if (it == names_.end()) {
            std::vector<std::string> stages;
            for (const auto& st : spec_.stages) stages.push_back(st.name);
            std::string message = fmt::format("no stage \"{}\"", *s);
            if (auto near = core::closest_match(*s, stages)) message += fmt::format(" (did you mean \"{}\"?)", *near);
            r->error(message);
          } else {
            t.reads_stage = it->second.second;
          }
        }
      }
      if (t.work.kind == model::WorkSpec::Kind::none && !t.reads_stage)
        value.error("a task needs work to do or a stage to read (reads)");
      spec_.tasks.push_back(std::move(t));
    }
  }

  std::string no_level_message(const std::string& level) const {
    std::vector<std::string> names;
    for (const auto& l : spec_.hardware.memory) names.push_back(l.name);
    std::string message = fmt::format("{} has no memory level \"{}\"", spec_.hardware.source_file, level);
    if (auto near = core::closest_match(level, names)) message += fmt::format(" (did you mean \"{}\"?)", *near);
    else message += fmt::format("; levels: {}", core::join_list(names, ", "));
    return message;
  }

  void read_background(const Node& node) {
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

  Node root_;
  core::Diagnostics& diagnostics_;
  const std::vector<Override>& overrides_;
  std::vector<bool> applied_;
  ScenarioSpec spec_;
  bool hardware_loaded_ = false;
  std::map<std::string, std::pair<bool, std::size_t>> names_;  // name -> (is sensor, index)
  std::set<std::string> declared_networks_;
  std::vector<Node> stage_nodes_;
  std::optional<model::LayerPrecision> stage_precision_;  // the stage being read's `precision`
};

}  // namespace

EventRate simulated_event_rate(const model::ScenarioSpec& spec) {
  // Kernels of one execution of `work`: a network's layers, else one.
  auto kernels = [&](const model::WorkSpec& w) {
    if (w.kind != model::WorkSpec::Kind::network || w.network < 0 ||
        static_cast<std::size_t>(w.network) >= spec.networks.size())
      return 1.0;
    return static_cast<double>(
        std::max<std::size_t>(1, spec.networks[static_cast<std::size_t>(w.network)].network.layers.size()));
  };
  EventRate r;
  auto add = [&](double per_second, std::vector<std::string> key) {
    r.per_second += per_second;
    if (!key.empty() && per_second > r.largest_per_second) {
      r.largest_per_second = per_second;
      r.largest_key = std::move(key);
    }
  };
  double per_frame = 0;
  for (const auto& st : spec.stages) per_frame += kernels(st.work);
  for (const auto& s : spec.sensors) add(s.rate_Hz * std::max(1.0, per_frame), {"sensors", s.name, "rate"});
  for (const auto& t : spec.tasks) add(t.rate_Hz * kernels(t.work), {"tasks", t.name, "rate"});
  add(1.0 / spec.sample_period_s, {"sample_period"});
  if (spec.hardware.thermal) add(1.0 / spec.hardware.thermal->governor_period_s, {});
  // A time-sliced unit that has work switches once a quantum while it is busy.
  for (std::size_t u = 0; u < spec.hardware.units.size(); ++u) {
    const auto& sched = spec.hardware.units[u].scheduler;
    const bool used = std::any_of(spec.stages.begin(), spec.stages.end(), [&](const auto& st) { return st.unit == u; });
    if (used && sched.policy == model::SchedulingPolicy::time_slice && sched.quantum_s > 0)
      add(1.0 / sched.quantum_s, {});
  }
  return r;
}

double simulated_events(const model::ScenarioSpec& spec) {
  return spec.duration_s * simulated_event_rate(spec).per_second;
}

std::optional<std::string> process_count_problem(const model::ScenarioSpec& spec) {
  const std::size_t n = spec.sensors.size() + spec.stages.size() + spec.tasks.size() + spec.background.size();
  if (n <= kMaxSimulatedProcesses) return std::nullopt;
  return fmt::format(
      "{} sensors, {} stages, {} tasks and {} background sources are {} simulated processes, each with its own "
      "stack; framesim simulates at most {} per run",
      spec.sensors.size(), spec.stages.size(), spec.tasks.size(), spec.background.size(), n, kMaxSimulatedProcesses);
}

std::optional<std::string> run_size_problem(const model::ScenarioSpec& spec) {
  const double events = simulated_events(spec);
  if (events <= kMaxSimulatedEvents) return std::nullopt;
  double sensors_Hz = 0;
  for (const auto& s : spec.sensors) sensors_Hz += s.rate_Hz;
  return fmt::format(
      "{} of simulated time at {} of sensor frames is about {:.3g} events (frames x kernels, task "
      "releases, samples); framesim simulates at most {:.0e} per run (shorten the duration or lower the "
      "rates)",
      core::format_seconds(spec.duration_s), core::format_hertz(sensors_Hz), events, kMaxSimulatedEvents);
}

std::optional<std::string> sensor_log_problem(const model::ScenarioSpec& spec) {
  for (const auto& s : spec.sensors) {
    const std::size_t n = s.timestamps_s.size();
    if (n < 2 || s.timestamps_s.back() <= 0) continue;  // reported where the log is named
    const double covered_s = s.timestamps_s.back() * static_cast<double>(n) / static_cast<double>(n - 1);
    if (spec.duration_s > covered_s * (1 + 1e-9))
      return fmt::format(
          "{} is longer than sensor {}'s timestamp log ({} over {}): the sensor would fall silent "
          "for the rest of the run; run at most {} or give a longer log",
          core::format_seconds(spec.duration_s), s.name, core::counted(n, "capture"), core::format_seconds(covered_s),
          core::format_seconds(covered_s));
  }
  return std::nullopt;
}

model::ScenarioSpec load_scenario(const std::filesystem::path& path, const std::vector<Override>& overrides) {
  core::Diagnostics diagnostics;
  auto doc = Document::load(path, diagnostics);
  // The scenario's own keys first. "networks.NAME.KEY" on a network given as a plain path turns the path
  // into {file: PATH} so that precision, fusion and inputs can be set.
  for (const auto& o : overrides) {
    if (o.path.rfind("hardware.", 0) == 0 || o.path.rfind("network.", 0) == 0) continue;
    if (o.path.rfind("networks.", 0) == 0) {
      const auto rest = o.path.substr(9);
      const auto dot = rest.find('.');
      if (dot != std::string::npos) {
        YAML::Node networks = doc->root()["networks"];
        const std::string name = rest.substr(0, dot);
        if (networks.IsMap() && networks[name].IsScalar()) {
          YAML::Node ref;
          ref["file"] = networks[name].Scalar();
          networks[name] = ref;
        }
      }
    }
    doc->apply_override(o.path, o.value_yaml, o.origin);
  }
  ScenarioReader reader(Node(doc, doc->root(), ""), diagnostics, overrides);
  auto spec = reader.read();
  reader.report_unapplied();
  diagnostics.throw_if_any();
  return spec;
}

}  // namespace framesim::config
