// Nsight Systems: GPU kernels (and copies) with their times, grouped into layers and frames.
//
// Two ways out of an .nsys-rep report, both read here:
//  - `nsys stats --report cuda_gpu_trace --format csv --output NAME REPORT.nsys-rep` writes NAME_cuda_gpu_trace.csv,
//    one row per kernel or memory operation (nsys user guide, "Report Scripts": cuda_gpu_trace). Columns:
//    Start (ns), Duration (ns), CorrId, GrdX, GrdY, GrdZ, BlkX, BlkY, BlkZ, Reg/Trd, StcSMem (MB), DymSMem (MB),
//    Bytes (MB), Throughput (MBps), SrcMemKd, DstMemKd, Device, Ctx, [GreenCtx,] Strm, Name. framesim needs
//    Start (ns), Duration (ns) and Name; Strm when present. Copies are named "[CUDA memcpy HtoD]" (older) or
//    "[CUDA memcpy Host-to-Device]", and "[CUDA memset]".
//  - `nsys export --type sqlite --output REPORT.sqlite REPORT.nsys-rep` (nsys user guide, "Exporter": SQLite
//    schema). Tables read: CUPTI_ACTIVITY_KIND_KERNEL (start, end in ns; streamId; correlationId; demangledName and
//    shortName, ids into StringIds(id, value)), CUPTI_ACTIVITY_KIND_MEMCPY / _MEMSET (start, end, streamId,
//    copyKind), CUPTI_ACTIVITY_KIND_RUNTIME (start, correlationId, globalTid: the host call that launched each
//    kernel) and NVTX_EVENTS (start, end, eventType 59 push/pop and 60 start/end ranges, text or textId ->
//    StringIds, globalTid).
//
// Layers: TensorRT (and users' code) name each layer with an NVTX range. A kernel belongs to the innermost range
// open on the launching thread when its launch call ran (the runtime call with its correlation id); without the
// runtime table, to the innermost range holding the kernel's start. Without NVTX ranges, kernels are grouped by
// name. Frames: the outermost ranges holding layer ranges ("ExecutionContext::enqueue", a user's "frame"), else
// repetitions of the whole kernel sequence. A layer's time is the GPU time of its kernels, mean over frames.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "core/text.hpp"
#include "core/units.hpp"
#include "trace/csv_table.hpp"
#include "trace/measured_formats.hpp"
#include "trace/nsys_trace.hpp"

namespace framesim::trace {

namespace {

using nsys::GpuActivity;
using nsys::is_copy_name;
using nsys::Launch;
using nsys::NvtxRange;

/// Innermost range per thread holding a time: ranges sorted by start with parent links.
class RangeIndex {
 public:
  explicit RangeIndex(std::vector<NvtxRange>& ranges) : ranges_(ranges) {
    std::map<std::string, std::vector<int>> by_thread;
    for (std::size_t i = 0; i < ranges.size(); ++i) by_thread[ranges[i].thread].push_back(static_cast<int>(i));
    for (auto& [thread, list] : by_thread) {
      std::stable_sort(list.begin(), list.end(), [&](int a, int b) {
        const auto& x = ranges[static_cast<std::size_t>(a)];
        const auto& y = ranges[static_cast<std::size_t>(b)];
        return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.end_ns > y.end_ns;
      });
      std::vector<int> stack;
      for (int i : list) {
        auto& r = ranges[static_cast<std::size_t>(i)];
        while (!stack.empty() && ranges[static_cast<std::size_t>(stack.back())].end_ns <= r.start_ns) stack.pop_back();
        if (!stack.empty()) r.parent = stack.back();
        stack.push_back(i);
      }
      sorted_[thread] = list;
    }
  }

  /// The innermost range of `thread` (any thread when empty) holding `t_ns`; -1 when none.
  int innermost(const std::string& thread, double t_ns) const {
    int best = -1;
    for (const auto& [th, list] : sorted_) {
      if (!thread.empty() && th != thread) continue;
      auto it = std::upper_bound(list.begin(), list.end(), t_ns,
                                 [&](double t, int i) { return t < ranges_[static_cast<std::size_t>(i)].start_ns; });
      if (it == list.begin()) continue;
      for (int r = *(it - 1); r >= 0; r = ranges_[static_cast<std::size_t>(r)].parent) {
        const auto& range = ranges_[static_cast<std::size_t>(r)];
        if (range.start_ns <= t_ns && t_ns < range.end_ns) {
          if (best < 0 || range.end_ns - range.start_ns < ranges_[static_cast<std::size_t>(best)].end_ns -
                                                              ranges_[static_cast<std::size_t>(best)].start_ns)
            best = r;
          break;
        }
      }
    }
    return best;
  }

 private:
  const std::vector<NvtxRange>& ranges_;
  std::map<std::string, std::vector<int>> sorted_;
};

/// Which frame each activity belongs to: numbered by the outermost NVTX ranges holding layer ranges (in time
/// order; activities outside them belong to none), else by repetitions of the whole sequence of instances.
struct FrameAssignment {
  std::vector<int> frame_of;  // per activity, -1 for none
  std::size_t frames = 1;
  std::string frames_by;  // how frames were told apart, for the notes ("" for a single frame)
  std::size_t outside_frames = 0;
};

FrameAssignment assign_frames(const std::vector<GpuActivity>& acts, const std::vector<NvtxRange>& ranges,
                              const std::set<int>& frame_ranges, const std::vector<int>& frame_range,
                              const std::vector<std::string>& group, const std::vector<std::int64_t>& instance) {
  FrameAssignment out;
  out.frame_of.assign(acts.size(), -1);
  auto& frame_of = out.frame_of;
  auto& frames = out.frames;
  auto& frames_by = out.frames_by;
  auto& outside_frames = out.outside_frames;
  if (!frame_ranges.empty()) {
    std::vector<int> order(frame_ranges.begin(), frame_ranges.end());
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return ranges[static_cast<std::size_t>(a)].start_ns < ranges[static_cast<std::size_t>(b)].start_ns;
    });
    std::map<int, int> number;
    for (std::size_t k = 0; k < order.size(); ++k) number[order[k]] = static_cast<int>(k);
    for (std::size_t i = 0; i < acts.size(); ++i) {
      if (frame_range[i] >= 0) frame_of[i] = number[frame_range[i]];
      else ++outside_frames;
    }
    frames = order.size();
    frames_by = fmt::format("NVTX range \"{}\"", ranges[static_cast<std::size_t>(order.front())].text);
  } else {
    // One name per instance, in order; the whole sequence repeated is several frames.
    std::vector<std::string> sequence;
    std::vector<std::size_t> first_act;
    for (std::size_t i = 0; i < acts.size(); ++i)
      if (i == 0 || instance[i] != instance[i - 1] || instance[i] < 0) {
        sequence.push_back(group[i]);
        first_act.push_back(i);
      }
    const std::size_t period = sequence.empty() ? 1 : repetition_period(sequence);
    frames = sequence.empty() ? 1 : sequence.size() / period;
    std::size_t s = 0;
    for (std::size_t i = 0; i < acts.size(); ++i) {
      while (s + 1 < first_act.size() && first_act[s + 1] <= i) ++s;
      frame_of[i] = static_cast<int>(s / period);
    }
    frames_by = frames > 1 ? "repetitions of the whole kernel sequence" : "";
  }

  return out;
}

/// Frame times: the GPU extent of each frame's work, from the first frame's start. Turns the spans' nanoseconds
/// from the trace's clock into seconds from that start; returns each frame's span.
std::vector<double> place_frames_in_time(MeasuredTrace& trace) {
  double origin_ns = 0;
  bool have_origin = false;
  for (const auto& f : trace.frames)
    if (!f.spans.empty() && !have_origin) {
      origin_ns = f.spans.front().start_s;
      have_origin = true;
    }
  std::vector<double> frame_s;
  for (auto& f : trace.frames) {
    if (f.spans.empty()) continue;
    f.start_s = (f.spans.front().start_s - origin_ns) * 1e-9;
    f.end_s = f.start_s;
    for (auto& s : f.spans) {
      s.start_s = (s.start_s - origin_ns) * 1e-9;
      s.duration_s *= 1e-9;
      f.end_s = std::max(f.end_s, s.start_s + s.duration_s);
    }
    frame_s.push_back(f.end_s - f.start_s);
  }
  return frame_s;
}

/// "N frames (by ...): GPU span per frame mean ... (min, max)" over the frames' spans `frame_s` (not empty).
std::string frame_spans_note(const std::vector<double>& frame_s, const std::string& frames_by) {
  double sum = 0, lo = frame_s.front(), hi = frame_s.front();
  for (double s : frame_s) {
    sum += s;
    lo = std::min(lo, s);
    hi = std::max(hi, s);
  }
  return fmt::format(
      "{} frame{}{}: GPU span per frame mean {} (min {}, max {}); times are GPU time per frame, mean over frames",
      frame_s.size(), frame_s.size() == 1 ? "" : "s", frames_by.empty() ? "" : " (by " + frames_by + ")",
      core::format_seconds(sum / static_cast<double>(frame_s.size())), core::format_seconds(lo),
      core::format_seconds(hi));
}

}  // namespace

/// Groups `acts` into entries (layers) and frames; see the file comment.
MeasuredTrace nsys::group_activities(std::vector<GpuActivity> acts, std::vector<NvtxRange> ranges,
                                     const std::unordered_map<std::int64_t, Launch>& launches, MeasuredFormat format,
                                     const std::string& path) {
  MeasuredTrace trace;
  trace.path = path;
  trace.format = format;
  trace.gpu_time = true;
  std::stable_sort(acts.begin(), acts.end(),
                   [](const GpuActivity& a, const GpuActivity& b) { return a.start_ns < b.start_ns; });
  const RangeIndex index(ranges);

  // The range of each activity (through its launch when known).
  std::vector<int> range_of(acts.size(), -1);
  std::size_t through_launch = 0;
  for (std::size_t i = 0; i < acts.size() && !ranges.empty(); ++i) {
    const GpuActivity& a = acts[i];
    if (a.correlation) {
      if (auto it = launches.find(*a.correlation); it != launches.end()) {
        range_of[i] = index.innermost(it->second.thread, it->second.time_ns);
        ++through_launch;
        continue;
      }
    }
    range_of[i] = index.innermost("", a.start_ns);
  }
  // Frames: the outermost ancestors of the ranges holding activities, when those ranges have ancestors.
  std::vector<int> frame_range(acts.size(), -1);
  std::set<int> frame_ranges;
  auto outermost = [&](int r) {
    int top = -1;
    for (int p = ranges[static_cast<std::size_t>(r)].parent; p >= 0; p = ranges[static_cast<std::size_t>(p)].parent)
      top = p;
    return top;
  };
  for (std::size_t i = 0; i < acts.size(); ++i) {
    if (range_of[i] < 0) continue;
    frame_range[i] = outermost(range_of[i]);
    if (frame_range[i] >= 0) frame_ranges.insert(frame_range[i]);
  }
  // An activity directly in a frame range (a copy after the layers) belongs to that frame, grouped by its name.
  for (std::size_t i = 0; i < acts.size(); ++i)
    if (range_of[i] >= 0 && frame_ranges.count(range_of[i])) {
      frame_range[i] = range_of[i];
      range_of[i] = -1;
    }
  // The name each activity is grouped under, and an instance id (a range, or the activity itself).
  std::vector<std::string> group(acts.size());
  std::vector<std::int64_t> instance(acts.size());
  std::size_t outside_ranges = 0;
  for (std::size_t i = 0; i < acts.size(); ++i) {
    if (range_of[i] >= 0) {
      group[i] = ranges[static_cast<std::size_t>(range_of[i])].text;
      instance[i] = range_of[i];
    } else {
      group[i] = acts[i].name;
      instance[i] = -1 - static_cast<std::int64_t>(i);
      outside_ranges += !ranges.empty() && frame_range[i] < 0;
    }
  }
  const FrameAssignment assigned = assign_frames(acts, ranges, frame_ranges, frame_range, group, instance);
  const std::vector<int>& frame_of = assigned.frame_of;
  const std::size_t frames = assigned.frames;
  const std::string& frames_by = assigned.frames_by;
  const std::size_t outside_frames = assigned.outside_frames;

  // Entries: the k-th instance of a name within its frame is the k-th entry of that name.
  std::map<std::string, std::size_t> entry_of;
  std::map<std::pair<int, std::string>, int> occurrences;
  std::map<std::pair<int, std::int64_t>, std::string> key_of_instance;
  std::vector<double> sum_ns;
  trace.frames.resize(frames);
  for (std::size_t i = 0; i < acts.size(); ++i) {
    if (frame_of[i] < 0) continue;
    const GpuActivity& a = acts[i];
    auto [ki, fresh_instance] = key_of_instance.try_emplace({frame_of[i], instance[i]});
    if (fresh_instance) {
      const int k = ++occurrences[{frame_of[i], group[i]}];
      ki->second = k == 1 ? group[i] : fmt::format("{} #{}", group[i], k);
    }
    auto [it, fresh] = entry_of.try_emplace(ki->second, trace.entries.size());
    if (fresh) {
      MeasuredEntry e;
      e.name = ki->second;
      e.op = range_of[i] >= 0 ? "NVTX range" : a.copy ? "copy" : "kernel";
      e.line = a.line;
      e.feeds = range_of[i] >= 0 ? tensorrt_reformat_target(e.name) : "";
      e.data_movement = !e.feeds.empty() || (range_of[i] < 0 && a.copy);
      trace.entries.push_back(std::move(e));
      sum_ns.push_back(0);
    }
    sum_ns[it->second] += a.end_ns - a.start_ns;
    trace.frames[static_cast<std::size_t>(frame_of[i])].spans.push_back(
        {static_cast<int>(it->second), a.start_ns, a.end_ns - a.start_ns, a.stream});
  }
  const std::vector<double> frame_s = place_frames_in_time(trace);
  for (std::size_t k = 0; k < trace.entries.size(); ++k) {
    trace.entries[k].time_s = sum_ns[k] / static_cast<double>(frames) * 1e-9;
    trace.entries[k].iterations = static_cast<int>(frames);
  }
  trace.iterations = static_cast<int>(frames);

  std::size_t copies = 0;
  for (const auto& a : acts) copies += a.copy;
  trace.notes.push_back(
      fmt::format("{}: {} GPU activities ({} kernels, {} copies), grouped {} into {} entries per frame",
                  measured_format_name(format), acts.size(), acts.size() - copies, copies,
                  ranges.empty() ? "by kernel name (no NVTX ranges)" : "by the NVTX range open at their launch",
                  trace.entries.size()));
  if (!ranges.empty())
    trace.notes.push_back(fmt::format(
        "{} of {} activities placed through the runtime call that launched them{}", through_launch, acts.size(),
        outside_ranges ? fmt::format("; {} outside every NVTX range, grouped by kernel name", outside_ranges) : ""));
  if (!frame_s.empty()) trace.notes.push_back(frame_spans_note(frame_s, frames_by));
  if (outside_frames > 0)
    trace.notes.push_back(fmt::format("{} activities outside every frame range: left out (warm-up?)", outside_frames));
  return trace;
}

MeasuredTrace parse_nsys_csv(const std::string& text, const std::string& path) {
  core::Diagnostics d;
  // nsys stats prints its own lines before the table when writing to the console: start at the header.
  std::size_t start = 0;
  int skipped_lines = 0;
  while (start < text.size()) {
    std::size_t eol = text.find('\n', start);
    if (eol == std::string::npos) eol = text.size();
    const std::string_view l(text.data() + start, eol - start);
    if (l.find(" (ns)") != std::string_view::npos && !trim(l).starts_with("#")) break;
    start = eol + 1;
    ++skipped_lines;
  }
  // Keep line numbers: blank out what precedes the header (read_table skips blank lines).
  const std::string table = std::string(static_cast<std::size_t>(skipped_lines), '\n') + text.substr(start);
  const auto rows = read_table(table, path, "\"Start (ns),Duration (ns),...,Strm,Name\"", d);
  const auto& header = rows.front();
  int start_col = -1, dur_col = -1, name_col = -1, stream_col = -1, corr_col = -1;
  for (std::size_t c = 0; c < header.cells.size(); ++c) {
    const std::string& h = header.cells[c].text;
    if (h == "Start (ns)") start_col = static_cast<int>(c);
    if (h == "Duration (ns)") dur_col = static_cast<int>(c);
    if (h == "Name") name_col = static_cast<int>(c);
    if (h == "Strm") stream_col = static_cast<int>(c);
    if (h == "CorrId") corr_col = static_cast<int>(c);
  }
  for (const auto& [col, name] :
       {std::pair{start_col, "Start (ns)"}, std::pair{dur_col, "Duration (ns)"}, std::pair{name_col, "Name"}})
    if (col < 0)
      d.add({path, header.line, 1}, "header",
            fmt::format("no \"{}\" column: expected the cuda_gpu_trace report of nsys stats (--format csv)", name));
  d.throw_if_any();
  std::vector<GpuActivity> acts;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (!has_header_width(row, header, path, d)) continue;
    const auto cell = [&](int c) -> const core::CsvCell& { return row.cells[static_cast<std::size_t>(c)]; };
    // A start is a clock's reading (timestamp_problem), a duration a time (duration_problem), both in ns; a CorrId
    // an id (id_problem).
    auto number = [&](int c, const char* column, auto problem_of) -> std::optional<double> {
      const core::CsvCell& written = cell(c);
      const auto v = whole_number(written.text);
      const auto problem = v ? problem_of(*v, 1e-9)
                             : std::optional<std::string>(
                                   fmt::format("expected a number, got \"{}\"", core::quote_capped(written.text)));
      if (!problem) return v;
      d.add({path, row.line, written.column}, column, *problem);
      return std::nullopt;
    };
    const auto start_ns = number(start_col, "Start (ns)", timestamp_problem);
    const auto dur_ns = number(dur_col, "Duration (ns)", duration_problem);
    if (!start_ns || !dur_ns) continue;
    GpuActivity a;
    a.start_ns = *start_ns;
    a.end_ns = *start_ns + *dur_ns;
    a.name = cell(name_col).text;
    a.copy = is_copy_name(a.name);
    a.stream = stream_col >= 0 ? cell(stream_col).text : "";
    // An empty CorrId is a kernel without one (attributed by time); anything else must be an id.
    if (corr_col >= 0 && !cell(corr_col).text.empty()) {
      const auto c = number(corr_col, "CorrId", [](double v, double) { return id_problem(v); });
      if (!c) continue;
      a.correlation = static_cast<std::int64_t>(*c);
    }
    a.line = row.line;
    if (a.name.empty()) {
      d.add({path, row.line, cell(name_col).column}, "Name", "empty kernel name");
      continue;
    }
    acts.push_back(std::move(a));
  }
  if (acts.empty() && d.empty()) d.add({path, header.line, 1}, "", "no kernels after the header (truncated file?)");
  d.throw_if_any();
  return nsys::group_activities(std::move(acts), {}, {}, MeasuredFormat::nsys_csv, path);
}

}  // namespace framesim::trace
