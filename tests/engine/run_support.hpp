// Runs `framesim run` on scenario text in a fresh process (SimGrid allows one simulation per process) and
// reads the run folder back: CSV tables by column name, summary.json.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/csv.hpp"
#include "core/files.hpp"

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

/// A scratch folder per test, removed at the end.
class Scratch {
 public:
  Scratch() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("framesim-") + info->test_suite_name() + "-" + info->name() + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~Scratch() { std::filesystem::remove_all(dir_); }
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const auto p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

struct RunResult {
  int exit_code = -1;
  std::string output;
  std::filesystem::path folder;
  nlohmann::json summary;
  Table frames, stages, kernels, timeseries;
};

/// Runs `framesim run SCENARIO -o FOLDER -q EXTRA` and loads what it wrote.
inline RunResult run_framesim(const std::filesystem::path& scenario, const std::filesystem::path& folder,
                              const std::string& extra = "") {
  RunResult r;
  r.folder = folder;
  const std::string log = folder.string() + ".log";
  const std::string cmd = std::string("'") + FRAMESIM_BINARY + "' run '" + scenario.string() + "' -o '" +
                          folder.string() + "' -q " + extra + " > '" + log + "' 2>&1";
  const int status = std::system(cmd.c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.output = core::read_file(log);
  if (r.exit_code != 0) return r;
  r.summary = nlohmann::json::parse(core::read_file(folder / "summary.json"));
  r.frames = read_table(folder / "frames.csv");
  r.stages = read_table(folder / "stages.csv");
  r.kernels = read_table(folder / "kernels.csv");
  r.timeseries = read_table(folder / "timeseries.csv");
  return r;
}

}  // namespace framesim::testing
