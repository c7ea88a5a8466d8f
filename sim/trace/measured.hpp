// Measured per-layer times in three formats, told apart by their content (see traces/README.md):
//  - a plain CSV of layer,time;
//  - a Chrome-trace JSON from the PyTorch profiler (Kineto's export_chrome_trace): cpu_op events, and GPU
//    kernel events attributed to their op through the correlation id of their cuda_runtime launch;
//  - the op-profiling CSV of TFLite's benchmark_model (--enable_op_profiling=true --profiling_output_csv_file=F).
// Reading gives a MeasuredTrace (what the file recorded, averaged over iterations); matching it to a network
// gives per-layer Measurements and says how each one was matched.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "model/budget.hpp"
#include "model/network.hpp"

namespace framesim::trace {

enum class MeasuredFormat { plain_csv, pytorch_trace, tflite_profile };
/// "plain CSV", "PyTorch profiler trace", "TFLite benchmark_model op profile".
std::string_view measured_format_name(MeasuredFormat f);

/// One timed thing as the file records it, averaged over the iterations (forward passes) it appears in.
struct MeasuredEntry {
  std::string name;    // as recorded: a layer name (CSV), a range name or "aten::conv2d" (PyTorch), "[out]:12" (TFLite)
  std::string op;      // the op type as recorded ("aten::conv2d", "CONV_2D"); empty for CSV rows and PyTorch ranges
  bool range = false;  // PyTorch: a record_function range (user_annotation), matched by its name; it holds ops
  int parent = -1;     // PyTorch: the innermost range holding this entry (index into MeasuredTrace::entries)
  double time_s = 0;   // per iteration
  int iterations = 1;  // how many iterations were averaged into time_s
  std::vector<std::int64_t> input_dims;  // PyTorch: the first input's dims, when "Input Dims" gives them
  std::vector<std::string> aliases;      // other names it answers to (TFLite: the output tensor name(s))
  int line = 0;                          // where the file first records it (1-based; 0: not known)
};

struct MeasuredTrace {
  std::string path;  // as shown in messages
  MeasuredFormat format = MeasuredFormat::plain_csv;
  std::vector<MeasuredEntry> entries;  // execution order (PyTorch, TFLite run order) or file order (CSV)
  int iterations = 1;                  // PyTorch ProfilerStep ranges, TFLite runs; 1 when not recorded
  bool gpu_time = false;               // PyTorch: times are GPU kernel time (else the ops' CPU time)
  std::vector<std::string> notes;      // what was read and how
};

/// Reads a measured-times file in any of the three formats. Throws core::UserError with file:line:column
/// (and the JSON key path for traces) on any problem: truncated files, wrong types, missing fields.
MeasuredTrace read_measured_trace(const std::filesystem::path& path);
/// The same from text; `display_path` names it in messages.
MeasuredTrace parse_measured_trace(const std::string& text, const std::string& display_path);

enum class MatchMethod {
  name,   // the recorded name is the layer's name
  alias,  // another name the entry answers to (TFLite output tensor; a PyTorch range's dotted suffix)
  order,  // PyTorch: the k-th top-level op of a type is the k-th layer of that type
};
std::string_view match_method_name(MatchMethod m);

struct LayerMatch {
  std::string layer;     // the network's layer
  std::string recorded;  // what the file calls it ("aten::conv2d #3", "[conv1/Relu]:0")
  MatchMethod method = MatchMethod::name;
  double time_s = 0;
};

/// Measurements by layer name, and how they were found.
struct MatchedMeasurements {
  MeasuredFormat format = MeasuredFormat::plain_csv;
  /// One per matched layer (named after the layer), then everything that matched no layer under its recorded
  /// name (a fused kernel's name still matches in the budget; the rest is reported there as unmatched).
  std::vector<model::Measurement> measurements;
  std::vector<LayerMatch> matches;  // network order
  std::vector<std::string> notes;   // the format, the time source, iterations, counts by method, doubts
};

/// Matches `trace` to the layers of `net`: by name (and alias); for PyTorch ops outside named ranges, by order
/// of occurrence within each op type (aten::conv2d, aten::linear/addmm/matmul, ...), checking counts agree and
/// the recorded input dims.
MatchedMeasurements match_measurements(const MeasuredTrace& trace, const model::NetworkSpec& net);

/// Measurements under their recorded names, without a network: CSV rows; TFLite nodes by output tensor name;
/// PyTorch ranges by name and top-level ops outside ranges as "aten::conv2d #3".
std::vector<model::Measurement> to_measurements(const MeasuredTrace& trace);

/// read_measured_trace + to_measurements.
std::vector<model::Measurement> read_measurements(const std::filesystem::path& path);

/// The plain CSV alone. A header naming a layer column (layer, name or kernel) and one time column: `time` with
/// units in each cell ("84 us"), or time_s / time_ms / time_us / time_ns with bare numbers.
std::vector<model::Measurement> parse_measurements_csv(const std::string& text, const std::string& display_path);

}  // namespace framesim::trace
