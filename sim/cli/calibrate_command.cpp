// `framesim calibrate HW NETWORK MEASURED [NETWORK MEASURED ...] -o HW.calibrated.yaml`: fit a unit's effective
// roofs (compute efficiency per precision, bandwidth efficiency per memory level, dispatch overhead) to measured
// kernel times, report the fit kernel by kernel, write the calibrated hardware file; --predict checks the
// calibrated model on a network that was not in the fit; --totals fits whole-network times per op class; --corun
// fits each unit's contention_sensitivity, overlap and hand-off to co-run slowdowns (model/corun.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>

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

namespace framesim::cli {

namespace {

namespace fs = std::filesystem;

struct CalibrateArgs {
  std::string hardware;
  std::vector<std::string> pairs;  // NETWORK MEASURED ...
  std::vector<std::string> predict;
  std::string unit;
  std::string precision;
  std::string operating_point;
  std::string out;
  std::string totals;         // whole-network measurements (trace/totals.hpp)
  std::string corun;          // co-run measurements (trace/corun.hpp)
  std::string write_runtime;  // --totals: also write the fit as a runtime profile (model/runtime.hpp)
  std::string runtime_name;   // its name
  bool no_fusion = false;
  bool allow_partial = false;  // fit from a trace that measures less than kMinCoveredShare of its network's kernels
};

/// The least share of a network's kernels a trace must measure for a fit from it (unless --allow-partial): a trace
/// of another network still shares a few layer names (conv1, fc) and would calibrate the unit from those alone.
constexpr double kMinCoveredShare = 0.5;

/// A network and what was measured of it, matched.
struct Measured {
  std::string measured_path;
  model::NetworkSpec net;
  trace::MatchedMeasurements matched;
  model::SampleSet set;
};

model::NetworkSpec load_any_network(const std::string& path, const CalibrateArgs& a) {
  const std::string ext = fs::path(path).extension().string();
  model::NetworkSpec net =
      (ext == ".onnx" || ext == ".tflite") ? trace::import_model(path).network : config::load_network(path);
  if (!a.precision.empty()) net = model::with_precision(net, option_precision(a.precision));
  if (a.no_fusion) net.fusion = model::FusionMode::none;
  return net;
}

/// Reads what was measured of `net` (already loaded) and matches it to the kernels of `unit`.
Measured measure(const model::HardwareSpec& hw, std::size_t unit, const model::RunPoint& run, model::NetworkSpec net,
                 const std::string& measured_path) {
  Measured m;
  m.measured_path = fs::path(measured_path).lexically_normal().generic_string();
  m.net = std::move(net);
  const trace::MeasuredTrace trace = trace::read_measured_trace(measured_path);
  m.matched = trace::match_measurements(trace, m.net);
  m.set = model::match_samples(hw, unit, m.net, m.matched.measurements, run);
  if (m.set.samples.empty()) {
    if (!m.set.zero.empty())
      throw core::UserError(fmt::format("{}: every kernel of {} it measures took 0 s ({}): nothing to fit",
                                        m.measured_path, m.net.source_file, core::join_list(m.set.zero, ", ")));
    // The first six names of each side, then "...".
    auto first_names = [](const auto& items) {
      std::vector<std::string> names;
      for (const auto& item : items) {
        if (names.size() == 6) {
          names.emplace_back("...");
          break;
        }
        names.push_back(item.name);
      }
      return names;
    };
    throw core::UserError(fmt::format("{}: no measurement matches a layer or kernel of {} ({}: {}; the network has {})",
                                      m.measured_path, m.net.source_file, trace::measured_format_name(trace.format),
                                      core::join_list(first_names(trace.entries), ", "),
                                      core::join_list(first_names(m.net.layers), ", ")));
  }
  return m;
}

/// Refuses a fit from `m` when its trace measures less than kMinCoveredShare of the network's kernels (as planned
/// on the unit: a fused group is one kernel, measured by its own name or its layers').
void check_coverage(const Measured& m, bool allow_partial) {
  const std::size_t measured = m.set.samples.size() + m.set.zero.size();
  const std::size_t kernels = measured + m.set.unmeasured.size();
  if (allow_partial || kernels == 0 || static_cast<double>(measured) >= kMinCoveredShare * kernels) return;
  throw core::UserError(
      fmt::format("{}: measures {} of the {} kernels of {} ({}%): a fit from it would calibrate the unit from a "
                  "small part of the network (a trace of another network?); give --allow-partial to fit anyway",
                  m.measured_path, measured, kernels, m.net.source_file.empty() ? m.net.name : m.net.source_file,
                  core::format_number(100.0 * static_cast<double>(measured) / static_cast<double>(kernels), 2)));
}

std::string seconds(double s) { return core::format_seconds(s); }
std::string ratio(double r) { return r < 10 ? fmt::format("{:.2f}x", r) : fmt::format("{:.3g}x", r); }

std::string value_text(const model::FittedParameter& p, double v) {
  return p.kind == model::ParameterKind::dispatch_overhead ? seconds(v) : core::format_number(v, 4);
}

std::string limit_text(const model::HardwareSpec& hw, const model::KernelFit& k) {
  switch (k.limit) {
    case model::LimitKind::compute: return "compute";
    case model::LimitKind::overhead: return "overhead";
    case model::LimitKind::memory:
      return k.limit_level >= 0 ? hw.memory[static_cast<std::size_t>(k.limit_level)].name : "memory";
  }
  return "?";
}

std::string worst_text(const model::FitError& e) {
  const auto& k = e.kernels[e.worst];
  return fmt::format("{} ({} {})", ratio(e.worst_ratio), k.network, k.kernel);
}

void print_matching(std::ostream& out, const Measured& m) {
  out << fmt::format("  {} with {} ({})\n", m.net.source_file, m.measured_path,
                     trace::measured_format_name(m.matched.format));
  for (const auto& n : m.matched.notes) out << "    " << n << "\n";
  out << fmt::format("    kernels: {} measured", m.set.samples.size() + m.set.zero.size());
  if (!m.set.unmeasured.empty()) out << fmt::format(", {} without a measurement", m.set.unmeasured.size());
  out << "\n";
  if (!m.set.partial.empty())
    out << fmt::format("    measured through only some of their layers: {}\n", core::join_list(m.set.partial, ", "));
  if (!m.set.zero.empty())
    out << fmt::format("    measured at 0 s, left out of the fit: {}\n", core::join_list(m.set.zero, ", "));
  if (!m.set.unmatched.empty()) {
    std::vector<std::string> shown(
        m.set.unmatched.begin(),
        m.set.unmatched.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(8, m.set.unmatched.size())));
    out << fmt::format("    recorded names matching no layer or kernel ({}): {}{}\n", m.set.unmatched.size(),
                       core::join_list(shown, ", "), m.set.unmatched.size() > shown.size() ? ", ..." : "");
  }
}

void print_kernels(std::ostream& out, const model::HardwareSpec& hw, const model::FitError& before,
                   const model::FitError& after, bool several_networks) {
  using Align = analysis::Table::Align;
  analysis::Table t({"kernel", "measured", "file bound", "ratio", "calibrated bound", "ratio", "binds"},
                    {Align::left, Align::right, Align::right, Align::right, Align::right, Align::right, Align::left});
  for (std::size_t k = 0; k < after.kernels.size(); ++k) {
    const auto& a = after.kernels[k];
    const auto& b = before.kernels[k];
    t.add({(several_networks ? a.network + ": " : "") + a.kernel + (a.partial ? " (partial)" : ""),
           seconds(a.measured_s), seconds(b.bound_s), ratio(b.ratio), seconds(a.bound_s), ratio(a.ratio),
           limit_text(hw, a)});
  }
  t.add({"total", seconds(after.measured_total_s), seconds(before.bound_total_s),
         ratio(after.measured_total_s / before.bound_total_s), seconds(after.bound_total_s),
         ratio(after.measured_total_s / after.bound_total_s), ""});
  out << t.render(2);
}

std::string error_line(const model::FitError& e) {
  return fmt::format("RMS of ln(measured / bound) {}, worst ratio {}", core::format_number(e.rms_log, 3),
                     worst_text(e));
}

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
  // The rows for this device (a suite names several) and, with --runtime-name, this runtime; held-out rows are
  // predicted, never fitted.
  std::size_t other_device = 0, other_runtime = 0;
  {
    std::vector<trace::TotalRow> kept;
    const auto self = fs::weakly_canonical(a.hardware);
    for (auto& r : table.rows) {
      if (r.hardware && fs::weakly_canonical(*r.hardware) != self) ++other_device;
      else if (!a.runtime_name.empty() && !r.runtime.empty() && r.runtime != a.runtime_name) ++other_runtime;
      else kept.push_back(std::move(r));
    }
    if (kept.empty())
      throw core::UserError(fmt::format("calibrate --totals: no row of {} is for {}{}", table.display_path, a.hardware,
                                        a.runtime_name.empty() ? "" : " and runtime " + a.runtime_name));
    table.rows = std::move(kept);
  }
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
  if (!held_out.empty()) {
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
  }

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

int run_calibrate(const CalibrateArgs& a) {
  if (!a.corun.empty()) return run_calibrate_corun(a);
  if (!a.totals.empty()) return run_calibrate_totals(a);
  if (!a.write_runtime.empty() || !a.runtime_name.empty())
    throw core::UserError("calibrate --write-runtime, --runtime-name: for --totals (whole-network measurements)");
  if (a.pairs.size() < 2 || a.pairs.size() % 2 != 0)
    throw core::UserError(
        fmt::format("calibrate: expected NETWORK MEASURED pairs after the hardware file, got {} "
                    "argument{}",
                    a.pairs.size(), a.pairs.size() == 1 ? "" : "s"));
  if (!a.predict.empty() && a.predict.size() % 2 != 0)
    throw core::UserError("--predict: expected NETWORK MEASURED pairs");
  if (!a.precision.empty()) option_precision(a.precision);  // checked before any file is read
  if (fs::is_directory(a.out)) throw core::UserError(fmt::format("-o: {} is a directory", a.out));

  const model::HardwareSpec hw = config::load_hardware(a.hardware);
  // Networks first (to choose the unit), then their measurements.
  std::vector<model::NetworkSpec> fit_nets, predict_nets;
  for (std::size_t i = 0; i < a.pairs.size(); i += 2) fit_nets.push_back(load_any_network(a.pairs[i], a));
  for (std::size_t i = 0; i < a.predict.size(); i += 2) predict_nets.push_back(load_any_network(a.predict[i], a));
  std::vector<const model::NetworkSpec*> all;
  for (const auto& n : fit_nets) all.push_back(&n);
  for (const auto& n : predict_nets) all.push_back(&n);
  const std::size_t unit = option_unit(hw, all, a.unit);
  const auto& u = hw.units[unit];
  model::RunPoint run;
  if (!a.operating_point.empty()) run.operating_point = option_operating_point(u, a.operating_point);

  std::vector<Measured> fit, predicted;
  std::vector<model::CalibrationSample> samples;
  for (std::size_t i = 0; i < a.pairs.size(); i += 2) {
    fit.push_back(measure(hw, unit, run, std::move(fit_nets[i / 2]), a.pairs[i + 1]));
    check_coverage(fit.back(), a.allow_partial);
    samples.insert(samples.end(), fit.back().set.samples.begin(), fit.back().set.samples.end());
  }
  for (std::size_t i = 0; i < a.predict.size(); i += 2)
    predicted.push_back(measure(hw, unit, run, std::move(predict_nets[i / 2]), a.predict[i + 1]));

  const model::CalibrationResult result = model::calibrate(hw, unit, samples, run);
  const auto& op = u.operating_points[run.operating_point];

  // The calibrated file: the original with the fitted roofs, a header saying where they came from.
  config::HardwareYamlOptions yaml;
  yaml.header.push_back(fmt::format("Calibrated by `framesim calibrate` from {}: unit {} at operating point {}{}{}.",
                                    hw.source_file, u.name, op.name,
                                    a.precision.empty() ? "" : ", every layer at " + a.precision,
                                    a.no_fusion ? ", every layer its own kernel (--no-fusion)" : ""));
  yaml.header.emplace_back("Fitted to measured kernel times of:");
  for (const auto& m : fit)
    yaml.header.push_back(fmt::format("  {} with {} ({}, {} kernels)", m.net.source_file, m.measured_path,
                                      trace::measured_format_name(m.matched.format), m.set.samples.size()));
  std::vector<std::string> changes;
  for (const auto& p : result.parameters) {
    const std::string name = model::parameter_name(hw, p);
    changes.push_back(fmt::format("{} {} -> {}{}", name, value_text(p, p.before), value_text(p, p.after),
                                  p.constrained ? "" : " (binds no kernel: not determined)"));
    std::string key;
    switch (p.kind) {
      case model::ParameterKind::compute_efficiency:
        key = fmt::format("units.{}.efficiency{}", u.name,
                          config::single_efficiency(result.calibrated.units[unit])
                              ? ""
                              : "." + std::string(model::precision_name(p.precision)));
        break;
      case model::ParameterKind::bandwidth_efficiency:
        key = fmt::format("memory.{}.efficiency", hw.memory[p.level].name);
        break;
      case model::ParameterKind::dispatch_overhead: key = fmt::format("units.{}.dispatch_overhead", u.name); break;
    }
    yaml.comments[key] = fmt::format("calibrated (was {})", value_text(p, p.before));
  }
  yaml.header.push_back("Fitted: " + core::join_list(changes, "; ") + ".");
  yaml.header.push_back(fmt::format("Fit over {} kernels: {} (the original file: {}).", samples.size(),
                                    error_line(result.after), error_line(result.before)));
  yaml.header.emplace_back(
      "Memory-level efficiencies belong to the level: they apply to every unit that uses it. Energy "
      "per operation is written out per precision (busy_power is not kept).");
  yaml.header.emplace_back("");
  const std::string text = config::write_hardware_yaml(result.calibrated, yaml);

  // Report.
  std::ostream& out = std::cout;
  out << fmt::format("framesim calibrate: {} ({}), unit {} at {}\n\n", hw.name, hw.source_file, u.name, op.name);
  out << "measured (fitted)\n";
  for (const auto& m : fit) print_matching(out, m);
  out << "\n";
  using Align = analysis::Table::Align;
  analysis::Table params({"parameter", "file", "calibrated", "binds"},
                         {Align::left, Align::right, Align::right, Align::left});
  for (const auto& p : result.parameters) {
    std::string binds = p.kind == model::ParameterKind::dispatch_overhead
                            ? fmt::format("every kernel ({})", p.binding)
                            : fmt::format("{} kernel{}", p.binding, p.binding == 1 ? "" : "s");
    if (!p.constrained) binds += p.after == p.before ? ": not determined, kept" : ": not determined (a lower bound)";
    if (p.at_limit) binds += ": at the limit 1 (kernels ran faster than the peak roof)";
    if (p.kind == model::ParameterKind::bandwidth_efficiency && hw.memory[p.level].shared())
      binds += fmt::format(" (level shared by {})", core::join_list(hw.memory[p.level].users, ", "));
    params.add({model::parameter_name(hw, p), value_text(p, p.before), value_text(p, p.after), binds});
  }
  out << fmt::format("fitted roofs ({} kernels of {} network{}, {} evaluations)\n", samples.size(), fit.size(),
                     fit.size() == 1 ? "" : "s", result.evaluations);
  out << params.render(2);
  if (samples.size() <= result.parameters.size())
    out << fmt::format("  {} kernels for {} parameters: the fit is not unique (measure more kernels or networks)\n",
                       samples.size(), result.parameters.size());
  out << fmt::format("\nfit: {}\n     the file's roofs: {}\n\n", error_line(result.after), error_line(result.before));
  print_kernels(out, hw, result.before, result.after, fit.size() > 1);

  for (const auto& m : predicted) {
    const model::FitError before = model::fit_error(hw, unit, m.set.samples, run);
    const model::FitError after = model::fit_error(result.calibrated, unit, m.set.samples, run);
    out << fmt::format("\nprediction (not in the fit)\n");
    print_matching(out, m);
    out << fmt::format(
        "  calibrated: {}\n  the file's roofs: {}\n  whole network: measured {}, calibrated {} ({}), "
        "file {} ({})\n",
        error_line(after), error_line(before), seconds(after.measured_total_s), seconds(after.bound_total_s),
        ratio(after.measured_total_s / after.bound_total_s), seconds(before.bound_total_s),
        ratio(before.measured_total_s / before.bound_total_s));
    print_kernels(out, hw, before, after, false);
  }

  core::write_file_atomic(a.out, text);
  out << fmt::format("\nwrote {}\n", fs::path(a.out).lexically_normal().generic_string());
  return 0;
}

}  // namespace

Command add_calibrate_command(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  auto* sub = app.add_subcommand(
      "calibrate",
      "fit a unit's roofs (compute efficiency per precision, bandwidth efficiency per memory level, dispatch "
      "overhead) to measured kernel times and write the calibrated hardware file");
  sub->add_option("hardware", args->hardware, "hardware YAML (hardware/*.yaml)")->required();
  sub->add_option("pairs", args->pairs,
                  "NETWORK MEASURED [NETWORK MEASURED ...]: network YAML (or .onnx/.tflite) and its measured times: " +
                      measured_formats_help());
  sub->add_option("--totals", args->totals,
                  "whole-network measurements: CSV network,precision,operating_point,latency[,energy] (see "
                  "tests/validation/README.md); fits per-op-class efficiencies, alone or with the pairs");
  sub->add_option("--corun", args->corun,
                  "co-run measurements: CSV row,corun,unit,alone_latency,together_latency (or alone_qps, "
                  "together_qps; see sim/trace/corun.hpp); fits each unit's contention_sensitivity and overlap, and "
                  "each accelerator's hand-off efficiency and launch");
  sub->add_option("--unit", args->unit,
                  "compute unit the measurements ran on (default: the first with the networks' "
                  "precisions)");
  sub->add_option("--precision", args->precision, "run every layer at this precision (fp16, int8, w4a16, ...)");
  sub->add_option("--operating-point", args->operating_point,
                  "the unit's operating point during the measurements "
                  "(default: nominal)");
  sub->add_flag("--no-fusion", args->no_fusion, "every layer its own kernel (eager frameworks do not fuse)");
  sub->add_flag("--allow-partial", args->allow_partial,
                "fit from a measured trace that measures less than half of its network's kernels");
  sub->add_option("-o,--out", args->out, "where to write the calibrated hardware YAML")->required();
  sub->add_option("--write-runtime", args->write_runtime,
                  "with --totals: also write the fit as a runtime profile (hardware/runtimes/*.yaml) that "
                  "`budget --runtime` and a scenario's `runtime:` lay over the hardware file");
  sub->add_option("--runtime-name", args->runtime_name, "the runtime --write-runtime names (x-cube-ai-8.0, ...)");
  sub->add_option("--predict", args->predict,
                  "NETWORK MEASURED not in the fit: report the calibrated model's error on it (repeatable)")
      ->expected(2)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  return {sub, [args] { return run_calibrate(*args); }};
}

}  // namespace framesim::cli
