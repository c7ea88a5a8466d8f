// The table of measured formats (trace/measured.hpp, measured_formats(): seven rows) against the fixtures, the
// CLI help and traces/README.md; and three of those formats in detail (the TensorRT, Nsight Systems and ONNX
// Runtime profiles are edge_profiles_test.cpp), read from the fixtures in tests/trace/fixtures/ (a 3-layer
// network: conv1, relu1, conv2) and from small texts:
//  - PyTorch profiler traces: GPU kernel time through correlation ids, averaged over profiler steps, matched by
//    order; record_function ranges matched by name and by a dotted suffix, repeated passes found and averaged;
//  - TFLite benchmark_model op profiles: the Run Order table of the regular runs, avg_ms x times called, node
//    types and names containing ", ", matched through the output tensor name;
//  - the plain CSV, unchanged;
//  - every problem located (file:line:column and the JSON key path).
#include "trace/measured.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "config/hardware.hpp"
#include "config/network.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "model/calibrate.hpp"
#include "test_support.hpp"

namespace framesim {
namespace {

using trace::MatchMethod;
using trace::MeasuredFormat;

std::string fixture(const std::string& name) { return testing::source_path("tests/trace/fixtures/" + name); }

model::NetworkSpec three_layers() { return config::load_network(fixture("three_layers.yaml")); }

using testing::error_of;

std::string error_in(const std::string& text) {
  return error_of([&] { trace::parse_measured_trace(text, "t.json"); });
}

const trace::LayerMatch* match_of(const trace::MatchedMeasurements& m, const std::string& layer) {
  for (const auto& x : m.matches)
    if (x.layer == layer) return &x;
  return nullptr;
}

double measured(const trace::MatchedMeasurements& m, const std::string& name) {
  for (const auto& x : m.measurements)
    if (x.name == name) return x.time_s;
  ADD_FAILURE() << "no measurement " << name;
  return -1;
}

bool has_note(const std::vector<std::string>& notes, const std::string& part) {
  for (const auto& n : notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

std::string all_notes(const std::vector<std::string>& notes) {
  std::string out;
  for (const auto& n : notes) out += "  " + n + "\n";
  return out;
}

// ---- PyTorch profiler traces ----

TEST(PyTorchTrace, GpuKernelsThroughCorrelationIdsAveragedOverSteps) {
  // Two ProfilerSteps; per step aten::conv2d (cudnn conv + bias add kernels), aten::relu (clamp_min kernel),
  // aten::conv2d, aten::empty (no kernel). Kernel times: conv 40+5 then 44+5 us, relu 4 then 6, conv 90+5 then 94+5.
  const auto t = trace::read_measured_trace(fixture("pytorch_3layer_gpu.json"));
  EXPECT_EQ(t.format, MeasuredFormat::pytorch_trace);
  EXPECT_TRUE(t.gpu_time);
  EXPECT_EQ(t.iterations, 2);
  ASSERT_EQ(t.entries.size(), 4u);  // top-level ops only: aten::convolution etc. are inside aten::conv2d
  EXPECT_EQ(t.entries[0].op, "aten::conv2d");
  EXPECT_EQ(t.entries[1].op, "aten::relu");
  EXPECT_EQ(t.entries[2].op, "aten::conv2d");
  EXPECT_EQ(t.entries[3].op, "aten::empty");
  EXPECT_NEAR(t.entries[0].time_s, 47e-6, 1e-12);
  EXPECT_NEAR(t.entries[1].time_s, 5e-6, 1e-12);
  EXPECT_NEAR(t.entries[2].time_s, 97e-6, 1e-12);
  EXPECT_EQ(t.entries[3].time_s, 0.0);
  EXPECT_EQ(t.entries[0].iterations, 2);
  EXPECT_EQ(t.entries[0].input_dims, (std::vector<std::int64_t>{1, 3, 16, 16}));
  EXPECT_TRUE(has_note(t.notes, "through the correlation id of their cuda_runtime launch")) << all_notes(t.notes);
  EXPECT_TRUE(has_note(t.notes, "averaged over 2 profiler steps")) << all_notes(t.notes);

  const auto m = trace::match_measurements(t, three_layers());
  ASSERT_NE(match_of(m, "conv1"), nullptr);
  EXPECT_EQ(match_of(m, "conv1")->method, MatchMethod::order);
  EXPECT_EQ(match_of(m, "conv1")->recorded, "aten::conv2d #1");
  EXPECT_EQ(match_of(m, "conv2")->recorded, "aten::conv2d #2");
  EXPECT_EQ(match_of(m, "relu1")->recorded, "aten::relu #1");
  EXPECT_NEAR(measured(m, "conv1"), 47e-6, 1e-12);
  EXPECT_NEAR(measured(m, "relu1"), 5e-6, 1e-12);
  EXPECT_NEAR(measured(m, "conv2"), 97e-6, 1e-12);
  EXPECT_EQ(measured(m, "aten::empty #1"), 0.0);  // matches no layer: reported as such
  EXPECT_TRUE(has_note(m.notes, "matched 3 of 3 layers of three-layers: 3 by order")) << all_notes(m.notes);
  EXPECT_FALSE(has_note(m.notes, "input dims disagree")) << all_notes(m.notes);

  // The budget's matching then sums conv1 and relu1 into their fused kernel.
  const auto hw = config::load_hardware(testing::source_path("hardware/seed_reference.yaml"));
  const auto set = model::match_samples(hw, 0, three_layers(), m.measurements);
  ASSERT_EQ(set.samples.size(), 2u);
  EXPECT_EQ(set.samples[0].kernel, "conv1+relu1");
  EXPECT_NEAR(set.samples[0].measured_s, 52e-6, 1e-12);
  EXPECT_NEAR(set.samples[1].measured_s, 97e-6, 1e-12);
  EXPECT_EQ(set.unmatched, std::vector<std::string>{"aten::empty #1"});
}

TEST(PyTorchTrace, RangesByNameAndSuffixOpsByOrderRepeatedPassesAveraged) {
  // No ProfilerStep; two forward passes inside a "backbone" range: "conv1" (70, 74 us), "model.relu1" (20, 22 us)
  // and a bare aten::conv2d (100, 110 us). CPU times.
  const auto t = trace::read_measured_trace(fixture("pytorch_3layer_ranges.json"));
  EXPECT_FALSE(t.gpu_time);
  EXPECT_EQ(t.iterations, 1);
  const auto m = trace::match_measurements(t, three_layers());
  ASSERT_NE(match_of(m, "conv1"), nullptr);
  ASSERT_NE(match_of(m, "relu1"), nullptr);
  ASSERT_NE(match_of(m, "conv2"), nullptr);
  EXPECT_EQ(match_of(m, "conv1")->method, MatchMethod::name);
  EXPECT_EQ(match_of(m, "relu1")->method, MatchMethod::alias);
  EXPECT_EQ(match_of(m, "relu1")->recorded, "model.relu1");
  EXPECT_EQ(match_of(m, "conv2")->method, MatchMethod::order);
  EXPECT_NEAR(measured(m, "conv1"), 72e-6, 1e-12);
  EXPECT_NEAR(measured(m, "relu1"), 21e-6, 1e-12);
  EXPECT_NEAR(measured(m, "conv2"), 105e-6, 1e-12);
  EXPECT_EQ(m.measurements.size(), 3u);  // the ops inside conv1 and relu1 count there, not again
  EXPECT_TRUE(has_note(m.notes, "2 passes over the network: averaged")) << all_notes(m.notes);
  EXPECT_TRUE(has_note(m.notes, "ranges not named after a layer (their ops were matched on their own): backbone"))
      << all_notes(m.notes);
  EXPECT_TRUE(has_note(m.notes, "1 by name, 1 by alias (a range name ending in the layer's), 1 by order"))
      << all_notes(m.notes);

  // Without a network: leaf ranges by name (averaged over passes), the ops of "backbone" by occurrence.
  const auto plain = trace::to_measurements(t);
  std::vector<std::string> names;
  for (const auto& x : plain) names.push_back(x.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"backbone", "conv1", "model.relu1", "aten::conv2d #1", "aten::conv2d #2"}));
  EXPECT_NEAR(plain[1].time_s, 72e-6, 1e-12);
}

/// A trace of CPU ops on one thread: each event {name, ts, dur} in microseconds.
std::string cpu_trace(const std::vector<std::tuple<std::string, double, double>>& ops, const std::string& extra = "") {
  std::string events;
  for (const auto& [name, ts, dur] : ops)
    events += (events.empty() ? "" : ",\n") +
              ("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" + name +
               "\", \"pid\": 1, \"tid\": 1, \"ts\": " + std::to_string(ts) + ", \"dur\": " + std::to_string(dur) + "}");
  if (!extra.empty()) events += ",\n" + extra;
  return "{\"traceEvents\": [\n" + events + "\n]}\n";
}

TEST(PyTorchTrace, CountsThatDisagreeAreNotMatchedByOrder) {
  // Three aten::conv2d for a network with two conv2d layers: which one is extra cannot be known.
  const auto t = trace::parse_measured_trace(
      cpu_trace({{"aten::conv2d", 0, 10}, {"aten::relu", 20, 2}, {"aten::conv2d", 30, 10}, {"aten::conv2d", 50, 10}}),
      "t.json");
  const auto m = trace::match_measurements(t, three_layers());
  EXPECT_EQ(match_of(m, "conv1"), nullptr);
  EXPECT_NE(match_of(m, "relu1"), nullptr);
  EXPECT_TRUE(has_note(m.notes, "not matched by order, the counts disagree: 3 conv2d ops but 2 conv2d layers"))
      << all_notes(m.notes);
  EXPECT_DOUBLE_EQ(measured(m, "aten::conv2d #3"), 10e-6);
}

TEST(PyTorchTrace, RepeatedPassesNeedEveryOpTypeToAgree) {
  // The network (three_layers.yaml) is conv2d, relu, conv2d: per pass 2 conv2d and 1 relu.
  // (a) Two clean passes: 4 conv2d (10, 20, 30, 40 us in order) and 2 relu: every type is 2 x its layers, so 2
  //     passes are claimed; conv1 is the mean of the 1st and 3rd conv2d (10 and 30 us: 20 us), conv2 of the 2nd
  //     and 4th (20 and 40: 30 us), relu1 of both relus (2 and 4: 3 us).
  const auto clean = trace::parse_measured_trace(cpu_trace({{"aten::conv2d", 0, 10},
                                                            {"aten::relu", 20, 2},
                                                            {"aten::conv2d", 30, 20},
                                                            {"aten::conv2d", 60, 30},
                                                            {"aten::relu", 100, 4},
                                                            {"aten::conv2d", 110, 40}}),
                                                 "t.json");
  const auto ok = trace::match_measurements(clean, three_layers());
  EXPECT_TRUE(has_note(ok.notes, "the op sequence holds 2 passes over the network: averaged")) << all_notes(ok.notes);
  EXPECT_NEAR(measured(ok, "conv1"), 20e-6, 1e-12);
  EXPECT_NEAR(measured(ok, "conv2"), 30e-6, 1e-12);
  EXPECT_NEAR(measured(ok, "relu1"), 3e-6, 1e-12);

  // (b) The same with a third relu: conv2d still votes for 2 passes (4 ops = 2 x 2 layers) and outvotes relu's 3,
  //     but 3 relu ops are not 1 relu layer x 2: no pass is claimed, nothing averaged. At one pass neither type's
  //     count equals the network's (4 != 2, 3 != 1): 0 of the 7 ops match by order.
  const auto odd = trace::parse_measured_trace(cpu_trace({{"aten::conv2d", 0, 10},
                                                          {"aten::relu", 20, 2},
                                                          {"aten::conv2d", 30, 20},
                                                          {"aten::relu", 55, 2},
                                                          {"aten::conv2d", 60, 30},
                                                          {"aten::relu", 100, 4},
                                                          {"aten::conv2d", 110, 40}}),
                                               "t.json");
  const auto m = trace::match_measurements(odd, three_layers());
  EXPECT_FALSE(has_note(m.notes, "passes over the network: averaged")) << all_notes(m.notes);
  EXPECT_TRUE(has_note(m.notes,
                       "not 2 passes over the network: 1 of 2 op types disagree (3 relu ops, not 1 relu layer x 2); "
                       "no passes averaged (a trace of another network?); by order, 0 of 7 ops outside named ranges "
                       "matched a layer"))
      << all_notes(m.notes);
  EXPECT_EQ(match_of(m, "conv1"), nullptr);
  EXPECT_EQ(match_of(m, "relu1"), nullptr);

  // (c) Two passes of conv2d and relu and one aten::sigmoid the network has no layer for: the pass does not hold
  //     every type (1 sigmoid op, not 0 sigmoid layers x 2): refused likewise.
  const auto extra = trace::parse_measured_trace(cpu_trace({{"aten::conv2d", 0, 10},
                                                            {"aten::relu", 20, 2},
                                                            {"aten::conv2d", 30, 20},
                                                            {"aten::conv2d", 60, 30},
                                                            {"aten::relu", 100, 4},
                                                            {"aten::conv2d", 110, 40},
                                                            {"aten::sigmoid", 160, 1}}),
                                                 "t.json");
  const auto e = trace::match_measurements(extra, three_layers());
  EXPECT_TRUE(has_note(e.notes,
                       "not 2 passes over the network: 1 of 3 op types disagree (1 sigmoid op, not 0 "
                       "sigmoid layers x 2)"))
      << all_notes(e.notes);
  EXPECT_EQ(match_of(e, "conv1"), nullptr);
}

TEST(PyTorchTrace, InputDimsThatDisagreeAreReported) {
  const std::string text = R"({"traceEvents": [
{"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": 0, "dur": 10, "args": {"Input Dims": [[1, 3, 32, 32], [8, 3, 3, 3]]}},
{"ph": "X", "cat": "cpu_op", "name": "aten::relu_", "pid": 1, "tid": 1, "ts": 20, "dur": 2, "args": {"Input Dims": [[1, 8, 16, 16]]}},
{"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": 30, "dur": 10, "args": {"Input Dims": [[1, 8, 16, 16], [8, 8, 3, 3]]}}
]})";
  const auto m = trace::match_measurements(trace::parse_measured_trace(text, "t.json"), three_layers());
  EXPECT_NE(match_of(m, "relu1"), nullptr);  // aten::relu_ (in place) is a relu
  EXPECT_TRUE(has_note(m.notes,
                       "input dims disagree for 1 order-matched ops (is the order right?): aten::conv2d #1 "
                       "reads 1x3x32x32 but conv1 reads 1x3x16x16"))
      << all_notes(m.notes);
}

TEST(PyTorchTrace, BeginEndPairsStepsAndExternalIds) {
  // B/E pairs on the CPU; a kernel whose launch is missing is attributed through its External id; an op outside
  // the only ProfilerStep is left out.
  const std::string text = R"({"traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
{"ph": "B", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": 1, "args": {"External id": 5}},
{"ph": "E", "pid": 1, "tid": 1, "ts": 31},
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 40, "dur": 12.5, "args": {"External id": 5, "correlation": 99}},
{"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 200, "dur": 3}
]})";
  const auto t = trace::parse_measured_trace(text, "t.json");
  ASSERT_EQ(t.entries.size(), 1u);
  EXPECT_TRUE(t.gpu_time);
  EXPECT_DOUBLE_EQ(t.entries[0].time_s, 12.5e-6);
  EXPECT_TRUE(has_note(t.notes, "1 through their External id")) << all_notes(t.notes);
  EXPECT_TRUE(has_note(t.notes, "1 ops and ranges outside every ProfilerStep: left out")) << all_notes(t.notes);
}

TEST(PyTorchTrace, ProblemsAreLocated) {
  EXPECT_EQ(error_in("{\"traceEvents\": [\n  {\"ph\": \"X\", \"ph\": \"X\"}\n]}"),
            "t.json:2:21: traceEvents[0].ph: given twice");
  EXPECT_EQ(error_in("{\"traceEvents\": {}}"), "t.json:1:17: traceEvents: expected an array of events, got an object");
  EXPECT_EQ(error_in("{\"traceEvents\": []} x"), "t.json:1:21: unexpected 'x' after the end of the JSON");
  EXPECT_EQ(error_in("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\nb\"}]}"),
            "t.json:1:40: traceEvents[0].name: a line break inside a string (an unterminated string?)");
  {
    const std::string deep = error_in("{\"traceEvents\": [" + std::string(300, '['));
    EXPECT_EQ(deep.substr(0, 32), "t.json:1:218: traceEvents[0][0][");
    EXPECT_NE(deep.find("]: nested too deeply (more than 200 levels)"), std::string::npos) << deep;
  }
  EXPECT_EQ(error_in("{\"traceEvents\": [{\"ph\": \"X\", \"name\": 7, \"ts\": 0, \"dur\": 1}]}"),
            "t.json:1:38: traceEvents[0].name: expected a string, got a number");
  EXPECT_EQ(error_in("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"ts\": 0, \"dur\": 1, \"pid\": [1]}]}"),
            "t.json:1:69: traceEvents[0].pid: expected a number or a string, got an array");
  EXPECT_EQ(error_in("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"k\", \"cat\": \"kernel\", \"ts\": 0, \"dur\": 1, "
                     "\"args\": {\"correlation\": \"7\"}}]}"),
            "t.json:1:103: traceEvents[0].args.correlation: expected a number (the CUDA correlation id), got a string");
  EXPECT_EQ(error_in(std::string("\x1f\x8b\x08\x00", 4)),
            "t.json:1:1: a gzip-compressed file: decompress it first (gunzip)");
  // Comments before the JSON are skipped and counted: line numbers stay those of the file.
  EXPECT_EQ(error_in("# a note\n# another\n{\"traceEvents\": [1]}"),
            "t.json:3:18: traceEvents[0]: expected an event (an object), got a number");
  // Many problems: a screenful, then a count.
  std::string many = "{\"traceEvents\": [";
  for (int i = 0; i < 30; ++i) many += std::string(i ? "," : "") + "{\"ph\": \"X\", \"name\": \"a\", \"ts\": 0}";
  const std::string message = error_in(many + "]}");
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 20) << message;
  EXPECT_NE(message.find("... and 10 more problems"), std::string::npos) << message;
}

// ---- TFLite benchmark_model op profiles ----

TEST(TfliteProfile, RunOrderOfTheRegularRunsMatchedThroughTensorNames) {
  const auto t = trace::read_measured_trace(fixture("tflite_3layer.csv"));
  EXPECT_EQ(t.format, MeasuredFormat::tflite_profile);
  EXPECT_EQ(t.iterations, 250);
  ASSERT_EQ(t.entries.size(), 4u);  // the initialization rows and the "Top by Computation Time" copy are not read
  EXPECT_EQ(t.entries[0].name, "[conv1]:0");
  EXPECT_EQ(t.entries[0].op, "CONV_2D");
  EXPECT_DOUBLE_EQ(t.entries[0].time_s, 0.0482e-3);
  EXPECT_EQ(t.entries[1].aliases, (std::vector<std::string>{"relu1", "conv1/Relu", "relu1;conv1/Relu"}));
  EXPECT_EQ(t.entries[0].line, 27);

  const auto m = trace::match_measurements(t, three_layers());
  for (const char* layer : {"conv1", "relu1", "conv2"}) {
    ASSERT_NE(match_of(m, layer), nullptr) << layer;
    EXPECT_EQ(match_of(m, layer)->method, MatchMethod::alias) << layer;
  }
  EXPECT_DOUBLE_EQ(measured(m, "conv2"), 0.0636e-3);
  EXPECT_DOUBLE_EQ(measured(m, "Identity"), 0.0062e-3);  // matches no layer: reported under its tensor name
  EXPECT_TRUE(has_note(m.notes, "averaged by benchmark_model over 250 runs")) << all_notes(m.notes);
}

TEST(TfliteProfile, DelegateRowsTypesWithCommasAndRepeatedCalls) {
  // A version without the "start" column; XNNPACK's internal ops ("Convolution (NHWC, F32) IGEMM") called twice per
  // run; a node with two outputs.
  const auto t = trace::read_measured_trace(fixture("tflite_xnnpack.csv"));
  ASSERT_EQ(t.entries.size(), 4u);
  EXPECT_EQ(t.entries[0].op, "Convolution (NHWC, F32) IGEMM");
  EXPECT_EQ(t.entries[0].name, "Delegate/Convolution (NHWC, F32) IGEMM:0");
  EXPECT_DOUBLE_EQ(t.entries[0].time_s, 2 * 0.0241e-3);  // avg_ms is per call, times called per run
  EXPECT_EQ(t.entries[1].op, "Clamp (NC, F32)");
  EXPECT_EQ(t.entries[2].name, "[split:0, split:1]:2");
  EXPECT_EQ(t.entries[2].aliases, (std::vector<std::string>{"split:0", "split:1", "split:0, split:1"}));
  EXPECT_EQ(t.iterations, 50);
  const auto m = trace::match_measurements(t, three_layers());
  EXPECT_EQ(m.matches.size(), 1u);  // [conv2]:3
}

std::string tflite(const std::string& rows,
                   const std::string& header = "node type, start, first, avg_ms, %, cdf%, mem KB, times called, name") {
  return "Operator-wise Profiling Info for Regular Benchmark Runs:\n"
         "============================== Run Order ==============================\n" +
         header + "\n" + rows;
}

TEST(TfliteProfile, ProblemsAreLocated) {
  auto error = [](const std::string& text) { return error_of([&] { trace::parse_measured_trace(text, "p.csv"); }); };
  EXPECT_EQ(error(tflite("CONV_2D, 0, 0.1, -0.2, 10%, 10%, 0, 1, [a]:0\n")),
            "p.csv:4:18: avg_ms: must not be negative, got \"-0.2\"");
  EXPECT_EQ(error(tflite("CONV_2D, 0, 0.1, 0.2, 10%, 10%, 0, 1.5, [a]:0\n")),
            "p.csv:4:36: times called: expected a whole number of calls, got \"1.5\"");
  EXPECT_EQ(error(tflite("CONV_2D, 0, 0.1, 0.2, 10%, 10%, 0, 1, \n")), "p.csv:4:39: name: empty node name");
  EXPECT_EQ(
      error(tflite("CONV_2D, 0, 0.1, 0.2, 10%, 10%, 0, 1, [a]:0\n", "node type, start, first, avg, name")),
      "p.csv:3:1: expected the Run Order header \"node type, start, first, avg_ms, %, cdf%, mem KB, times called, "
      "name\"");
  EXPECT_EQ(error(tflite("CONV_2D, 0, 0.1, 0.2, 10%, 10%, 0, 1, [a]:0\nsomething else\n")).substr(0, 50),
            "p.csv:5:1: expected 9 fields like the header on li");
  EXPECT_EQ(error("Operator-wise Profiling Info for Regular Benchmark Runs:\nTimings (microseconds): count=3\n"),
            "p.csv:1:1: the regular-runs section has no Run Order table (truncated file?)");
  EXPECT_EQ(
      error(tflite("A, 0, 0.1, 0.2, 10%, 10%, 0, 1, [a]:0\n") + tflite("B, 0, 0.1, 0.2, 10%, 10%, 0, 1, [b]:0\n")),
      "p.csv:5:1: a second regular-runs section (two profiles in one file?)");
}

// ---- the plain CSV and the command ----

TEST(PlainCsv, ReadAsBefore) {
  const auto t =
      trace::parse_measured_trace("# measured on the bench\nlayer,time_us\nconv1,50\nconv2, 70.5\n", "m.csv");
  EXPECT_EQ(t.format, MeasuredFormat::plain_csv);
  ASSERT_EQ(t.entries.size(), 2u);
  EXPECT_DOUBLE_EQ(t.entries[1].time_s, 70.5e-6);
  const auto m = trace::match_measurements(t, three_layers());
  EXPECT_EQ(match_of(m, "conv2")->method, MatchMethod::name);
  EXPECT_TRUE(has_note(m.notes, "matched 2 of 3 layers of three-layers: 2 by name")) << all_notes(m.notes);
  EXPECT_EQ(error_in(""), "t.json:1:1: no header: expected a line like \"layer,time\"");
}

TEST(MeasuredCommand, BudgetReadsEveryFormat) {
  // `framesim budget --measured` takes the PyTorch trace and the TFLite profile of the 3-layer fixtures, matched
  // to the network's layers (and summed per kernel).
  for (const char* file : {"pytorch_3layer_ranges.json", "tflite_3layer.csv"}) {
    const auto run = testing::run_cli(
        "budget hardware/seed_reference.yaml tests/trace/fixtures/three_layers.yaml --measured tests/trace/fixtures/" +
        std::string(file));
    const std::string text = run.out + run.err;  // both streams are searched
    EXPECT_EQ(run.exit_code, 0) << file << "\n" << text;
    // conv2 from the TFLite profile; conv1 + relu1 (one fused kernel) from the PyTorch trace: 72 us + 21 us.
    EXPECT_NE(text.find(std::string(file) == "tflite_3layer.csv" ? "63.6 us" : "93 us"), std::string::npos)
        << file << "\n"
        << text;
  }
}

TEST(MeasuredFormats, TheTableHasARowPerFormatInEnumOrder) {
  // Seven formats: plain CSV, PyTorch, TFLite, TensorRT, Nsight CSV, Nsight SQLite, ONNX Runtime (the count the
  // header of measured.hpp and traces/README.md state). Each row is found by its format and names it once.
  const auto& rows = trace::measured_formats();
  ASSERT_EQ(rows.size(), 7u);
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(rows[i].format), i);
    EXPECT_EQ(&trace::measured_format(rows[i].format), &rows[i]);
    EXPECT_EQ(trace::measured_format_name(rows[i].format), rows[i].name);
    EXPECT_TRUE(names.insert(rows[i].name).second) << rows[i].name;
    EXPECT_TRUE(rows[i].recognises != nullptr && rows[i].read != nullptr) << rows[i].name;
  }
  // One fallback per kind of content (JSON: the PyTorch trace; other text: the plain CSV).
  EXPECT_TRUE(trace::measured_format(MeasuredFormat::plain_csv).fallback);
  EXPECT_TRUE(trace::measured_format(MeasuredFormat::pytorch_trace).fallback);
  EXPECT_EQ(std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.fallback; }), 2);
}

TEST(MeasuredFormats, EveryRowRecognisesItsFixture) {
  // A file of each format, read through read_measured_trace (which tries the rows): each lands on its own row,
  // and together they cover the table.
  const std::vector<std::pair<std::string, MeasuredFormat>> files = {
      {"orin_nx_gpu_mobilenet_v2.csv", MeasuredFormat::plain_csv},
      {"pytorch_3layer_gpu.json", MeasuredFormat::pytorch_trace},
      {"tflite_3layer.csv", MeasuredFormat::tflite_profile},
      {"edge/tiny_convnet_trt.profile.json", MeasuredFormat::tensorrt_profile},
      {"edge/tiny_convnet_nsys_cuda_gpu_trace.csv", MeasuredFormat::nsys_csv},
      {"edge/tiny_convnet_nsys.sqlite", MeasuredFormat::nsys_sqlite},
      {"edge/tiny_convnet_ort.json", MeasuredFormat::onnxruntime_profile}};
  std::set<MeasuredFormat> seen;
  for (const auto& [file, format] : files) {
    const auto t = trace::read_measured_trace(fixture(file));
    EXPECT_EQ(t.format, format) << file << " read as " << trace::measured_format_name(t.format);
    seen.insert(t.format);
  }
  EXPECT_EQ(seen.size(), trace::measured_formats().size());
}

TEST(MeasuredFormats, ReadmeTableAndHelpListTheRowsOfTheTable) {
  // traces/README.md's table is the traits table, row for row and column for column; `--measured` in the help of
  // budget and calibrate names every format.
  const std::string readme = core::read_file(testing::source_path("traces/README.md"));
  const std::string header =
      "| format | written by | recognised by | what gives the time | how names are matched to layers |";
  auto at = readme.find(header);
  ASSERT_NE(at, std::string::npos) << "the table's header changed";
  at = readme.find('\n', readme.find('\n', at) + 1) + 1;  // past the header and the | --- | line
  std::vector<std::string> lines;
  while (at < readme.size() && readme[at] == '|') {
    const auto eol = readme.find('\n', at);
    lines.push_back(readme.substr(at, eol - at));
    at = eol + 1;
  }
  const auto& rows = trace::measured_formats();
  ASSERT_EQ(lines.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    EXPECT_EQ(lines[i], fmt::format("| {} | {} | {} | {} | {} |", r.name, r.written_by, r.recognised_by, r.time_from,
                                    r.matched_by));
  }
  for (const char* command : {"budget --help", "calibrate --help"}) {
    const auto run = testing::run_cli(command);
    ASSERT_EQ(run.exit_code, 0) << command << "\n" << run.err;
    std::string help = run.out;
    // CLI11 wraps long descriptions: compare with the white space folded.
    std::string folded;
    for (char c : help)
      if (c == '\n' || c == ' ') {
        if (!folded.empty() && folded.back() != ' ') folded += ' ';
      } else {
        folded += c;
      }
    for (const auto& r : rows) EXPECT_NE(folded.find(r.name), std::string::npos) << command << ": " << r.name;
  }
}

}  // namespace
}  // namespace framesim
