// The life of frames: captured by a sensor, copied into stage queues, merged at joins, dropped, finished.
// A frame is complete when every copy of it has left the pipeline (reached a sink, used as a side input, or
// dropped). Finished frames are emitted in frame order and forgotten, so memory stays flat in the run length.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "engine/records.hpp"

namespace framesim::engine {

struct Frame {
  std::size_t sensor = 0;
  double capture_s = 0;
  int outstanding = 0;  // copies in queues or being processed
  bool reached_sink = false;
  bool finalized = false;
  DropReason reason = DropReason::none;
  int drop_stage = -1;
  double end_s = 0;
  double energy_J = 0;  // dynamic energy of the kernels run for it
  double temperature_C = 0;
  std::vector<double> frequency_Hz;
};

class FrameBook {
 public:
  explicit FrameBook(RecordSink& sink) : sink_(sink) {}

  /// A new frame captured at `t_s`, held once (the caller releases that hold after copying it into queues).
  std::int64_t capture(std::size_t sensor, double t_s, double temperature_C, std::vector<double> frequency_Hz);
  Frame& at(std::int64_t id) { return frames_[static_cast<std::size_t>(id - first_)]; }
  void add_copy(std::int64_t id) { ++at(id).outstanding; }
  /// One copy left the pipeline at `now_s`. True when that finished the frame.
  bool release_copy(std::int64_t id, double now_s);
  /// A copy was dropped by `stage` (the first reason is kept). True when that finished the frame.
  bool drop(std::int64_t id, std::size_t stage, DropReason reason, double now_s);
  /// Emits what is left at the end of the run: unfinished frames as such.
  void finish(double end_s);

  bool empty() const { return frames_.empty(); }
  std::int64_t captured() const { return next_; }
  /// Copies of frames still in queues or being processed, over every frame in flight.
  std::size_t outstanding_copies() const;
  /// Frames in flight now (captured, not finished).
  std::size_t in_flight() const { return frames_.size(); }
  double frames_energy_J() const { return frames_energy_J_; }
  /// Integral over time of the frames in the system (Little's law: L = lambda W).
  double in_system_integral() const { return in_system_integral_; }

 private:
  void account(double t_s, int delta);
  void emit_finalized();
  FrameRecord front_record();

  RecordSink& sink_;
  std::deque<Frame> frames_;
  std::int64_t first_ = 0;  // id of frames_.front()
  std::int64_t next_ = 0;
  std::int64_t in_system_ = 0;
  double in_system_since_s_ = 0;
  double in_system_integral_ = 0;
  double frames_energy_J_ = 0;
};

}  // namespace framesim::engine
