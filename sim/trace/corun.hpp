// Co-run measurements: networks run together on named units, one network's latency (or throughput) alone and
// together per row. One CSV format, `#` comment lines allowed, a header naming the columns:
//
//   row,corun,unit,alone_latency,together_latency[,alone_qps,together_qps,source]
//   gpu_beside_dla,gpu=../networks/a.yaml;dla0=../networks/b.yaml,gpu,"2.47 ms","4.36 ms",
//
// corun: `unit=network` for every network that ran, separated by `;`, each network YAML relative to the
// table's folder, two or more networks on distinct units. unit: whose slowdown the row measured (one of the
// corun's units). Either both latencies (with their unit) or both throughputs (queries per second, a bare
// number) per row; the slowdown is together / alone latency, or alone / together throughput. row, source:
// text for reports.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace framesim::trace {

struct CorunEntry {
  std::string unit;
  std::filesystem::path network;  // resolved against the table's folder
};

struct CorunTableRow {
  int line = 0;  // in the table, for messages
  std::string id;
  std::vector<CorunEntry> members;  // two or more, distinct units
  std::size_t measured = 0;         // index into members: the row's `unit`
  double slowdown = 1;              // together / alone time per inference (> 0)
  std::string source;
};

struct CorunTable {
  std::string display_path;
  std::vector<CorunTableRow> rows;
};

/// Reads a co-run table for hardware whose units are `unit_names` (`hardware` names it in messages). Every
/// problem (unknown column or unit, a network file that does not exist, a co-run of one network, a missing or
/// non-positive latency or throughput) is collected and thrown together as core::UserError with
/// file:line:column and the column name.
CorunTable read_corun(const std::filesystem::path& path, const std::vector<std::string>& unit_names,
                      const std::string& hardware);

}  // namespace framesim::trace
