// The run's plots beyond latency and thermal: every path's latency tail, the staleness CDF of every control
// task, and each stage's queue depth over time.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/units.hpp"
#include "run_analysis.hpp"
#include "svg.hpp"
#include "tail_plot.hpp"

namespace framesim::analysis {

using core::format_seconds;

std::string RunAnalysis::svg_path_tails() const {
  // One path's values in memory at a time: the frames' latencies, read back for earlier figures, go first.
  all_.latency_s.release();
  sustained_.latency_s.release();
  double hi = spec_.deadline_s;
  std::size_t most = 1;
  for (std::size_t p = 0; p < paths_.paths().size(); ++p) {
    const auto& s = paths_.latency_s(p);
    hi = std::max(hi, paths_.paths()[p].deadline_s);
    if (!s.empty()) hi = std::max(hi, s.max());
    most = std::max(most, s.count());
  }
  Plot plot(fmt::format("Latency tail of every path, {}", spec_.name), Axis{0, hi * 1.1, false, "path latency", "s"},
            Axis{tail_floor(most), 1, true, "fraction of samples slower", ""});
  plot.set_id("pathtails");
  std::set<double> deadlines;
  for (std::size_t p = 0; p < paths_.paths().size(); ++p) {
    add_latency_tail(plot, paths_.latency_s(p).sorted(), static_cast<int>(1 + p), paths_.paths()[p].short_name);
    paths_.latency_s(p).release();
    deadlines.insert(paths_.paths()[p].deadline_s);
  }
  for (double d : deadlines) plot.reference(d, Line::vertical, 0, fmt::format("deadline {}", format_seconds(d)));
  return plot.render();
}

std::string RunAnalysis::svg_staleness_cdf() const {
  double hi = 0;
  for (const auto& s : staleness_s_)
    if (!s.empty()) hi = std::max(hi, s.summary().max);
  Plot plot(fmt::format("Staleness at every control tick, {}", spec_.name),
            Axis{0, std::max(hi, 1e-6) * 1.1, false, "staleness (now - capture of the result used)", "s"},
            Axis{0, 1, false, "fraction of ticks at or below", ""});
  plot.set_id("staleness");
  for (std::size_t t = 0; t < spec_.tasks.size(); ++t) {
    const auto& sorted = staleness_s_[t].sorted();
    if (sorted.empty()) continue;
    // Through at most about 2000 of its order statistics: (x_(i), i / n), and a vertical step at every value held
    // by several ticks (staleness is a sawtooth: values repeat).
    std::vector<std::pair<double, double>> cdf;
    const std::size_t n = sorted.size();
    const std::size_t points = std::min<std::size_t>(n, 2000);
    cdf.emplace_back(sorted.front(), 0.0);
    for (std::size_t k = 1; k <= points; ++k) {
      const std::size_t i = k * n / points;  // 1-based rank
      cdf.emplace_back(sorted[i - 1], static_cast<double>(i) / static_cast<double>(n));
    }
    cdf.emplace_back(sorted.back(), 1.0);
    plot.line(cdf, static_cast<int>(1 + t),
              fmt::format("{} reads {}", spec_.tasks[t].name, spec_.stages[*spec_.tasks[t].reads_stage].name));
    staleness_s_[t].release();
  }
  return plot.render();
}

std::string RunAnalysis::svg_queue_depth() const {
  const double end = ticks_.empty() ? spec_.duration_s : ticks_.back().time_s;
  int capacity = 1;
  for (const auto& st : spec_.stages) capacity = std::max(capacity, st.queue_depth);
  Plot plot(fmt::format("Input queue depth over time (average over each period), {}", spec_.name),
            Axis{0, end, false, "time", "s"}, Axis{0, capacity * 1.1, false, "items queued", ""});
  plot.set_id("queues");
  // At most about 3000 points per stage: the largest average of each group of periods.
  const std::size_t group = std::max<std::size_t>(1, ticks_.size() / 3000);
  for (std::size_t s = 0; s < spec_.stages.size(); ++s) {
    std::vector<std::pair<double, double>> depth;
    for (std::size_t i = 0; i < ticks_.size(); i += group) {
      double most = 0;
      for (std::size_t k = i; k < std::min(ticks_.size(), i + group); ++k)
        if (s < ticks_[k].stage_queue_depth.size()) most = std::max(most, ticks_[k].stage_queue_depth[s]);
      depth.emplace_back(ticks_[i].time_s, most);
    }
    plot.line(depth, static_cast<int>(1 + s), spec_.stages[s].name);
  }
  plot.reference(capacity, Line::horizontal, 0, fmt::format("largest capacity {}", capacity));
  return plot.render();
}

}  // namespace framesim::analysis
