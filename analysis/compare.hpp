// `framesim compare A B`: two run folders (summary.json and frames.csv) or two budgets (`framesim budget --json`
// output) side by side. For runs, every latency percentile is recomputed from the counted frames of frames.csv
// with a 97.5 % interval on each side, so that the interval of the difference [lo_B - hi_A, hi_B - lo_A] covers
// the true difference with at least 95 % (Bonferroni); a difference whose interval excludes zero is marked
// significant. Budgets are static: their differences (estimate, bound, energy, each kernel's estimate) are exact.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_summary.hpp"

namespace framesim::analysis {

/// One side of a comparison.
struct CompareInput {
  std::string name;               // as given on the command line
  bool run = false;               // a run folder; else a budget
  RunSummary summary;             // runs: summary.json
  nlohmann::json document;        // budgets: the budget JSON
  std::vector<double> latency_s;  // runs: counted, completed frames' latencies, ascending
};

/// Reads a run folder or a budget JSON file. Throws core::UserError (naming the path) for anything else.
CompareInput load_compare_input(const std::filesystem::path& path);

/// The comparison: {"a", "b", "kind", "rows": [{metric, unit, a, b, difference, ratio, ci, significant}], ...}.
/// Throws core::UserError when the two are not of one kind.
nlohmann::json compare_json(const CompareInput& a, const CompareInput& b);
std::string compare_text(const nlohmann::json& c);
/// report.html: side by side, the overlaid latency tails with their bands (runs), the table of differences.
std::string compare_html(const nlohmann::json& c, const CompareInput& a, const CompareInput& b);

}  // namespace framesim::analysis
