#include "responses.hpp"

#include <cerrno>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "run_summary.hpp"

namespace framesim::analysis {

using nlohmann::json;

namespace {
std::string num(double v) { return fmt::format("{}", v); }
}  // namespace

Responses::Responses(const model::ScenarioSpec& spec, const std::filesystem::path& folder)
    : spec_(spec),
      response_s_(spec.tasks.size()),
      jobs_(spec.tasks.size(), 0),
      missed_(spec.tasks.size(), 0),
      unfinished_(spec.tasks.size(), 0),
      data_age_s_(spec.chains.size()),
      actuations_(spec.chains.size()),
      captures_s_(spec.sensors.size()) {
  folder_ = folder;
  if (folder.empty()) return;  // no run folder: no tasks.csv
  errno = 0;
  tasks_csv_.open(folder / "tasks.csv", std::ios::binary | std::ios::trunc);
  if (!tasks_csv_)
    throw core::UserError(fmt::format("{}: cannot write: {}", (folder / "tasks.csv").string(),
                                      core::write_failure_reason(folder, errno)));
  tasks_csv_ << "task,job,release_s,start_s,end_s,wait_s,response_s,blocked_s,deadline_met,energy_J,finished\n";
}

double Responses::task_deadline_s(std::size_t t) const {
  return spec_.tasks[t].deadline_s.value_or(1.0 / spec_.tasks[t].rate_Hz);
}

// A job still pending when the run ended (a drain limit) is written with the run's end as its end and counted:
// a miss once that response exceeds its deadline. Its response so far is not a response: it stays out of the
// distribution.
void Responses::on_task(const engine::TaskRecord& r) {
  const double response = r.end_s - r.release_s;
  const bool met = response <= task_deadline_s(r.task);
  const std::string start = r.start_s < 0 ? std::string() : num(r.start_s);
  const std::string wait = r.start_s < 0 ? std::string() : num(r.start_s - r.release_s);
  if (!folder_.empty())
    tasks_csv_ << spec_.tasks[r.task].name << "," << r.job << "," << num(r.release_s) << "," << start << ","
               << num(r.end_s) << "," << wait << "," << num(response) << "," << num(r.blocked_s) << "," << (met ? 1 : 0)
               << "," << num(r.energy_J) << "," << (r.finished ? 1 : 0) << "\n";
  if (!counted(r.release_s)) return;
  ++jobs_[r.task];
  if (!met) ++missed_[r.task];
  if (r.finished) response_s_[r.task].add(response);
  else ++unfinished_[r.task];
}

void Responses::on_chain(const engine::ChainRecord& r) {
  actuations_[r.chain].push_back({r.actuation_s, r.capture_s});
  if (counted(r.capture_s)) data_age_s_[r.chain].add(r.actuation_s - r.capture_s);
}

void Responses::on_capture(std::size_t sensor, double capture_s) {
  bool starts_chain = false;
  for (const auto& c : spec_.chains) starts_chain = starts_chain || c.sensor == sensor;
  if (starts_chain) captures_s_[sensor].push_back(capture_s);
}

Responses::Result Responses::finish(const std::vector<double>& task_busy_core_s, double end_s) {
  errno = 0;
  if (!folder_.empty()) tasks_csv_.close();
  if (!folder_.empty() && !tasks_csv_)
    throw core::UserError(fmt::format("{}: cannot write: {}", (folder_ / "tasks.csv").string(),
                                      core::write_failure_reason(folder_, errno)));
  Result out;
  for (std::size_t t = 0; t < spec_.tasks.size(); ++t) {
    const auto& ts = spec_.tasks[t];
    TaskDetails& task = out.tasks[ts.name];
    task.rate_Hz = ts.rate_Hz;
    task.priority = ts.priority;
    task.deadline_s = task_deadline_s(t);
    if (ts.unit) {
      task.unit = spec_.hardware.units[*ts.unit].name;
      task.jobs = jobs_[t];
      task.missed = missed_[t];
      task.unfinished = unfinished_[t];
      task.response_s = stat_block(response_s_[t].summary());
      const int cores = ts.cores > 0 ? ts.cores : spec_.hardware.units[*ts.unit].cores;
      task.busy_fraction = end_s > 0 ? task_busy_core_s[t] / (cores * end_s) : 0.0;
    }
  }
  for (std::size_t c = 0; c < spec_.chains.size(); ++c) {
    const auto& chain = spec_.chains[c];
    // Reaction: each counted sample of the chain's sensor reacts at the first actuation (in time order) whose
    // sample is at least as new. An actuation that reflects sample c reflects every older one too, so the
    // samples still waiting are always a suffix of the captures: one pass.
    Samples reaction_s;
    const auto& captures = captures_s_[chain.sensor];
    std::size_t next = 0;
    for (const auto& a : actuations_[c]) {
      while (next < captures.size() && captures[next] <= a.capture_s) {
        if (counted(captures[next])) reaction_s.add(a.time_s - captures[next]);
        ++next;
      }
    }
    std::vector<std::string> path{spec_.sensors[chain.sensor].name};
    for (std::size_t s : chain.stages) path.push_back(spec_.stages[s].name);
    if (chain.task) path.push_back(spec_.tasks[*chain.task].name);
    out.chains[chain.name] = {path, stat_block(data_age_s_[c].summary()), stat_block(reaction_s.summary()),
                              actuations_[c].size(), captures.size() - next};
  }
  return out;
}

}  // namespace framesim::analysis
