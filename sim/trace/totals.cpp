#include "trace/totals.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/files.hpp"
#include "core/text.hpp"
#include "csv_table.hpp"
#include "model/precision.hpp"

namespace framesim::trace {

namespace {

const std::vector<std::string> kColumns{
    "network", "precision", "operating_point", "latency", "energy", "hardware", "unit", "set", "id",
    "device",  "mode",      "source",          "runtime", "scope",  "stages"};

}  // namespace

TotalsTable read_totals(const std::filesystem::path& path) {
  TotalsTable out;
  core::Diagnostics d;
  const NamedTable table =
      read_named_table(path, "network,precision,operating_point,latency", kColumns, {"network", "latency"}, d);
  out.display_path = table.display_path;
  const auto& rows = table.rows;
  const core::CsvRow& header = rows.front();
  if (!table.complete) d.throw_if_any();  // rows cannot be read without them; anything else is reported with the rows
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const core::CsvRow& row = rows[r];
    if (!has_header_width(row, header, out.display_path, d)) continue;
    auto cell = [&](const char* name) { return table.cell(row, name); };
    auto text = [&](const char* name) { return cell(name) ? cell(name)->text : std::string(); };
    TotalRow t;
    t.line = row.line;
    t.id = text("id");
    if (text("network").empty())
      d.add({out.display_path, row.line, cell("network")->column}, "network", "empty: name a network file");
    t.network = (table.folder / text("network")).lexically_normal();
    t.precision = text("precision");
    if (!t.precision.empty() && !model::parse_layer_precision(t.precision))
      d.add({out.display_path, row.line, cell("precision")->column}, "precision",
            fmt::format("\"{}\" is not a precision; use one of {} or wXaY like w4a16, or leave it empty for the "
                        "network's own",
                        core::quote_capped(t.precision), core::join_list(model::precision_names(), ", ")));
    if (const auto* op = cell("operating_point"); op && !op->text.empty()) {
      const auto hz = core::parse_quantity(op->text, core::Dimension::Hertz);
      if (hz.value) t.clock_Hz = *hz.value;
      else t.operating_point = op->text;
    }
    if (auto v = read_cell(*cell("latency"), row.line, 0, core::Dimension::Seconds, "latency", out.display_path, d)) {
      if (*v <= 0) d.add({out.display_path, row.line, cell("latency")->column}, "latency", "must be positive");
      t.latency_s = *v;
    }
    if (const auto* e = cell("energy"); e && !e->text.empty()) {
      t.energy_J = read_cell(*e, row.line, 0, core::Dimension::Joules, "energy", out.display_path, d);
      if (t.energy_J && *t.energy_J <= 0) d.add({out.display_path, row.line, e->column}, "energy", "must be positive");
    }
    if (!text("hardware").empty()) t.hardware = (table.folder / text("hardware")).lexically_normal();
    t.unit = text("unit");
    const std::string set = text("set");
    if (set == "held_out") t.held_out = true;
    else if (!set.empty() && set != "calibration")
      d.add({out.display_path, row.line, cell("set")->column}, "set",
            fmt::format("\"{}\" is not a set; allowed: calibration, held_out", set));
    t.device = text("device");
    t.mode = text("mode");
    t.source = text("source");
    t.runtime = text("runtime");
    const std::string scope = text("scope");
    if (scope == "application") t.application = true;
    else if (!scope.empty() && scope != "network")
      d.add({out.display_path, row.line, cell("scope")->column}, "scope",
            fmt::format("\"{}\" is not a scope; allowed: network, application", core::quote_capped(scope)));
    if (!text("stages").empty()) t.stages = (table.folder / text("stages")).lexically_normal();
    if (t.application && !t.stages)
      d.add({out.display_path, row.line, cell("scope") ? cell("scope")->column : 1}, "stages",
            "a whole-application row names the scenario of its stages (pre- and post-processing beside the network)");
    if (!t.application && t.stages)
      d.add({out.display_path, row.line, cell("stages")->column}, "stages", "only for scope application");
    if (t.application && !t.held_out && !set.empty())
      d.add({out.display_path, row.line, cell("set")->column}, "set",
            "a whole-application row is never fitted on: set held_out (its time is not the network's alone)");
    if (t.application) t.held_out = true;
    if (t.id.empty()) t.id = t.network.stem().string();
    out.rows.push_back(std::move(t));
  }
  if (out.rows.empty() && d.empty()) d.add({out.display_path, header.line, 1}, "", "no rows after the header");
  d.throw_if_any();
  return out;
}

}  // namespace framesim::trace
