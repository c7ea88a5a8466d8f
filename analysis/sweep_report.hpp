// Answers from a sweep's results: the Pareto front of p99 latency against energy per frame, the cheapest
// point that meets the deadline at p99 (and by how much), and how much p99 moves with each axis.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_summary.hpp"

namespace framesim::analysis {

/// Two values within this relative difference are ties: the Pareto front and the cheapest point do not pick
/// winners by differences smaller than a simulation can resolve.
inline constexpr double kTieTolerance = 0.01;

/// One finished point: its axis labels and the metrics of its run (see point_metrics).
struct SweepResult {
  std::size_t index = 0;
  std::vector<std::string> labels;  // per axis, as shown
  nlohmann::json metrics;           // p99_s, energy_mean_J, deadline_s, ...
};

/// The metrics a sweep keeps from a run's summary.json.
nlohmann::json point_metrics(const RunSummary& summary);

/// What `framesim run --point-metrics` prints, and a sweep reads of each of its points: the metrics the sweep
/// keeps of the run (point_metrics) and how long simulating it took.
struct PointOutput {
  nlohmann::json metrics;
  RunTimes run;
  template <class Io, class S>
  static void fields(Io& io, S& s) {
    io("metrics", s.metrics);
    io("run", s.run);
  }
};

/// `p` as `framesim run --point-metrics` prints it: one line.
std::string point_output_text(const PointOutput& p);
/// What a point printed, the JSON document of `file`; without its metrics or either time it is a core::UserError
/// "FILE: not what `framesim run --point-metrics` prints".
PointOutput read_point_output(const nlohmann::json& printed, const std::string& file);

struct SweepAnswers {
  std::vector<std::size_t> pareto;         // indices into the results, by increasing p99 (ties: kTieTolerance)
  std::optional<std::size_t> cheapest;     // lowest energy per frame among points meeting the deadline at p99; among
                                           // energies within kTieTolerance of it, the lowest p99
  std::vector<std::size_t> cheapest_ties;  // the other points meeting the deadline within the tolerance of its energy
  nlohmann::json sensitivity;              // per axis: p99 by value, its range, rank correlation when numeric
};

SweepAnswers answer_sweep(const std::vector<SweepResult>& results, const std::vector<std::string>& axes);

/// results.csv: index, per axis its value (a number in SI base units when every value of the axis is a quantity,
/// else the label) and "<axis>_label", then the metrics.
std::string sweep_csv(const std::vector<SweepResult>& results, const std::vector<std::string>& axes);
/// results.json: the sweep's description, its provenance, every point, and the answers.
nlohmann::json sweep_json(const nlohmann::json& sweep, const std::vector<SweepResult>& results,
                          const std::vector<std::string>& axes, const SweepAnswers& answers,
                          const nlohmann::json& provenance);
/// report.html of a sweep: the answers, the Pareto plot (every point labelled, its axis values on hover), the
/// sensitivity and every point.
std::string sweep_html(const std::string& title, const std::vector<SweepResult>& results,
                       const std::vector<std::string>& axes, const SweepAnswers& answers,
                       const nlohmann::json& provenance);
/// The scatter of p99 against energy per frame, the front and the deadline.
std::string sweep_svg(const std::string& title, const std::vector<SweepResult>& results, const SweepAnswers& answers,
                      const std::vector<std::string>& axes);
/// The terminal summary.
std::string sweep_text(const std::string& title, const std::vector<SweepResult>& results,
                       const std::vector<std::string>& axes, const SweepAnswers& answers);

}  // namespace framesim::analysis
