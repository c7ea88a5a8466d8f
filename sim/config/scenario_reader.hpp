// The scenario reader (config/scenario.hpp's load_scenario) and what its parts share. Internal to config/; the
// files that define it, each one responsibility (sim/config/README.md):
//   scenario.cpp          the top-level keys, the run's length and size, overrides, load_scenario
//   scenario_files.cpp    the files a scenario names: hardware, runtime, networks, time series; thermal, background
//   scenario_work.cpp     what runs where: distributions, units, cores, work, side work, schedulers
//   scenario_stages.cpp   sensors and stages, one by one
//   scenario_graph.cpp    the references between them: stage inputs and their order, joins, sinks, tasks, chains
//   scenario_limits.cpp   the size of a run: events, processes, a timestamp log's span
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/override.hpp"
#include "config/yaml.hpp"
#include "model/scenario.hpp"
#include "trace/series.hpp"

namespace framesim::config {

/// "3 ms", or {distribution: normal, mean: "3 ms", stddev: "0.3 ms"} and the like, for the key declared as
/// `decl` (a distribution: its dimension, and its range for the constant or the mean).
std::optional<model::Distribution> read_distribution(const Node& node, const schema::Key& decl);

/// The declared fallback of the scenario key at `pattern`, for a key whose mapping is absent (`trace`, a stage's
/// `queue`): what MapReader's *_or_default would give.
double scenario_fallback(std::string_view pattern);
template <class E, std::size_t N>
E scenario_fallback(std::string_view pattern, const core::EnumTable<E, N>& table) {
  const schema::Key* key = schema::scenario_table().find(pattern);
  FRAMESIM_ASSERT(key != nullptr, "undeclared scenario key " + std::string(pattern));
  const auto value = table.value(key->fallback);
  FRAMESIM_ASSERT(value.has_value(), std::string(pattern) + " has no fallback among its choices");
  return *value;
}

/// Reads one scenario file (and the files it names) into a ScenarioSpec, every problem into `diagnostics`.
class ScenarioReader {
 public:
  ScenarioReader(const Node& root, core::Diagnostics& diagnostics, const std::vector<Override>& overrides)
      : root_(root), diagnostics_(diagnostics), overrides_(overrides), applied_(overrides.size(), false) {}

  /// Overrides whose path starts with `prefix` ("hardware.", "network.NAME."), applied to `doc`.
  void apply(Document& doc, const std::string& prefix);
  /// Overrides that named something the scenario does not have.
  void report_unapplied();
  /// The scenario, with every problem found reported.
  model::ScenarioSpec read();

 private:
  /// A stage read but not yet placed in data-flow order, with the nodes its later checks report at.
  struct Pending {
    model::StageSpec spec;
    Node node;
    std::vector<Node> input_nodes;
    std::optional<Node> deadline;
  };

  // scenario.cpp
  /// How long the run is and what of it counts: duration or frames, warmup, windows, deadline.
  void read_run_length(const MapReader& m);
  /// sample_period, and the periods the engine runs at: the tick (the governor's, else sample_period) and the
  /// contention sampling (contention_period).
  void read_periods(const MapReader& m);
  /// The stages' splits and fallbacks compiled, then the run's size against the limits (scenario.hpp).
  void check_run_size(const MapReader& m);
  /// The problems of a file named at `where`: those without a position (it cannot be opened) are reported
  /// where it is named, the others where they are in that file.
  void forward(const core::UserError& e, const Node& where);
  /// The path of an input file named in `doc`, recorded in the spec's input files.
  std::filesystem::path input_path(const Document& doc, const std::string& written);

  // scenario_files.cpp
  void read_hardware_file(const Node& node);
  /// `runtime:` a runtime profile laid over the hardware (model/runtime.hpp): every stage's estimates are its.
  void read_runtime_file(const Node& node);
  /// The enclosure: what the scenario changes in the hardware's thermal block (ambient, R, C, trip, release)
  /// and the die temperature at the start.
  void read_thermal_overrides(const Node& node);
  void read_networks(const Node& node);
  /// The network file at `path`, changed by the overrides under `prefix` ("network.NAME."); one read cleanly before
  /// in this process (or the one it was forked from), unchanged and not overridden, is taken as read then.
  model::NetworkSpec read_network_file(const std::filesystem::path& path, const std::string& prefix);
  /// Reads a time series named by `node` (a path relative to the scenario); problems in the file are reported
  /// in the file, a file that cannot be opened where it is named.
  std::optional<std::vector<trace::SeriesPoint>> read_series_at(const Node& node,
                                                                const std::optional<trace::ValueColumn>& value);
  std::string no_level_message(const std::string& level) const;
  void read_background(const Node& node);

  // scenario_work.cpp
  /// Unit and cores shared by stages and tasks.
  std::optional<std::size_t> read_unit(const MapReader& m, bool required);
  model::WorkSpec read_work(const MapReader& m, std::optional<std::size_t> unit);
  /// The network `index` at another precision (`stages.<stage>.precision`): one copy per network and
  /// precision, named "NETWORK@PRECISION".
  int network_at_precision(int index, const model::LayerPrecision& precision);
  /// `cores`: how many of the unit's cores (a number), or exactly which (a list of core indices: partitioned
  /// scheduling, the work runs on those cores only). Sets `cores` (0: all) and `pinned`.
  void read_cores(const MapReader& m, std::optional<std::size_t> unit, int& cores, std::vector<int>& pinned);
  /// `schedulers: {unit: policy-or-map}`: replaces the hardware file's scheduler of each unit named.
  void read_schedulers(const Node& node);
  /// `clock_caps: {unit: point}`: the fastest operating point of each unit named (its name or frequency).
  void read_clock_caps(const Node& node);
  /// `side_work`: one mapping `{unit, work | network, when: before | after}` or a list of them, each on a unit
  /// other than the stage's own (`stage_unit`).
  std::vector<model::SideWorkSpec> read_side_work(const Node& node, std::optional<std::size_t> stage_unit);

  // scenario_stages.cpp
  void read_sensors(const Node& node);
  /// Every stage, then their inputs resolved, their data-flow order and the checks across stages.
  void read_stages(const Node& node);
  /// One stage's own keys (its inputs by name, resolved later).
  Pending read_stage(const std::string& name, const Node& value);
  /// `measured`: the layer times of a measured trace, matched to the stage's network.
  void read_measured(const Node& meas, model::StageSpec& s, const std::string& name);

  // scenario_graph.cpp
  /// Each stage's input names to sensors and stages.
  void resolve_inputs(std::vector<Pending>& pending);
  /// The stages in data-flow order (a stage after everything it reads); nothing, reported, on a cycle.
  std::optional<std::vector<int>> order_stages(const std::vector<Pending>& pending);
  /// The stages into the spec in `order`, their inputs renumbered; the nodes of their deadlines, in that order.
  std::vector<std::optional<Node>> store_in_order(const std::vector<Pending>& pending, const std::vector<int>& order);
  /// A join of inputs from different sensors cannot wait for "the same frame".
  void check_joins();
  /// An end-to-end deadline on a stage judges the paths that end there: it belongs on a sink.
  void check_sink_deadlines(const std::vector<std::optional<Node>>& deadline_nodes);
  /// The sensor a stage's trigger chain starts from.
  std::optional<std::size_t> origin_sensor(const model::InputRef& in) const;
  void read_tasks(const Node& node);
  /// `chains: {name: [sensor, stage, ..., (task)]}`: each stage must read the element before it; a final task
  /// must read the last stage.
  void read_chains(const Node& node);

  Node root_;
  core::Diagnostics& diagnostics_;
  const std::vector<Override>& overrides_;
  std::vector<bool> applied_;
  model::ScenarioSpec spec_;
  bool hardware_loaded_ = false;
  std::map<std::string, std::pair<bool, std::size_t>> names_;  // name -> (is sensor, index)
  std::set<std::string> declared_networks_;
  std::vector<Node> stage_nodes_;
  std::optional<model::LayerPrecision> stage_precision_;  // the stage being read's `precision`
};

}  // namespace framesim::config
