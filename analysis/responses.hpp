// Response times of periodic tasks (release -> completion, against each task's deadline; tasks.csv) and the
// cause-effect chains' data age and reaction time (the automotive definitions: the age of the sensor sample
// behind an actuation; the time from a sample to the first actuation that reflects it or a newer one).
#pragma once

#include <filesystem>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/records.hpp"
#include "model/scenario.hpp"
#include "run_details.hpp"
#include "stats.hpp"

namespace framesim::analysis {

class Responses {
 public:
  /// Writes tasks.csv into `folder` (nothing when it is empty: no run folder).
  Responses(const model::ScenarioSpec& spec, const std::filesystem::path& folder);

  void on_task(const engine::TaskRecord& r);
  void on_chain(const engine::ChainRecord& r);
  /// Every sensor capture (for reaction times): in capture order per sensor.
  void on_capture(std::size_t sensor, double capture_s);

  /// summary.json's "tasks" and "chains".
  struct Result {
    std::map<std::string, TaskDetails> tasks;
    std::map<std::string, ChainDetails> chains;
  };
  /// Closes tasks.csv; `busy_core_s` per task from the totals.
  Result finish(const std::vector<double>& task_busy_core_s, double end_s);

 private:
  bool counted(double t_s) const { return t_s >= spec_.warmup_s; }
  double task_deadline_s(std::size_t t) const;

  const model::ScenarioSpec& spec_;
  std::filesystem::path folder_;  // the run folder, for messages
  std::ofstream tasks_csv_;
  std::vector<Samples> response_s_;          // per task, counted releases
  std::vector<std::int64_t> jobs_, missed_;  // per task, counted releases
  std::vector<std::int64_t> unfinished_;     // per task, counted releases still pending at the end
  std::vector<Samples> data_age_s_;          // per chain
  struct Actuation {
    double time_s, capture_s;
  };
  std::vector<std::vector<Actuation>> actuations_;  // per chain, in time order
  std::vector<std::vector<double>> captures_s_;     // per sensor that starts a chain
};

}  // namespace framesim::analysis
