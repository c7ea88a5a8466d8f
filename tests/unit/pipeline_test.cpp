// The pipeline's queues and joins on their own (no SimGrid, no jobs), each expectation from the rules in
// docs/schema.md (queue depth and overflow, `all` and `latest`) worked out beside it; and the random streams'
// seeds (streams.hpp): distinct per stream, and independent of how many streams a run has.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "engine/pipeline.hpp"
#include "engine/streams.hpp"

using namespace framesim;

namespace {

struct Frames : engine::RecordSink {
  std::vector<engine::FrameRecord> frames;
  void on_frame(const engine::FrameRecord& r) override { frames.push_back(r); }
  void on_stage(const engine::StageRecord&) override {}
  void on_control(const engine::ControlRecord&) override {}
  void on_tick(const engine::TickRecord&) override {}
  void on_kernel(const engine::KernelRecord&) override {}
  void on_task(const engine::TaskRecord&) override {}
  void on_chain(const engine::ChainRecord&) override {}
};

/// Sensors s0 and s1; stage 0 reads s0 (depth 2, `overflow`); stage 1 joins s0 and s1 (`policy`).
model::ScenarioSpec two_stages(model::Overflow overflow, model::InputPolicy policy) {
  model::ScenarioSpec spec;
  spec.sensors.resize(2);
  spec.stages.resize(2);
  spec.stages[0].name = "one";
  spec.stages[0].inputs = {{true, 0}};
  spec.stages[0].input_names = {"s0"};
  spec.stages[0].queue_depth = 2;
  spec.stages[0].overflow = overflow;
  spec.stages[1].name = "join";
  spec.stages[1].inputs = {{true, 0}, {true, 1}};
  spec.stages[1].input_names = {"s0", "s1"};
  spec.stages[1].queue_depth = 8;
  spec.stages[1].policy = policy;
  return spec;
}

}  // namespace

// Depth 2, drop_newest: frames 0 and 1 wait, frame 2 finds the queue full and is dropped there (at stage 0); the
// stage then takes frame 0 (the oldest). drop_oldest: frame 0 is dropped instead, and the stage takes frame 1.
TEST(Pipeline, AFullQueueDropsTheNewestOrTheOldest) {
  for (auto overflow : {model::Overflow::drop_newest, model::Overflow::drop_oldest}) {
    Frames sink;
    engine::FrameBook book(sink);
    auto spec = two_stages(overflow, model::InputPolicy::all);
    spec.stages.resize(1);
    engine::Pipeline p(spec, book);
    for (int i = 0; i < 3; ++i) p.capture(0, i * 0.01, i * 0.01, 25, {});
    ASSERT_EQ(sink.frames.size(), overflow == model::Overflow::drop_newest ? 0u : 1u);
    if (overflow == model::Overflow::drop_oldest) {
      EXPECT_EQ(sink.frames[0].frame, 0);
      EXPECT_EQ(sink.frames[0].reason, engine::DropReason::queue_full);
    }
    ASSERT_TRUE(p.ready(0, 0.03));
    const auto taken = p.take(0, 0.03);
    EXPECT_EQ(taken.trigger.frame, overflow == model::Overflow::drop_newest ? 0 : 1);
    EXPECT_DOUBLE_EQ(taken.ready_s, overflow == model::Overflow::drop_newest ? 0.0 : 0.01);
  }
}

// An `all` join waits for the same frame on both inputs. s0 frame 0, s1 frame 1, s0 frame 2 arrive: heads (0, 1):
// frame 0 is older than the newest head, it lost its partner and is dropped (unmatched); heads (2, 1): frame 1 is
// dropped likewise; the s1 queue is empty, so the join is not ready.
TEST(Pipeline, AnAllJoinDropsHeadsThatLostTheirPartner) {
  Frames sink;
  engine::FrameBook book(sink);
  auto spec = two_stages(model::Overflow::drop_newest, model::InputPolicy::all);
  spec.stages.erase(spec.stages.begin());
  engine::Pipeline p(spec, book);
  p.capture(0, 0.00, 0.00, 25, {});
  p.capture(1, 0.01, 0.01, 25, {});
  p.capture(0, 0.02, 0.02, 25, {});
  EXPECT_FALSE(p.ready(0, 0.02));
  ASSERT_EQ(sink.frames.size(), 2u);
  EXPECT_EQ(sink.frames[0].reason, engine::DropReason::unmatched);
  EXPECT_EQ(sink.frames[1].reason, engine::DropReason::unmatched);
}

// `latest`: of three queued triggers the newest is taken and the two older are superseded; the side input (s1) is
// used and its lineage ends there (side_input outcome); the job is released (ranked) at the trigger's enqueue.
TEST(Pipeline, LatestTakesTheNewestTriggerAndTheLastSideInput) {
  Frames sink;
  engine::FrameBook book(sink);
  auto spec = two_stages(model::Overflow::drop_newest, model::InputPolicy::latest);
  spec.stages.erase(spec.stages.begin());
  engine::Pipeline p(spec, book);
  p.capture(1, 0.000, 0.000, 25, {});  // frame 0: the side input
  for (int i = 1; i <= 3; ++i) p.capture(0, i * 0.01, i * 0.01, 25, {});
  ASSERT_TRUE(p.ready(0, 0.04));
  const auto taken = p.take(0, 0.04);
  EXPECT_EQ(taken.trigger.frame, 3);
  EXPECT_DOUBLE_EQ(taken.ready_s, 0.03);
  ASSERT_EQ(sink.frames.size(), 3u);  // frame 0 (side input), then 1 and 2 (superseded), in frame order
  EXPECT_EQ(sink.frames[0].outcome, engine::FrameOutcome::side_input);
  EXPECT_EQ(sink.frames[1].reason, engine::DropReason::superseded);
  EXPECT_EQ(sink.frames[2].reason, engine::DropReason::superseded);
}

// Issue 20, defect 6: every stream its own seed, and a stream's draws do not depend on which other streams exist.
TEST(Streams, EveryStreamHasItsOwnSeedWhateverTheOthers) {
  std::set<std::uint64_t> seeds;
  for (auto kind : {engine::StreamKind::sensor_jitter, engine::StreamKind::stage_work, engine::StreamKind::side_work,
                    engine::StreamKind::task_work})
    for (std::uint64_t index = 0; index < 50; ++index)
      for (std::uint64_t sub = 0; sub < 4; ++sub) seeds.insert(engine::stream_seed(7, kind, index, sub));
  EXPECT_EQ(seeds.size(), 4u * 50u * 4u);
  // The old collision: sensor 0's jitter and stage 0's first side-work stream.
  EXPECT_NE(engine::stream_seed(7, engine::StreamKind::sensor_jitter, 0),
            engine::stream_seed(7, engine::StreamKind::side_work, 0, 0));
  std::mt19937_64 a(engine::stream_seed(7, engine::StreamKind::sensor_jitter, 0));
  std::mt19937_64 b(engine::stream_seed(7, engine::StreamKind::side_work, 0, 0));
  EXPECT_NE(a(), b());
  // The seed is a function of (seed, kind, index, sub) alone: the same in a run with one stream or a hundred.
  EXPECT_EQ(engine::stream_seed(7, engine::StreamKind::task_work, 3),
            engine::stream_seed(7, engine::StreamKind::task_work, 3));
  EXPECT_NE(engine::stream_seed(7, engine::StreamKind::task_work, 3),
            engine::stream_seed(8, engine::StreamKind::task_work, 3));
}
