// ONNX Runtime's session profile (SessionOptions.enable_profiling = True; the file is named by
// InferenceSession.end_profiling(), e.g. onnxruntime_profile__2024-01-01_12-00-00.json).
//
// Schema (onnxruntime/core/common/profiler.cc, and docs "Profiling tools" on onnxruntime.ai): a JSON array of
// Chrome-trace complete events, times in microseconds from the session's start:
//   {"cat": "Session", "name": "model_run", "ts": 18936, "dur": 3014, "pid": ..., "tid": ..., "ph": "X", "args": {}}
//   {"cat": "Node", "name": "Conv_0_kernel_time", "ts": 18955, "dur": 141, "ph": "X",
//    "args": {"op_name": "Conv", "provider": "CPUExecutionProvider", "graph_index": "0", ...}}
// Every node run adds "<node>_fence_before", "<node>_kernel_time" and "<node>_fence_after"; only the kernel time
// is the node's. "model_run" holds one inference (InferenceSession::Run); "SequentialExecutor::Execute" and
// "model_loading_uri", "session_initialization" are the session's own.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/text.hpp"
#include "core/units.hpp"
#include "trace/measured_formats.hpp"

namespace framesim::trace {

namespace {

/// One run of a node: its "<node>_kernel_time" event.
struct NodeRun {
  std::string node, op, provider, thread;
  double ts_us = 0, dur_us = 0;
  int line = 0;
};

/// The events framesim reads from the profile: the node runs and the model_run spans (ts, dur in us).
struct OrtEvents {
  std::vector<NodeRun> runs_of_nodes;
  std::vector<std::pair<double, double>> model_runs;
};

/// The node runs and model_runs of `doc`, each problem located into `problems`.
OrtEvents read_ort_events(const Json& doc, Problems& problems) {
  OrtEvents out;
  auto& runs_of_nodes = out.runs_of_nodes;
  auto& model_runs = out.model_runs;
  const std::string_view suffix = "_kernel_time";
  for (std::size_t i = 0; i < doc.items.size(); ++i) {
    const Json& e = doc.items[i];
    const std::string here = fmt::format("[{}]", i);
    if (e.type != Json::Type::object) {
      problems.add(e.line, e.column, here,
                   fmt::format("expected an event (an object), got {}", json_type_name(e.type)));
      continue;
    }
    const JsonFields f(e, here, problems);
    const auto cat = f.text("cat", true);
    const auto name = f.text("name", true);
    if (!cat || !name) continue;
    const bool node = *cat == "Node" && std::string_view(*name).ends_with(suffix);
    const bool run = *cat == "Session" && *name == "model_run";
    if (!node && !run) continue;
    const auto ts = f.timestamp("ts", 1e-6, true, "the start in microseconds");
    const auto dur_s = f.duration("dur", 1e-6, true, "the duration in microseconds");
    if (!ts || !dur_s) continue;
    const double dur = *dur_s * 1e6;  // as recorded, in microseconds
    if (run) {
      model_runs.emplace_back(*ts, dur);
      continue;
    }
    NodeRun r;
    r.node = name->substr(0, name->size() - suffix.size());
    r.ts_us = *ts;
    r.dur_us = dur;
    r.line = e.line;
    if (const Json* args = f.object("args")) {
      const JsonFields a(*args, here + ".args", problems);
      r.op = a.text("op_name", false).value_or("");
      r.provider = a.text("provider", false).value_or("");
    }
    if (const Json* tid = e.find("tid"); tid && tid->type == Json::Type::number)
      r.thread = fmt::format("{}", tid->number);
    if (r.node.empty()) {
      problems.add(e.find("name")->line, e.find("name")->column, here + ".name", "a kernel time without a node name");
      continue;
    }
    runs_of_nodes.push_back(std::move(r));
  }
  return out;
}

}  // namespace

MeasuredTrace parse_onnxruntime_profile(const Json& doc, const std::string& path) {
  MeasuredTrace trace;
  trace.path = path;
  trace.format = MeasuredFormat::onnxruntime_profile;
  Problems problems(path);
  if (doc.type != Json::Type::array) {
    problems.add(doc.line, doc.column, "", "expected ONNX Runtime's profile: an array of events");
    problems.throw_if_any();
  }
  OrtEvents events = read_ort_events(doc, problems);
  auto& runs_of_nodes = events.runs_of_nodes;
  auto& model_runs = events.model_runs;
  if (runs_of_nodes.empty() && problems.empty())
    problems.add(doc.line, doc.column, "",
                 "no \"Node\" events with a \"<node>_kernel_time\" name: not an ONNX Runtime profile with node times "
                 "(was the session run after enable_profiling, and the file closed by end_profiling()?)");
  problems.throw_if_any();

  std::sort(model_runs.begin(), model_runs.end());
  std::stable_sort(runs_of_nodes.begin(), runs_of_nodes.end(),
                   [](const NodeRun& a, const NodeRun& b) { return a.ts_us < b.ts_us; });
  // Each node run to the model_run holding it; without model_run events, inferences by repetition.
  std::vector<int> frame_of(runs_of_nodes.size(), -1);
  std::size_t outside = 0;
  int frames = 0;
  if (!model_runs.empty()) {
    frames = static_cast<int>(model_runs.size());
    std::size_t k = 0;
    for (std::size_t i = 0; i < runs_of_nodes.size(); ++i) {
      const double ts = runs_of_nodes[i].ts_us;
      while (k < model_runs.size() && model_runs[k].first + model_runs[k].second < ts) ++k;
      if (k < model_runs.size() && model_runs[k].first <= ts) frame_of[i] = static_cast<int>(k);
      else ++outside;
    }
  } else {
    std::vector<std::string> names;
    for (const auto& r : runs_of_nodes) names.push_back(r.node);
    const std::size_t period = repetition_period(names);
    frames = static_cast<int>(names.size() / period);
    for (std::size_t i = 0; i < runs_of_nodes.size(); ++i) frame_of[i] = static_cast<int>(i / period);
  }
  // A node's time per inference: the sum of its runs in a frame (a loop body runs several times), mean over the
  // frames. Entries in order of first run.
  std::map<std::string, std::size_t> entry_of;
  std::vector<double> sum_us;
  std::set<std::string> providers;
  trace.frames.resize(static_cast<std::size_t>(frames));
  const double origin_us = model_runs.empty() ? runs_of_nodes.front().ts_us : model_runs.front().first;
  for (std::size_t k = 0; k < model_runs.size(); ++k) {
    trace.frames[k].start_s = (model_runs[k].first - origin_us) * 1e-6;
    trace.frames[k].end_s = (model_runs[k].first + model_runs[k].second - origin_us) * 1e-6;
  }
  for (std::size_t i = 0; i < runs_of_nodes.size(); ++i) {
    if (frame_of[i] < 0) continue;
    const NodeRun& r = runs_of_nodes[i];
    auto [it, fresh] = entry_of.try_emplace(r.node, trace.entries.size());
    if (fresh) {
      MeasuredEntry e;
      e.name = r.node;
      e.op = r.op;
      e.origins = {r.node};
      e.line = r.line;
      trace.entries.push_back(std::move(e));
      sum_us.push_back(0);
    }
    sum_us[it->second] += r.dur_us;
    if (!r.provider.empty()) providers.insert(r.provider);
    auto& frame = trace.frames[static_cast<std::size_t>(frame_of[i])];
    frame.spans.push_back({static_cast<int>(it->second), (r.ts_us - origin_us) * 1e-6, r.dur_us * 1e-6, r.thread});
  }
  if (model_runs.empty())
    for (auto& frame : trace.frames)
      if (!frame.spans.empty()) {
        frame.start_s = frame.spans.front().start_s;
        for (const auto& s : frame.spans) frame.end_s = std::max(frame.end_s, s.start_s + s.duration_s);
      }
  for (std::size_t k = 0; k < trace.entries.size(); ++k) {
    trace.entries[k].time_s = sum_us[k] / frames * 1e-6;
    trace.entries[k].iterations = frames;
  }
  trace.iterations = frames;
  trace.notes.push_back(fmt::format(
      "{}: {} nodes, kernel time per inference, mean of {} {}{}", measured_format_name(trace.format),
      trace.entries.size(), frames, model_runs.empty() ? "repetitions of the node sequence" : "model_run events",
      providers.empty() ? "" : fmt::format(" (providers: {})", core::join_list({providers.begin(), providers.end()}))));
  if (outside > 0)
    trace.notes.push_back(fmt::format("{} node runs outside every model_run: left out (warm-up?)", outside));
  return trace;
}

}  // namespace framesim::trace
