#include "slowdown.hpp"

#include <fmt/format.h>

#include "core/units.hpp"
#include "model/handoff.hpp"

namespace framesim::analysis {

using nlohmann::json;

Slowdown::Slowdown(const model::ScenarioSpec& spec, const model::StageFloors& floors)
    : spec_(spec), sums_(spec.stages.size()) {
  for (std::size_t s = 0; s < spec.stages.size(); ++s) {
    own_alone_s_.push_back(floors.floor_s(s, model::Roofs::effective));
    double side = 0;
    for (const auto& w : spec.stages[s].side_work) side += model::side_work_alone_s(spec, w);
    side_alone_s_.push_back(side);
  }
}

void Slowdown::on_stage(const engine::StageRecord& r) {
  Sums& s = sums_[r.stage];
  const double item = r.end_s - r.taken_s;
  s.items += 1;
  s.item_s += item;
  s.own_run_s += item - r.unit_wait_s - r.side_wait_s - r.side_run_s;
  s.side_s += r.side_wait_s + r.side_run_s;
  s.wait_s += r.unit_wait_s;
}

std::map<std::string, StageSlowdown> Slowdown::finish() const {
  std::map<std::string, StageSlowdown> out;
  for (std::size_t st = 0; st < sums_.size(); ++st) {
    const Sums& s = sums_[st];
    const double alone = own_alone_s_[st] + side_alone_s_[st];
    if (s.items <= 0 || alone <= 0) continue;
    const double n = s.items;
    out[spec_.stages[st].name] = {s.item_s / n / alone,
                                  (s.own_run_s / n - own_alone_s_[st]) / alone,
                                  (s.side_s / n - side_alone_s_[st]) / alone,
                                  s.wait_s / n / alone,
                                  alone,
                                  s.item_s / n};
  }
  return out;
}

std::string slowdown_text(const std::map<std::string, StageSlowdown>& slowdown) {
  if (slowdown.empty()) return "";
  std::string out = "slowdown against running alone (mean item / alone = 1 + bus + hand-off + wait):\n";
  for (const auto& [name, s] : slowdown)
    out += fmt::format("  {:<16} {:>6.3f} = 1 {:+.3f} bus {:+.3f} hand-off {:+.3f} wait   (alone {}, item {})\n", name,
                       s.slowdown, s.bus, s.handoff, s.wait, core::format_seconds(s.alone_s),
                       core::format_seconds(s.item_s));
  return out;
}

}  // namespace framesim::analysis
