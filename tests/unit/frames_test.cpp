// The frame lifecycle on its own: a frame finishes when its last copy leaves, frames are emitted in capture
// order however they finish, the first drop reason is kept, and the in-system integral is the area under the
// number of frames in flight (worked out by hand below).
#include <gtest/gtest.h>

#include "engine/frames.hpp"

using namespace framesim::engine;

namespace {
class CollectingSink : public RecordSink {
 public:
  std::vector<FrameRecord> frames;
  void on_frame(const FrameRecord& r) override { frames.push_back(r); }
  void on_stage(const StageRecord&) override {}
  void on_control(const ControlRecord&) override {}
  void on_tick(const TickRecord&) override {}
  void on_kernel(const KernelRecord&) override {}
  void on_task(const TaskRecord&) override {}
  void on_chain(const ChainRecord&) override {}
};
}  // namespace

TEST(FrameBook, FramesLeaveInCaptureOrderWhenTheirLastCopyLeaves) {
  CollectingSink sink;
  FrameBook book(sink);
  const auto a = book.capture(0, 0.0, 25, {1e9});  // held once by the capture
  book.add_copy(a);                                // into two queues
  book.add_copy(a);
  EXPECT_FALSE(book.release_copy(a, 0.0));  // the capture's hold
  const auto b = book.capture(0, 1.0, 25, {1e9});
  EXPECT_TRUE(book.release_copy(b, 1.5));  // b had no consumer: done at 1.5, but a is older
  EXPECT_TRUE(sink.frames.empty());
  EXPECT_FALSE(book.drop(a, 3, DropReason::queue_full, 2.0));
  EXPECT_TRUE(book.drop(a, 4, DropReason::superseded, 4.0));  // the last copy: a is done, then b follows
  ASSERT_EQ(sink.frames.size(), 2u);
  EXPECT_EQ(sink.frames[0].frame, a);
  EXPECT_EQ(sink.frames[0].outcome, FrameOutcome::dropped);
  EXPECT_EQ(sink.frames[0].reason, DropReason::queue_full);  // the first reason is kept
  EXPECT_EQ(sink.frames[0].drop_stage, 3);
  EXPECT_DOUBLE_EQ(sink.frames[0].done_s, 4.0);
  EXPECT_EQ(sink.frames[1].outcome, FrameOutcome::side_input);  // never reached a sink, never dropped
  EXPECT_DOUBLE_EQ(sink.frames[1].done_s, 1.5);
  // In flight: a over [0, 4], b over [1, 1.5]: 4 + 0.5 frame-seconds.
  EXPECT_DOUBLE_EQ(book.in_system_integral(), 4.5);
}

TEST(FrameBook, WhatIsLeftAtTheEndIsUnfinished) {
  CollectingSink sink;
  FrameBook book(sink);
  const auto a = book.capture(0, 0.0, 25, {});
  book.at(a).energy_J = 2.0;
  book.finish(3.0);
  ASSERT_EQ(sink.frames.size(), 1u);
  EXPECT_EQ(sink.frames[0].outcome, FrameOutcome::unfinished);
  EXPECT_DOUBLE_EQ(book.frames_energy_J(), 2.0);
  EXPECT_DOUBLE_EQ(book.in_system_integral(), 3.0);
}
