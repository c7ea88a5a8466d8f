// Internal to trace/: what the readers of measured times share, and the entry points of those readers, one file
// per format (measured.cpp reads plain CSV and tells the formats apart; measured_match.cpp matches to layers).
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "trace/json_reader.hpp"
#include "trace/measured.hpp"

namespace framesim::trace {

/// `s` without leading and trailing blanks, tabs and carriage returns.
std::string_view trim(std::string_view s);
/// Moves `pos` (on line `line`) past blank lines and lines starting with '#' (framesim's comments in measured
/// files).
void skip_comment_lines(const std::string& text, std::size_t& pos, int& line);
/// ASCII lower case.
std::string lower(std::string_view s);

/// Collects problems, at most a screenful: a broken 100 MB trace must not print a million lines.
class Problems {
 public:
  explicit Problems(std::string path) : path_(std::move(path)) {}
  void add(int line, int column, std::string key_path, std::string message) {
    if (d_.size() < kMax) d_.add({path_, line, column}, std::move(key_path), std::move(message));
    else ++dropped_;
  }
  bool empty() const { return d_.empty(); }
  void throw_if_any() {
    if (dropped_ > 0) d_.add({path_, 0, 0}, "", fmt::format("... and {} more problems", dropped_));
    d_.throw_if_any();
  }
  const std::string& path() const { return path_; }

 private:
  static constexpr std::size_t kMax = 20;
  std::string path_;
  core::Diagnostics d_;
  std::size_t dropped_ = 0;
};

/// Every number a trace records goes through the limits framesim puts on the same quantity in YAML: a duration
/// through core::quantity_limits(Seconds) (1 fs .. 1e7 s), a count (runs, calls per run) is a whole number up to
/// kMaxTraceCount, a timestamp (a clock's reading, epoch-based ones included) finite and at most kMaxTimestamp_s.
inline constexpr double kMaxTraceCount = 1e9;
inline constexpr double kMaxTimestamp_s = 1e10;
/// Why `value` (in the file's unit: `to_s` seconds each) is no duration: negative, or outside the limits of a time;
/// nothing when it is one. The message quotes the value as recorded ("1e+308 is out of range (too large: ...)").
std::optional<std::string> duration_problem(double value, double to_s);
/// The same for a timestamp (negative ones allowed: a clock may start before the trace).
std::optional<std::string> timestamp_problem(double value, double to_s);
/// The same for a count: a whole number in [0, kMaxTraceCount].
std::optional<std::string> count_problem(double value);
/// The same for an id (a correlation or External id): a whole number within 2^53 either side of 0, so the id a
/// double holds is the one written and it converts to std::int64_t.
std::optional<std::string> id_problem(double value);

/// Typed access to the members of a JSON object, adding a located problem for a missing or mistyped member.
/// `here` is the object's key path ("[3]"), used in messages as "[3].averageMs".
class JsonFields {
 public:
  JsonFields(const Json& object, std::string here, Problems& problems)
      : o_(object), here_(std::move(here)), p_(problems) {}
  /// A number; `what` says what it means ("the mean time in milliseconds").
  std::optional<double> number(const char* key, bool required, const char* what) const;
  /// A duration in the file's unit (`to_s` seconds each), returned in seconds; checked by duration_problem.
  std::optional<double> duration(const char* key, double to_s, bool required, const char* what) const;
  /// A timestamp in the file's unit, returned as recorded; checked by timestamp_problem.
  std::optional<double> timestamp(const char* key, double to_s, bool required, const char* what) const;
  /// A count (runs, calls), checked by count_problem.
  std::optional<double> count(const char* key, bool required, const char* what) const;
  /// An id, checked by id_problem.
  std::optional<std::int64_t> id(const char* key, bool required, const char* what) const;
  std::optional<std::string> text(const char* key, bool required) const;
  /// A member that must be an object, if present.
  const Json* object(const char* key) const;

 private:
  const Json& o_;
  std::string here_;
  Problems& p_;
};

/// What recognising a measured format looks at (MeasuredFormatTraits::recognises) and what its reader reads.
struct MeasuredFile {
  MeasuredFile(const std::string& text_in, const std::string& path_in) : text(text_in), path(path_in) {}
  const std::string& text;  // the raw bytes for a binary row, else the text, checked to be UTF-8
  const std::string& path;  // as shown in messages
  std::size_t pos = 0;      // where the content starts: after leading blank and '#' comment lines
  int line = 1;             // the line of `pos`
  bool json = false;        // the content starts with '{' or '['
  std::string json_head;    // JSON: its first 64 KiB without white space outside strings
  /// Text that is not JSON: the first line only one format has (a benchmark_model section title or table bar,
  /// an Nsight Systems header with columns in "(ns)" beside "Name"), or none.
  enum class Marker { none, tflite, nsys } marker = Marker::none;
};

/// The name a plain or TFLite entry is listed under: a TFLite node under its (first) output tensor's name.
const std::string& recorded_name(const MeasuredTrace& trace, const MeasuredEntry& e);

/// A plain CSV of layer,time (measured.cpp).
MeasuredTrace parse_plain_csv(const std::string& text, const std::string& path);

/// TFLite benchmark_model's op profile (tflite_profile.cpp).
MeasuredTrace parse_tflite_profile(const std::string& text, const std::string& path);
/// Whether a trimmed line is one only benchmark_model's profile has: a section title or a table bar.
bool is_tflite_profile_line(std::string_view line);

/// The PyTorch profiler's Chrome trace (pytorch_trace.cpp): the JSON in `text` from offset `start`, on line
/// `start_line` (after framesim's comment lines).
MeasuredTrace parse_pytorch_trace(const std::string& text, const std::string& path, std::size_t start, int start_line);

/// trtexec --exportProfile: [{"count": N}, {"name", "timeMs", "averageMs", "medianMs", "percentage"}, ...].
MeasuredTrace parse_tensorrt_profile(const Json& doc, const std::string& path);
/// The ONNX nodes a TensorRT layer name speaks of: "Conv_0 + Relu_1" -> Conv_0, Relu_1; "PWN(Relu_3, Add_4)" ->
/// Relu_3, Add_4; "{ForeignNode[Conv_5...Add_9]}" -> "Conv_5...Add_9" (a range); "(Unnamed Layer* 3) [Shuffle]"
/// -> nothing.
std::vector<std::string> tensorrt_name_origins(const std::string& layer_name);
/// A TensorRT reformat layer's name ("Reformatting CopyNode for Input Tensor 0 to Conv_0 + Relu_1"): the layer
/// it reformats for; empty when the name is not a reformat layer's.
std::string tensorrt_reformat_target(const std::string& layer_name);

/// ONNX Runtime's profile: a JSON array of Chrome-trace events ("Session" and "Node" categories).
MeasuredTrace parse_onnxruntime_profile(const Json& doc, const std::string& path);

/// Nsight Systems: the cuda_gpu_trace CSV report, and the SQLite export (`text` holds the database file).
MeasuredTrace parse_nsys_csv(const std::string& text, const std::string& path);
MeasuredTrace parse_nsys_sqlite(const std::string& bytes, const std::string& path);

/// match_measurements for the formats that name fused layers: by the ONNX nodes each entry was built from.
MatchedMeasurements match_by_origin(const MeasuredTrace& trace, const model::NetworkSpec& net);

/// The smallest p dividing names.size() such that names repeats with period p (several inferences of the same
/// sequence); names.size() when there is none (one frame).
std::size_t repetition_period(const std::vector<std::string>& names);

}  // namespace framesim::trace
