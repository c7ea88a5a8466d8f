#include "paths.hpp"

#include <algorithm>
#include <functional>
#include <limits>

#include <fmt/format.h>

#include "run_summary.hpp"

namespace framesim::analysis {

namespace {

bool side_edge(const model::StageSpec& st, std::size_t edge) {
  return st.policy == model::InputPolicy::latest && edge > 0;
}

}  // namespace

std::vector<PathSpec> enumerate_paths(const model::ScenarioSpec& spec) {
  const std::size_t n = spec.stages.size();
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> readers(n);  // stage -> (reader, edge)
  std::vector<bool> sink(n, true);
  for (std::size_t s = 0; s < n; ++s)
    for (std::size_t e = 0; e < spec.stages[s].inputs.size(); ++e) {
      const auto& in = spec.stages[s].inputs[e];
      if (in.sensor) continue;
      readers[in.index].emplace_back(s, e);
      sink[in.index] = false;
    }
  std::vector<PathSpec> out;
  PathSpec current;
  std::function<void(std::size_t, std::size_t)> walk = [&](std::size_t stage, std::size_t edge) {
    current.stages.push_back(stage);
    current.edges.push_back(edge);
    if (sink[stage]) {
      PathSpec p = current;
      std::vector<std::string> names{spec.sensors[p.sensor].name};
      for (std::size_t k = 0; k < p.stages.size(); ++k) {
        names.push_back(spec.stages[p.stages[k]].name);
        p.via_side_input = p.via_side_input || side_edge(spec.stages[p.stages[k]], p.edges[k]);
      }
      p.name = fmt::format("{}", fmt::join(names, " -> "));
      const auto& sensor_deadline = spec.sensors[p.sensor].deadline_s;
      const auto& sink_deadline = spec.stages[stage].deadline_s;
      p.deadline_s = sensor_deadline && sink_deadline ? std::min(*sensor_deadline, *sink_deadline)
                     : sensor_deadline                ? *sensor_deadline
                     : sink_deadline                  ? *sink_deadline
                                                      : spec.deadline_s;
      out.push_back(std::move(p));
    }
    for (const auto& [reader, reader_edge] : readers[stage]) walk(reader, reader_edge);
    current.stages.pop_back();
    current.edges.pop_back();
  };
  for (std::size_t q = 0; q < spec.sensors.size(); ++q) {
    current = PathSpec{};
    current.sensor = q;
    for (std::size_t s = 0; s < n; ++s)
      for (std::size_t e = 0; e < spec.stages[s].inputs.size(); ++e)
        if (spec.stages[s].inputs[e].sensor && spec.stages[s].inputs[e].index == q) walk(s, e);
  }
  for (auto& p : out) {
    const bool unique = std::count_if(out.begin(), out.end(), [&p](const PathSpec& o) {
                          return o.sensor == p.sensor && o.stages.back() == p.stages.back();
                        }) == 1;
    p.short_name =
        unique ? fmt::format("{} -> {}", spec.sensors[p.sensor].name, spec.stages[p.stages.back()].name) : p.name;
  }
  return out;
}

PathTracker::PathTracker(const model::ScenarioSpec& spec, double sustained_from_s)
    : spec_(spec), sustained_from_s_(sustained_from_s), paths_(enumerate_paths(spec)) {
  state_.resize(paths_.size());
  waits_for_captures_.assign(spec.stages.size(), false);
  previous_end_s_.assign(spec.stages.size(), -std::numeric_limits<double>::infinity());
  for (const auto& st : spec.stages) first_push_s_.emplace_back(st.inputs.size(), -1.0);
  for (std::size_t p = 0; p < paths_.size(); ++p) {
    state_[p].hops.resize(paths_[p].stages.size());
    const std::size_t first = paths_[p].stages.front();
    if (side_edge(spec.stages[first], paths_[p].edges.front())) waits_for_captures_[first] = true;
  }
}

void PathTracker::on_frame(const engine::FrameRecord& r) {
  // A capture arrives on every sensor edge at its capture time; those feeding side inputs of a path are queued
  // there now (frame records come in capture order), the rest of the frame's accounting waits its turn.
  for (std::size_t s = 0; s < spec_.stages.size(); ++s)
    for (std::size_t e = 0; e < spec_.stages[s].inputs.size(); ++e) {
      const auto& in = spec_.stages[s].inputs[e];
      if (in.sensor && in.index == r.sensor && first_push_s_[s][e] < 0) first_push_s_[s][e] = r.capture_s;
    }
  for (std::size_t p = 0; p < paths_.size(); ++p) {
    const auto& path = paths_[p];
    if (path.sensor != r.sensor || !side_edge(spec_.stages[path.stages.front()], path.edges.front())) continue;
    state_[p].hops.front().queued.push_back({r.capture_s, Sample{r.capture_s, r.frame}});
  }
  watermark_s_ = std::max(watermark_s_, r.capture_s);
  Event ev;
  ev.frame = true;
  ev.id = r.frame;
  ev.sensor = r.sensor;
  ev.capture_s = r.capture_s;
  pending_.push_back(ev);
  drain(watermark_s_);
}

void PathTracker::on_stage(const engine::StageRecord& r) {
  Event ev;
  ev.stage = r;
  pending_.push_back(ev);
  drain(watermark_s_);
}

void PathTracker::drain(double watermark_s) {
  while (!pending_.empty()) {
    const Event& ev = pending_.front();
    if (ev.frame) {
      process_frame(ev.id, ev.sensor, ev.capture_s);
    } else {
      // A stage reading a sensor through a side edge takes the newest capture at its take, before its end:
      // wait until every capture up to its end is known.
      if (waits_for_captures_[ev.stage.stage] && watermark_s < ev.stage.end_s) return;
      process_stage(ev.stage);
    }
    pending_.pop_front();
  }
}

void PathTracker::process_stage(const engine::StageRecord& r) {
  const auto& st = spec_.stages[r.stage];
  double take_s = std::max(r.enqueue_s, previous_end_s_[r.stage]);
  for (std::size_t e = 1; e < st.inputs.size(); ++e)
    if (side_edge(st, e)) take_s = std::max(take_s, first_push_s_[r.stage][e]);
  previous_end_s_[r.stage] = r.end_s;
  for (std::size_t p = 0; p < paths_.size(); ++p) {
    const auto& path = paths_[p];
    for (std::size_t i = 0; i < path.stages.size(); ++i) {
      if (path.stages[i] != r.stage) continue;
      Hop& hop = state_[p].hops[i];
      std::optional<Sample> behind;
      if (!side_edge(st, path.edges[i])) {
        if (i == 0) {
          behind = Sample{r.capture_s, r.frame};
        } else if (auto it = hop.carried.find(r.frame); it != hop.carried.end()) {
          behind = it->second;
          hop.carried.erase(it);
        }
      } else {
        // The items queued on the side edge by the take; the queue kept the newest (drop_oldest) or the first
        // `depth` of them (drop_newest), and the take keeps the newest of what the queue held.
        std::size_t arrived = 0;
        while (arrived < hop.queued.size() && hop.queued[arrived].time_s <= take_s) ++arrived;
        if (arrived > 0) {
          const std::size_t kept = st.overflow == model::Overflow::drop_newest
                                       ? std::min<std::size_t>(arrived, static_cast<std::size_t>(st.queue_depth))
                                       : arrived;
          hop.slot = hop.queued[kept - 1].sample;
          hop.slot_filled = true;
          hop.queued.erase(hop.queued.begin(), hop.queued.begin() + static_cast<std::ptrdiff_t>(arrived));
        }
        if (hop.slot_filled) behind = hop.slot;
      }
      if (i + 1 == path.stages.size()) {
        deliver(p, behind, r.end_s);
        continue;
      }
      Hop& next = state_[p].hops[i + 1];
      if (side_edge(spec_.stages[path.stages[i + 1]], path.edges[i + 1])) next.queued.push_back({r.end_s, behind});
      else next.carried[r.frame] = behind;
    }
  }
  for (std::size_t c = 0; c < spec_.stages.size(); ++c)
    for (std::size_t e = 0; e < spec_.stages[c].inputs.size(); ++e) {
      const auto& in = spec_.stages[c].inputs[e];
      if (!in.sensor && in.index == r.stage && first_push_s_[c][e] < 0) first_push_s_[c][e] = r.end_s;
    }
}

void PathTracker::deliver(std::size_t p, const std::optional<Sample>& sample, double end_s) {
  if (!sample) return;
  PathState& ps = state_[p];
  const double age = end_s - sample->capture_s;
  if (counted(sample->capture_s)) ps.data_age_s.add(age);
  if (sample->frame <= ps.last_delivered) return;  // used again: its first result counted already
  ps.last_delivered = sample->frame;
  if (counted(sample->capture_s)) {
    ++ps.samples;
    ++ps.delivered;
    ps.latency_s.add(age);
    const bool late = age > paths_[p].deadline_s;
    if (late) ++ps.misses.late;
    if (sample->capture_s >= sustained_from_s_) {
      ++ps.sustained_samples;
      ps.sustained_latency_s.add(age);
      if (late) ++ps.sustained_misses.late;
    }
  }
  // Everything of the sensor older than this sample and not delivered was overtaken: dropped on the path.
  while (!ps.undecided.empty() && ps.undecided.front().frame < sample->frame) {
    dropped_on(p, ps.undecided.front());
    ps.undecided.pop_front();
  }
  if (!ps.undecided.empty() && ps.undecided.front().frame == sample->frame) ps.undecided.pop_front();
  else ps.delivered_early.insert(sample->frame);
}

void PathTracker::dropped_on(std::size_t p, const Sample& s) {
  if (!counted(s.capture_s)) return;
  PathState& ps = state_[p];
  ++ps.samples;
  ++ps.misses.dropped;
  if (s.capture_s >= sustained_from_s_) {
    ++ps.sustained_samples;
    ++ps.sustained_misses.dropped;
  }
}

void PathTracker::process_frame(std::int64_t id, std::size_t sensor, double capture_s) {
  for (std::size_t p = 0; p < paths_.size(); ++p) {
    PathState& ps = state_[p];
    for (auto& hop : ps.hops) hop.carried.erase(id);  // its copies have all left the pipeline
    if (paths_[p].sensor != sensor) continue;
    if (ps.delivered_early.erase(id) > 0) continue;
    if (id < ps.last_delivered) dropped_on(p, {capture_s, id});
    else ps.undecided.push_back({capture_s, id});
  }
}

std::vector<PathTracker::Result> PathTracker::finish() {
  drain(std::numeric_limits<double>::infinity());
  std::vector<Result> out;
  for (std::size_t p = 0; p < paths_.size(); ++p) {
    const auto& path = paths_[p];
    const PathState& ps = state_[p];
    Result& r = out.emplace_back();
    PathDetails& d = r.details;
    r.summary.name = path.name;
    r.summary.miss_rate = ps.misses.rate(ps.samples);
    d.sensor = spec_.sensors[path.sensor].name;
    d.sink = spec_.stages[path.stages.back()].name;
    for (auto s : path.stages) d.stages.push_back(spec_.stages[s].name);
    for (const auto& s : ps.undecided) d.undelivered_at_end += counted(s.capture_s) ? 1 : 0;
    d.via_side_input = path.via_side_input;
    d.deadline_s = path.deadline_s;
    d.samples = ps.samples;
    d.delivered = ps.delivered;
    d.late = ps.misses.late;
    d.dropped = ps.misses.dropped;
    d.missed = ps.misses.missed();
    const Summary sustained = ps.sustained_latency_s.summary();
    d.latency_s = stat_block(ps.latency_s.summary());
    d.sustained_latency_s = stat_block(sustained);
    d.data_age_s = stat_block(ps.data_age_s.summary());
    if (sustained.count == 0) continue;
    const auto& q = sustained.q99;
    PathVerdictDetails& v = d.verdict;
    r.summary.sustained_p99_s = sustained.p99;
    v.sustained_p99 = quantile_details(q);
    v.deadline_s = path.deadline_s;
    v.meets_deadline_at_p99 = sustained.p99 <= path.deadline_s;
    v.speedup_needed = std::max(1.0, sustained.p99 / path.deadline_s);
    v.confidence = kConfidence;
    v.at_confidence = q.hi && *q.hi <= path.deadline_s  ? "met"
                      : q.lo && *q.lo > path.deadline_s ? "missed"
                                                        : "undecided";
    v.sustained_samples = ps.sustained_samples;
    v.sustained_missed = ps.sustained_misses.missed();
  }
  return out;
}

}  // namespace framesim::analysis
