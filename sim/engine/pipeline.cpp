#include "engine/pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace framesim::engine {

namespace {
constexpr double kNoCapture = std::numeric_limits<double>::quiet_NaN();
}

Pipeline::Pipeline(const model::ScenarioSpec& spec, FrameBook& frames)
    : spec_(spec), frames_(frames), stages_(spec.stages.size()), sensor_outputs_(spec.sensors.size()) {
  for (std::size_t s = 0; s < spec_.stages.size(); ++s) {
    const auto& ss = spec_.stages[s];
    stages_[s].queues.resize(ss.inputs.size());
    stages_[s].last_side.resize(ss.inputs.size());
    for (std::size_t e = 0; e < ss.inputs.size(); ++e) {
      const auto& in = ss.inputs[e];
      if (in.sensor) sensor_outputs_[in.index].emplace_back(s, e);
      else stages_[in.index].outputs.emplace_back(s, e);
    }
  }
}

std::int64_t Pipeline::capture(std::size_t sensor, double capture_s, double now_s, double temperature_C,
                               std::vector<double> frequency_Hz) {
  const std::int64_t id = frames_.capture(sensor, capture_s, temperature_C, std::move(frequency_Hz));
  Item item{id, capture_s, now_s, {}};
  if (!spec_.chains.empty()) {
    item.chain_capture_s.assign(spec_.chains.size(), kNoCapture);
    for (std::size_t c = 0; c < spec_.chains.size(); ++c)
      if (spec_.chains[c].sensor == sensor) item.chain_capture_s[c] = capture_s;
  }
  for (const auto& [stage, edge] : sensor_outputs_[sensor]) {
    frames_.add_copy(id);
    push(stage, edge, item, now_s);
  }
  frames_.release_copy(id, now_s);
  return id;
}

void Pipeline::finished(std::size_t stage, const Item& item, double now_s) {
  StageQueues& st = stages_[stage];
  st.latest_result = item;
  if (st.outputs.empty()) {
    frames_.at(item.frame).reached_sink = true;
  } else {
    for (const auto& [consumer, edge] : st.outputs) {
      frames_.add_copy(item.frame);
      push(consumer, edge, item, now_s);
    }
  }
  frames_.release_copy(item.frame, now_s);
}

void Pipeline::drop(std::int64_t id, std::size_t stage, DropReason reason, double now_s) {
  frames_.drop(id, stage, reason, now_s);
}

std::size_t Pipeline::depth(const StageQueues& st) const {
  std::size_t d = 0;
  for (const auto& q : st.queues) d = std::max(d, q.size());
  return d;
}

void Pipeline::push(std::size_t stage, std::size_t edge, Item item, double now_s) {
  StageQueues& st = stages_[stage];
  const auto& ss = spec_.stages[stage];
  auto& q = st.queues[edge];
  item.enqueue_s = now_s;
  if (static_cast<int>(q.size()) >= ss.queue_depth) {
    if (ss.overflow == model::Overflow::drop_newest) {
      drop(item.frame, stage, DropReason::queue_full, now_s);
      return;
    }
    const std::int64_t oldest = q.front().frame;
    q.pop_front();
    drop(oldest, stage, DropReason::queue_full, now_s);
  }
  q.push_back(std::move(item));
  st.queue.set(now_s, depth(st));
}

bool Pipeline::ready(std::size_t stage, double now_s) {
  StageQueues& st = stages_[stage];
  const auto& ss = spec_.stages[stage];
  if (ss.policy == model::InputPolicy::latest) {
    if (st.queues[0].empty()) return false;
    for (std::size_t e = 1; e < st.queues.size(); ++e)
      if (st.queues[e].empty() && !st.last_side[e]) return false;
    return true;
  }
  // all: the same frame at the head of every queue; older heads have lost their partner.
  while (true) {
    std::int64_t newest = -1;
    for (const auto& q : st.queues) {
      if (q.empty()) return false;
      newest = std::max(newest, q.front().frame);
    }
    bool aligned = true;
    for (auto& q : st.queues) {
      while (!q.empty() && q.front().frame < newest) {
        const std::int64_t id = q.front().frame;
        q.pop_front();
        drop(id, stage, DropReason::unmatched, now_s);
        aligned = false;
      }
    }
    st.queue.set(now_s, depth(st));
    if (aligned) return true;
  }
}

Taken Pipeline::take(std::size_t stage, double now_s) {
  StageQueues& st = stages_[stage];
  const auto& ss = spec_.stages[stage];
  std::vector<const Item*> used(st.queues.size(), nullptr);  // the item taken from each edge
  Taken out;
  Item& trigger = out.trigger;
  std::vector<Item> joined;  // `all`: the copies merged into the trigger
  if (ss.policy == model::InputPolicy::latest) {
    auto& q = st.queues[0];
    while (q.size() > 1) {
      const std::int64_t id = q.front().frame;
      q.pop_front();
      drop(id, stage, DropReason::superseded, now_s);
    }
    trigger = std::move(q.front());
    q.pop_front();
    out.ready_s = trigger.enqueue_s;
    for (std::size_t e = 1; e < st.queues.size(); ++e) {
      auto& side = st.queues[e];
      while (!side.empty()) {
        st.last_side[e] = std::move(side.front());
        side.pop_front();
        frames_.release_copy(st.last_side[e]->frame, now_s);  // used (or passed over): its lineage ends here
      }
      used[e] = st.last_side[e] ? &*st.last_side[e] : nullptr;
    }
  } else {
    trigger = std::move(st.queues[0].front());
    out.ready_s = trigger.enqueue_s;
    for (std::size_t e = 1; e < st.queues.size(); ++e) {
      out.ready_s = std::max(out.ready_s, st.queues[e].front().enqueue_s);
      joined.push_back(std::move(st.queues[e].front()));
      st.queues[e].pop_front();
      frames_.release_copy(trigger.frame, now_s);  // the copies merge into the one processed
    }
    st.queues[0].pop_front();
    for (std::size_t e = 1; e < st.queues.size(); ++e) used[e] = &joined[e - 1];
  }
  used[0] = &trigger;
  st.queue.set(now_s, depth(st));
  if (!spec_.chains.empty()) {
    std::vector<double> captures(spec_.chains.size(), kNoCapture);
    for (std::size_t c = 0; c < spec_.chains.size(); ++c) {
      const auto& chain = spec_.chains[c];
      const auto at = std::find(chain.stages.begin(), chain.stages.end(), stage);
      if (at == chain.stages.end()) continue;
      const Item* from = used[chain.input_edges[static_cast<std::size_t>(at - chain.stages.begin())]];
      if (from && !from->chain_capture_s.empty()) captures[c] = from->chain_capture_s[c];
    }
    trigger.chain_capture_s = std::move(captures);
  }
  return out;
}

bool Pipeline::release_unusable_side_inputs(double now_s) {
  std::size_t side_items = 0;
  for (std::size_t s = 0; s < stages_.size(); ++s)
    if (spec_.stages[s].policy == model::InputPolicy::latest)
      for (std::size_t e = 1; e < stages_[s].queues.size(); ++e) side_items += stages_[s].queues[e].size();
  if (side_items == 0 || frames_.outstanding_copies() != side_items) return false;
  for (std::size_t s = 0; s < stages_.size(); ++s) {
    StageQueues& st = stages_[s];
    if (spec_.stages[s].policy != model::InputPolicy::latest) continue;
    for (std::size_t e = 1; e < st.queues.size(); ++e) {
      auto& side = st.queues[e];
      while (!side.empty()) {
        st.last_side[e] = std::move(side.front());
        side.pop_front();
        frames_.release_copy(st.last_side[e]->frame, now_s);
      }
    }
    st.queue.set(now_s, depth(st));
  }
  return true;
}

std::vector<StuckStage> Pipeline::stuck() const {
  std::vector<StuckStage> out;
  for (std::size_t s = 0; s < stages_.size(); ++s) {
    const StageQueues& st = stages_[s];
    const auto& ss = spec_.stages[s];
    StuckStage stuck{ss.name, 0, {}};
    for (const auto& q : st.queues) stuck.queued += q.size();
    if (stuck.queued == 0) continue;
    for (std::size_t e = 0; e < st.queues.size(); ++e) {
      const bool empty = st.queues[e].empty() && !(e > 0 && st.last_side[e]);
      if (empty) stuck.waiting_for.push_back(ss.input_names[e]);
    }
    out.push_back(std::move(stuck));
  }
  return out;
}

std::vector<std::pair<std::size_t, std::size_t>> Pipeline::never_received() const {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t s = 0; s < stages_.size(); ++s)
    for (std::size_t e = 1; e < spec_.stages[s].inputs.size(); ++e)
      if (spec_.stages[s].policy == model::InputPolicy::latest && !stages_[s].last_side[e]) out.emplace_back(s, e);
  return out;
}

}  // namespace framesim::engine
