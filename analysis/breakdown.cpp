#include "breakdown.hpp"

#include <algorithm>
#include <cmath>

namespace framesim::analysis {

namespace {
/// Two times equal to the model's resolution: 1 ps, or 1e-9 relative.
bool same_time(double a, double b) { return std::fabs(a - b) <= 1e-12 + 1e-9 * std::max(std::fabs(a), std::fabs(b)); }
}  // namespace

const char* part_name(Part p) {
  switch (p) {
    case Part::queue: return "queue";
    case Part::blocked: return "blocked";
    case Part::floor: return "floor";
    case Part::throttling: return "throttling";
    case Part::bus: return "bus";
    case Part::variability: return "variability";
    case Part::gap: return "gap";
  }
  return "?";
}

std::array<double, kParts> FramePath::totals_s() const {
  std::array<double, kParts> t{};
  for (const auto& s : steps)
    for (std::size_t k = 0; k < kParts; ++k) t[k] += s.parts_s[k];
  return t;
}

Breakdown::Breakdown(const model::ScenarioSpec& spec, const model::StageFloors& floors, std::size_t worst)
    : spec_(spec), worst_count_(worst), frames_(2 + kParts + spec.stages.size()) {
  for (std::size_t s = 0; s < spec.stages.size(); ++s) {
    std::vector<double> at_points;
    for (std::size_t k = 0; k < spec.hardware.units[spec.stages[s].unit].operating_points.size(); ++k)
      at_points.push_back(floors.floor_s(s, model::Roofs::effective, k));
    floors_s_.push_back(std::move(at_points));
    moves_bytes_.push_back(spec.stages[s].work.kind != model::WorkSpec::Kind::time);
  }
}

double Breakdown::floor_s(std::size_t stage, double frequency_Hz) const {
  const auto& points = spec_.hardware.units[spec_.stages[stage].unit].operating_points;
  std::size_t best = 0;
  for (std::size_t k = 1; k < points.size(); ++k)
    if (std::fabs(points[k].frequency_Hz - frequency_Hz) < std::fabs(points[best].frequency_Hz - frequency_Hz))
      best = k;
  return floors_s_[stage][best];
}

void Breakdown::on_stage(const engine::StageRecord& r) {
  if (r.frame <= last_frame_) return;  // its frame is already recorded (dropped on another branch)
  pending_[r.frame].push_back(r);
}

const engine::StageRecord* Breakdown::predecessor(const engine::StageRecord& r) const {
  const auto it = pending_.find(r.frame);
  if (it == pending_.end()) return nullptr;
  const engine::StageRecord* best = nullptr;
  for (const auto& in : spec_.stages[r.stage].inputs) {
    if (in.sensor) continue;
    for (const auto& p : it->second)
      if (p.stage == in.index && p.end_s <= r.enqueue_s + 1e-12 && (!best || p.end_s > best->end_s)) best = &p;
  }
  return best;
}

FramePath Breakdown::path_of(const engine::FrameRecord& r) const {
  FramePath path;
  path.frame = r.frame;
  path.capture_s = r.capture_s;
  path.latency_s = r.done_s - r.capture_s;
  const auto it = pending_.find(r.frame);
  if (it == pending_.end() || it->second.empty()) return path;
  const engine::StageRecord* at = &*std::max_element(it->second.begin(), it->second.end(),
                                                     [](const auto& a, const auto& b) { return a.end_s < b.end_s; });
  while (at) {
    const engine::StageRecord* before = predecessor(*at);
    PathStep step;
    step.stage = at->stage;
    step.start_s = at->start_s;
    step.end_s = at->end_s;
    // The floor at the unit's fastest allowed clock (its cap, else nominal): only slower clocks are throttling.
    const double nominal = floors_s_[at->stage][spec_.hardware.units[spec_.stages[at->stage].unit].fastest_point];
    const std::size_t unit = spec_.stages[at->stage].unit;
    const double at_clock = unit < r.unit_frequency_Hz.size() ? floor_s(at->stage, r.unit_frequency_Hz[unit]) : nominal;
    auto& p = step.parts_s;
    p[static_cast<std::size_t>(Part::queue)] = at->start_s - at->enqueue_s;
    p[static_cast<std::size_t>(Part::blocked)] = at->blocked_s;
    p[static_cast<std::size_t>(Part::floor)] = nominal;
    p[static_cast<std::size_t>(Part::throttling)] = at_clock - nominal;
    const Part excess = moves_bytes_[at->stage] ? Part::bus : Part::variability;
    p[static_cast<std::size_t>(excess)] = at->end_s - at->start_s - at->blocked_s - at_clock;
    // Rounding of simulated times leaves femtoseconds between an end and the next enqueue: no gap.
    const double gap = at->enqueue_s - (before ? before->end_s : r.capture_s);
    p[static_cast<std::size_t>(Part::gap)] = std::fabs(gap) < 1e-12 ? 0.0 : gap;
    path.steps.push_back(step);
    at = before;
  }
  std::reverse(path.steps.begin(), path.steps.end());
  return path;
}

void Breakdown::on_frame(const engine::FrameRecord& r, bool counted) {
  last_frame_ = std::max(last_frame_, r.frame);
  if (counted) {
    FramePath path = path_of(r);
    std::vector<double> record(2 + kParts + spec_.stages.size(), 0.0);
    record[0] = path.latency_s;
    record.back() = path.capture_s;
    const auto totals = path.totals_s();
    for (std::size_t k = 0; k < kParts; ++k) record[1 + k] = totals[k];
    for (const auto& s : path.steps) {
      double on_path = 0;
      for (std::size_t k = 0; k < kParts; ++k)
        if (k != static_cast<std::size_t>(Part::gap)) on_path += s.parts_s[k];
      record[1 + kParts + s.stage] += on_path;
    }
    frames_.append(record);
    // Latencies equal to the model's resolution (1 ps, or 1e-9 relative: the rounding of two ways to one time)
    // tie, and ties go to the earlier frame, so the worst frames do not depend on rounding.
    auto later = [](const FramePath& a, const FramePath& b) {
      if (!same_time(a.latency_s, b.latency_s)) return a.latency_s > b.latency_s;
      return a.frame < b.frame;
    };
    if (worst_.size() < worst_count_ || later(path, worst_.back())) {
      worst_.insert(std::upper_bound(worst_.begin(), worst_.end(), path, later), std::move(path));
      if (worst_.size() > worst_count_) worst_.pop_back();
    }
  }
  // Everything up to this frame is done with (frame records come in frame order).
  pending_.erase(pending_.begin(), pending_.upper_bound(r.frame));
}

namespace {

LatencyParts parts_of(const std::array<double, kParts>& a) {
  const auto at = [&a](Part p) { return a[static_cast<std::size_t>(p)]; };
  return {at(Part::queue), at(Part::blocked),     at(Part::floor), at(Part::throttling),
          at(Part::bus),   at(Part::variability), at(Part::gap)};
}

}  // namespace

template <class Take>
std::optional<TailDetails> Breakdown::tail(double p99_s, Take take) const {
  std::array<double, kParts> mean{};
  std::vector<double> stage_s(spec_.stages.size(), 0.0);
  std::vector<std::int64_t> dominant(spec_.stages.size(), 0);
  std::int64_t n = 0;
  const std::size_t stage_count = stage_s.size();
  frames_.for_each([&](const double* c) {
    if (!take(c[0], c[1 + kParts + stage_count])) return;
    if (c[0] < p99_s && !same_time(c[0], p99_s)) return;
    ++n;
    for (std::size_t k = 0; k < kParts; ++k) mean[k] += c[1 + k];
    const double* on_path = c + 1 + kParts;
    for (std::size_t s = 0; s < stage_count; ++s) stage_s[s] += on_path[s];
    ++dominant[static_cast<std::size_t>(std::max_element(on_path, on_path + stage_count) - on_path)];
  });
  if (n == 0) return std::nullopt;
  for (auto& v : mean) v /= static_cast<double>(n);
  double on_path = 0;
  for (auto& v : stage_s) on_path += (v /= static_cast<double>(n));
  const std::size_t critical =
      static_cast<std::size_t>(std::max_element(stage_s.begin(), stage_s.end()) - stage_s.begin());
  TailDetails t;
  for (std::size_t s = 0; s < stage_s.size(); ++s) t.stages[spec_.stages[s].name] = {stage_s[s], dominant[s]};
  t.p99_s = p99_s;
  t.frames = n;
  t.mean_parts = parts_of(mean);
  t.critical_stage = spec_.stages[critical].name;
  t.critical_share = on_path > 0 ? stage_s[critical] / on_path : 0.0;
  return t;
}

Breakdown::Result Breakdown::finish(std::optional<double> p99_s, std::optional<Window> sustained) const {
  Result out;
  WhyDetails& why = out.why;
  for (std::size_t k = 0; k < kParts; ++k) why.parts.emplace_back(part_name(static_cast<Part>(k)));
  why.method =
      "critical path: from the stage that finished last back through the input that arrived last; per stage: "
      "queue (enqueue -> start), blocked (lost the unit mid-way), floor (the stage alone at nominal clocks: the "
      "budget's estimate at effective roofs), throttling "
      "(floor at the clocks at capture - floor), bus (service - blocked - floor at those clocks, for a stage that "
      "moves bytes: contention, and its work variability if it has one), variability (the same for a stage given "
      "as a compute time), gap (previous end -> enqueue); the parts add up to the latency";
  for (const auto& f : worst_) {
    WorstFrame& frame = why.worst_frames.emplace_back();
    frame.frame = f.frame;
    frame.capture_s = f.capture_s;
    frame.latency_s = f.latency_s;
    frame.parts = parts_of(f.totals_s());
    for (const auto& s : f.steps)
      frame.path.push_back({spec_.stages[s.stage].name, spec_.hardware.units[spec_.stages[s.stage].unit].name,
                            s.start_s, s.end_s, parts_of(s.parts_s)});
  }
  if (!p99_s || frames_.size() == 0) return out;
  // The tail: every counted frame at or above p99; the sustained tail: the frames captured in the sustained
  // window at or above that window's p99.
  why.tail = tail(*p99_s, [](double, double) { return true; });
  if (sustained) {
    out.sustained_tail = tail(sustained->p99_s, [&](double, double capture) {
      return capture >= sustained->from_s && capture < sustained->to_s;
    });
    if (out.sustained_tail) out.sustained_tail->window_s = std::vector<double>{sustained->from_s, sustained->to_s};
  }
  return out;
}

}  // namespace framesim::analysis
