// The budget's roofline figure (SVG) and its HTML page (framesim budget --html).
#include "budget_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/text.hpp"
#include "core/units.hpp"
#include "html.hpp"
#include "svg.hpp"

namespace framesim::analysis {

using core::format_bandwidth;
using core::format_number;
using core::format_ops;
using core::format_ops_rate;
using core::format_seconds;
using model::BudgetReport;
using model::LimitKind;

namespace {

/// A kernel on the roofline, drawn in the colour of what binds it: the slope of its binding memory level, the flat
/// roof of its main precision (the one with the most operations), or grey when dispatch overhead binds.
struct KernelPoint {
  double x, y;
  std::string label;
  int colour;
  double time_s;
  std::string limit;
};

/// The colours of the roofline's roofs. Roofs of equal value would hide each other: they share one line, one colour
/// and one legend entry (and their names are joined with " = ").
struct RooflineColours {
  std::vector<int> level_colour;
  std::vector<std::string> level_names;
  std::vector<bool> level_drawn;  // the first of levels sharing a colour
  model::PerPrecision<int> roof_colour;
  std::map<int, std::string> roof_names;  // colour -> the precisions sharing it
};

RooflineColours roofline_colours(const BudgetReport& r, const model::HardwareSpec& hw) {
  RooflineColours c;
  auto& level_colour = c.level_colour;
  auto& level_names = c.level_names;
  auto& level_drawn = c.level_drawn;
  level_colour.assign(hw.memory.size(), Plot::kGrey);
  level_names.assign(hw.memory.size(), "");
  level_drawn.assign(hw.memory.size(), false);
  int colour = 0;
  for (const auto& row : r.levels) {
    level_names[row.level] = hw.memory[row.level].name;
    for (const auto& other : r.levels) {
      if (&other == &row) break;
      if (std::fabs(other.effective_Bps - row.effective_Bps) <= 1e-9 * row.effective_Bps) {
        level_colour[row.level] = level_colour[other.level];
        level_names[other.level] += " = " + hw.memory[row.level].name;
        break;
      }
    }
    if (level_colour[row.level] == Plot::kGrey) {
      level_colour[row.level] = colour++;
      level_drawn[row.level] = true;
    }
  }
  auto& roof_colour = c.roof_colour;
  auto& roof_names = c.roof_names;
  for (const auto& roof : r.roofs) {
    for (const auto& other : r.roofs) {
      if (&other == &roof) break;
      if (std::fabs(other.effective_ops_per_s - roof.effective_ops_per_s) <= 1e-9 * roof.effective_ops_per_s) {
        roof_colour[roof.precision] = *roof_colour[other.precision];
        break;
      }
    }
    if (!roof_colour[roof.precision]) roof_colour[roof.precision] = colour++;
    auto& name = roof_names[*roof_colour[roof.precision]];
    name += (name.empty() ? "" : " = ") + std::string(model::precision_name(roof.precision));
  }
  return c;
}

/// Every kernel with bytes, ops and a time, at its intensity and attained rate.
std::vector<KernelPoint> roofline_points(const BudgetReport& r, const model::HardwareSpec& hw,
                                         const RooflineColours& colours) {
  std::vector<KernelPoint> points;
  for (std::size_t k = 0; k < r.kernels.size(); ++k) {
    const auto& t = r.kernels[k].time;
    const auto& kernel = r.plan.kernels[k];
    if (!t.has_bytes() || kernel.total_ops <= 0 || t.bound_s <= 0) continue;
    int colour = Plot::kGrey;
    if (t.limit == LimitKind::memory) {
      colour = colours.level_colour[static_cast<std::size_t>(t.limit_level)];
    } else if (t.limit == LimitKind::compute) {
      std::optional<model::Precision> main;
      for (model::Precision p : model::kAllPrecisions)
        if (kernel.ops[p] && (!main || *kernel.ops[p] > *kernel.ops[*main])) main = p;
      if (main && colours.roof_colour[*main]) colour = *colours.roof_colour[*main];
    }
    points.push_back({t.intensity, kernel.total_ops / t.bound_s, kernel.name, colour, t.bound_s,
                      t.limit == LimitKind::memory    ? hw.memory[static_cast<std::size_t>(t.limit_level)].name
                      : t.limit == LimitKind::compute ? "compute"
                                                      : "overhead"});
  }
  return points;
}

}  // namespace

std::string roofline_svg(const BudgetReport& r, const model::HardwareSpec& hw, const model::NetworkSpec& net) {
  const RooflineColours colours = roofline_colours(r, hw);
  const auto& level_colour = colours.level_colour;
  const auto& level_names = colours.level_names;
  const auto& level_drawn = colours.level_drawn;
  const auto& roof_colour = colours.roof_colour;
  auto roof_names = colours.roof_names;
  const std::vector<KernelPoint> points = roofline_points(r, hw, colours);
  // Labels for the costliest kernels only (the ones worth fusing or moving); every point has its tooltip.
  std::vector<std::size_t> by_cost(points.size());
  for (std::size_t i = 0; i < by_cost.size(); ++i) by_cost[i] = i;
  std::stable_sort(by_cost.begin(), by_cost.end(),
                   [&](std::size_t a, std::size_t b) { return points[a].time_s > points[b].time_s; });
  std::vector<bool> labelled(points.size(), false);
  for (std::size_t i = 0; i < std::min<std::size_t>(8, by_cost.size()); ++i) labelled[by_cost[i]] = true;
  double x_min = 1e-2, x_max = 1e3, y_max = 0;
  for (const auto& roof : r.roofs) y_max = std::max(y_max, roof.peak_ops_per_s);
  for (const auto& row : r.levels)
    for (const auto& [p, ridge] : row.ridge) {
      x_min = std::min(x_min, ridge / 10);
      x_max = std::max(x_max, ridge * 10);
    }
  double y_min = y_max;
  for (const auto& p : points) {
    x_min = std::min(x_min, p.x / 2);
    x_max = std::max(x_max, p.x * 2);
    y_min = std::min(y_min, p.y / 2);
  }
  for (const auto& row : r.levels) y_min = std::min(y_min, row.effective_Bps * x_min);
  y_min = std::max(y_min, y_max * 1e-6);

  LogLogPlot plot(fmt::format("Roofline: {} on {} / {}", net.name, hw.name, hw.units[r.unit].name),
                  "arithmetic intensity (op/byte)", "attainable performance", {x_min, x_max}, {y_min, y_max * 3}, "",
                  "OP/s");
  // Stacked rooflines: one slope per memory level, one flat roof per precision the network's kernels use; the
  // estimate's (effective) roofs solid, the bound's (peak) roofs dashed in the same colour where they differ.
  for (const auto& row : r.levels) {
    if (!level_drawn[row.level]) continue;
    plot.line({{x_min, row.effective_Bps * x_min}, {y_max / row.effective_Bps, y_max}}, level_colour[row.level],
              fmt::format("estimate: {} {}", level_names[row.level], format_bandwidth(row.effective_Bps)), false);
    if (row.peak_Bps > row.effective_Bps)
      plot.line({{x_min, row.peak_Bps * x_min}, {y_max / row.peak_Bps, y_max}}, level_colour[row.level],
                fmt::format("bound: {} peak {}", hw.memory[row.level].name, format_bandwidth(row.peak_Bps)), true);
  }
  model::PerPrecision<bool> used;
  for (const auto& kernel : r.plan.kernels)
    for (model::Precision p : model::kAllPrecisions)
      if (kernel.ops[p] && *kernel.ops[p] > 0) used[p] = true;
  std::set<int> roofs_drawn;
  for (const auto& roof : r.roofs) {
    if (!used[roof.precision]) continue;  // no kernel of the network runs at it
    if (!roofs_drawn.insert(*roof_colour[roof.precision]).second) continue;
    double x_start = x_max;
    for (const auto& row : r.levels) x_start = std::min(x_start, roof.effective_ops_per_s / row.effective_Bps);
    plot.line({{x_start, roof.effective_ops_per_s}, {x_max, roof.effective_ops_per_s}}, *roof_colour[roof.precision],
              fmt::format("estimate: {} {}", roof_names[*roof_colour[roof.precision]],
                          format_ops_rate(roof.effective_ops_per_s)),
              false);
    if (roof.peak_ops_per_s > roof.effective_ops_per_s) {
      double x_peak = x_max;
      for (const auto& row : r.levels) x_peak = std::min(x_peak, roof.peak_ops_per_s / row.peak_Bps);
      plot.line(
          {{x_peak, roof.peak_ops_per_s}, {x_max, roof.peak_ops_per_s}}, *roof_colour[roof.precision],
          fmt::format("bound: {} peak {}", model::precision_name(roof.precision), format_ops_rate(roof.peak_ops_per_s)),
          true);
    }
  }
  std::set<int> seen;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    plot.point(p.x, p.y, p.colour, labelled[i] ? p.label : "",
               fmt::format("{}: {} ({}-bound), intensity {} op/B, {}", p.label, format_seconds(p.time_s), p.limit,
                           core::format_number(p.x, 4), format_ops_rate(p.y)));
    seen.insert(p.colour);
  }
  // One legend entry per colour used, in the order of the lines, dispatch-bound last.
  for (const auto& row : r.levels)
    if (level_drawn[row.level] && seen.count(level_colour[row.level]))
      plot.marker_legend(level_colour[row.level], fmt::format("kernel: {}-bound", level_names[row.level]));
  std::set<int> roof_legend;
  for (const auto& roof : r.roofs)
    if (seen.count(*roof_colour[roof.precision]) && roof_legend.insert(*roof_colour[roof.precision]).second)
      plot.marker_legend(*roof_colour[roof.precision],
                         fmt::format("kernel: {}-bound", roof_names[*roof_colour[roof.precision]]));
  if (seen.count(Plot::kGrey)) plot.marker_legend(Plot::kGrey, "kernel: overhead-bound");
  return plot.render();
}

std::string budget_html(const BudgetReport& r, const model::HardwareSpec& hw, const model::NetworkSpec& net) {
  const nlohmann::json j = budget_json(r, hw, net);
  std::string b = fmt::format("<h1>framesim budget: {} on {} / {}</h1>\n", html::escape(net.name),
                              html::escape(hw.name), html::escape(hw.units[r.unit].name));
  b += html::heading("Verdict");
  std::string verdict = fmt::format(
      "estimate {} per inference at effective roofs ({}), bound {} at peak roofs; energy {} per inference",
      html::number("estimate", format_seconds(r.estimate_s)), html::escape(j["floor"]["limit"].get<std::string>()),
      html::number("bound", format_seconds(r.bound_s)),
      html::number("energy", core::format_joules(r.energy.total_J())));
  const char* css = "maybe";
  if (r.slice_s) {
    css = r.within_slice() ? "ok" : "bad";
    verdict += fmt::format("<br>against the {} slice: {}", html::number("slice", format_seconds(*r.slice_s)),
                           r.impossible()     ? "IMPOSSIBLE (the bound exceeds it)"
                           : r.within_slice() ? "fits at the estimate"
                                              : "DOES NOT FIT at the estimate");
  }
  b += fmt::format("<div class=\"verdict {}\" id=\"verdict\">{}</div>\n", css, verdict);
  b += html::heading("Roofline");
  b += html::figure(roofline_svg(r, hw, net), "roofline",
                    "Every kernel at its bound, coloured by what binds it; the costliest are labelled, hover any point "
                    "for its name, time and intensity.");
  b += html::heading("Kernels, costliest first");
  std::vector<std::size_t> order(r.kernels.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t c) { return r.kernels[a].time.bound_s > r.kernels[c].time.bound_s; });
  std::vector<std::vector<std::string>> rows;
  for (std::size_t k : order) {
    const auto& e = j["kernels"][k];
    rows.push_back({e["name"].get<std::string>(), e["op"].get<std::string>(), format_ops(e["ops"].get<double>()),
                    e["intensity"].is_null() ? "-" : format_number(e["intensity"].get<double>(), 4),
                    format_seconds(e["estimate_s"].get<double>()), format_seconds(e["bound_s"].get<double>()),
                    e["limit"].get<std::string>(), format_number(e["fraction_of_peak"].get<double>() * 100, 3) + "%"});
  }
  b += html::table({"kernel", "op", "ops", "intensity (op/B)", "estimate", "bound", "limit", "of peak"}, rows);
  b += html::heading("The report");
  b += "<pre>" + html::escape(budget_text(r, hw, net)) + "</pre>\n";
  return html::page(fmt::format("framesim budget: {} on {}", net.name, hw.name), b);
}

}  // namespace framesim::analysis
