// Runs `framesim run` on scenario text in a fresh process (SimGrid allows one simulation per process) and
// reads the run folder back: CSV tables by column name, summary.json.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/csv.hpp"
#include "core/files.hpp"
#include "test_support.hpp"

namespace framesim::testing {

/// A CSV table: rows of column -> text.
struct Table {
  std::vector<std::map<std::string, std::string>> rows;
  double number(std::size_t row, const std::string& column) const { return std::stod(rows.at(row).at(column)); }
  std::vector<std::map<std::string, std::string>> where(const std::string& column, const std::string& value) const {
    std::vector<std::map<std::string, std::string>> out;
    for (const auto& r : rows)
      if (r.at(column) == value) out.push_back(r);
    return out;
  }
};

inline Table read_table(const std::filesystem::path& path) {
  const auto rows = core::parse_csv(core::read_file(path));
  Table t;
  if (rows.empty()) return t;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    std::map<std::string, std::string> r;
    for (std::size_t c = 0; c < rows[0].cells.size() && c < rows[i].cells.size(); ++c)
      r[rows[0].cells[c].text] = rows[i].cells[c].text;
    t.rows.push_back(std::move(r));
  }
  return t;
}

struct RunResult {
  int exit_code = -1;
  std::string output;  // what it printed, stdout then stderr
  std::filesystem::path folder;
  nlohmann::json summary;
  Table frames, stages, kernels, timeseries, tasks;
};

/// Runs `framesim run SCENARIO -o FOLDER -q EXTRA` and loads what it wrote.
inline RunResult run_framesim(const std::filesystem::path& scenario, const std::filesystem::path& folder,
                              const std::string& extra = "") {
  RunResult r;
  r.folder = folder;
  const CliRun run = run_cli("run '" + scenario.string() + "' -o '" + folder.string() + "' -q " + extra);
  r.exit_code = run.exit_code;
  r.output = run.out + run.err;
  if (r.exit_code != 0) return r;
  r.summary = nlohmann::json::parse(core::read_file(folder / "summary.json"));
  r.frames = read_table(folder / "frames.csv");
  r.stages = read_table(folder / "stages.csv");
  r.kernels = read_table(folder / "kernels.csv");
  r.timeseries = read_table(folder / "timeseries.csv");
  r.tasks = read_table(folder / "tasks.csv");
  return r;
}

}  // namespace framesim::testing
