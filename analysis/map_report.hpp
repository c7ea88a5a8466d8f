// Reports of `framesim map`: the mappings it simulated, the winner against the baselines, the Pareto front of
// worst-path p99 against energy per frame, and why the winner wins (its tail breakdown against a baseline's).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_details.hpp"
#include "sweep_report.hpp"

namespace framesim::analysis {

/// What a mapping's run says of where its time went, from its summary.json through the summary's records: why_wins
/// reads it; map.json writes it in the mapping's "metrics".
struct MappingWhy {
  /// The run's why.sustained_tail: the frames captured in the sustained window at or above its p99, the window
  /// the metric judges (null in map.json without one).
  std::optional<TailDetails> tail;
  std::optional<std::map<std::string, StageSlowdown>> slowdown;  // the run's, per stage (null without one)
  double throttled_fraction = 0;                                 // the whole run's
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io.nullable("tail", s.tail);
    io.nullable("slowdown", s.slowdown);
    io("throttled_fraction", s.throttled_fraction);
  }
};

/// One simulated mapping. `metrics` holds what answer_sweep reads (p99_s: the worst path's sustained p99,
/// energy_mean_J, deadline_s, meets_deadline) and the rest of the map's view: path_p99_s (per sink),
/// dropped, static (max_utilisation, worst_path_floor_s); map.json writes `why`'s keys beside them.
struct MapRow {
  std::string label;   // "detector=gpu, segmenter=dla0|gpu@40"
  std::string role;    // "", or the roles it plays: "your scenario, all on gpu", "best"
  SweepResult result;  // index: order of simulation; labels: per stage
  MappingWhy why;      // its run's tail, slowdown and throttling
  std::string run;     // its run folder
};

struct MapReport {
  std::string title;
  std::string objective;                                       // energy | p99
  double space_size = 0;                                       // mappings in the space
  std::size_t static_kept = 0;                                 // mappings the static pass kept
  std::size_t simulations = 0;                                 // mappings simulated
  std::string strategy;                                        // exhaustive | local
  std::vector<std::string> stages;                             // the space's stages (the label columns)
  std::vector<MapRow> rows;                                    // in simulation order
  std::optional<std::size_t> best;                             // index into rows
  std::vector<std::pair<std::string, std::size_t>> baselines;  // (role, index into rows), side by side
  std::vector<std::string> why;                                // lines: why the best wins
  std::string best_file;                                       // the written scenario
  std::string reproduced;                                      // what the rerun of best_file compared
  nlohmann::json provenance;
};

/// The Pareto front of the rows (answer_sweep on their metrics).
SweepAnswers map_answers(const MapReport& r);
std::string map_text(const MapReport& r, const SweepAnswers& answers);
nlohmann::json map_json(const MapReport& r, const SweepAnswers& answers);
std::string map_csv(const MapReport& r);
std::string map_html(const MapReport& r, const SweepAnswers& answers);

/// Lines saying why `winner`'s tail is shorter or cheaper than `baseline`'s, from their runs' tail breakdowns in the
/// sustained window (the window of the search's metric) (queue, blocked, floor, throttling, bus, gap; the
/// hand-offs' wait beyond their time alone) and throttling (MapRow::why).
std::vector<std::string> why_wins(const MapRow& winner, const MapRow& baseline);

}  // namespace framesim::analysis
