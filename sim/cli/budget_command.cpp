// `framesim budget HW NETWORK`: the seed's fifteen-minute budget as one report.
#include <filesystem>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "budget_report.hpp"
#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/console.hpp"
#include "config/hardware.hpp"
#include "config/input_kind.hpp"
#include "config/network.hpp"
#include "config/runtime.hpp"
#include "config/schema.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "json_text.hpp"
#include "model/budget.hpp"
#include "model/placement.hpp"
#include "model/plan.hpp"
#include "model/runtime.hpp"
#include "trace/import.hpp"
#include "trace/measured.hpp"

namespace framesim::cli {

namespace {

/// Where the layers of `net` run when a stage puts it on `unit`: for a unit with capabilities, which layers it
/// runs, which fall back (to which unit, why) and the hand-overs that costs. Empty for a unit without them.
struct Placement {
  std::string text;
  nlohmann::json json;
};

Placement placement_of(const model::HardwareSpec& hw, const model::NetworkSpec& net, std::size_t unit) {
  Placement out;
  const auto& u = hw.units[unit];
  if (!u.capabilities) return out;
  const auto placed = model::place_layers(hw, net, unit, {});
  if (!placed.problems.empty()) {
    out.text = fmt::format("\n   placement on {}: refused\n", u.name);
    for (const auto& p : placed.problems) out.text += "     " + p + "\n";
    out.json = {{"unit", u.name}, {"problems", placed.problems}};
    return out;
  }
  std::size_t fell = 0;
  nlohmann::json fallbacks = nlohmann::json::array();
  std::string rows;
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    if (!placed.fell_back[i]) continue;
    ++fell;
    const auto& layer = net.layers[i];
    const auto why = model::refusal(u, net, layer).value_or("");
    const auto& to = hw.units[placed.unit_of_layer[i]].name;
    rows += fmt::format("     {:<5} {:<24} {:<12} -> {:<6} {}\n", i, layer.name, layer.op, to, why);
    fallbacks.push_back({{"index", i}, {"layer", layer.name}, {"op", layer.op}, {"to", to}, {"reason", why}});
  }
  const auto parts = model::cut_network(net, placed.unit_of_layer);
  double handover_bytes = 0;
  for (const auto& p : parts) handover_bytes += p.handover_in_bytes;
  out.text = fmt::format("\n   placement on {} (its capabilities): {} of {} layers run on {}", u.name,
                         net.layers.size() - fell, net.layers.size(), u.name);
  if (fell == 0) {
    out.text += "; none falls back\n";
  } else {
    out.text += fmt::format(
        "; {} fall{} back to {}, in {} parts ({} hand-over{}, {} handed over in all; the "
        "estimate above is every layer on {})\n",
        fell, fell == 1 ? "s" : "", hw.units[*u.capabilities->fallback].name, parts.size(), parts.size() - 1,
        parts.size() == 2 ? "" : "s", core::format_bytes(handover_bytes), u.name);
    out.text += fmt::format("     {:<5} {:<24} {:<12}    {:<6} {}\n", "layer", "name", "op", "to", "why") + rows;
  }
  nlohmann::json part_list = nlohmann::json::array();
  for (const auto& p : parts)
    part_list.push_back({{"unit", hw.units[p.unit].name},
                         {"first_layer", p.first_layer},
                         {"end_layer", p.end_layer},
                         {"handover_in_bytes", p.handover_in_bytes}});
  out.json = {{"unit", u.name},
              {"layers", net.layers.size()},
              {"on_unit", net.layers.size() - fell},
              {"fallbacks", fallbacks},
              {"parts", part_list}};
  return out;
}

}  // namespace

// The options budget shares with other commands (commands.hpp).

double option_quantity(const std::string& option, const std::string& text, int dimension) {
  auto q = core::parse_quantity(text, static_cast<core::Dimension>(dimension));
  if (!q.value) throw core::UserError(fmt::format("{}: {}", option, q.error));
  if (*q.value <= 0) throw core::UserError(fmt::format("{}: must be positive, got \"{}\"", option, text));
  return *q.value;
}

model::LayerPrecision option_precision(const std::string& text) {
  auto p = model::parse_layer_precision(text);
  if (!p) {
    throw core::UserError(fmt::format("--precision: \"{}\" is not a precision; use one of {} or wXaY like w4a16", text,
                                      core::join_list(model::precision_names(), ", ")));
  }
  return *p;
}

std::size_t option_unit(const model::HardwareSpec& hw, const std::vector<const model::NetworkSpec*>& networks,
                        const std::string& wanted) {
  std::size_t index = 0;
  if (!wanted.empty()) {
    auto u = hw.find_unit(wanted);
    if (!u) {
      std::vector<std::string> names;
      for (const auto& unit : hw.units) names.push_back(unit.name);
      std::string message = fmt::format("--unit: {} has no unit \"{}\"", hw.source_file, wanted);
      if (auto near = core::closest_match(wanted, names)) message += fmt::format(" (did you mean \"{}\"?)", *near);
      else message += fmt::format("; units: {}", core::join_list(names, ", "));
      throw core::UserError(message);
    }
    index = *u;
  } else {
    // Default: the first unit with a roof for every precision the networks compute in.
    auto has_all_roofs = [&](const model::ComputeUnitSpec& unit) {
      for (const auto* net : networks)
        if (!model::missing_roofs(*net, unit).empty()) return false;
      return true;
    };
    for (std::size_t u = 0; u < hw.units.size(); ++u) {
      if (has_all_roofs(hw.units[u])) {
        index = u;
        break;
      }
    }
  }
  const auto& unit = hw.units[index];
  for (const auto* net : networks) {
    const auto missing = model::missing_roofs(*net, unit);
    if (missing.empty()) continue;
    std::vector<std::string> have, need;
    for (auto p : model::kAllPrecisions)
      if (unit.peak_ops_per_s[p]) have.emplace_back(model::precision_name(p));
    for (auto p : missing) need.emplace_back(model::precision_name(p));
    throw core::UserError(fmt::format(
        "{} computes in {} but unit \"{}\" of {} has roofs only for {}: choose another --unit or --precision",
        net->source_file, core::join_list(need, ", "), unit.name, hw.source_file, core::join_list(have, ", ")));
  }
  return index;
}

std::size_t option_operating_point(const model::ComputeUnitSpec& unit, const std::string& text) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < unit.operating_points.size(); ++i) {
    if (unit.operating_points[i].name == text) return i;
    names.push_back(unit.operating_points[i].name);
  }
  throw core::UserError(fmt::format("--operating-point: unit \"{}\" has no operating point \"{}\"; it has {}",
                                    unit.name, text, core::join_list(names, ", ")));
}

std::string measured_formats_help() {
  std::vector<std::string> names;
  for (const auto& row : trace::measured_formats()) names.emplace_back(row.name);
  return core::join_list(names, ", ") + " (told apart by content; traces/README.md)";
}

namespace {

struct BudgetArgs {
  std::string hardware;
  std::string network;
  std::string unit;
  std::string precision;
  std::string slice;
  std::string rate;
  std::string operating_point;
  std::string measured;
  std::string svg;
  std::string html;
  std::string runtime;  // a runtime profile laid over the hardware file (model/runtime.hpp)
  std::vector<std::string> compare;
  std::vector<std::string> inputs;
  bool json = false;
  bool no_fusion = false;
  bool strict = false;
};

constexpr const char* kUsage = "framesim budget HARDWARE.yaml NETWORK.yaml (a scenario runs with framesim run)";

/// Budget takes a hardware file and a network: a scenario (or a file of another kind) given in their place is
/// named as such, with the command line that does work, rather than its keys refused one by one.
/// The kind of a YAML file, or "" when it cannot be told (its loader then says what is wrong, key by key).
std::string kind_if_known(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) return "";
  try {
    return config::input_kind(path);
  } catch (const core::UserError&) {
    return "";
  }
}

void check_budget_inputs(const BudgetArgs& a) {
  const std::string hw_kind = kind_if_known(a.hardware);
  if (hw_kind == "network" && kind_if_known(a.network) == "hardware")
    throw core::UserError(fmt::format("{} is a network and {} a hardware file: the hardware comes first: {}",
                                      a.hardware, a.network, kUsage));
  if (!hw_kind.empty() && hw_kind != "hardware")
    throw core::UserError(fmt::format("{}: a {} file, not a hardware file: {}", a.hardware, hw_kind, kUsage));
  const auto ext = std::filesystem::path(a.network).extension();
  if (ext == ".yaml" || ext == ".yml") {
    const std::string net_kind = kind_if_known(a.network);
    if (!net_kind.empty() && net_kind != "network")
      throw core::UserError(fmt::format("{}: a {} file, not a network file: {}", a.network, net_kind, kUsage));
  }
}

int run_budget(const BudgetArgs& a) {
  check_budget_inputs(a);
  model::HardwareSpec hw = config::load_hardware(a.hardware);
  if (!a.runtime.empty()) hw = model::apply_runtime(hw, config::load_runtime(a.runtime));
  // A network YAML, or a model file imported on the fly (as `framesim import` would).
  model::NetworkSpec net;
  const auto ext = std::filesystem::path(a.network).extension();
  if (ext == ".onnx" || ext == ".tflite") {
    trace::ImportOptions import;
    for (const auto& i : a.inputs) import.input_shapes.insert(parse_input(i));
    auto imported = trace::import_model(a.network, import);
    std::vector<std::string> lines;
    for (const auto& w : imported.warnings) lines.push_back("warning: " + w);
    print_warnings(lines);
    net = std::move(imported.network);
  } else {
    if (!a.inputs.empty())
      throw core::UserError("--input: gives shapes to a model file (.onnx, .tflite), not to a network YAML");
    net = config::load_network(a.network);
  }
  if (!a.precision.empty()) net = model::with_precision(net, option_precision(a.precision));
  if (a.no_fusion) net.fusion = model::FusionMode::none;
  model::BudgetOptions options;
  options.unit = option_unit(hw, {&net}, a.unit);
  const auto& unit = hw.units[options.unit];
  if (!a.operating_point.empty()) options.run.operating_point = option_operating_point(unit, a.operating_point);
  if (!a.slice.empty())
    options.slice_s = option_quantity("--slice", a.slice, static_cast<int>(core::Dimension::Seconds));
  if (!a.rate.empty()) options.rate_Hz = option_quantity("--rate", a.rate, static_cast<int>(core::Dimension::Hertz));
  std::vector<std::string> measured_notes;  // the format read and how its names were matched
  if (!a.measured.empty()) {
    const auto trace = trace::read_measured_trace(a.measured);
    const auto matched = trace::match_measurements(trace, net);
    const auto verdict = trace::judge_match(trace, matched, net);
    if (verdict.error) throw core::UserError("--measured: " + *verdict.error);
    if (verdict.warning) report_warnings({core::Diagnostic{{}, "--measured", *verdict.warning}}, a.strict);
    options.measured = matched.measurements;
    measured_notes = matched.notes;
  }
  if (!a.compare.empty()) {
    const auto plan = model::plan_network(net, hw, options.unit);
    std::vector<std::string> names;
    for (const auto& k : plan.kernels) names.push_back(k.name);
    for (const auto& l : net.layers) names.push_back(l.name);
    for (const auto& pair : a.compare) {
      const auto comma = pair.find(',');
      if (comma == std::string::npos || comma == 0 || comma + 1 == pair.size())
        throw core::UserError(fmt::format("--compare: expected two kernel or layer names as A,B, got \"{}\"", pair));
      const std::string first = pair.substr(0, comma), second = pair.substr(comma + 1);
      for (const auto& name : {first, second}) {
        if (model::find_kernel(plan, net, name)) continue;
        std::string message = fmt::format("--compare: {} has no kernel or layer \"{}\"", net.source_file, name);
        if (auto near = core::closest_match(name, names)) message += fmt::format(" (did you mean \"{}\"?)", *near);
        throw core::UserError(message);
      }
      options.compare.emplace_back(first, second);
    }
  }

  const model::BudgetReport report = model::make_budget(hw, net, options);
  const Placement placement = placement_of(hw, net, options.unit);
  // Everything is validated: now write.
  // Both or neither: a full disk leaves no SVG without its HTML.
  std::vector<std::pair<std::filesystem::path, std::string>> files;
  if (!a.svg.empty()) files.emplace_back(a.svg, analysis::roofline_svg(report, hw, net));
  if (!a.html.empty()) files.emplace_back(a.html, analysis::budget_html(report, hw, net));
  core::write_files_atomic(files);
  if (a.json) {
    auto j = analysis::budget_json(report, hw, net);
    if (!placement.json.is_null()) j["placement"] = placement.json;
    j["runtime"] =
        hw.runtime.empty() ? nlohmann::json(nullptr) : nlohmann::json{{"name", hw.runtime}, {"file", hw.runtime_file}};
    std::cout << analysis::json_text(j) << "\n";
  } else {
    // Which runtime the estimates are for; the bounds hold for every runtime.
    if (!hw.runtime.empty())
      std::cout << fmt::format("runtime profile: {}: the estimates are this runtime's; the bounds hold for any\n",
                               model::runtime_label(hw));
    std::cout << analysis::budget_text(report, hw, net) << placement.text;
  }
  if (!a.json && !measured_notes.empty()) {
    std::cout << "\n   measured (" << a.measured << "):\n";
    for (const auto& n : measured_notes) std::cout << "     " << n << "\n";
  }
  return 0;
}

}  // namespace

std::optional<std::string> budget_missing_argument(const CLI::App& app) {
  const auto subs = app.get_subcommands([](const CLI::App* c) { return c->get_name() == "budget" && c->parsed(); });
  if (subs.empty()) return std::nullopt;
  const CLI::App* sub = subs.front();
  const auto* hardware = sub->get_option_no_throw("hardware");
  if (hardware == nullptr || hardware->count() == 0) return std::nullopt;
  BudgetArgs given;
  given.hardware = hardware->as<std::string>();
  try {
    check_budget_inputs(given);  // a scenario or a network in the hardware's place
  } catch (const core::UserError& e) {
    return e.diagnostics().front().to_string();
  }
  return fmt::format("framesim budget: the network file is missing: {}", kUsage);
}

Command add_budget_command(CLI::App& app) {
  auto args = std::make_shared<BudgetArgs>();
  auto* sub = app.add_subcommand("budget",
                                 "the fifteen-minute budget: roofline bounds, the floor against the slice, "
                                 "fusion, the energy floor");
  sub->add_option("hardware", args->hardware, "hardware YAML (hardware/*.yaml)")->required();
  sub->add_option("network", args->network,
                  "network YAML (scenarios/networks/*.yaml), or a model file (.onnx, .tflite)")
      ->required();
  sub->add_option("--input", args->inputs, "shape of a model file's dynamic input: NAME=1x3x224x224 (repeatable)");
  sub->add_option("--unit", args->unit, "compute unit to run on (default: the first with the network's precisions)");
  set_completion_words(
      sub->add_option("--precision", args->precision, "run every layer at this precision (fp16, int8, w4a16, ...)"),
      config::schema::placeholder_names("<precision>").value_or(std::vector<std::string>{}));
  sub->add_option("--slice", args->slice, "the model's share of the frame, e.g. 12ms");
  sub->add_option("--rate", args->rate, "inferences per second, e.g. 30Hz (for watts)");
  sub->add_option("--operating-point", args->operating_point, "the unit's operating point (default: nominal)");
  sub->add_option(
      "--measured", args->measured,
      "measured layer times for the diagnosis, or a whole-network time named total: " + measured_formats_help());
  sub->add_flag("--json", args->json, "print JSON instead of the text report");
  sub->add_flag("--strict", args->strict, "warnings (e.g. measured names that match no layer) are errors");
  sub->add_option("--svg", args->svg, "write the stacked roofline with every kernel to this SVG file");
  sub->add_option("--html", args->html,
                  "write report.html: the verdict, the roofline and the kernels, one offline file");
  sub->add_flag("--no-fusion", args->no_fusion, "run every layer as its own kernel");
  sub->add_option("--runtime", args->runtime,
                  "a runtime profile (hardware/runtimes/*.yaml) laid over the hardware file: the runtime's "
                  "efficiencies, launch cost, fusion and weight placement; the report names it");
  sub->add_option("--compare", args->compare, "set two kernels or layers side by side: A,B (repeatable)");
  return {sub, [args] { return run_budget(*args); }};
}

}  // namespace framesim::cli
