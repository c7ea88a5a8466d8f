// Scenario YAML -> ScenarioSpec: the top-level keys and the run's options, the overrides, load_scenario. The
// reader's other parts: config/scenario_reader.hpp.
#include "config/scenario.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "config/scenario_reader.hpp"
#include "config/split.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace framesim::config {

namespace {

const schema::Table& kKeys = schema::scenario_table();

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

}  // namespace

double scenario_fallback(std::string_view pattern) {
  const schema::Key* key = kKeys.find(pattern);
  FRAMESIM_ASSERT(key != nullptr, "undeclared scenario key " + std::string(pattern));
  const auto value = schema::fallback_value(*key);
  FRAMESIM_ASSERT(value.has_value(), std::string(pattern) + " has no fallback that reads");
  return *value;
}

void ScenarioReader::apply(Document& doc, const std::string& prefix) {
  for (std::size_t i = 0; i < overrides_.size(); ++i) {
    const auto& o = overrides_[i];
    if (o.path.rfind(prefix, 0) != 0) continue;
    applied_[i] = true;
    doc.apply_override(o.path.substr(prefix.size()), o.value_yaml, o.origin);
  }
}

void ScenarioReader::report_unapplied() {
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

model::ScenarioSpec ScenarioReader::read() {
  spec_.source_file = root_.document().display_path();
  spec_.input_files.push_back(spec_.source_file);
  MapReader m(root_, kKeys, "");
  if (!m.ok()) return std::move(spec_);
  spec_.name = m.text("name").value_or("");
  spec_.description = m.text("description").value_or("");
  if (auto hw = m.required("hardware")) read_hardware_file(*hw);
  if (auto rt = m.get("runtime")) read_runtime_file(*rt);
  if (auto nets = m.get("networks")) read_networks(*nets);
  spec_.seed = static_cast<std::uint64_t>(m.integer_or_default("seed"));
  if (auto s = m.required("sensors")) read_sensors(*s);
  read_run_length(m);
  if (auto t = m.get("thermal")) read_thermal_overrides(*t);
  if (m.has("speed")) spec_.speed_mps = m.quantity("speed");
  read_periods(m);
  if (auto t = m.get("trace")) spec_.kernel_trace_s = MapReader(*t, kKeys, "trace").quantity_or_default("kernels");
  else spec_.kernel_trace_s = scenario_fallback("trace.kernels");
  if (auto s = m.get("schedulers")) read_schedulers(*s);
  if (auto c = m.get("clock_caps")) read_clock_caps(*c);
  if (auto s = m.required("stages")) read_stages(*s);
  if (auto t = m.get("tasks")) read_tasks(*t);
  if (auto b = m.get("background")) read_background(*b);
  if (auto c = m.get("chains")) read_chains(*c);
  check_run_size(m);
  return std::move(spec_);
}

void ScenarioReader::read_run_length(const MapReader& m) {
  if (m.has("duration") && m.has("frames")) m.get("frames")->error("give either duration or frames, not both");
  if (auto d = m.quantity("duration")) spec_.duration_s = *d;
  if (auto f = m.integer("frames")) {
    if (!spec_.sensors.empty()) spec_.duration_s = static_cast<double>(*f) / spec_.sensors.front().rate_Hz;
  }
  if (!m.has("duration") && !m.has("frames")) root_.error("missing duration (a time like \"20 min\") or frames");
  spec_.warmup_s = m.quantity_or_default("warmup");
  if (spec_.warmup_s >= spec_.duration_s) m.get("warmup")->error("must be shorter than the run");
  if (auto w = m.get("windows")) {
    MapReader wr(*w, kKeys, "windows");
    spec_.cold_window_s = wr.quantity("cold").value_or(0);
    spec_.sustained_window_s = wr.quantity("sustained").value_or(0);
    const double counted = spec_.duration_s - spec_.warmup_s;
    for (const auto& [key, length] : {std::pair{"cold", spec_.cold_window_s}, {"sustained", spec_.sustained_window_s}})
      if (length > counted && counted > 0)
        wr.get(key)->error(fmt::format("{} is longer than the counted run ({} after the warm-up)",
                                       core::format_seconds(length), core::format_seconds(counted)));
  }
  const double first_rate = spec_.sensors.empty() ? 30.0 : spec_.sensors.front().rate_Hz;
  spec_.deadline_s = m.quantity("deadline").value_or(1.0 / first_rate);
}

void ScenarioReader::read_periods(const MapReader& m) {
  spec_.sample_period_s = m.quantity_or_default("sample_period");
  spec_.tick_period_s = spec_.hardware.thermal ? spec_.hardware.thermal->governor_period_s : spec_.sample_period_s;
  // Given, the scenario's; else the declared default on hardware with a contention curve, else at every tick (0);
  // never coarser than the tick.
  const bool curves = std::any_of(spec_.hardware.memory.begin(), spec_.hardware.memory.end(),
                                  [](const auto& l) { return l.contention.has_value(); });
  double period = curves ? m.quantity_or_default("contention_period") : 0.0;
  if (!curves && m.has("contention_period")) period = m.quantity("contention_period").value_or(0.0);
  spec_.contention_period_s = period > 0 && period < spec_.tick_period_s ? period : 0.0;
}

void ScenarioReader::check_run_size(const MapReader& m) {
  // Splits and fallbacks first: the checks below count the stages the engine will run.
  if (diagnostics_.empty() && hardware_loaded_) compile_stage_placements(spec_, stage_nodes_);
  if (auto problem = process_count_problem(spec_)) {
    root_.error(*problem);
    return;
  }
  // Events per simulated second first: a rate far past any device (1 THz) is that rate's fault, whatever the
  // duration.
  // (Not after another problem: a refused quantum or rate would count as the value it was refused for.)
  if (const EventRate rate = simulated_event_rate(spec_);
      diagnostics_.empty() && rate.per_second > kMaxEventsPerSimulatedSecond) {
    const auto where = rate.largest_per_second > rate.per_second / 2 ? descend(root_, rate.largest_key) : std::nullopt;
    (where ? *where : root_)
        .error(fmt::format("about {:.3g} events per simulated second (frames x kernels, task releases, samples, time "
                           "slices){}; framesim simulates at most {:.0e} per simulated second",
                           rate.per_second,
                           where ? fmt::format(", {:.3g} of them from this rate", rate.largest_per_second) : "",
                           kMaxEventsPerSimulatedSecond));
    return;
  }
  for (const auto& problem : {run_size_problem(spec_), sensor_log_problem(spec_)}) {
    if (!problem || !diagnostics_.empty()) continue;
    auto where = m.get("duration") ? m.get("duration") : m.get("frames");
    (where ? *where : root_).error(*problem);
  }
}

void ScenarioReader::forward(const core::UserError& e, const Node& where) {
  for (const auto& d : e.diagnostics()) {
    if (d.where.line == 0) where.error(d.message);
    else diagnostics_.add(d);
  }
}

std::filesystem::path ScenarioReader::input_path(const Document& doc, const std::string& written) {
  auto path = resolve_path(doc, written);
  spec_.input_files.push_back(path.generic_string());
  return path;
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
