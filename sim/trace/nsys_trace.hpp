// Internal to trace/: the Nsight Systems readers' shared pieces. Both ways out of a report (nsys_trace.cpp: the
// cuda_gpu_trace CSV; nsys_sqlite.cpp: the SQLite export) read GPU activities, NVTX ranges and launches, which
// group_activities turns into layers and frames (see nsys_trace.cpp's header).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trace/measured.hpp"

namespace framesim::trace::nsys {

/// A kernel or a copy on the GPU, times in the trace's nanoseconds.
struct GpuActivity {
  double start_ns = 0, end_ns = 0;
  std::string stream, name;
  bool copy = false;  // memcpy / memset: data movement
  std::optional<std::int64_t> correlation;
  int line = 0;
};

/// An NVTX range on a host thread.
struct NvtxRange {
  double start_ns = 0, end_ns = 0;
  std::string text, thread;
  int parent = -1;  // enclosing range on the same thread
};

/// The runtime call that launched a kernel (by correlation id).
struct Launch {
  double time_ns = 0;
  std::string thread;
};

/// "[CUDA memcpy ...]" and "[CUDA memset]": the names copies carry.
inline bool is_copy_name(std::string_view name) {
  return name.starts_with("[CUDA memcpy") || name.starts_with("[CUDA memset");
}

/// Groups `acts` into entries (layers) and frames of a trace of `format`; see nsys_trace.cpp's header.
MeasuredTrace group_activities(std::vector<GpuActivity> acts, std::vector<NvtxRange> ranges,
                               const std::unordered_map<std::int64_t, Launch>& launches, MeasuredFormat format,
                               const std::string& path);

}  // namespace framesim::trace::nsys
