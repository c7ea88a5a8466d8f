#include "engine/frames.hpp"

#include "core/error.hpp"

namespace framesim::engine {

std::int64_t FrameBook::capture(std::size_t sensor, double t_s, double temperature_C,
                                std::vector<double> frequency_Hz) {
  const std::int64_t id = next_++;
  Frame& f = frames_.emplace_back();
  f.sensor = sensor;
  f.capture_s = t_s;
  f.temperature_C = temperature_C;
  f.frequency_Hz = std::move(frequency_Hz);
  f.outstanding = 1;
  account(t_s, +1);
  return id;
}

bool FrameBook::drop(std::int64_t id, std::size_t stage, DropReason reason, double now_s) {
  Frame& f = at(id);
  if (reason != DropReason::none && f.reason == DropReason::none) {
    f.reason = reason;
    f.drop_stage = static_cast<int>(stage);
  }
  return release_copy(id, now_s);
}

bool FrameBook::release_copy(std::int64_t id, double now_s) {
  Frame& f = at(id);
  FRAMESIM_ASSERT(f.outstanding > 0, "a frame copy is released once");
  if (--f.outstanding > 0) return false;
  f.finalized = true;
  f.end_s = now_s;
  account(now_s, -1);
  emit_finalized();
  return true;
}

void FrameBook::account(double t_s, int delta) {
  in_system_integral_ += static_cast<double>(in_system_) * (t_s - in_system_since_s_);
  in_system_since_s_ = t_s;
  in_system_ += delta;
}

FrameRecord FrameBook::front_record() {
  const Frame& f = frames_.front();
  FrameRecord r;
  r.frame = first_;
  r.sensor = f.sensor;
  r.capture_s = f.capture_s;
  r.energy_J = f.energy_J;
  frames_energy_J_ += f.energy_J;
  r.temperature_C = f.temperature_C;
  r.unit_frequency_Hz = f.frequency_Hz;
  return r;
}

void FrameBook::emit_finalized() {
  while (!frames_.empty() && frames_.front().finalized) {
    const Frame& f = frames_.front();
    FrameRecord r = front_record();
    r.done_s = f.end_s;
    r.drop_stage = f.drop_stage;
    r.reason = f.reason;
    if (f.reason != DropReason::none) r.outcome = FrameOutcome::dropped;
    else if (f.reached_sink) r.outcome = FrameOutcome::completed;
    else r.outcome = FrameOutcome::side_input;
    sink_.on_frame(r);
    frames_.pop_front();
    ++first_;
  }
}

std::size_t FrameBook::outstanding_copies() const {
  std::size_t copies = 0;
  for (const Frame& f : frames_) copies += static_cast<std::size_t>(f.outstanding);
  return copies;
}

void FrameBook::finish(double end_s) {
  while (!frames_.empty()) {
    if (frames_.front().finalized) {
      emit_finalized();
      continue;
    }
    FrameRecord r = front_record();
    r.outcome = FrameOutcome::unfinished;
    r.done_s = end_s;
    sink_.on_frame(r);
    account(end_s, -1);
    frames_.pop_front();
    ++first_;
  }
}

}  // namespace framesim::engine
