// Sections of a run's report.html built from its summary.json alone: every path's verdict, staleness, tasks
// and chains, the energy parts (with a stacked bar), Little's law, and the notes and warnings.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace framesim::analysis {

/// A horizontal stacked bar, a segment per part (hover: its value), and a legend row per part (swatch, name, value
/// written by `format`, share of the positive total): every segment is named, however narrow.
std::string stacked_bar_svg(const std::vector<std::pair<std::string, double>>& parts, std::string (*format)(double));
/// Every path: deadline, latency percentiles, misses (late + dropped), data age and verdict; then `tails_svg`.
std::string paths_section(const nlohmann::json& j, const std::string& tails_svg);
/// Staleness of every control task (time and distance), then `cdf_svg`.
std::string staleness_section(const nlohmann::json& j, const std::string& cdf_svg);
/// Periodic tasks' response times and deadline misses; cause-effect chains' data age and reaction time.
std::string tasks_and_chains_section(const nlohmann::json& j);
/// Energy per frame and its parts (each unit's arithmetic, each memory level, static) as a table and a
/// stacked bar whose every segment is named in its legend; the run's energy by consumer.
std::string energy_section(const nlohmann::json& j);
/// L = lambda W over the run.
std::string little_section(const nlohmann::json& j);
/// The run's notes and warnings (empty when there are none); a shortened run's scaled windows among them.
std::string notes_section(const nlohmann::json& j);

}  // namespace framesim::analysis
