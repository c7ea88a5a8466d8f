// What a performance engineer reads, checked against independent oracles: the summary's percentiles and
// intervals recomputed from frames.csv (nearest rank by its definition, the binomial by hand), the breakdown
// of the worst frames against stages.csv, the input hashes against sha256sum, compare on hand-made run
// folders, and every report.html opened in headless Chromium (no console message, a screenshot that is not
// blank, the key numbers in the DOM, nothing fetched from the network).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/units.hpp"
#include "engine/run_support.hpp"
#include "report/binomial_by_hand.hpp"
#include "sweep/small_sweep.hpp"
#include "test_paths.hpp"

using framesim::core::read_file;
using framesim::testing::interval_ranks_by_hand;
using framesim::testing::nearest_rank_by_definition;
using framesim::testing::run_cli;
using framesim::testing::run_framesim;
using framesim::testing::Scratch;
using framesim::testing::source_path;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// Latencies of the frames.csv rows with counted = 1 and completed, captured in [from, to), ascending.
std::vector<double> counted_latencies(const framesim::testing::Table& frames, double from = -1, double to = 1e300) {
  std::vector<double> out;
  for (const auto& r : frames.rows) {
    const double capture = std::stod(r.at("capture_s"));
    if (r.at("counted") == "1" && r.at("outcome") == "completed" && capture >= from && capture < to)
      out.push_back(std::stod(r.at("latency_s")));
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Checks a summary_json() object against the sample: count, nearest-rank percentiles, intervals by hand.
void expect_summary_matches(const json& s, const std::vector<double>& sorted, const std::string& what) {
  ASSERT_EQ(s["count"].get<std::size_t>(), sorted.size()) << what;
  const std::size_t n = sorted.size();
  for (const auto& [key, p] : {std::pair{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p99_9", 0.999}}) {
    EXPECT_EQ(s[key].get<double>(), nearest_rank_by_definition(sorted, p)) << what << " " << key;
    const auto [lower, upper] = interval_ranks_by_hand(n, p);
    const auto& ci = s["ci"][key];
    if (lower == 0) EXPECT_TRUE(ci[0].is_null()) << what << " " << key;
    else EXPECT_EQ(ci[0].get<double>(), sorted[lower - 1]) << what << " " << key;
    const bool few = std::find(s["few_samples"].begin(), s["few_samples"].end(), key) != s["few_samples"].end();
    if (upper == n + 1) {
      EXPECT_TRUE(ci[1].is_null()) << what << " " << key;
      EXPECT_TRUE(few) << what << " " << key << " rests on too few samples";
    } else {
      EXPECT_EQ(ci[1].get<double>(), sorted[upper - 1]) << what << " " << key;
      EXPECT_FALSE(few) << what << " " << key;
    }
  }
}

/// What headless Chromium made of a page.
struct Rendered {
  std::string dom, console;
  double non_white = 0;  // fraction of the screenshot's pixels that are not white
  int colours = 0;
};

bool have_chromium() { return std::system("command -v chromium > /dev/null 2>&1") == 0; }

Rendered render(const fs::path& html, const fs::path& scratch) {
  Rendered r;
  const std::string flags = fmt::format(
      "--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run "
      "--user-data-dir='{}' --enable-logging=stderr --v=0",
      (scratch / "profile").string());
  const std::string url = "file://" + fs::absolute(html).string();
  const fs::path dom = scratch / "dom.html", err = scratch / "chromium.err", png = scratch / "shot.png",
                 stats = scratch / "png.txt";
  std::system(
      fmt::format("timeout 120 chromium {} --dump-dom '{}' > '{}' 2> '{}'", flags, url, dom.string(), err.string())
          .c_str());
  std::system(fmt::format("timeout 120 chromium {} --window-size=1200,1600 --screenshot='{}' '{}' > /dev/null 2>> '{}'",
                          flags, png.string(), url, err.string())
                  .c_str());
  r.dom = read_file(dom);
  // Console messages (errors, warnings, logs alike: the reports have no script) are logged as CONSOLE lines.
  std::istringstream lines(read_file(err));
  for (std::string line; std::getline(lines, line);)
    if (line.find(":CONSOLE") != std::string::npos) r.console += line + "\n";
  std::system(fmt::format("python3 '{}' '{}' > '{}' 2>&1", source_path("tests/report/png_stats.py"), png.string(),
                          stats.string())
                  .c_str());
  std::istringstream in(read_file(stats));
  int width = 0, height = 0;
  in >> width >> height >> r.non_white >> r.colours;
  return r;
}

/// The checks every report.html passes: offline, no console message, a drawn page, the numbers in the DOM.
void expect_renders(const fs::path& html, const Scratch& s, const std::vector<std::string>& in_dom) {
  ASSERT_TRUE(fs::exists(html)) << html;
  const std::string text = read_file(html);
  // Self-contained: nothing fetched (the only URL is the SVG namespace).
  std::string rest = text;
  for (std::size_t pos; (pos = rest.find("http://www.w3.org/2000/svg")) != std::string::npos;) rest.erase(pos, 26);
  EXPECT_EQ(rest.find("http://"), std::string::npos);
  EXPECT_EQ(rest.find("https://"), std::string::npos);
  EXPECT_EQ(rest.find("<script"), std::string::npos);
  if (!have_chromium()) GTEST_SKIP() << "chromium is not installed (make deps installs it): the page was not opened";
  const Rendered r = render(html, s.dir());
  EXPECT_EQ(r.console, "") << "console messages while loading " << html;
  EXPECT_GT(r.non_white, 0.03) << "the screenshot is (nearly) blank";
  EXPECT_GT(r.colours, 20) << "the screenshot has almost no colours";
  EXPECT_NE(r.dom.find("<svg"), std::string::npos);
  for (const auto& want : in_dom) EXPECT_NE(r.dom.find(want), std::string::npos) << "not in the DOM: " << want;
}

}  // namespace

TEST(Report, PercentilesAndIntervalsMatchFramesCsv) {
  Scratch s;
  const auto r = run_framesim(source_path("scenarios/robot_30fps.yaml"), s.dir() / "out", "--duration 30s");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const double warmup = r.summary["scenario"]["warmup_s"].get<double>();
  // counted = 1 exactly for frames captured after the warm-up that completed or were dropped.
  for (const auto& row : r.frames.rows) {
    const bool expected = std::stod(row.at("capture_s")) >= warmup &&
                          (row.at("outcome") == "completed" || row.at("outcome") == "dropped");
    EXPECT_EQ(row.at("counted"), expected ? "1" : "0") << "frame " << row.at("frame");
  }
  const auto& windows = r.summary["windows"];
  expect_summary_matches(windows["all"]["latency_s"], counted_latencies(r.frames), "all");
  for (const char* w : {"cold", "sustained"})
    expect_summary_matches(
        windows[w]["latency_s"],
        counted_latencies(r.frames, windows[w]["from_s"].get<double>(), windows[w]["to_s"].get<double>()), w);
  // The verdict at the confidence follows from the sustained interval and the deadline.
  const auto& v = r.summary["verdict"];
  const auto& ci = v["sustained_p99"]["ci"];
  const double deadline = v["deadline_s"].get<double>();
  const std::string expected = !ci[1].is_null() && ci[1].get<double>() <= deadline  ? "met"
                               : !ci[0].is_null() && ci[0].get<double>() > deadline ? "missed"
                                                                                    : "undecided";
  EXPECT_EQ(v["at_confidence"], expected);
  // Stage service times against stages.csv (counted rows).
  std::vector<double> service;
  for (const auto& row : r.stages.rows)
    if (row.at("stage") == "planning" && row.at("counted") == "1") service.push_back(std::stod(row.at("service_s")));
  std::sort(service.begin(), service.end());
  expect_summary_matches(windows["all"]["stages"]["planning"]["service_s"], service, "planning service");
}

// The terminal summary and report.html read summary.json through the same declarations that write it: a key a
// module writes under another name stops the run (exit 2) rather than showing nothing or garbage.
TEST(Report, TheSummaryAndTheReportShowWhatSummaryJsonHolds) {
  Scratch s;
  const auto r = run_framesim(source_path("scenarios/robot_30fps.yaml"), s.dir() / "out", "--duration 4s");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  using framesim::core::format_number;
  const auto& l = r.summary["little"];
  EXPECT_NE(r.output.find(fmt::format("frames in the system: L = {} on average = lambda {}/s x W {} (Little's law)",
                                      format_number(l["L_frames"].get<double>(), 4),
                                      format_number(l["lambda_per_s"].get<double>(), 4),
                                      framesim::core::format_seconds(l["W_s"].get<double>()))),
            std::string::npos)
      << r.output;
  const std::string html = read_file(s.dir() / "out" / "report.html");
  EXPECT_NE(html.find("<span id=\"little-L\">" + format_number(l["L_frames"].get<double>(), 4) + "</span>"),
            std::string::npos);
  EXPECT_NE(html.find("<span id=\"critical-stage\">" + r.summary["why"]["tail"]["critical_stage"].get<std::string>() +
                      "</span>"),
            std::string::npos);
}

TEST(Report, BreakdownOfAFrameMatchesAHandDerivation) {
  // One frame at t = 0 on three units behind one 10 GB/s bus (no dispatch overhead, no caps):
  //   p on a: 5 GFLOP at 1 TFLOP/s, no bytes: 0 -> 5 ms (floor 5 ms).
  //   r on b: 8 GFLOP: 0 -> 8 ms, so q (on b too, fed by p at 5 ms) waits 3 ms in the queue.
  //   w on c: 100 MB alone at 10 GB/s until q starts at 8 ms: 80 MB moved; then both at 5 GB/s: w's last 20 MB
  //   take 4 ms (ends at 12 ms), q has moved 20 MB by then; q's last 80 MB alone: 8 ms more, q ends at 20 ms.
  //   q: floor 100 MB / 10 GB/s = 10 ms, service 12 ms, so 2 ms of bus.
  // The critical path is camera -> p -> q (q ends last): latency 20 ms = queue 3 + floor 5 + 10 + bus 2, no
  // blocking, throttling, variability or gap. Each part is checked against these numbers, not against the sum.
  Scratch s;
  s.write("hw.yaml", R"(name: three-units-one-bus
memory:
  dram: {kind: dram, capacity: "8 GiB", bandwidth: "10 GB/s", latency: "100 ns", energy_per_byte: "100 pJ"}
units:
  a: {kind: gpu, peak: {fp32: "1 TFLOP/s"}, memory: [dram]}
  b: {kind: gpu, peak: {fp32: "1 TFLOP/s"}, memory: [dram]}
  c: {kind: gpu, peak: {fp32: "1 TFLOP/s"}, memory: [dram]}
)");
  const auto scenario = s.write("s.yaml", R"(name: breakdown
hardware: hw.yaml
duration: "1 s"
deadline: "1 s"
sensors:
  camera: {rate: "1 Hz"}
stages:
  p: {unit: a, inputs: [camera], work: {ops: "5 GFLOP"}}
  r: {unit: b, inputs: [camera], work: {ops: "8 GFLOP"}}
  q: {unit: b, inputs: [p], work: {ops: "1 MOP", bytes: {dram: "100 MB"}}}
  w: {unit: c, inputs: [camera], work: {ops: "1 MOP", bytes: {dram: "100 MB"}}}
)");
  const auto r = run_framesim(scenario, s.dir() / "out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto& worst = r.summary["why"]["worst_frames"];
  ASSERT_EQ(worst.size(), 1u);
  const auto& f = worst[0];
  EXPECT_NEAR(f["latency_s"].get<double>(), 20e-3, 1e-9);
  const std::map<std::string, double> want_total = {{"queue_s", 3e-3},   {"blocked_s", 0}, {"floor_s", 15e-3},
                                                    {"throttling_s", 0}, {"bus_s", 2e-3},  {"variability_s", 0},
                                                    {"gap_s", 0}};
  ASSERT_EQ(f["parts"].size(), want_total.size());
  for (const auto& [part, want] : want_total) EXPECT_NEAR(f["parts"][part].get<double>(), want, 1e-9) << part;
  ASSERT_EQ(f["path"].size(), 2u);
  const auto& p = f["path"][0];
  const auto& q = f["path"][1];
  EXPECT_EQ(p["stage"], "p");
  EXPECT_NEAR(p["floor_s"].get<double>(), 5e-3, 1e-9);
  EXPECT_NEAR(p["queue_s"].get<double>(), 0, 1e-9);
  EXPECT_NEAR(p["variability_s"].get<double>(), 0, 1e-9);
  EXPECT_EQ(q["stage"], "q");
  EXPECT_NEAR(q["start_s"].get<double>(), 8e-3, 1e-9);
  EXPECT_NEAR(q["queue_s"].get<double>(), 3e-3, 1e-9);
  EXPECT_NEAR(q["floor_s"].get<double>(), 10e-3, 1e-9);
  EXPECT_NEAR(q["bus_s"].get<double>(), 2e-3, 1e-9);
  EXPECT_NEAR(q["gap_s"].get<double>(), 0, 1e-9);
}

TEST(Report, WorstFramesAreTheSlowestAndMatchStagesCsv) {
  Scratch s;
  const auto r = run_framesim(source_path("scenarios/detector_segmenter_depth.yaml"), s.dir() / "out", "--duration 5s");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto& why = r.summary["why"];
  ASSERT_FALSE(why["worst_frames"].empty());
  // The worst frames are the frames with the largest latencies in frames.csv, in that order.
  const auto all = counted_latencies(r.frames);
  std::size_t k = all.size();
  for (const auto& f : why["worst_frames"]) {
    EXPECT_DOUBLE_EQ(f["latency_s"].get<double>(), all[--k]);
    // Each step's queue and blocked time are that stage's wait_s and blocked_s in stages.csv.
    for (const auto& step : f["path"]) {
      bool found = false;
      for (const auto& row : r.stages.rows) {
        if (row.at("frame") != std::to_string(f["frame"].get<std::int64_t>()) || row.at("stage") != step["stage"])
          continue;
        EXPECT_NEAR(step["queue_s"].get<double>(), std::stod(row.at("wait_s")), 1e-12);
        EXPECT_NEAR(step["blocked_s"].get<double>(), std::stod(row.at("blocked_s")), 1e-12);
        found = true;
      }
      EXPECT_TRUE(found) << "frame " << f["frame"] << " stage " << step["stage"];
    }
  }
  // The tail: the frames at or above p99, and its critical stage is one of the pipeline's.
  const auto& tail = why["tail"];
  const double p99 = r.summary["windows"]["all"]["latency_s"]["p99"].get<double>();
  EXPECT_EQ(tail["frames"].get<std::int64_t>(),
            std::count_if(all.begin(), all.end(), [&](double x) { return x >= p99; }));
  EXPECT_TRUE(r.summary["windows"]["all"]["stages"].contains(tail["critical_stage"].get<std::string>()));
}

TEST(Report, ProvenanceHashesEveryInputFile) {
  Scratch s;
  const auto r = run_framesim(source_path("scenarios/robot_30fps.yaml"), s.dir() / "out",
                              "--duration 3s --set 'sensors.camera.rate=\"20 Hz\"'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto& p = r.summary["provenance"];
  EXPECT_FALSE(p["framesim_version"].get<std::string>().empty());
  const auto line = p["command_line"].get<std::vector<std::string>>();
  EXPECT_EQ(line.front(), "framesim");
  EXPECT_NE(std::find(line.begin(), line.end(), "<out>"), line.end());  // the run folder is not part of the record
  ASSERT_EQ(p["overrides"].size(), 1u);
  EXPECT_EQ(p["overrides"][0]["path"], "sensors.camera.rate");
  std::set<std::string> names;
  for (const auto& in : p["inputs"]) {
    const std::string file = in["file"].get<std::string>();
    names.insert(fs::path(file).filename().string());
    // The oracle: coreutils sha256sum.
    const auto out = s.dir() / "sum.txt";
    ASSERT_EQ(
        std::system(fmt::format("cd '{}' && sha256sum '{}' > '{}'", FRAMESIM_SOURCE_DIR, file, out.string()).c_str()),
        0);
    EXPECT_EQ(read_file(out).substr(0, 64), in["sha256"].get<std::string>()) << file;
  }
  for (const char* f : {"robot_30fps.yaml", "jetson_orin_nano_8gb.yaml"}) EXPECT_TRUE(names.count(f)) << f;
  EXPECT_GE(names.size(), 3u);  // and the networks
}

TEST(Report, ConsoleCheckCatchesAnErrorAndABlankPage) {
  // The negative control of the Chromium checks: a console.error and a white page are both caught.
  if (!have_chromium()) GTEST_SKIP() << "chromium is not installed (make deps installs it)";
  Scratch s;
  const auto page = s.write("bad.html", "<html><body><script>console.error('boom')</script></body></html>");
  const Rendered r = render(page, s.dir());
  EXPECT_NE(r.console.find("boom"), std::string::npos) << r.console;
  EXPECT_LT(r.non_white, 0.001);
}

TEST(Report, RunReportRendersInChromium) {
  Scratch s;
  const auto r = run_framesim(source_path("scenarios/detector_segmenter_depth.yaml"), s.dir() / "out", "--duration 4s");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto& all = r.summary["windows"]["all"]["latency_s"];
  const std::string p99 = framesim::core::format_seconds(all["p99"].get<double>()) +
                          (all["few_samples"].dump().find("p99\"") != std::string::npos ? "*" : "");
  expect_renders(
      s.dir() / "out" / "report.html", s,
      {"<span id=\"p99\">" + p99 + "</span>",
       "<span id=\"critical-stage\">" + r.summary["why"]["tail"]["critical_stage"].get<std::string>() + "</span>",
       "id=\"cdf\"", "id=\"thermal\"", "id=\"roofline1\"", "Utilisation"});
}

TEST(Report, BudgetReportRendersInChromium) {
  Scratch s;
  const auto html = s.dir() / "budget.html";
  const auto run =
      run_cli(fmt::format("budget hardware/jetson_orin_nx_16gb.yaml scenarios/networks/resnet18.yaml "
                          "--slice 12ms --html '{}' --json",
                          html.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json j = json::parse(run.out);
  expect_renders(
      html, s,
      {"<span id=\"estimate\">" + framesim::core::format_seconds(j["floor"]["estimate_s"].get<double>()) + "</span>",
       "id=\"roofline\""});
}

TEST(Report, SweepReportRendersInChromium) {
  Scratch s;
  framesim::testing::write_small_sweep(s);
  const auto run =
      run_cli(fmt::format("sweep '{}' -j 2 -o '{}'", (s.dir() / "sweep.yaml").string(), (s.dir() / "out").string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Axis columns: the value in SI base units, and the label beside it.
  const auto csv = framesim::testing::read_table(s.dir() / "out" / "results.csv");
  ASSERT_EQ(csv.rows.size(), 12u);
  EXPECT_EQ(csv.rows[0].at("hardware.memory.dram.bandwidth"), "25000000000");
  EXPECT_EQ(csv.rows[0].at("hardware.memory.dram.bandwidth_label"), "25 GB/s");
  EXPECT_EQ(csv.rows[0].at("networks.net.precision"), "fp32");
  EXPECT_EQ(csv.rows[1].at("sensors.camera.rate"), "60");
  EXPECT_EQ(csv.rows[1].at("sensors.camera.rate_label"), "60 Hz");
  const json j = json::parse(read_file(s.dir() / "out" / "results.json"));
  EXPECT_EQ(j["provenance"]["command_line"][1], "sweep");
  EXPECT_GT(j["tie_tolerance"].get<double>(), 0);
  // Every point is labelled and has its axis values on hover.
  const std::string html = read_file(s.dir() / "out" / "report.html");
  for (int i = 0; i < 12; ++i) EXPECT_NE(html.find(fmt::format("<title>point {}: p99", i)), std::string::npos) << i;
  EXPECT_NE(html.find("networks.net.precision = fp16"), std::string::npos);
  expect_renders(s.dir() / "out" / "report.html", s, {"<span id=\"points\">12</span>", "id=\"pareto\""});
}

namespace {

/// A run folder by hand: frames.csv with the given latencies (all counted, completed) and a minimal summary.
void hand_made_run(const fs::path& dir, const std::string& name, const std::vector<double>& latencies_s) {
  fs::create_directories(dir);
  std::string frames = "frame,sensor,capture_s,outcome,counted,done_s,latency_s\n";
  for (std::size_t i = 0; i < latencies_s.size(); ++i) {
    const double capture = static_cast<double>(i) / 30;
    frames += fmt::format("{},camera,{},completed,1,{},{}\n", i, capture, capture + latencies_s[i], latencies_s[i]);
  }
  frames += "999999,camera,40,completed,0,40.5,0.5\n";  // not counted (warm-up): left out
  framesim::core::write_file_atomic(dir / "frames.csv", frames);
  // The parts every summary.json has (the run-summary reader requires them); the statistics compare recomputes
  // from frames.csv.
  const json window{{"frames", latencies_s.size()}, {"late", 0}, {"dropped", 0}, {"missed", 0}, {"miss_rate", 0.0},
                    {"latency_s", {{"count", 0}}}};
  const json summary{{"scenario", {{"name", name}, {"warmup_s", 0.0}, {"deadline_s", 0.05}}},
                     {"windows", {{"all", window}, {"sustained", window}}},
                     {"energy", {{"per_frame_J", {{"count", 0}}}, {"mean_power_W", 1.0}}},
                     {"thermal", {{"throttled_fraction", 0.0}}}};
  framesim::core::write_file_atomic(dir / "summary.json", summary.dump());
}

}  // namespace

TEST(Compare, HandMadeRunsDifferByFiveMilliseconds) {
  Scratch s;
  // A: 1, 2, ..., 1000 ms in a shuffled order; B: every frame 5 ms slower.
  std::vector<double> a, b;
  for (int i = 0; i < 1000; ++i) {
    const int ms = 1 + (i * 379) % 1000;
    a.push_back(ms * 1e-3);
    b.push_back((ms + 5) * 1e-3);
  }
  hand_made_run(s.dir() / "a", "A", a);
  hand_made_run(s.dir() / "b", "B", b);
  const auto run = run_cli(fmt::format("compare '{}' '{}' -o '{}' --json", (s.dir() / "a").string(),
                                       (s.dir() / "b").string(), (s.dir() / "cmp").string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json c = json::parse(run.out);
  EXPECT_EQ(c["kind"], "runs");
  std::map<std::string, json> rows;
  for (const auto& r : c["rows"]) rows[r["metric"].get<std::string>()] = r;
  // p50 of 1..1000 ms is 500 ms (nearest rank), p99 990 ms; B's are 5 ms more.
  EXPECT_NEAR(rows["latency p50"]["a"].get<double>(), 0.500, 1e-12);
  EXPECT_NEAR(rows["latency p99"]["b"].get<double>(), 0.995, 1e-12);
  EXPECT_NEAR(rows["latency p50"]["difference"].get<double>(), 0.005, 1e-12);
  // Each side's interval at 97.5 % (tail 1.25 %) by hand: the difference's interval is [lo_B - hi_A, hi_B - lo_A].
  for (const auto& [name, p] : {std::pair{"latency p50", 0.5}, {"latency p90", 0.9}, {"latency p99", 0.99}}) {
    const auto [l, u] = interval_ranks_by_hand(1000, p, 0.0125);
    // Sample k (1-based) of A is k ms, of B k + 5 ms.
    EXPECT_NEAR(rows[name]["ci"][0].get<double>(), (l + 5.0) * 1e-3 - u * 1e-3, 1e-12) << name;
    EXPECT_NEAR(rows[name]["ci"][1].get<double>(), (u + 5.0) * 1e-3 - l * 1e-3, 1e-12) << name;
  }
  EXPECT_TRUE(rows["latency mean"]["significant"].is_boolean());
  for (const char* f : {"compare.json", "compare.txt", "report.html"})
    EXPECT_TRUE(fs::exists(s.dir() / "cmp" / f)) << f;
  expect_renders(s.dir() / "cmp" / "report.html", s, {"<span id=\"first-difference\">5 ms</span>", "id=\"tails\""});
}

TEST(Compare, TwoBudgetsDifferExactly) {
  Scratch s;
  const auto slow =
      run_cli("budget hardware/seed_reference.yaml scenarios/networks/seed_matmuls.yaml --precision int8 --json");
  const auto fast =
      run_cli("budget hardware/seed_npu.yaml scenarios/networks/seed_matmuls.yaml --precision int8 --json");
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  ASSERT_EQ(fast.exit_code, 0) << fast.err;
  const auto a = s.write("a.json", slow.out), b = s.write("b.json", fast.out);
  const auto run =
      run_cli(fmt::format("compare '{}' '{}' -o '{}' --json", a.string(), b.string(), (s.dir() / "cmp").string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json c = json::parse(run.out);
  EXPECT_EQ(c["kind"], "budgets");
  const double fa = json::parse(slow.out)["floor"]["estimate_s"].get<double>();
  const double fb = json::parse(fast.out)["floor"]["estimate_s"].get<double>();
  EXPECT_EQ(c["rows"][0]["metric"], "estimate");
  EXPECT_DOUBLE_EQ(c["rows"][0]["difference"].get<double>(), fb - fa);
  // A run folder and a budget are not compared.
  hand_made_run(s.dir() / "run", "R", {0.01, 0.02});
  const auto mixed = run_cli(
      fmt::format("compare '{}' '{}' -o '{}'", (s.dir() / "run").string(), a.string(), (s.dir() / "cmp2").string()));
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(mixed.err.find("compare two runs or two budgets"), std::string::npos) << mixed.err;
}
