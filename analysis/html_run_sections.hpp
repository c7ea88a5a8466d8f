// Sections of a run's report.html built from its summary record alone (as read back, with its details): every path's
// verdict, staleness, tasks and chains, the energy parts (with a stacked bar), Little's law, and the notes and
// warnings.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "run_summary.hpp"

namespace framesim::analysis {

/// A horizontal stacked bar, a segment per part (hover: its value), and a legend row per part (swatch, name, value
/// written by `format`, share of the positive total): every segment is named, however narrow.
std::string stacked_bar_svg(const std::vector<std::pair<std::string, double>>& parts, std::string (*format)(double));
/// Every path: deadline, latency percentiles, misses (late + dropped), data age and verdict; then `tails_svg`.
std::string paths_section(const RunSummary& s, const std::string& tails_svg);
/// Staleness of every control task (time and distance), then `cdf_svg`.
std::string staleness_section(const RunSummary& s, const std::string& cdf_svg);
/// Periodic tasks' response times and deadline misses; cause-effect chains' data age and reaction time.
std::string tasks_and_chains_section(const RunDetails& d);
/// Energy per frame and its parts (each unit's arithmetic, each memory level, static) as a table and a
/// stacked bar whose every segment is named in its legend; the run's energy by consumer.
std::string energy_section(const RunSummary& s);
/// L = lambda W over the run.
std::string little_section(const LittleDetails& l);
/// The run's notes and warnings (empty when there are none); a shortened run's scaled windows among them.
std::string notes_section(const RunDetails& d);

}  // namespace framesim::analysis
