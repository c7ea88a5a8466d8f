// The run-summary record (analysis/run_summary.cpp): a summary.json written out by hand in this file (not by the
// writer under test) reads into the field values it spells; a missing or mistyped key is refused with the file and
// the key's path; the writer writes exactly the keys scenarios/README.md documents, and what it writes reads back
// into the same record (a key renamed on one side only fails one or the other).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "run_summary.hpp"
#include "test_paths.hpp"

namespace {

using framesim::analysis::read_run_summary;
using framesim::analysis::RunSummary;
using framesim::analysis::StatBlock;
using framesim::analysis::write_run_summary;
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
  EXPECT_EQ(s.scenario.deadline_s, 0.033);
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
  EXPECT_EQ(s.all.latency_s.p99_ci_lo(), 0.029);
  EXPECT_FALSE(s.all.latency_s.p99_ci_hi().has_value());  // null: not bounded from above
  EXPECT_FALSE(s.all.latency_s.p99_few_samples());        // only p99_9 is listed
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

namespace {

/// A record with every field set; map keys are the placeholders the documentation writes (<stage>, <task>).
RunSummary full_record() {
  StatBlock stat;
  stat.count = 400;
  stat.mean = 0.01;
  stat.stddev = 0.002;
  stat.min = 0.005;
  stat.p50 = 0.0095;
  stat.p90 = 0.012;
  stat.p99 = 0.016;
  stat.p99_9 = 0.019;
  stat.max = 0.02;
  stat.ci["p99"] = {0.015, std::nullopt};
  stat.confidence = 0.95;
  stat.few_samples = {"p99_9"};
  RunSummary s;
  s.scenario = {"robot", "scenarios/robot.yaml", "orin", 7, 60.0, 2.0, 0.033};
  for (auto* w : {&s.all, &s.sustained}) {
    w->frames = 500;
    w->misses = {3, 2};
    w->miss_rate = 0.01;
    w->latency_s = stat;
    w->stage_latency_s["<stage>"] = stat;
  }
  s.cold = s.all;
  s.longest_miss_run = 2;
  s.at_confidence = "met";
  s.sustained_p99_s = 0.016;
  s.estimate_end_to_end_s = 0.008;
  s.bound_end_to_end_s = 0.006;
  s.staleness_time_s["<task>"] = stat;
  s.energy_per_frame_J = stat;
  s.mean_power_W = 12.5;
  s.throttled_fraction = 0.1;
  s.has_thermal_model = true;
  s.max_temperature_C = 70;
  s.wall_s = 1.5;
  s.cpu_s = 1.4;
  s.sustained_tail = "kept whole";
  s.slowdown = "kept whole";
  return s;
}

/// The key paths of `j` ("a.b.c"), a statistic block (an object with a count) or a scalar ending a path.
void key_paths(const json& j, const std::string& at, std::set<std::string>& out) {
  if (!j.is_object() || j.contains("count")) {
    out.insert(at);
    return;
  }
  for (const auto& [k, v] : j.items()) key_paths(v, at.empty() ? k : at + "." + k, out);
}

/// The keys scenarios/README.md lists between its summary-keys markers that the run writes (not the "read" line):
/// on a line with "each:", every key before it joined to every key after it.
std::set<std::string> documented_keys() {
  std::ifstream in(std::string(FRAMESIM_SOURCE_DIR) + "/scenarios/README.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const auto from = doc.find("<!-- summary-keys -->");
  const auto to = doc.find("<!-- /summary-keys -->");
  EXPECT_NE(from, std::string::npos);
  EXPECT_NE(to, std::string::npos);
  std::set<std::string> keys;
  std::istringstream lines(doc.substr(from, to - from));
  const std::regex code("`([^`]+)`");
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("- ", 0) != 0 || line.rfind("- read", 0) == 0) continue;
    const auto each = line.find("each:");
    std::vector<std::string> before, after;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), code); it != std::sregex_iterator(); ++it) {
      const std::string key = (*it)[1];
      if (key == "<stat>" || key == "all") continue;  // "a `<stat>`", "the `all` window's"
      (each != std::string::npos && static_cast<std::size_t>(it->position()) > each ? after : before).push_back(key);
    }
    for (const auto& b : before)
      if (after.empty()) keys.insert(b);
      else
        for (const auto& a : after) keys.insert(b + "." + a);
  }
  return keys;
}

}  // namespace

TEST(RunSummary, TheWriterWritesExactlyTheDocumentedKeys) {
  std::set<std::string> written;
  key_paths(write_run_summary(full_record()), "", written);
  EXPECT_EQ(written, documented_keys());
}

TEST(RunSummary, WhatTheWriterWritesReadsBackIntoTheSameRecord) {
  const json once = write_run_summary(full_record());
  const RunSummary back = read_run_summary(once, "written.json");
  EXPECT_EQ(back.scenario.seed, 7u);
  EXPECT_EQ(back.cold->stage_latency_s.at("<stage>").p99_ci_lo(), 0.015);
  EXPECT_EQ(back.staleness_time_s.at("<task>").stddev, 0.002);
  EXPECT_EQ(back.wall_s, 1.5);
  // Everything else: written again from what was read, the same document.
  RunSummary again = back;
  again.rest = json::object();
  EXPECT_EQ(write_run_summary(again), once);
}
