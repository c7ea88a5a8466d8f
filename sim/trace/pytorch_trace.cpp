// Measured times from a PyTorch profiler (Kineto) Chrome trace: cpu_op events, record_function ranges, and GPU
// kernels attributed to their op through the correlation id of their launch; the reader behind
// read_measured_trace for that format (measured.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "core/error.hpp"
#include "trace/json_reader.hpp"
#include "trace/measured_formats.hpp"

namespace framesim::trace {

namespace {

enum class EventKind { op, range, step, launch, gpu };

struct Event {
  EventKind kind = EventKind::op;
  std::string name;
  std::string thread;  // "pid/tid"
  double ts_us = 0, dur_us = 0;
  std::optional<std::int64_t> correlation, external_id;
  std::vector<std::int64_t> dims;
  int line = 0;
  int parent = -1;  // enclosing CPU event on the same thread (index into events)
  double gpu_us = 0;
  int depth = 0;
};

bool is_op_name(std::string_view name) { return name.find("::") != std::string_view::npos; }

std::optional<EventKind> classify(const std::string& cat, const std::string& name) {
  const std::string c = lower(cat);
  if (name.starts_with("ProfilerStep#") && (c == "cpu_op" || c == "user_annotation" || c == "operator"))
    return EventKind::step;
  if (c == "cpu_op" || c == "operator") return is_op_name(name) ? EventKind::op : EventKind::range;
  if (c == "user_annotation") return EventKind::range;
  if (c == "cuda_runtime" || c == "cuda_driver" || c == "runtime") return EventKind::launch;
  if (c == "kernel" || c == "gpu_memcpy" || c == "gpu_memset") return EventKind::gpu;
  return std::nullopt;  // python_function, gpu_user_annotation, ac2g flows, metadata, counters, ...
}

/// The events of a trace as read: complete ("X") events, and "B"/"E" pairs of one thread made complete.
struct ReadEvents {
  std::vector<Event> events;
  std::size_t unmatched_ends = 0;  // "E" events without a "B": ignored
  std::size_t unclosed = 0;        // "B" events never closed by an "E": taken as 0 long
};

/// The args of an op or launch event: its CUDA correlation id, the External id linking GPU work to its op, and the
/// dims of its first tensor input ("Input Dims"). False (the problem added) when they are malformed.
bool read_event_args(const Json& args, const std::string& args_path, Problems& problems, Event& ev) {
  const JsonFields fields(args, args_path, problems);
  ev.correlation = fields.id("correlation", false, "the CUDA correlation id");
  ev.external_id = fields.id("External id", false, "the id linking GPU work to its op");
  if (const Json* dims = args.find("Input Dims")) {
    if (dims->type != Json::Type::array) {
      problems.add(dims->line, dims->column, args_path + ".Input Dims",
                   fmt::format("expected an array of input shapes, got {}", json_type_name(dims->type)));
      return false;
    }
    // The first input that is a tensor (a list of integers): TensorLists and scalars are not compared.
    for (const Json& input : dims->items) {
      if (input.type != Json::Type::array || input.items.empty()) continue;
      bool integers = true;
      for (const Json& d : input.items) integers = integers && d.type == Json::Type::number;
      if (integers)
        for (const Json& d : input.items) ev.dims.push_back(static_cast<std::int64_t>(d.number));
      break;
    }
  }
  return true;
}

/// Reads the Chrome-trace events of `text` from offset `start` (line `start_line`). Throws core::UserError listing
/// every malformed event, or when there is no CPU op or range at all.
ReadEvents read_events(const std::string& text, const std::string& path, std::size_t start, int start_line) {
  Problems problems(path);
  std::vector<Event> events;
  // B/E pairs per thread, turned into complete events.
  std::map<std::string, std::vector<std::size_t>> open_begins;
  std::size_t unmatched_ends = 0;

  auto id_of = [](const Json& v) -> std::string {
    if (v.type == Json::Type::string) return v.text;
    return fmt::format("{}", v.number);
  };
  auto on_event = [&](const Json& e, const std::string& here) {
    if (e.type != Json::Type::object) {
      problems.add(e.line, e.column, here,
                   fmt::format("expected an event (an object), got {}", json_type_name(e.type)));
      return;
    }
    const Json* ph = e.find("ph");
    if (!ph) {
      problems.add(e.line, e.column, here, "missing \"ph\" (the event type: \"X\", \"B\", \"E\", \"i\", \"M\", ...)");
      return;
    }
    if (ph->type != Json::Type::string) {
      problems.add(ph->line, ph->column, here + ".ph",
                   fmt::format("expected a string like \"X\", got {}", json_type_name(ph->type)));
      return;
    }
    const std::string& phase = ph->text;
    if (phase != "X" && phase != "B" && phase != "E") return;  // metadata, instants, counters, flows
    const JsonFields fields(e, here, problems);
    auto text_field = [&](const char* key, bool required) { return fields.text(key, required); };
    const std::optional<std::string> cat = text_field("cat", false);
    const std::optional<std::string> name = text_field("name", phase != "E");
    const std::optional<double> ts = fields.timestamp("ts", 1e-6, true, "the start in microseconds");
    std::optional<double> dur;
    if (phase == "X") {
      const bool given = e.find("dur") != nullptr;
      if (const auto dur_s = fields.duration("dur", 1e-6, true, "the duration in microseconds")) dur = *dur_s * 1e6;
      else if (given) return;
    }
    std::string thread;
    for (const char* key : {"pid", "tid"}) {
      const Json* v = e.find(key);
      if (v && v->type != Json::Type::number && v->type != Json::Type::string) {
        problems.add(v->line, v->column, fmt::format("{}.{}", here, key),
                     fmt::format("expected a number or a string, got {}", json_type_name(v->type)));
        return;
      }
      thread += (thread.empty() ? "" : "/") + (v ? id_of(*v) : std::string("0"));
    }
    const Json* args = e.find("args");
    if (args && args->type != Json::Type::object) {
      problems.add(args->line, args->column, here + ".args",
                   fmt::format("expected an object, got {}", json_type_name(args->type)));
      return;
    }
    if (!ts || (phase != "E" && !name) || (phase == "X" && !dur)) return;
    if (phase == "E") {
      auto& stack = open_begins[thread];
      if (stack.empty()) {
        ++unmatched_ends;
        return;
      }
      Event& begun = events[stack.back()];
      stack.pop_back();
      begun.dur_us = std::max(0.0, *ts - begun.ts_us);
      return;
    }
    const auto kind = classify(cat.value_or(is_op_name(*name) ? "cpu_op" : ""), *name);
    if (!kind) return;
    Event ev;
    ev.kind = *kind;
    ev.name = *name;
    ev.thread = thread;
    ev.ts_us = *ts;
    ev.dur_us = dur.value_or(0.0);
    ev.line = e.line;
    if (args && !read_event_args(*args, here + ".args", problems, ev)) return;
    if (phase == "B") open_begins[thread].push_back(events.size());
    events.push_back(std::move(ev));
  };

  JsonReader reader(text, path, start, start_line);
  reader.read_trace(on_event);
  problems.throw_if_any();
  std::size_t unclosed = 0;
  for (const auto& [thread, stack] : open_begins) unclosed += stack.size();

  std::size_t cpu_events = 0;
  for (const auto& ev : events) cpu_events += ev.kind == EventKind::op || ev.kind == EventKind::range;
  if (cpu_events == 0)
    problems.add(reader.events_line(), reader.events_column(), "traceEvents",
                 "no cpu_op or user_annotation events: not a PyTorch profiler trace with operator times (profile "
                 "with torch.profiler and export_chrome_trace)");
  problems.throw_if_any();
  return {std::move(events), unmatched_ends, unclosed};
}

/// Nests the CPU-side events (ops, ranges, steps, runtime launches) of each thread by time containment: sets
/// each event's parent and depth.
void nest_cpu_events(std::vector<Event>& events) {
  std::vector<std::size_t> order(events.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Event& x = events[a];
    const Event& y = events[b];
    if (x.thread != y.thread) return x.thread < y.thread;
    if (x.ts_us != y.ts_us) return x.ts_us < y.ts_us;
    if (x.dur_us != y.dur_us) return x.dur_us > y.dur_us;
    return static_cast<int>(x.kind) < static_cast<int>(y.kind);  // a step holds a range holds an op holds a launch
  });
  std::vector<std::size_t> stack;
  std::string thread;
  for (std::size_t i : order) {
    Event& ev = events[i];
    if (ev.kind == EventKind::gpu) continue;
    if (ev.thread != thread) {
      stack.clear();
      thread = ev.thread;
    }
    while (!stack.empty() && events[stack.back()].ts_us + events[stack.back()].dur_us <= ev.ts_us) stack.pop_back();
    if (!stack.empty()) {
      ev.parent = static_cast<int>(stack.back());
      ev.depth = events[stack.back()].depth + 1;
    }
    if (ev.kind != EventKind::launch) stack.push_back(i);
  }
}

/// How GPU events were attributed to the ops that launched them.
struct GpuAttribution {
  std::size_t events = 0;          // kernel, memcpy and memset events
  std::size_t by_correlation = 0;  // attributed through the correlation id of their cuda_runtime launch
  std::size_t by_external = 0;     // attributed through the External id of an op
  std::size_t orphans = 0;         // neither: left out
  double total_us = 0;             // time of the attributed events
};

/// Adds each GPU event's time to the op that launched it (through the correlation id of its launch, else to the op
/// with its External id) and to every event holding that op.
GpuAttribution attribute_gpu_work(std::vector<Event>& events) {
  std::unordered_map<std::int64_t, std::size_t> launch_of, op_of_external;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i].kind == EventKind::launch && events[i].correlation) launch_of[*events[i].correlation] = i;
    if (events[i].kind == EventKind::op && events[i].external_id) op_of_external.emplace(*events[i].external_id, i);
  }
  std::size_t gpu_events = 0, by_correlation = 0, by_external = 0, orphans = 0;
  double gpu_total_us = 0;
  for (const Event& ev : events) {
    if (ev.kind != EventKind::gpu) continue;
    ++gpu_events;
    int owner = -1;
    if (ev.correlation) {
      if (auto it = launch_of.find(*ev.correlation); it != launch_of.end()) {
        owner = static_cast<int>(it->second);
        ++by_correlation;
      }
    }
    if (owner < 0 && ev.external_id) {
      if (auto it = op_of_external.find(*ev.external_id); it != op_of_external.end()) {
        owner = static_cast<int>(it->second);
        ++by_external;
      }
    }
    if (owner < 0) {
      ++orphans;
      continue;
    }
    gpu_total_us += ev.dur_us;
    for (int p = owner; p >= 0; p = events[static_cast<std::size_t>(p)].parent)
      events[static_cast<std::size_t>(p)].gpu_us += ev.dur_us;
  }
  return {gpu_events, by_correlation, by_external, orphans, gpu_total_us};
}

/// How the entries were averaged: over the profiler steps (ProfilerStep#N ranges; none: the trace is one pass),
/// with the ops and ranges outside every step left out.
struct StepAveraging {
  std::size_t steps = 0;
  std::size_t outside_steps = 0;
};

/// The entries of `trace` (its gpu_time says which time counts): the ranges and top-level ops of each iteration,
/// the k-th occurrence of a name in one iteration averaged with the k-th in every other.
StepAveraging average_over_steps(const std::vector<Event>& events, MeasuredTrace& trace) {
  // Steps (ProfilerStep#N): the iterations, in time order.
  std::vector<std::size_t> steps;
  for (std::size_t i = 0; i < events.size(); ++i)
    if (events[i].kind == EventKind::step) steps.push_back(i);
  std::sort(steps.begin(), steps.end(),
            [&](std::size_t a, std::size_t b) { return events[a].ts_us < events[b].ts_us; });
  std::unordered_map<std::size_t, int> step_index;
  for (std::size_t k = 0; k < steps.size(); ++k) step_index[steps[k]] = static_cast<int>(k);

  // The entries of each iteration: ranges, and ops that no other op holds (their time includes what they call).
  struct Slot {
    std::size_t event;
    int iteration;
    int parent_slot;  // enclosing range's slot, -1
  };
  std::vector<std::size_t> timeline;
  for (std::size_t i = 0; i < events.size(); ++i)
    if (events[i].kind == EventKind::op || events[i].kind == EventKind::range) timeline.push_back(i);
  std::stable_sort(timeline.begin(), timeline.end(), [&](std::size_t a, std::size_t b) {
    if (events[a].ts_us != events[b].ts_us) return events[a].ts_us < events[b].ts_us;
    return events[a].depth < events[b].depth;
  });
  std::size_t outside_steps = 0;
  std::unordered_map<std::size_t, int> slot_of_event;
  std::vector<Slot> slots;
  for (std::size_t i : timeline) {
    const Event& ev = events[i];
    int iteration = 0;
    int range_parent = -1;
    bool under_op = false;
    bool in_step = false;
    for (int p = ev.parent; p >= 0; p = events[static_cast<std::size_t>(p)].parent) {
      const Event& anc = events[static_cast<std::size_t>(p)];
      if (anc.kind == EventKind::op) under_op = true;
      if (anc.kind == EventKind::range && range_parent < 0) {
        if (auto it = slot_of_event.find(static_cast<std::size_t>(p)); it != slot_of_event.end())
          range_parent = it->second;
      }
      if (anc.kind == EventKind::step) {
        iteration = step_index[static_cast<std::size_t>(p)];
        in_step = true;
        break;
      }
    }
    if (under_op) continue;
    if (!steps.empty() && !in_step) {
      ++outside_steps;
      continue;
    }
    slot_of_event[i] = static_cast<int>(slots.size());
    slots.push_back({i, iteration, range_parent});
  }

  // Average over iterations: the k-th occurrence of a name in one iteration is the k-th in every other.
  std::map<std::string, std::size_t> entry_of_key;
  std::vector<std::string> slot_key(slots.size());
  std::map<std::pair<int, std::string>, int> seen;
  std::vector<double> sums;
  std::vector<int> counts;
  for (std::size_t s = 0; s < slots.size(); ++s) {
    const Event& ev = events[slots[s].event];
    const bool range = ev.kind == EventKind::range;
    const std::string base = (range ? "R|" : "O|") + ev.name;
    const int occurrence = seen[{slots[s].iteration, base}]++;
    slot_key[s] = base + "|" + std::to_string(occurrence);
    const double time_us = trace.gpu_time ? ev.gpu_us : ev.dur_us;
    auto it = entry_of_key.find(slot_key[s]);
    if (it == entry_of_key.end()) {
      MeasuredEntry e;
      e.name = ev.name;
      e.op = range ? "" : ev.name;
      e.range = range;
      e.input_dims = ev.dims;
      e.line = ev.line;
      if (slots[s].parent_slot >= 0) {
        auto pt = entry_of_key.find(slot_key[static_cast<std::size_t>(slots[s].parent_slot)]);
        if (pt != entry_of_key.end()) e.parent = static_cast<int>(pt->second);
      }
      it = entry_of_key.emplace(slot_key[s], trace.entries.size()).first;
      trace.entries.push_back(std::move(e));
      sums.push_back(0);
      counts.push_back(0);
    }
    sums[it->second] += time_us;
    counts[it->second] += 1;
  }
  for (std::size_t k = 0; k < trace.entries.size(); ++k) {
    trace.entries[k].time_s = sums[k] / counts[k] * 1e-6;
    trace.entries[k].iterations = counts[k];
  }
  trace.iterations = std::max<int>(1, static_cast<int>(steps.size()));
  return {steps.size(), outside_steps};
}

}  // namespace

MeasuredTrace parse_pytorch_trace(const std::string& text, const std::string& path, std::size_t start, int start_line) {
  MeasuredTrace trace;
  trace.path = path;
  trace.format = MeasuredFormat::pytorch_trace;
  ReadEvents read = read_events(text, path, start, start_line);
  nest_cpu_events(read.events);
  const GpuAttribution gpu = attribute_gpu_work(read.events);
  trace.gpu_time = gpu.by_correlation + gpu.by_external > 0;
  const StepAveraging averaged = average_over_steps(read.events, trace);

  std::size_t ops = 0, ranges = 0;
  for (const auto& e : trace.entries) (e.range ? ranges : ops) += 1;
  trace.notes.push_back(
      averaged.steps == 0
          ? fmt::format("{}: {} top-level ops and {} ranges (no ProfilerStep ranges: repeated passes are found when "
                        "matching)",
                        measured_format_name(trace.format), ops, ranges)
          : fmt::format("{}: {} top-level ops and {} ranges per step, averaged over {} profiler steps (ProfilerStep#)",
                        measured_format_name(trace.format), ops, ranges, averaged.steps));
  if (trace.gpu_time) {
    trace.notes.push_back(fmt::format(
        "times are GPU time: {} of {} kernel/memcpy events ({:.4g} ms in all) attributed to the op that launched "
        "them, {} through the correlation id of their cuda_runtime launch{}; ops that launch nothing take 0",
        gpu.by_correlation + gpu.by_external, gpu.events, gpu.total_us * 1e-3, gpu.by_correlation,
        gpu.by_external ? fmt::format(", {} through their External id", gpu.by_external) : std::string()));
  } else {
    trace.notes.emplace_back("times are the ops' CPU time (the trace has no GPU kernel events)");
  }
  if (gpu.orphans > 0)
    trace.notes.push_back(
        fmt::format("{} GPU events have no launch with their correlation id nor an op with their "
                    "External id: left out",
                    gpu.orphans));
  if (averaged.outside_steps > 0)
    trace.notes.push_back(
        fmt::format("{} ops and ranges outside every ProfilerStep: left out", averaged.outside_steps));
  if (read.unmatched_ends > 0)
    trace.notes.push_back(fmt::format("{} \"E\" events without a \"B\": ignored", read.unmatched_ends));
  if (read.unclosed > 0)
    trace.notes.push_back(fmt::format("{} \"B\" events never closed by an \"E\": taken as 0 long", read.unclosed));
  return trace;
}

}  // namespace framesim::trace
