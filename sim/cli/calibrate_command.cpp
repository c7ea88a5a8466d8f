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

namespace framesim::cli {

namespace calibrate {

namespace fs = std::filesystem;

namespace {

/// The least share of a network's kernels a trace must measure for a fit from it (unless --allow-partial): a trace
/// of another network still shares a few layer names (conv1, fc) and would calibrate the unit from those alone.
constexpr double kMinCoveredShare = 0.5;

}  // namespace

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

}  // namespace calibrate

namespace {

namespace fs = std::filesystem;
using calibrate::CalibrateArgs;
using calibrate::check_coverage;
using calibrate::load_any_network;
using calibrate::measure;
using calibrate::Measured;
using calibrate::ratio;
using calibrate::run_calibrate_corun;
using calibrate::run_calibrate_totals;
using calibrate::seconds;

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

/// The calibrated file: the original with the fitted roofs, a header saying where they came from, and a comment
/// on every key the fit changed.
std::string calibrated_yaml(const CalibrateArgs& a, const model::HardwareSpec& hw, std::size_t unit,
                            const model::OperatingPoint& op, const std::vector<Measured>& fit,
                            const std::vector<model::CalibrationSample>& samples,
                            const model::CalibrationResult& result) {
  const auto& u = hw.units[unit];
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
  return config::write_hardware_yaml(result.calibrated, yaml);
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

  const std::string text = calibrated_yaml(a, hw, unit, op, fit, samples, result);

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
