// `framesim calibrate --totals` (whole-network latency and energy, fitted per op class with the file's priors,
// model::fit_totals) and `framesim calibrate --corun` (co-run slowdowns, model::fit_corun): the report and the
// calibrated hardware file (and, with --write-runtime, a runtime profile) of each.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/calibrate_support.hpp"
#include "cli/commands.hpp"
#include "cli/totals_support.hpp"
#include "config/hardware.hpp"
#include "config/hardware_writer.hpp"
#include "config/network.hpp"
#include "config/runtime.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "model/calibrate.hpp"
#include "model/corun.hpp"
#include "model/runtime.hpp"
#include "table.hpp"
#include "trace/corun.hpp"
#include "trace/import.hpp"
#include "trace/measured.hpp"

namespace framesim::cli::calibrate {

namespace {

namespace fs = std::filesystem;

/// --totals: whole-network measurements, alone or with per-layer traces (each measured kernel a one-kernel
/// total), fitted per op class with the priors of the file (model::fit_totals).
/// The JSON Schema a written runtime profile names: docs/schema/runtime.schema.json of the first folder above
/// the file that has one (a checkout), relative to the file; else the schema's bare name.
std::string runtime_schema_path(const std::string& file) {
  const fs::path folder = fs::absolute(file).parent_path();
  for (fs::path p = folder; !p.empty(); p = p.parent_path()) {
    const fs::path candidate = p / "docs/schema/runtime.schema.json";
    if (fs::is_regular_file(candidate)) return fs::relative(candidate, folder).generic_string();
    if (p == p.parent_path()) break;
  }
  return "runtime.schema.json";
}

std::vector<std::string> sample_labels(const std::vector<model::TotalSample>& samples) {
  std::vector<std::string> out;
  for (const auto& s : samples) out.push_back(s.label);
  return out;
}

/// Keeps the rows of `table` for this hardware file (a suite names several) and, with --runtime-name, this
/// runtime; counts the others. Held-out rows stay: they are predicted, never fitted.
void keep_rows_of_device(const CalibrateArgs& a, trace::TotalsTable& table, std::size_t& other_device,
                         std::size_t& other_runtime) {
  std::vector<trace::TotalRow> kept;
  const auto self = fs::weakly_canonical(a.hardware);
  for (auto& r : table.rows) {
    if (r.application) continue;  // a whole application's time is not the network's: `validate` models its stages
    if (r.hardware && fs::weakly_canonical(*r.hardware) != self) ++other_device;
    else if (!a.runtime_name.empty() && !r.runtime.empty() && r.runtime != a.runtime_name) ++other_runtime;
    else kept.push_back(std::move(r));
  }
  if (kept.empty())
    throw core::UserError(fmt::format("calibrate --totals: no row of {} is for {}{}", table.display_path, a.hardware,
                                      a.runtime_name.empty() ? "" : " and runtime " + a.runtime_name));
  table.rows = std::move(kept);
}

/// The held-out rows (never fitted): each predicted with the calibrated and the file's roofs, and the geometric-mean
/// errors of both.
std::string held_out_text(const model::HardwareSpec& hw, std::size_t unit, const model::TotalsFit& fit,
                          const std::vector<model::TotalSample>& held_out) {
  using Align = analysis::Table::Align;
  std::ostringstream out;
  analysis::Table h({"held-out row (never fitted)", "measured", "bound", "file estimate", "calibrated", "error"},
                    {Align::left, Align::right, Align::right, Align::right, Align::right, Align::right});
  double sum = 0, file_sum = 0;
  for (const auto& s : held_out) {
    const double p = model::total_estimate_s(fit.calibrated, unit, s), f = model::total_estimate_s(hw, unit, s);
    sum += std::fabs(std::log(p / s.measured_s));
    file_sum += std::fabs(std::log(f / s.measured_s));
    h.add({s.label, seconds(s.measured_s), seconds(model::total_bound_s(hw, unit, s)), seconds(f), seconds(p),
           fmt::format("{:+.1f}%", (p / s.measured_s - 1) * 100)});
  }
  const double n = static_cast<double>(held_out.size());
  out << "\n"
      << h.render(2)
      << fmt::format("  held out: geomean error {} calibrated, {} with the file's roofs\n",
                     core::format_number((std::exp(sum / n) - 1) * 100, 3) + "%",
                     core::format_number((std::exp(file_sum / n) - 1) * 100, 3) + "%");
  return out.str();
}

}  // namespace

int run_calibrate_totals(const CalibrateArgs& a) {
  if (!a.write_runtime.empty() && a.runtime_name.empty())
    throw core::UserError("calibrate --write-runtime: name the runtime with --runtime-name (e.g. x-cube-ai-8.0)");
  if (a.write_runtime.empty() && !a.runtime_name.empty())
    throw core::UserError("calibrate --runtime-name: names the profile --write-runtime writes; give --write-runtime");
  if (a.pairs.size() % 2 != 0)
    throw core::UserError("calibrate: expected NETWORK MEASURED pairs after the hardware file");
  if (!a.precision.empty()) option_precision(a.precision);
  if (fs::is_directory(a.out)) throw core::UserError(fmt::format("-o: {} is a directory", a.out));
  if (!a.predict.empty())
    throw core::UserError(
        "calibrate --totals --predict: mark the rows to predict `held_out` in the table's set column instead");
  const model::HardwareSpec hw = config::load_hardware(a.hardware);
  trace::TotalsTable table = trace::read_totals(a.totals);
  // The rows for this device and runtime; held-out rows are predicted, never fitted.
  std::size_t other_device = 0, other_runtime = 0;
  keep_rows_of_device(a, table, other_device, other_runtime);
  NetworkCache cache;
  std::vector<const model::NetworkSpec*> nets;
  for (const auto& r : table.rows)
    nets.push_back(&cache.get(r.network.generic_string(), r.precision.empty() ? a.precision : r.precision));
  std::vector<model::NetworkSpec> traced;
  for (std::size_t i = 0; i < a.pairs.size(); i += 2) traced.push_back(load_any_network(a.pairs[i], a));
  for (const auto& n : traced) nets.push_back(&n);
  std::string wanted = a.unit;
  if (wanted.empty())
    for (const auto& r : table.rows)
      if (!r.unit.empty()) wanted = r.unit;
  const std::size_t unit = option_unit(hw, nets, wanted);
  std::vector<model::TotalSample> samples, held_out;
  for (std::size_t i = 0; i < table.rows.size(); ++i)
    (table.rows[i].held_out ? held_out : samples).push_back(total_sample(table, table.rows[i], hw, unit, *nets[i]));
  model::RunPoint run;
  if (!a.operating_point.empty()) run.operating_point = option_operating_point(hw.units[unit], a.operating_point);
  for (std::size_t i = 0; i < a.pairs.size(); i += 2) {
    const Measured m = measure(hw, unit, run, traced[i / 2], a.pairs[i + 1]);
    check_coverage(m, a.allow_partial);
    for (const auto& k : m.set.samples) {
      model::TotalSample s;
      s.network = m.net.name;
      s.label = m.net.name + ": " + k.kernel;
      s.kernels = {k.work};
      s.run = run;
      s.measured_s = k.measured_s;
      samples.push_back(std::move(s));
    }
  }
  if (samples.empty())
    throw core::UserError(fmt::format("calibrate --totals: every row of {} for {} is held out: nothing to fit",
                                      table.display_path, a.hardware));
  const model::CheckedFit checked = model::fit_totals_checked(hw, unit, samples);
  const model::TotalsFit& fit = checked.fit;
  const auto& loo = checked.by_network;

  std::ostream& out = std::cout;
  const auto& u = hw.units[unit];
  out << fmt::format(
      "framesim calibrate: {} ({}), unit {}, from {} whole-network row{} of {}{}\n\n", hw.name, hw.source_file, u.name,
      table.rows.size(), table.rows.size() == 1 ? "" : "s", table.display_path,
      a.pairs.empty() ? ""
                      : fmt::format(" and {} per-layer trace{}", a.pairs.size() / 2, a.pairs.size() == 2 ? "" : "s"));
  using Align = analysis::Table::Align;
  analysis::Table t({"sample", "measured", "bound", "file estimate", "calibrated", "error"},
                    {Align::left, Align::right, Align::right, Align::right, Align::right, Align::right});
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    const double bound = model::total_bound_s(hw, unit, s);
    t.add({s.label, seconds(s.measured_s), seconds(bound) + (bound > s.measured_s ? " ABOVE: impossible" : ""),
           seconds(model::total_estimate_s(hw, unit, s)), seconds(fit.predicted_s[i]),
           fmt::format("{:+.1f}%", (fit.predicted_s[i] / s.measured_s - 1) * 100)});
  }
  out << t.render(2) << "\nfitted (RMS of ln(calibrated / measured) " << core::format_number(fit.rms_log_s, 3) << ")\n"
      << fitted_parameters_text(hw, fit);
  if (loo.empty()) out << "  leave-one-network-out: needs two networks\n";
  for (const auto& l : loo)
    out << fmt::format("  leave {} out ({} sample{}): predicted within {} (the file's roofs: {})\n", l.network,
                       l.samples, l.samples == 1 ? "" : "s", core::format_number(l.error * 100, 3) + "%",
                       core::format_number(l.prior_error * 100, 3) + "%");
  for (const auto& l : checked.by_runtime)
    out << fmt::format("  leave runtime {} out ({} sample{}): predicted within {} (the file's roofs: {})\n", l.network,
                       l.samples, l.samples == 1 ? "" : "s", core::format_number(l.error * 100, 3) + "%",
                       core::format_number(l.prior_error * 100, 3) + "%");
  out << "  " << checked.verdict << "\n";
  if (other_device + other_runtime > 0)
    out << fmt::format("  left out of the table: {} row{} for other hardware, {} for other runtimes\n", other_device,
                       other_device == 1 ? "" : "s", other_runtime);
  if (!held_out.empty()) out << held_out_text(hw, unit, fit, held_out);

  config::HardwareYamlOptions yaml;
  yaml.header.push_back(fmt::format("Calibrated by `framesim calibrate --totals {}` from {}: unit {}.",
                                    table.display_path, hw.source_file, u.name));
  for (const auto& p : fit.parameters)
    yaml.header.push_back(fmt::format("  {}: {} -> {}{}{}", model::total_parameter_name(hw, p),
                                      core::format_number(p.prior, 4), core::format_number(p.fitted, 4),
                                      p.pinned ? "" : " (not pinned down by the data: the prior)",
                                      p.at_bound ? " (at a bound)" : ""));
  for (const auto& w : fit.warnings) yaml.header.push_back("WARNING: " + w);
  yaml.header.emplace_back("");
  if (checked.kept_prior) yaml.header.push_back("KEPT THE PRIOR: " + checked.verdict);
  core::write_file_atomic(a.out, config::write_hardware_yaml(fit.calibrated, yaml));
  out << fmt::format("\nwrote {}\n", fs::path(a.out).lexically_normal().generic_string());
  if (!a.write_runtime.empty()) {
    model::RuntimeProfile profile = model::runtime_from(hw, fit.calibrated, unit, a.runtime_name);
    profile.description =
        fmt::format("{} on {} unit {}, fitted by framesim calibrate --totals", a.runtime_name, hw.name, u.name);
    profile.source = fmt::format("fit of {} row{} of {} ({}); {}", samples.size(), samples.size() == 1 ? "" : "s",
                                 table.display_path, core::join_list(sample_labels(samples), ", "), checked.verdict);
    core::write_file_atomic(a.write_runtime, config::runtime_yaml(profile, runtime_schema_path(a.write_runtime)));
    out << fmt::format("wrote {} (runtime profile \"{}\")\n",
                       fs::path(a.write_runtime).lexically_normal().generic_string(), a.runtime_name);
  }
  return 0;
}

/// --corun: co-run slowdowns (trace/corun.hpp), fitted with per-unit contention sensitivities
/// (model::fit_corun) at nominal operating points.
int run_calibrate_corun(const CalibrateArgs& a) {
  if (!a.pairs.empty() || !a.totals.empty())
    throw core::UserError("calibrate --corun: fits contention alone; give no NETWORK MEASURED pairs and no --totals");
  if (!a.write_runtime.empty() || !a.runtime_name.empty())
    throw core::UserError("calibrate --corun: --write-runtime and --runtime-name are for --totals");
  if (!a.unit.empty() || !a.operating_point.empty() || !a.predict.empty() || a.no_fusion)
    throw core::UserError(
        "calibrate --corun: the table names each row's units, at nominal operating points; --unit, "
        "--operating-point, --predict and --no-fusion do not apply");
  if (!a.precision.empty()) option_precision(a.precision);
  if (fs::is_directory(a.out)) throw core::UserError(fmt::format("-o: {} is a directory", a.out));
  const model::HardwareSpec hw = config::load_hardware(a.hardware);
  std::vector<std::string> unit_names;
  for (const auto& u : hw.units) unit_names.push_back(u.name);
  const trace::CorunTable table = trace::read_corun(a.corun, unit_names, hw.source_file);
  NetworkCache cache;
  core::Diagnostics d;
  std::vector<model::CorunRow> rows;
  for (const auto& r : table.rows) {
    model::CorunRow row{r.id, {}, r.measured, r.slowdown};
    for (const auto& e : r.members) {
      const auto& net = cache.get(e.network.generic_string(), a.precision);
      const std::size_t unit =
          static_cast<std::size_t>(std::find(unit_names.begin(), unit_names.end(), e.unit) - unit_names.begin());
      if (const auto missing = model::missing_roofs(net, hw.units[unit]); !missing.empty()) {
        std::vector<std::string> names;
        for (auto p : missing) names.emplace_back(model::precision_name(p));
        d.add({table.display_path, r.line, 1}, "corun",
              fmt::format("unit \"{}\" has no {} roof for {}", e.unit, core::join_list(names, ", "),
                          e.network.generic_string()));
        continue;
      }
      row.members.push_back(model::corun_member(hw, unit, net));
    }
    rows.push_back(std::move(row));
  }
  d.throw_if_any();
  const model::CorunFit fit = model::fit_corun(hw, rows);
  const std::vector<double> held_out = model::leave_one_out(hw, rows);

  std::ostream& out = std::cout;
  out << fmt::format("framesim calibrate: {} ({}), contention from {} co-run row{} of {}\n", hw.name, hw.source_file,
                     rows.size(), rows.size() == 1 ? "" : "s", table.display_path);
  out << "  predicted: the steady co-run of model/corun.hpp (every network back to back on its unit, average "
         "traffic, hand-off jobs waiting for their host, no max-min saturation)\n\n";
  using Align = analysis::Table::Align;
  analysis::Table t(
      {"row", "unit", "measured slowdown", "file", "calibrated", "error", "held out", "error"},
      {Align::left, Align::left, Align::right, Align::right, Align::right, Align::right, Align::right, Align::right});
  std::vector<double> held_out_errors;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = table.rows[i];
    const double loo = held_out[i] / rows[i].measured_slowdown - 1;
    held_out_errors.push_back(std::fabs(loo));
    t.add({r.id, r.members[r.measured].unit, ratio(rows[i].measured_slowdown), ratio(fit.prior_slowdown[i]),
           ratio(fit.predicted_slowdown[i]),
           fmt::format("{:+.1f}%", (fit.predicted_slowdown[i] / rows[i].measured_slowdown - 1) * 100),
           ratio(held_out[i]), fmt::format("{:+.1f}%", loo * 100)});
  }
  out << t.render(2);
  std::sort(held_out_errors.begin(), held_out_errors.end());
  const std::size_t half = held_out_errors.size() / 2;
  const double median =
      held_out_errors.size() % 2 ? held_out_errors[half] : (held_out_errors[half - 1] + held_out_errors[half]) / 2;
  out << fmt::format("\nRMS of ln(predicted / measured): calibrated {}, the file's parameters {}\n",
                     core::format_number(fit.rms_log, 3), core::format_number(fit.prior_rms_log, 3));
  out << fmt::format("held out: each row predicted by the fit on the other rows; median |error| {:.1f}%\n\n",
                     median * 100);
  analysis::Table params({"parameter", "file", "calibrated", "note"},
                         {Align::left, Align::right, Align::right, Align::left});
  config::HardwareYamlOptions yaml;
  yaml.header.push_back(fmt::format("Contention calibrated by `framesim calibrate --corun {}` from {}.",
                                    table.display_path, hw.source_file));
  for (const auto& p : fit.parameters) {
    const std::string key(model::corun_parameter_key(p.kind));
    const std::string name = hw.units[p.unit].name + " " + key;
    const bool time = p.kind == model::CorunParameterKind::handoff_launch;
    auto shown = [&](double v) { return time ? core::format_seconds(v) : core::format_number(v, 4); };
    const std::string note = !p.identifiable ? "no row depends on it: the prior"
                             : !p.pinned     ? "not pinned: other parameters move the rows the same way"
                             : p.at_bound    ? "pinned, at a bound of its range"
                                             : "pinned";
    params.add({name, shown(p.prior), shown(p.fitted), note});
    yaml.header.push_back(fmt::format("  {}: {} -> {} ({})", name, shown(p.prior), shown(p.fitted), note));
    yaml.comments[fmt::format("units.{}.{}", hw.units[p.unit].name, key)] =
        fmt::format("calibrated on co-runs (was {})", shown(p.prior));
  }
  yaml.header.push_back(fmt::format("Fit over {} rows: RMS of ln(predicted / measured slowdown) {} (the file: {}).",
                                    rows.size(), core::format_number(fit.rms_log, 3),
                                    core::format_number(fit.prior_rms_log, 3)));
  yaml.header.emplace_back("");
  out << "fitted\n" << params.render(2);
  core::write_file_atomic(a.out, config::write_hardware_yaml(fit.calibrated, yaml));
  out << fmt::format("\nwrote {}\n", fs::path(a.out).lexically_normal().generic_string());
  return 0;
}

}  // namespace framesim::cli::calibrate
