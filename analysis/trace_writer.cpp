#include "trace_writer.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/units.hpp"
#include "json_text.hpp"

namespace framesim::analysis {

namespace {

constexpr int kPipeline = 1;
constexpr int kFramesTrack = 0;

int unit_pid(std::size_t unit) { return 2 + static_cast<int>(unit); }

std::string quoted(const std::string& s) { return json_text(nlohmann::json(s), -1); }

std::string name_event(const char* what, int pid, int tid, const std::string& name) {
  return fmt::format(R"({{"ph":"M","cat":"__metadata","pid":{},"tid":{},"name":"{}","args":{{"name":{}}}}})", pid, tid,
                     what, quoted(name));
}

std::string sort_event(const char* what, int pid, int tid, int index) {
  return fmt::format(R"({{"ph":"M","cat":"__metadata","pid":{},"tid":{},"name":"{}","args":{{"sort_index":{}}}}})", pid,
                     tid, what, index);
}

/// A slice's "ts" and "dur" in microseconds with nanosecond digits, rounded so that the end of one slice
/// and the start of the next that follows it on the same track round to the same value (no overlap).
std::pair<double, double> slice_us(double start_s, double end_s) {
  const double ts = std::round(start_s * 1e9) / 1e3;
  const double end = std::round(end_s * 1e9) / 1e3;
  return {ts, std::max(0.0, end - ts)};
}

std::string instant(int pid, int tid, double ts_us, const std::string& name, const std::string& cat,
                    const std::string& args) {
  return fmt::format(R"({{"ph":"i","s":"t","pid":{},"tid":{},"ts":{:.3f},"name":{},"cat":"{}","args":{}}})", pid, tid,
                     ts_us, quoted(name), cat, args);
}

}  // namespace

TraceWriter::TraceWriter(const model::ScenarioSpec& spec, const std::filesystem::path& file) : spec_(spec) {
  out_.open(file, std::ios::binary | std::ios::trunc);
  if (!out_) throw core::UserError(fmt::format("{}: cannot write", file.string()));
  out_ << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  event(name_event("process_name", kPipeline, 0, "framesim: " + spec.name));
  event(sort_event("process_sort_index", kPipeline, 0, 0));
  event(name_event("thread_name", kPipeline, kFramesTrack, "frames (deadline misses)"));
  event(sort_event("thread_sort_index", kPipeline, kFramesTrack, 0));
  for (std::size_t s = 0; s < spec.stages.size(); ++s) {
    event(name_event("thread_name", kPipeline, static_cast<int>(1 + s), "stage " + spec.stages[s].name));
    event(sort_event("thread_sort_index", kPipeline, static_cast<int>(1 + s), static_cast<int>(1 + s)));
  }
  for (std::size_t u = 0; u < spec.hardware.units.size(); ++u) {
    event(name_event("process_name", unit_pid(u), 0, "unit " + spec.hardware.units[u].name));
    event(sort_event("process_sort_index", unit_pid(u), 0, unit_pid(u)));
    event(name_event("thread_name", unit_pid(u), 0, "clock steps"));
    frequency_Hz_.push_back(spec.hardware.units[u].fastest_allowed().frequency_Hz);
  }
  // Every counter at t = 0: the die at its initial temperature, the clocks at nominal (or their caps), nothing busy yet
  // (the interval averages from 0 are written at the first tick, at t = 0, over these).
  const auto& hw = spec.hardware;
  const double initial_C =
      spec.initial_temperature_C.value_or(hw.thermal ? spec.ambient_C.value_or(hw.thermal->ambient_C) : 25.0);
  counter(kPipeline, "temperature", 0, "C", initial_C);
  for (std::size_t u = 0; u < hw.units.size(); ++u) {
    counter(unit_pid(u), "frequency " + hw.units[u].name, 0, "MHz", frequency_Hz_[u] / 1e6);
  }
}

void TraceWriter::event(const std::string& json) {
  if (!first_) out_ << ",\n";
  first_ = false;
  out_ << json;
}

void TraceWriter::counter(int pid, const std::string& name, double ts_us, const std::string& key, double value) {
  event(fmt::format(R"({{"ph":"C","cat":"counter","pid":{},"name":{},"ts":{:.3f},"args":{{{}:{:.6g}}}}})", pid,
                    quoted(name), ts_us, quoted(key), value));
}

void TraceWriter::stage(const engine::StageRecord& r, const engine::StageRecord* fed_by) {
  const auto [ts, dur] = slice_us(r.start_s, r.end_s);
  const int tid = static_cast<int>(1 + r.stage);
  event(fmt::format(
      R"({{"ph":"X","pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f},"name":"frame {}","cat":"stage","args":{{"frame":{},"wait_us":{:.3f},"blocked_us":{:.3f},"energy_mJ":{:.6f}}}}})",
      kPipeline, tid, ts, dur, r.frame, r.frame, (r.start_s - r.enqueue_s) * 1e6, r.blocked_s * 1e6, r.energy_J * 1e3));
  if (!fed_by) return;
  // A flow arrow from the feeding execution's slice to this one's (each bound to the slice enclosing its ts).
  const auto [from_ts, from_dur] = slice_us(fed_by->start_s, fed_by->end_s);
  const std::int64_t id = ++flows_;
  const std::string name = quoted(fmt::format("frame {}", r.frame));
  event(fmt::format(R"({{"ph":"s","id":{},"pid":{},"tid":{},"ts":{:.3f},"name":{},"cat":"frame"}})", id, kPipeline,
                    static_cast<int>(1 + fed_by->stage), from_ts + from_dur / 2, name));
  event(fmt::format(R"({{"ph":"f","bp":"e","id":{},"pid":{},"tid":{},"ts":{:.3f},"name":{},"cat":"frame"}})", id,
                    kPipeline, tid, ts + dur / 2, name));
}

void TraceWriter::frame(const engine::FrameRecord& r, bool missed) {
  const double ts = std::round(r.done_s * 1e9) / 1e3;
  if (r.outcome == engine::FrameOutcome::dropped) {
    event(instant(kPipeline, r.drop_stage >= 0 ? 1 + r.drop_stage : kFramesTrack, ts,
                  fmt::format("drop frame {}", r.frame), "drop",
                  fmt::format(R"({{"frame":{},"reason":"{}"}})", r.frame, engine::drop_reason_name(r.reason))));
  } else if (missed) {
    event(instant(kPipeline, kFramesTrack, ts, fmt::format("deadline miss frame {}", r.frame), "deadline",
                  fmt::format(R"({{"frame":{},"latency_ms":{:.6f}}})", r.frame, (r.done_s - r.capture_s) * 1e3)));
  }
}

void TraceWriter::tick(const engine::TickRecord& r) {
  const auto& hw = spec_.hardware;
  const double ts = r.time_s * 1e6;
  const double from = previous_tick_s_ * 1e6;  // interval averages hold from the interval's start
  counter(kPipeline, "temperature", ts, "C", r.temperature_C);
  counter(kPipeline, "power", from, "W", r.power_W);
  for (std::size_t lv = 0; lv < r.level_bandwidth_Bps.size(); ++lv)
    counter(kPipeline, "bandwidth " + hw.memory[lv].name, from, "GB/s", r.level_bandwidth_Bps[lv] / 1e9);
  for (std::size_t lv = 0; lv < r.level_utilisation.size(); ++lv)
    counter(kPipeline, "utilisation " + hw.memory[lv].name, from, "%", r.level_utilisation[lv] * 100);
  for (std::size_t s = 0; s < r.stage_queue_depth.size(); ++s)
    counter(kPipeline, "queue " + spec_.stages[s].name, from, "items", r.stage_queue_depth[s]);
  for (std::size_t u = 0; u < r.unit_busy.size(); ++u)
    counter(unit_pid(u), "busy " + hw.units[u].name, from, "%", r.unit_busy[u] * 100);
  for (std::size_t u = 0; u < r.unit_frequency_Hz.size(); ++u) {
    counter(unit_pid(u), "frequency " + hw.units[u].name, ts, "MHz", r.unit_frequency_Hz[u] / 1e6);
    if (r.unit_frequency_Hz[u] != frequency_Hz_[u]) {
      event(instant(unit_pid(u), 0, ts,
                    fmt::format("clock {} -> {}", core::format_hertz(frequency_Hz_[u]),
                                core::format_hertz(r.unit_frequency_Hz[u])),
                    "clock",
                    fmt::format(R"({{"from_MHz":{:.3f},"to_MHz":{:.3f}}})", frequency_Hz_[u] / 1e6,
                                r.unit_frequency_Hz[u] / 1e6)));
      frequency_Hz_[u] = r.unit_frequency_Hz[u];
    }
  }
  previous_tick_s_ = r.time_s;
}

int TraceWriter::owner_track(std::size_t unit, int stage, int task) {
  const int owner = stage >= 0 ? stage : 500 + task;
  const int tid = 1 + owner;
  const int pid = unit_pid(unit);
  if (kernel_tracks_.insert({unit, owner}).second) {
    const std::string owner_name = stage >= 0 ? "stage " + spec_.stages[static_cast<std::size_t>(stage)].name
                                              : "task " + spec_.tasks[static_cast<std::size_t>(task)].name;
    event(name_event("thread_name", pid, tid, owner_name));
    event(sort_event("thread_sort_index", pid, tid, tid));
  }
  return tid;
}

void TraceWriter::task(const engine::TaskRecord& r) {
  const auto& unit = spec_.tasks[r.task].unit;
  if (!unit) return;
  const int tid = owner_track(*unit, -1, static_cast<int>(r.task));
  const auto [ts, dur] = slice_us(r.start_s, r.end_s);
  event(fmt::format(
      R"({{"ph":"X","pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f},"name":"job {}","cat":"task","args":{{"wait_us":{:.3f},"response_us":{:.3f}}}}})",
      unit_pid(*unit), tid, ts, dur, r.job, (r.start_s - r.release_s) * 1e6, (r.end_s - r.release_s) * 1e6));
}

void TraceWriter::kernel(const engine::KernelRecord& r) {
  const int tid = owner_track(r.unit, r.stage, r.task);
  const int pid = unit_pid(r.unit);
  const auto [ts, dur] = slice_us(r.start_s, r.end_s);
  event(fmt::format(
      R"({{"ph":"X","pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f},"name":{},"cat":"kernel","args":{{"frame":{},"dispatch_us":{:.3f}}}}})",
      pid, tid, ts, dur, quoted(r.name), r.frame, r.dispatch_s * 1e6));
}

bool TraceWriter::close() {
  out_ << "\n]}\n";
  out_.close();
  return static_cast<bool>(out_);
}

}  // namespace framesim::analysis
