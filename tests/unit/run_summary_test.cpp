// The run-summary reader (analysis/run_summary.cpp): a summary.json written out by hand in this file (not by the
// writer under test) reads into the field values it spells; a missing or mistyped key is refused with the file and
// the key's path.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "run_summary.hpp"

namespace {

using framesim::analysis::read_run_summary;
using nlohmann::json;

// The parts of a summary.json the record reads, with values chosen so that no two coincide.
const char* const kSummary = R"({
  "scenario": {"deadline_s": 0.033},
  "windows": {
    "all": {"frames": 120, "late": 3, "dropped": 2, "missed": 5, "miss_rate": 0.041666,
            "latency_s": {"count": 118, "mean": 0.021, "p50": 0.02, "p90": 0.026, "p99": 0.031, "p99_9": 0.0325,
                          "max": 0.034, "ci": {"p99": [0.029, null]}, "few_samples": ["p99_9"]},
            "stages": {"detector": {"latency_s": {"count": 0}}}},
    "sustained": {"frames": 60, "late": 1, "dropped": 0, "missed": 1, "miss_rate": 0.016666,
                  "latency_s": {"count": 60, "p99": 0.03}}
  },
  "verdict": {"at_confidence": "maybe", "sustained_p99_s": 0.0305},
  "frames": {"longest_miss_run": 2},
  "energy": {"per_frame_J": {"count": 118, "mean": 0.45, "p99": 0.61}, "mean_power_W": 13.5},
  "thermal": {"throttled_fraction": 0.25, "has_thermal_model": true, "max_C": 71.5}
})";

TEST(RunSummary, AHandWrittenSummaryReadsIntoTheValuesItSpells) {
  const auto s = read_run_summary(json::parse(kSummary), "hand.json");
  EXPECT_EQ(s.deadline_s, 0.033);
  EXPECT_EQ(s.all.frames, 120);
  EXPECT_EQ(s.all.misses.late, 3);
  EXPECT_EQ(s.all.misses.dropped, 2);
  EXPECT_EQ(s.all.misses.missed(), 5);
  EXPECT_EQ(s.all.miss_rate, 0.041666);
  EXPECT_EQ(s.all.latency_s.count, 118);
  EXPECT_EQ(s.all.latency_s.p50, 0.02);
  EXPECT_EQ(s.all.latency_s.p99, 0.031);
  EXPECT_EQ(s.all.latency_s.p99_9, 0.0325);
  EXPECT_EQ(s.all.latency_s.max, 0.034);
  EXPECT_EQ(s.all.latency_s.p99_ci_lo, 0.029);
  EXPECT_FALSE(s.all.latency_s.p99_ci_hi.has_value());  // null: not bounded from above
  EXPECT_FALSE(s.all.latency_s.p99_few_samples());      // only p99_9 is listed
  ASSERT_EQ(s.all.stage_latency_s.count("detector"), 1u);
  EXPECT_EQ(s.all.stage_latency_s.at("detector").count, 0);
  EXPECT_FALSE(s.all.stage_latency_s.at("detector").p99.has_value());
  EXPECT_EQ(s.sustained.frames, 60);
  EXPECT_EQ(s.sustained.misses.missed(), 1);
  EXPECT_EQ(s.sustained.latency_s.p99, 0.03);
  EXPECT_EQ(s.at_confidence, "maybe");
  EXPECT_EQ(s.sustained_p99_s, 0.0305);
  EXPECT_FALSE(s.estimate_end_to_end_s.has_value());
  EXPECT_EQ(s.longest_miss_run, 2);
  EXPECT_EQ(s.energy_per_frame_J.mean, 0.45);
  EXPECT_EQ(s.energy_per_frame_J.p99, 0.61);
  EXPECT_EQ(s.mean_power_W, 13.5);
  EXPECT_EQ(s.throttled_fraction, 0.25);
  EXPECT_TRUE(s.has_thermal_model);
  EXPECT_EQ(s.max_temperature_C, 71.5);
  EXPECT_FALSE(s.wall_s.has_value());  // a run folder's summary.json has no "run"
}

/// The message of the refusal of `summary`, or "" when it is read.
std::string refusal(const json& summary) {
  try {
    read_run_summary(summary, "runs/a/summary.json");
  } catch (const framesim::core::UserError& e) {
    return e.what();
  }
  return "";
}

TEST(RunSummary, AMissingKeyIsRefusedWithTheFileAndItsPath) {
  json j = json::parse(kSummary);
  j["windows"]["sustained"].erase("dropped");
  const std::string m = refusal(j);
  EXPECT_NE(m.find("runs/a/summary.json"), std::string::npos) << m;
  EXPECT_NE(m.find("/windows/sustained/dropped: missing"), std::string::npos) << m;
}

TEST(RunSummary, AMistypedKeyIsRefusedWithTheFileAndItsPath) {
  json j = json::parse(kSummary);
  j["energy"]["mean_power_W"] = "13.5 W";
  const std::string m = refusal(j);
  EXPECT_NE(m.find("runs/a/summary.json"), std::string::npos) << m;
  EXPECT_NE(m.find("/energy/mean_power_W: expected a number, found string"), std::string::npos) << m;
}

TEST(RunSummary, AStatisticWithSamplesButNoP99IsRefused) {
  json j = json::parse(kSummary);
  j["windows"]["all"]["latency_s"].erase("p99");
  EXPECT_NE(refusal(j).find("/windows/all/latency_s/p99: missing"), std::string::npos) << refusal(j);
}

TEST(RunSummary, MissedThatIsNotLatePlusDroppedIsRefused) {
  json j = json::parse(kSummary);
  j["windows"]["all"]["missed"] = 4;
  EXPECT_NE(refusal(j).find("/windows/all/missed: is not late + dropped"), std::string::npos) << refusal(j);
}

}  // namespace
