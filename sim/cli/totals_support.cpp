#include "cli/totals_support.hpp"

#include <cmath>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "config/network.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "model/plan.hpp"
#include "table.hpp"
#include "trace/import.hpp"

namespace framesim::cli {

const model::NetworkSpec& NetworkCache::get(const std::string& path, const std::string& precision) {
  const auto key = std::make_pair(path, precision);
  auto it = nets_.find(key);
  if (it != nets_.end()) return it->second;
  const std::string ext = std::filesystem::path(path).extension().string();
  model::NetworkSpec net =
      (ext == ".onnx" || ext == ".tflite") ? trace::import_model(path).network : config::load_network(path);
  if (!precision.empty()) net = model::with_precision(net, option_precision(precision));
  return nets_.emplace(key, std::move(net)).first->second;
}

model::TotalSample total_sample(const trace::TotalsTable& table, const trace::TotalRow& row,
                                const model::HardwareSpec& hw, std::size_t unit, const model::NetworkSpec& net) {
  const auto& u = hw.units[unit];
  model::TotalSample s;
  s.network = net.name;
  s.runtime = row.runtime;
  s.label = row.id;
  s.measured_s = row.latency_s;
  s.measured_J = row.energy_J;
  std::vector<std::string> names;
  for (const auto& p : u.operating_points) names.push_back(p.name);
  bool found = row.operating_point.empty() && !row.clock_Hz;
  for (std::size_t i = 0; i < u.operating_points.size() && !found; ++i) {
    const auto& p = u.operating_points[i];
    if (p.name == row.operating_point || (row.clock_Hz && std::fabs(p.frequency_Hz / *row.clock_Hz - 1) < 0.005)) {
      s.run.operating_point = i;
      found = true;
    }
  }
  if (!found) {
    core::Diagnostics d;
    d.add({table.display_path, row.line, 1}, "operating_point",
          fmt::format("unit \"{}\" of {} has no operating point \"{}\"; it has {}", u.name, hw.source_file,
                      row.clock_Hz ? core::format_hertz(*row.clock_Hz) : row.operating_point, fmt::join(names, ", ")));
    d.throw_if_any();
  }
  s.kernels = model::plan_network(net, hw, unit).kernels;
  return s;
}

std::string fitted_parameters_text(const model::HardwareSpec& hw, const model::TotalsFit& fit) {
  using Align = analysis::Table::Align;
  analysis::Table t({"parameter", "prior", "fitted", "sensitivity", "what the data say"},
                    {Align::left, Align::right, Align::right, Align::right, Align::left});
  for (const auto& p : fit.parameters) {
    auto value = [&](double v) {
      const bool time =
          p.kind == model::TotalParameterKind::dispatch_overhead || p.kind == model::TotalParameterKind::output_cost;
      return time ? core::format_seconds(v) : core::format_number(v, 4);
    };
    std::string note = p.pinned ? "fitted" : "not pinned down by the data: left at the prior";
    if (!p.note.empty()) note = p.note;
    if (p.at_bound) note += ", AT A BOUND (the data push it past what is physical)";
    t.add({model::total_parameter_name(hw, p), value(p.prior), value(p.fitted), core::format_number(p.sensitivity, 3),
           note});
  }
  std::string out = t.render(2);
  for (const auto& w : fit.warnings) out += "  WARNING: " + w + "\n";
  return out;
}

}  // namespace framesim::cli
