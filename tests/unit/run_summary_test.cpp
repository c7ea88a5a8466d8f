// The run-summary record (analysis/run_summary.cpp): a summary.json written out by hand in this file (not by the
// writer under test) reads into the field values it spells; a missing or mistyped key is refused with the file and
// the key's path; the writer writes exactly the keys scenarios/README.md documents, and what it writes reads back
// into the same record (a key renamed on one side only fails one or the other). The details the run's report reads
// are written under the keys their modules write, and a key written under another name is refused when read back.
// What `framesim run --point-metrics` prints is written and read through its record too.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "run_summary.hpp"
#include "sweep_report.hpp"
#include "test_paths.hpp"

namespace {

using framesim::analysis::read_back;
using framesim::analysis::read_run_details;
using framesim::analysis::read_run_summary;
using framesim::analysis::RunSummary;
using framesim::analysis::StatBlock;
using framesim::analysis::write_run_details;
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
  EXPECT_FALSE(s.times.wall_s.has_value());  // a run folder's summary.json has no "run"
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
  s.times = {1.5, 1.4};
  s.sustained_tail.emplace();
  s.sustained_tail->window_s = std::vector<double>{40, 60};
  s.sustained_tail->frames = 6;
  s.sustained_tail->p99_s = 0.0185;
  s.sustained_tail->critical_stage = "<stage>";
  s.sustained_tail->critical_share = 0.8;
  s.sustained_tail->mean_parts.queue_s = 0.0021;
  s.sustained_tail->stages["<stage>"] = {0.0148, 5};
  s.slowdown.emplace()["<stage>"] = {1.2, 0.1, 0.06, 0.04, 0.01, 0.012};
  s.paths.push_back({"<path>", 0.02, 0.017});
  s.unit_busy["<unit>"] = 0.5;
  s.provenance.emplace();
  s.provenance->framesim_version = "0.0";
  s.provenance->command_line = {"framesim", "run"};
  s.provenance->overrides.push_back({"<path>", "<value>"});
  s.provenance->inputs.push_back({"scenarios/robot.yaml", "<sha256>", 1234});
  return s;
}

/// The key paths of `j` ("a.b.c", "a[].b" through an array of objects), a statistic block (an object with a
/// count), a scalar or an array of scalars ending a path.
void key_paths(const json& j, const std::string& at, std::set<std::string>& out) {
  if (j.is_array() && !j.empty() && j[0].is_object()) {
    for (const auto& e : j) key_paths(e, at + "[]", out);
    return;
  }
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
  // Spelled here by hand, as summary.json has them.
  EXPECT_EQ(once["slowdown"]["<stage>"]["handoff"], 0.06);
  EXPECT_EQ(once["why"]["sustained_tail"]["mean_parts"]["queue_s"], 0.0021);
  const RunSummary back = read_run_summary(once, "written.json");
  EXPECT_EQ(back.scenario.seed, 7u);
  EXPECT_EQ(back.cold->stage_latency_s.at("<stage>").p99_ci_lo(), 0.015);
  EXPECT_EQ(back.staleness_time_s.at("<task>").stddev, 0.002);
  EXPECT_EQ(back.times.wall_s, 1.5);
  EXPECT_EQ(back.paths.at(0).sustained_p99_s, 0.017);
  EXPECT_EQ(back.unit_busy.at("<unit>"), 0.5);
  EXPECT_EQ(back.override_texts(), std::vector<std::string>{"<path>=<value>"});
  EXPECT_EQ(back.input_sha256().at("scenarios/robot.yaml"), "<sha256>");
  EXPECT_EQ(back.sustained_tail->mean_parts.queue_s, 0.0021);
  EXPECT_EQ(back.sustained_tail->stages.at("<stage>").dominant_in_frames, 5);
  EXPECT_EQ(back.slowdown->at("<stage>").handoff, 0.06);
  // Everything else: written again from what was read, the same document.
  RunSummary again = back;
  again.rest = json::object();
  EXPECT_EQ(write_run_summary(again), once);
}

namespace {

using framesim::analysis::RunDetails;

/// Details with a value in every part the report reads; no two numbers alike.
RunDetails full_details() {
  StatBlock stat;
  stat.count = 3;
  stat.mean = 0.02;
  stat.p50 = 0.019;
  stat.p99 = 0.025;
  stat.max = 0.026;
  RunDetails d;
  d.run = {41.5, 1200};
  d.frames.drops_by["detector: queue full"] = 4;
  for (auto* w : {&d.windows.all, &d.windows.cold, &d.windows.sustained}) {
    w->from_s = 2;
    w->to_s = 17;
    w->stages["<stage>"] = {stat, stat, stat, stat, std::nullopt};
    w->mean_frequency_Hz["<unit>"] = 1.3e9;
  }
  d.windows.sustained.mean_temperature_C = 64.5;
  d.paths.emplace_back();
  d.paths[0].deadline_s = 0.05;
  d.paths[0].verdict.sustained_p99 = framesim::analysis::QuantileDetails{0.99, 0.031, 500, {0.03, std::nullopt}, true};
  d.staleness["<task>"] = {"<stage>", 50, 2.5, stat};
  d.energy.breakdown_per_frame_J = {{{"<unit>", 0.3}}, {{"<level>", 0.1}}, 0.05};
  d.energy.total_J = 310;
  d.thermal.initial_C = 25;
  d.thermal.trip_C = 85;
  d.little = {2.5, 30.25, 0.0826, 0.004};
  d.verdict.stage_slices["<stage>"] = {0.02, 0.011, 0.009, 0.012, 0.013, 0.017, true};
  d.utilisation.units["<unit>"].by["<stage>"] = 0.45;
  d.utilisation.memory["<level>"].utilisation = 0.35;
  d.utilisation.queues["<stage>"] = {0.7, 3, 4};
  d.why.method = "critical path";
  framesim::analysis::CriticalStep step{"<stage>", "<unit>", 3.26, 3.27, {}};
  step.parts.queue_s = 0.001;
  d.why.worst_frames.push_back({7, 3.25, 0.04, {}, {step}});
  d.tasks["<task>"] = {0.02, "<unit>", 100, 1, stat, 20, 3, 0, 0.15};
  d.chains["<chain>"] = {{"<stage>", "<task>"}, stat, stat};
  d.warnings = {"a warning"};
  return d;
}

}  // namespace

TEST(RunSummary, TheDetailsAreWrittenUnderTheKeysTheirModulesWrite) {
  json doc = json::object();
  write_run_details(doc, full_details());
  // Spelled here by hand, as summary.json has them.
  EXPECT_EQ(doc["little"]["L_frames"], 2.5);
  EXPECT_EQ(doc["little"]["lambda_per_s"], 30.25);
  EXPECT_EQ(doc["run"]["kernels"], 1200);
  EXPECT_EQ(doc["frames"]["drops_by"]["detector: queue full"], 4);
  EXPECT_EQ(doc["windows"]["sustained"]["mean_temperature_C"], 64.5);
  EXPECT_TRUE(doc["windows"]["cold"]["mean_temperature_C"].is_null());  // written null, not left out
  EXPECT_EQ(doc["windows"]["all"]["stages"]["<stage>"]["service_s"]["p99"], 0.025);
  EXPECT_EQ(doc["paths"][0]["verdict"]["sustained_p99"]["ci"], json::parse("[0.03, null]"));
  EXPECT_FALSE(doc["paths"][0]["verdict"].contains("at_confidence"));  // no sustained sample: left out
  EXPECT_EQ(doc["energy"]["breakdown_per_frame_J"]["static"], 0.05);
  EXPECT_TRUE(doc["thermal"]["final_C"].is_null());
  EXPECT_TRUE(doc["verdict"]["worst_path"].is_null());
  EXPECT_EQ(doc["utilisation"]["queues"]["<stage>"]["capacity"], 4);
  // A step's parts sit in the step's own object, beside its stage.
  EXPECT_EQ(doc["why"]["worst_frames"][0]["path"][0]["queue_s"], 0.001);
  EXPECT_EQ(doc["why"]["worst_frames"][0]["path"][0]["stage"], "<stage>");
  EXPECT_EQ(doc["tasks"]["<task>"]["unit"], "<unit>");
  EXPECT_EQ(doc["chains"]["<chain>"]["path"], json::parse(R"(["<stage>", "<task>"])"));
  // Read back and written again: the same document.
  json again = json::object();
  write_run_details(again, read_run_details(doc, "written.json"));
  EXPECT_EQ(again, doc);
}

TEST(RunSummary, WritingTheDetailsKeepsTheKeysTheyDoNotType) {
  json doc = json::parse(R"({"little": {"by_hand": 2.49}, "paths": [{"by_hand": "planner"}]})");
  write_run_details(doc, full_details());
  EXPECT_EQ(doc["little"]["by_hand"], 2.49);
  EXPECT_EQ(doc["little"]["L_frames"], 2.5);
  EXPECT_EQ(doc["paths"][0]["by_hand"], "planner");
  EXPECT_EQ(doc["paths"][0]["deadline_s"], 0.05);
}

TEST(RunSummary, ADetailKeyItsModuleWritesUnderAnotherNameIsRefusedWhenReadBack) {
  RunSummary s = full_record();
  s.details = full_details();
  EXPECT_EQ(read_back(s, "runs/a/summary.json").details->little.L_frames, 2.5);
  json doc = write_run_summary(s);
  doc["little"]["L_frame"] = doc["little"]["L_frames"];  // the writer's spelling, not the report's
  doc["little"].erase("L_frames");
  RunSummary renamed = read_run_summary(doc, "runs/a/summary.json");  // compare and sweep read no detail
  try {
    read_back(renamed, "runs/a/summary.json");
    ADD_FAILURE() << "read back with little.L_frame in place of little.L_frames";
  } catch (const framesim::core::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("runs/a/summary.json: /little/L_frames: missing"), std::string::npos)
        << e.what();
  }
}

TEST(RunSummary, APointsOutputIsWrittenAndReadThroughItsRecord) {
  using framesim::analysis::read_point_output;
  const std::string text = framesim::analysis::point_output_text({json{{"p99_s", 0.012}}, {0.25, 0.5}});
  // Spelled here by hand, as `framesim run --point-metrics` prints it and a sweep reads it.
  EXPECT_EQ(text, R"({"metrics":{"p99_s":0.012},"run":{"cpu_s":0.5,"wall_s":0.25}})");
  const auto back = read_point_output(json::parse(text), "stdout.json");
  EXPECT_EQ(back.metrics, json::parse(R"({"p99_s": 0.012})"));
  EXPECT_EQ(back.run.wall_s, 0.25);
  EXPECT_EQ(back.run.cpu_s, 0.5);
  for (const char* wrong :
       {R"({"run": {"cpu_s": 0.5, "wall_s": 0.25}})", R"({"metrics": {}, "run": {"wall_s": 0.25}})",
        R"({"metrics": {}, "run": {"cpu_s": "0.5 s", "wall_s": 0.25}})", R"({"metrics": {}})", "[]"}) {
    try {
      read_point_output(json::parse(wrong), "stdout.json");
      ADD_FAILURE() << "read: " << wrong;
    } catch (const framesim::core::UserError& e) {
      EXPECT_EQ(std::string(e.what()), "stdout.json: not what `framesim run --point-metrics` prints") << wrong;
    }
  }
}
