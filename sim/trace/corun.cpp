#include "trace/corun.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "core/files.hpp"
#include "core/text.hpp"
#include "csv_table.hpp"

namespace framesim::trace {

namespace {

const std::vector<std::string> kColumns{"row",       "corun",        "unit",  "alone_latency", "together_latency",
                                        "alone_qps", "together_qps", "source"};

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  return first == std::string::npos ? "" : s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

/// The `;`-separated entries of a corun cell, trimmed; an empty cell has none.
std::vector<std::string> entries(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size() && !trim(text).empty()) {
    const auto end = std::min(text.find(';', start), text.size());
    out.push_back(trim(text.substr(start, end - start)));
    start = end + 1;
  }
  return out;
}

}  // namespace

CorunTable read_corun(const std::filesystem::path& path, const std::vector<std::string>& unit_names,
                      const std::string& hardware) {
  CorunTable out;
  core::Diagnostics d;
  const NamedTable table =
      read_named_table(path, "row,corun,unit,alone_latency,together_latency", kColumns, {"corun", "unit"}, d);
  out.display_path = table.display_path;
  const auto& rows = table.rows;
  const core::CsvRow& header = rows.front();
  const auto& index = table.index;
  bool complete = table.complete;
  const bool latency = index.count("alone_latency") && index.count("together_latency");
  const bool qps = index.count("alone_qps") && index.count("together_qps");
  if (!latency && !qps) {
    d.add({out.display_path, header.line, 1}, "header",
          "no alone_latency and together_latency columns (or alone_qps and together_qps)");
    complete = false;
  }
  if (!complete) d.throw_if_any();
  const std::string units_text = core::join_list(unit_names, ", ");
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const core::CsvRow& row = rows[r];
    if (!has_header_width(row, header, out.display_path, d)) continue;
    auto cell = [&](const char* name) { return table.cell(row, name); };
    auto text = [&](const char* name) { return cell(name) ? cell(name)->text : std::string(); };
    auto add = [&](const char* column, std::string message) {
      d.add({out.display_path, row.line, cell(column)->column}, column, std::move(message));
    };
    auto known_unit = [&](const std::string& u) {
      return std::find(unit_names.begin(), unit_names.end(), u) != unit_names.end();
    };
    CorunTableRow t;
    t.line = row.line;
    t.id = text("row").empty() ? fmt::format("line {}", row.line) : text("row");
    t.source = text("source");
    bool ok = true;
    for (const std::string& entry : entries(text("corun"))) {
      const auto eq = entry.find('=');
      const std::string unit = trim(entry.substr(0, eq));
      const std::string file = eq == std::string::npos ? "" : trim(entry.substr(eq + 1));
      if (entry.empty() || eq == std::string::npos || unit.empty() || file.empty()) {
        add("corun", fmt::format("\"{}\" is not unit=network (e.g. gpu=../networks/a.yaml)", entry));
        ok = false;
        continue;
      }
      if (!known_unit(unit)) {
        add("corun", fmt::format("\"{}\" is not a unit of {}; it has {}", unit, hardware, units_text));
        ok = false;
      }
      for (const auto& m : t.members)
        if (m.unit == unit) {
          add("corun", fmt::format("unit \"{}\" twice: a co-run puts each network on its own unit", unit));
          ok = false;
        }
      const std::filesystem::path network = (table.folder / file).lexically_normal();
      if (!std::filesystem::is_regular_file(network)) {
        add("corun", fmt::format("network file \"{}\" does not exist ({})", file, network.generic_string()));
        ok = false;
      }
      t.members.push_back({unit, network});
    }
    if (ok && t.members.size() < 2) {
      add("corun", fmt::format("names {} network{}; a co-run needs two or more (gpu=a.yaml;dla0=b.yaml)",
                               t.members.size(), t.members.size() == 1 ? "" : "s"));
      ok = false;
    }
    const std::string measured = text("unit");
    const auto it = std::find_if(t.members.begin(), t.members.end(), [&](const auto& m) { return m.unit == measured; });
    if (it != t.members.end()) t.measured = static_cast<std::size_t>(it - t.members.begin());
    else if (!known_unit(measured)) {
      add("unit", fmt::format("\"{}\" is not a unit of {}; it has {}", measured, hardware, units_text));
      ok = false;
    } else if (ok) {
      add("unit", fmt::format("\"{}\" is not in this row's corun", measured));
      ok = false;
    }
    // Latencies when the row gives them, else throughputs.
    const bool row_latency = latency && !(text("alone_latency").empty() && text("together_latency").empty());
    const bool row_qps = qps && !(text("alone_qps").empty() && text("together_qps").empty());
    if (row_latency && row_qps) {
      const char* given = text("alone_qps").empty() ? "together_qps" : "alone_qps";
      add(given,
          "the row gives both latencies and throughputs: a co-run row measures one of them (empty the "
          "alone_qps and together_qps cells, or the latency cells)");
      continue;
    }
    const char* alone_column = row_latency ? "alone_latency" : "alone_qps";
    const char* together_column = row_latency ? "together_latency" : "together_qps";
    std::optional<double> values[2];
    const char* columns[2] = {alone_column, together_column};
    for (int i = 0; i < 2; ++i) {
      if (!cell(columns[i])) continue;
      values[i] =
          row_latency
              ? read_cell(*cell(columns[i]), row.line, 0, core::Dimension::Seconds, columns[i], out.display_path, d)
              : read_cell(*cell(columns[i]), row.line, 1, core::Dimension::Hertz, columns[i], out.display_path, d);
      if (values[i] && *values[i] <= 0) {
        add(columns[i], fmt::format("must be positive, got \"{}\"", cell(columns[i])->text));
        values[i].reset();
      }
    }
    if (!ok || !values[0] || !values[1]) continue;
    t.slowdown = row_latency ? *values[1] / *values[0] : *values[0] / *values[1];
    out.rows.push_back(std::move(t));
  }
  if (out.rows.empty() && d.empty()) d.add({out.display_path, header.line, 1}, "", "no rows after the header");
  d.throw_if_any();
  return out;
}

}  // namespace framesim::trace
