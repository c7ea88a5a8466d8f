// `framesim validate [SUITE]`: published measurements against framesim's predictions. Per hardware file and
// unit, the suite's calibration rows are fitted (calibration from totals, model/calibrate.hpp); every row is
// then predicted with the calibrated file (a device without calibration rows keeps its file's roofs). Reported
// per row: measured, bound, estimate, error; then the geometric-mean error of the calibration set and, apart,
// of the held-out set (never fitted on), for latency and for energy; and whether any bound exceeds its
// measurement (it must never). A whole-application row (scope application) is predicted as its scenario's
// pipeline: the network stage with its device's fit, every other stage (pre- and post-processing on the CPU) at
// its floor on the scenario's hardware, end to end along the longest path; it is reported apart and is in no
// network-time geomean.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/totals_support.hpp"
#include "config/hardware.hpp"
#include "config/scenario.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "table.hpp"

namespace framesim::cli {

namespace {

struct ValidateArgs {
  std::string suite = "tests/validation/suite.csv";
  std::vector<std::string> arguments;  // input files (.yaml), or one suite
  std::string kind;                    // --kind for input files
  bool json = false;
};

struct Row {
  const trace::TotalRow* row = nullptr;
  std::string group;
  model::TotalSample sample;
  double bound_s = 0, predicted_s = 0;
  std::optional<double> predicted_J;
  double uncalibrated_s = 0;  // the file's roofs, no fit
  std::optional<double> uncalibrated_J;
  bool calibrated = false;  // its device had calibration rows
  // A whole-application row: its scenario, the stage that runs the row's network, and each stage's predicted time.
  const model::ScenarioSpec* scenario = nullptr;
  std::size_t network_stage = 0;
  std::vector<double> stage_s;
};

/// " [runtime]" for a row that names its runtime: a device's rows are fitted per runtime.
std::string runtime_suffix(const trace::TotalRow& r) { return r.runtime.empty() ? "" : " [" + r.runtime + "]"; }

/// The signed bias exp(mean ln(predicted / measured)) - 1 and the spread (standard deviation of ln(predicted /
/// measured)) over `pairs`: a model systematically off by more than its spread shows here.
std::pair<double, double> bias_and_spread(const std::vector<std::pair<double, double>>& pairs) {
  if (pairs.empty()) return {0.0, 0.0};
  double sum = 0, sq = 0;
  for (const auto& [p, m] : pairs) sum += std::log(p / m);
  const double n = static_cast<double>(pairs.size()), mean = sum / n;
  for (const auto& [p, m] : pairs) sq += std::pow(std::log(p / m) - mean, 2);
  return {std::exp(mean) - 1.0, std::sqrt(sq / n)};
}

/// exp(mean |ln(predicted / measured)|) - 1 over `pairs` (0 when empty).
double geomean_error(const std::vector<std::pair<double, double>>& pairs) {
  if (pairs.empty()) return 0.0;
  double sum = 0;
  for (const auto& [p, m] : pairs) sum += std::fabs(std::log(p / m));
  return std::exp(sum / static_cast<double>(pairs.size())) - 1.0;
}

/// The suite's rows with their hardware files (each read once), networks, samples and bounds.
struct Suite {
  std::map<std::string, model::HardwareSpec> hardware;  // by path
  NetworkCache networks;
  std::map<std::string, model::ScenarioSpec> scenarios;  // by path: whole-application rows' pipelines
  std::vector<Row> rows;
};

/// The application row's scenario and the stage that runs its network on its unit; throws core::UserError naming
/// the table's line when the scenario has no such stage.
void attach_scenario(const trace::TotalsTable& table, const trace::TotalRow& r, Suite& suite, Row& row) {
  const std::string path = r.stages->generic_string();
  if (!suite.scenarios.count(path)) suite.scenarios.emplace(path, config::load_scenario(*r.stages));
  const model::ScenarioSpec& scn = suite.scenarios.at(path);
  for (std::size_t s = 0; s < scn.stages.size(); ++s) {
    const auto& st = scn.stages[s];
    if (st.work.kind == model::WorkSpec::Kind::network && scn.hardware.units[st.unit].name == r.unit &&
        scn.networks[static_cast<std::size_t>(st.work.network)].network.name == row.sample.network) {
      row.scenario = &scn;
      row.network_stage = s;
      return;
    }
  }
  core::Diagnostics d;
  d.add({table.display_path, r.line, 1}, "stages",
        fmt::format("{} has no stage running network \"{}\" on unit \"{}\" (the row's network and unit)", path,
                    row.sample.network, r.unit));
  d.throw_if_any();
}

/// The pipeline's end-to-end time for one frame on an idle SoC: the network stage at `network_s`, every other
/// stage at its floor (`roofs`), along the longest path; each stage's time into `stage_s` when given.
double pipeline_s(const Row& row, double network_s, model::Roofs roofs, std::vector<double>* stage_s = nullptr) {
  std::vector<double> floors = row.scenario->stage_floors_s(roofs);
  floors[row.network_stage] = network_s;
  if (stage_s) *stage_s = floors;
  return row.scenario->floor_end_to_end_s(floors);
}

void load_suite(const trace::TotalsTable& table, Suite& suite) {
  auto& hardware = suite.hardware;
  auto& networks = suite.networks;
  auto& rows = suite.rows;
  for (const auto& r : table.rows) {
    const std::string hw_path = r.hardware->generic_string();
    if (!hardware.count(hw_path)) hardware.emplace(hw_path, config::load_hardware(*r.hardware));
    const auto& hw = hardware.at(hw_path);
    const auto& net = networks.get(r.network.generic_string(), r.precision);
    const std::size_t unit = option_unit(hw, {&net}, r.unit);
    Row row;
    row.row = &r;
    row.group = hw_path + " / " + r.unit;
    row.sample = total_sample(table, r, hw, unit, net);
    row.bound_s = model::total_bound_s(hw, unit, row.sample);
    if (r.application) {
      attach_scenario(table, r, suite, row);
      row.bound_s = pipeline_s(row, row.bound_s, model::Roofs::peak);
    }
    rows.push_back(std::move(row));
  }
}

/// Text and JSON of a step of the report.
struct Part {
  nlohmann::json json;
  std::string text;
};

/// Fits each device and runtime on its calibration rows (a runtime profile each) and predicts every row: the
/// fits as JSON ("devices") and their text.
Part fit_and_predict(Suite& suite) {
  const auto& hardware = suite.hardware;
  auto& rows = suite.rows;
  nlohmann::json groups = nlohmann::json::array();
  std::string fits_text;
  std::map<std::string, std::vector<std::size_t>> by_group;
  for (std::size_t i = 0; i < rows.size(); ++i) by_group[rows[i].group + runtime_suffix(*rows[i].row)].push_back(i);
  for (const auto& [group, members] : by_group) {
    const auto& first = *rows[members.front()].row;
    const auto& hw = hardware.at(first.hardware->generic_string());
    const std::size_t unit = *hw.find_unit(first.unit);
    std::vector<model::TotalSample> fit_samples;
    for (std::size_t i : members)
      if (!rows[i].row->held_out) fit_samples.push_back(rows[i].sample);
    model::HardwareSpec calibrated = hw;
    nlohmann::json g{{"device", group}, {"runtime", first.runtime}, {"calibration_rows", fit_samples.size()}};
    if (!fit_samples.empty()) {
      const model::CheckedFit checked = model::fit_totals_checked(hw, unit, fit_samples);
      const model::TotalsFit& fit = checked.fit;
      calibrated = fit.calibrated;
      fits_text += fmt::format("\n{}: fitted on {} calibration row{}\n", group, fit_samples.size(),
                               fit_samples.size() == 1 ? "" : "s");
      fits_text += fitted_parameters_text(hw, fit);
      fits_text += "  " + checked.verdict + "\n";
      nlohmann::json params = nlohmann::json::array();
      for (const auto& p : fit.parameters)
        params.push_back({{"name", model::total_parameter_name(hw, p)},
                          {"prior", p.prior},
                          {"fitted", p.fitted},
                          {"pinned", p.pinned},
                          {"at_bound", p.at_bound}});
      g["parameters"] = params;
      g["warnings"] = fit.warnings;
      g["kept_prior"] = checked.kept_prior;
      g["check"] = checked.verdict;
      nlohmann::json loo_json = nlohmann::json::array();
      for (const auto& l : checked.by_network) {
        fits_text +=
            fmt::format("  leave {} out: predicted within {} (the file's roofs: {})\n", l.network,
                        core::format_number(l.error * 100, 3) + "%", core::format_number(l.prior_error * 100, 3) + "%");
        loo_json.push_back({{"network", l.network}, {"error", l.error}, {"prior_error", l.prior_error}});
      }
      g["leave_one_network_out"] = loo_json;
    } else {
      fits_text += fmt::format("\n{}: no calibration rows: predicted with the file's roofs\n", group);
    }
    groups.push_back(g);
    for (std::size_t i : members) {
      rows[i].calibrated = !fit_samples.empty();
      rows[i].predicted_s = model::total_estimate_s(calibrated, unit, rows[i].sample);
      rows[i].uncalibrated_s = model::total_estimate_s(hw, unit, rows[i].sample);
      if (rows[i].scenario) {
        rows[i].predicted_s = pipeline_s(rows[i], rows[i].predicted_s, model::Roofs::effective, &rows[i].stage_s);
        rows[i].uncalibrated_s = pipeline_s(rows[i], rows[i].uncalibrated_s, model::Roofs::effective);
      }
      if (rows[i].row->energy_J) {
        rows[i].predicted_J = model::total_energy_J(calibrated, unit, rows[i].sample);
        rows[i].uncalibrated_J = model::total_energy_J(hw, unit, rows[i].sample);
      }
    }
  }

  return {groups, fits_text};
}

/// Leave one runtime out, per device with two runtimes or more: a fit on the others' calibration rows predicts
/// every row of the runtime left out (what a user with no profile for that runtime would get).
Part leave_one_runtime_out(const Suite& suite) {
  const auto& hardware = suite.hardware;
  const auto& rows = suite.rows;
  nlohmann::json loro_json = nlohmann::json::array();
  std::string loro_text;
  {
    std::map<std::string, std::vector<std::size_t>> by_device;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (!rows[i].scenario) by_device[rows[i].group].push_back(i);  // network time only
    for (const auto& [device, members] : by_device) {
      std::set<std::string> runtimes;
      for (std::size_t i : members) runtimes.insert(rows[i].row->runtime);
      if (runtimes.size() < 2) continue;
      const auto& first = *rows[members.front()].row;
      const auto& hw = hardware.at(first.hardware->generic_string());
      const std::size_t unit = *hw.find_unit(first.unit);
      for (const auto& r : runtimes) {
        std::vector<model::TotalSample> rest;
        std::vector<std::size_t> left;
        for (std::size_t i : members) {
          if (rows[i].row->runtime == r) left.push_back(i);
          else if (!rows[i].row->held_out) rest.push_back(rows[i].sample);
        }
        if (rest.empty()) continue;
        const auto fit = model::fit_totals(hw, unit, rest);
        double sum = 0, prior_sum = 0;
        for (std::size_t i : left) {
          sum += std::fabs(
              std::log(model::total_estimate_s(fit.calibrated, unit, rows[i].sample) / rows[i].row->latency_s));
          prior_sum += std::fabs(std::log(rows[i].uncalibrated_s / rows[i].row->latency_s));
        }
        const double n = static_cast<double>(left.size());
        const double err = std::exp(sum / n) - 1, prior_err = std::exp(prior_sum / n) - 1;
        loro_text += fmt::format("  {}: leave {} out ({} rows): predicted within {} (the file's roofs: {})\n", device,
                                 r.empty() ? "(no runtime)" : r, left.size(), core::format_number(err * 100, 3) + "%",
                                 core::format_number(prior_err * 100, 3) + "%");
        loro_json.push_back(
            {{"device", device}, {"runtime", r}, {"rows", left.size()}, {"error", err}, {"prior_error", prior_err}});
      }
    }
  }

  return {loro_json, loro_text};
}

/// Predicted against measured, pair by pair: calibration and held-out rows, with the file's roofs too, per device
/// (hardware file and unit); and the rows whose bound exceeds their measurement.
struct Errors {
  std::vector<std::pair<double, double>> lat_cal, lat_held, energy_cal, energy_held, lat_held_file, energy_held_file;
  std::map<std::string, std::vector<std::pair<double, double>>> dev_lat, dev_lat_file, dev_energy, dev_energy_file;
  std::vector<std::string> violations;
  std::vector<std::pair<double, double>> lat_app, lat_app_file;  // whole-application rows: in no geomean above
  std::string app_text;                                          // their stages, row by row
  std::vector<std::string> app_violations;                       // their bounds above their measurements
};

/// A table row and a JSON row per suite row (into `json_rows`); the pairs into `e`.
analysis::Table tabulate(const std::vector<Row>& rows, Errors& e, nlohmann::json& json_rows) {
  auto& [lat_cal, lat_held, energy_cal, energy_held, lat_held_file, energy_held_file, dev_lat, dev_lat_file, dev_energy,
         dev_energy_file, violations, lat_app, lat_app_file, app_text, app_violations] = e;
  using Align = analysis::Table::Align;
  analysis::Table t(
      {"row", "runtime", "set", "measured", "bound", "predicted", "error", "energy", "predicted", "error"},
      {Align::left, Align::left, Align::left, Align::right, Align::right, Align::right, Align::right, Align::right,
       Align::right, Align::right});
  for (const auto& r : rows) {
    const auto& tr = *r.row;
    const double m = tr.latency_s;
    if (r.scenario) {
      lat_app.emplace_back(r.predicted_s, m);
      lat_app_file.emplace_back(r.uncalibrated_s, m);
      std::vector<std::string> parts;
      for (std::size_t s = 0; s < r.stage_s.size(); ++s)
        parts.push_back(fmt::format("{} on {} {}", r.scenario->stages[s].name,
                                    r.scenario->hardware.units[r.scenario->stages[s].unit].name,
                                    core::format_seconds(r.stage_s[s])));
      app_text +=
          fmt::format("  {}: {} -> {} end to end (measured {}, {:+.1f}%)\n", tr.id, fmt::join(parts, ", "),
                      core::format_seconds(r.predicted_s), core::format_seconds(m), (r.predicted_s / m - 1) * 100);
    } else {
      (tr.held_out ? lat_held : lat_cal).emplace_back(r.predicted_s, m);
    }
    if (tr.held_out && !r.scenario) {
      lat_held_file.emplace_back(r.uncalibrated_s, m);
      dev_lat[r.group].emplace_back(r.predicted_s, m);
      dev_lat_file[r.group].emplace_back(r.uncalibrated_s, m);
    }
    if (r.bound_s > m) (r.scenario ? app_violations : violations).push_back(tr.id);
    std::vector<std::string> cells{tr.id,
                                   tr.runtime.empty() ? "-" : tr.runtime,
                                   r.scenario    ? "application"
                                   : tr.held_out ? "held out"
                                                 : "calibration",
                                   core::format_seconds(m),
                                   core::format_seconds(r.bound_s) + (r.bound_s > m ? " ABOVE" : ""),
                                   core::format_seconds(r.predicted_s),
                                   fmt::format("{:+.1f}%", (r.predicted_s / m - 1) * 100)};
    nlohmann::json j{{"id", tr.id},
                     {"set", tr.held_out ? "held_out" : "calibration"},
                     {"device", tr.device},
                     {"runtime", tr.runtime},
                     {"uncalibrated_s", r.uncalibrated_s},
                     {"source", tr.source},
                     {"measured_s", m},
                     {"bound_s", r.bound_s},
                     {"predicted_s", r.predicted_s},
                     {"calibrated", r.calibrated},
                     {"scope", r.scenario ? "application" : "network"}};
    if (r.scenario) {
      nlohmann::json stages = nlohmann::json::array();
      for (std::size_t s = 0; s < r.stage_s.size(); ++s)
        stages.push_back({{"stage", r.scenario->stages[s].name},
                          {"unit", r.scenario->hardware.units[r.scenario->stages[s].unit].name},
                          {"predicted_s", r.stage_s[s]}});
      j["stages"] = stages;
      j["scenario"] = r.scenario->source_file;
    }
    if (tr.energy_J && r.predicted_J) {
      (tr.held_out ? energy_held : energy_cal).emplace_back(*r.predicted_J, *tr.energy_J);
      if (tr.held_out) {
        energy_held_file.emplace_back(*r.uncalibrated_J, *tr.energy_J);
        dev_energy[r.group].emplace_back(*r.predicted_J, *tr.energy_J);
        dev_energy_file[r.group].emplace_back(*r.uncalibrated_J, *tr.energy_J);
      }
      cells.push_back(core::format_joules(*tr.energy_J));
      cells.push_back(core::format_joules(*r.predicted_J));
      cells.push_back(fmt::format("{:+.1f}%", (*r.predicted_J / *tr.energy_J - 1) * 100));
      j["measured_J"] = *tr.energy_J;
      j["predicted_J"] = *r.predicted_J;
    } else {
      cells.insert(cells.end(), {"-", "-", ""});
    }
    t.add(cells);
    json_rows.push_back(j);
  }
  return t;
}

/// Per device, held-out error calibrated and with the file's roofs; the devices calibration made worse (it must
/// never).
struct ByDevice {
  nlohmann::json json = nlohmann::json::array();
  std::vector<std::string> worse;
  std::string text;
};

ByDevice held_out_by_device(Errors& e) {
  ByDevice out;
  auto& per_device = out.json;
  auto& worse = out.worse;
  auto& device_text = out.text;
  auto& dev_lat = e.dev_lat;
  auto& dev_lat_file = e.dev_lat_file;
  auto& dev_energy = e.dev_energy;
  auto& dev_energy_file = e.dev_energy_file;
  for (const auto& [device, pairs] : dev_lat) {
    const double cal = geomean_error(pairs), file = geomean_error(dev_lat_file[device]);
    nlohmann::json dj{{"device", device},
                      {"held_out_rows", pairs.size()},
                      {"latency_error", cal},
                      {"latency_error_uncalibrated", file}};
    std::string energy_text;
    if (dev_energy.count(device)) {
      const double ecal = geomean_error(dev_energy[device]), efile = geomean_error(dev_energy_file[device]);
      dj["energy_error"] = ecal;
      dj["energy_error_uncalibrated"] = efile;
      energy_text = fmt::format(", energy {} (file {})", core::format_number(ecal * 100, 3) + "%",
                                core::format_number(efile * 100, 3) + "%");
      if (ecal > efile + 1e-9) worse.push_back(device + " (energy)");
    }
    if (cal > file + 1e-9) worse.push_back(device + " (latency)");
    device_text +=
        fmt::format("  {}: {} held-out rows, latency {} (file {}){}\n", device, pairs.size(),
                    core::format_number(cal * 100, 3) + "%", core::format_number(file * 100, 3) + "%", energy_text);
    per_device.push_back(dj);
  }
  return out;
}

/// The report: a row per suite row, the geometric-mean errors, bias and spread, per device held-out errors
/// (text, or JSON with --json).
int report(const ValidateArgs& a, const trace::TotalsTable& table, const std::vector<Row>& rows, const Part& fits,
           const Part& loro) {
  const nlohmann::json& groups = fits.json;
  const std::string& fits_text = fits.text;
  const nlohmann::json& loro_json = loro.json;
  const std::string& loro_text = loro.text;
  Errors e;
  nlohmann::json json_rows = nlohmann::json::array();
  const analysis::Table t = tabulate(rows, e, json_rows);
  const auto& lat_cal = e.lat_cal;
  const auto& lat_held = e.lat_held;
  const auto& energy_cal = e.energy_cal;
  const auto& energy_held = e.energy_held;
  const auto& lat_held_file = e.lat_held_file;
  const auto& energy_held_file = e.energy_held_file;
  const auto& violations = e.violations;
  nlohmann::json summary{{"latency_geomean_error_calibration", geomean_error(lat_cal)},
                         {"latency_geomean_error_held_out", geomean_error(lat_held)},
                         {"energy_geomean_error_calibration", geomean_error(energy_cal)},
                         {"energy_geomean_error_held_out", geomean_error(energy_held)},
                         {"rows", rows.size()},
                         {"held_out_rows", lat_held.size()},
                         {"bound_above_measured", violations},
                         {"latency_geomean_error_held_out_uncalibrated", geomean_error(lat_held_file)},
                         {"energy_geomean_error_held_out_uncalibrated", geomean_error(energy_held_file)},
                         {"leave_one_runtime_out", loro_json},
                         {"application_rows", e.lat_app.size()},
                         {"application_bound_above_measured", e.app_violations},
                         {"latency_geomean_error_application", geomean_error(e.lat_app)},
                         {"latency_geomean_error_application_uncalibrated", geomean_error(e.lat_app_file)}};
  const ByDevice devices = held_out_by_device(e);
  const auto& per_device = devices.json;
  const auto& worse = devices.worse;
  const auto& device_text = devices.text;
  summary["held_out_by_device"] = per_device;
  summary["calibration_worse_than_file"] = worse;
  auto all_latency = lat_cal;
  all_latency.insert(all_latency.end(), lat_held.begin(), lat_held.end());
  const auto [bias, spread] = bias_and_spread(all_latency);
  const auto [held_bias, held_spread] = bias_and_spread(lat_held);
  summary["latency_bias"] = bias;
  summary["latency_spread_ln"] = spread;
  summary["latency_bias_held_out"] = held_bias;
  summary["latency_spread_ln_held_out"] = held_spread;
  if (a.json) {
    std::cout << nlohmann::json{{"suite", table.display_path},
                                {"rows", json_rows},
                                {"devices", groups},
                                {"summary", summary}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << fmt::format("framesim validate: {} ({} rows, {} held out, {} whole-application)\n\n", table.display_path,
                           rows.size(), lat_held.size(), e.lat_app.size());
  std::cout << t.render(2);
  std::cout << fmt::format("\nlatency geomean error: calibration {}, HELD OUT {}\n",
                           core::format_number(geomean_error(lat_cal) * 100, 3) + "%",
                           core::format_number(geomean_error(lat_held) * 100, 3) + "%");
  std::cout << fmt::format(
      "latency bias (geomean of predicted / measured - 1): all {:+.1f}% (spread {:.2f} in ln), "
      "held out {:+.1f}% (spread {:.2f})\n",
      bias * 100, spread, held_bias * 100, held_spread);
  if (!energy_cal.empty() || !energy_held.empty())
    std::cout << fmt::format("energy geomean error: calibration {}, HELD OUT {}\n",
                             core::format_number(geomean_error(energy_cal) * 100, 3) + "%",
                             core::format_number(geomean_error(energy_held) * 100, 3) + "%");
  std::cout << (violations.empty()
                    ? std::string(e.lat_app.empty() ? "bound <= measured on every row\n"
                                                    : "bound <= measured on every network-time row\n")
                    : fmt::format("BOUND ABOVE THE MEASUREMENT (impossible: a wrong input or model): {}\n",
                                  fmt::join(violations, ", ")));
  std::cout << fmt::format("held out with the files' roofs (no calibration): latency {}, energy {}\n",
                           core::format_number(geomean_error(lat_held_file) * 100, 3) + "%",
                           core::format_number(geomean_error(energy_held_file) * 100, 3) + "%");
  if (!e.lat_app.empty())
    std::cout << fmt::format(
        "\nwhole-application rows (pre/post-processing in the time; in no geomean above), predicted as their "
        "scenario's stages:\n{}  geomean error {} (the network stage with the file's roofs: {})\n",
        e.app_text, core::format_number(geomean_error(e.lat_app) * 100, 3) + "%",
        core::format_number(geomean_error(e.lat_app_file) * 100, 3) + "%");
  if (!e.app_violations.empty())
    std::cout << fmt::format("  BOUND ABOVE THE MEASUREMENT (impossible: a wrong input or model): {}\n",
                             fmt::join(e.app_violations, ", "));
  std::cout << "\nheld-out error by device, calibrated (and with the file's roofs):\n" << device_text;
  std::cout << (worse.empty() ? std::string("calibration never made a device's held-out rows worse\n")
                              : fmt::format("CALIBRATION MADE THESE WORSE: {}\n", fmt::join(worse, ", ")));
  if (!loro_text.empty()) std::cout << "\nleave one runtime out (fit on the device's other runtimes):\n" << loro_text;
  std::cout << fits_text;
  return 0;
}

int run_validate(const ValidateArgs& a) {
  const trace::TotalsTable table = trace::read_totals(a.suite);
  core::Diagnostics d;
  for (const auto& r : table.rows) {
    if (!r.hardware) d.add({table.display_path, r.line, 1}, "hardware", "a validation row names its hardware file");
    if (r.unit.empty()) d.add({table.display_path, r.line, 1}, "unit", "a validation row names its unit");
  }
  d.throw_if_any();
  Suite suite;
  load_suite(table, suite);
  const Part fits = fit_and_predict(suite);
  const Part loro = leave_one_runtime_out(suite);
  return report(a, table, suite.rows, fits, loro);
}

}  // namespace

Command add_validate_command(CLI::App& app) {
  auto args = std::make_shared<ValidateArgs>();
  auto* sub = app.add_subcommand("validate",
                                 "check input files without running them (validate FILE.yaml...), or predicted vs "
                                 "published measurements (validate [SUITE.csv]: calibrate on a suite's calibration "
                                 "rows, report the error of every row and the held-out geomean)");
  sub->add_option("files", args->arguments,
                  "input files (.yaml: hardware, network, scenario, sweep, runtime or map) to check without running "
                  "them, each with "
                  "every problem at file:line:column and key (exit code 2) or \"ok\"; or one validation suite CSV "
                  "(default tests/validation/suite.csv) to compare predictions with published measurements");
  set_completion_words(
      sub->add_option("--kind", args->kind,
                      "with input files: their kind (hardware, network, scenario, sweep, runtime, map) instead of "
                      "telling it from their top-level keys"),
      {"hardware", "network", "scenario", "sweep", "runtime", "map"});
  sub->add_flag("--json", args->json, "with a suite: print JSON instead of the text report");
  return {sub, [args] {
            const auto& files = args->arguments;
            if (!files.empty() && std::any_of(files.begin(), files.end(), is_input_file)) {
              if (!std::all_of(files.begin(), files.end(), is_input_file))
                throw core::UserError("validate: give input files (.yaml) or one suite (.csv), not both");
              if (args->json) throw core::UserError("validate --json: for a suite, not for input files");
              return check_input_files(files, args->kind);
            }
            if (!args->kind.empty()) throw core::UserError("validate --kind: for input files (.yaml), not for a suite");
            if (files.size() > 1) throw core::UserError("validate: give one suite (.csv), or input files (.yaml)");
            if (!files.empty()) args->suite = files.front();
            return run_validate(*args);
          }};
}

}  // namespace framesim::cli
