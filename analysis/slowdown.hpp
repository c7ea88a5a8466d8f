// Each stage's mean slowdown against running alone, and where it came from (summary.json "slowdown", the
// terminal summary). Per counted item of a stage (engine::StageRecord):
//   alone      its own work alone on an idle SoC at the nominal clocks (ScenarioSpec::stage_floor_s, the
//              budget's estimate) plus each of its side jobs alone (model::side_work_alone_s)
//   item       end - taken: from leaving the queue to its end = own job (waiting + running) + side jobs
//              (waiting + running)
//   bus        own job running - own work alone: its memory time stretched by the others (with the stall of
//              imperfect overlap), or a slower clock
//   handoff    side jobs (waiting for their units + running) - their time alone: its hand-off work on
//              other units, and the queue it finds there
//   wait       own job waiting for its unit (release -> hold, and blocked): scheduling, e.g. others' side
//              work on its unit
// so that mean(item) / alone = 1 + bus + handoff + wait, each part a mean over the items divided by alone.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/records.hpp"
#include "model/scenario.hpp"
#include "run_details.hpp"

namespace framesim::analysis {

class Slowdown {
 public:
  /// `floors`: the stages' floors (of `spec`).
  Slowdown(const model::ScenarioSpec& spec, const model::StageFloors& floors);
  /// A counted item of a stage.
  void on_stage(const engine::StageRecord& r);
  /// Every stage with work and counted items, by name.
  std::map<std::string, StageSlowdown> finish() const;

 private:
  struct Sums {
    double items = 0, item_s = 0, own_run_s = 0, side_s = 0, wait_s = 0;
  };
  const model::ScenarioSpec& spec_;
  std::vector<double> own_alone_s_, side_alone_s_;  // per stage
  std::vector<Sums> sums_;
};

/// Lines of the terminal summary for summary.json's "slowdown" (empty when it has none).
std::string slowdown_text(const std::map<std::string, StageSlowdown>& slowdown);

}  // namespace framesim::analysis
