// Measured per-layer times, told apart by their content: one row per format in the traits table
// measured_formats() (measured_format_table.cpp; seven rows: plain CSV, the PyTorch profiler's Chrome trace,
// TFLite benchmark_model's op profile, trtexec's profile, Nsight Systems' kernel table and SQLite export, ONNX
// Runtime's session profile). Detection, reading, matching, `--help` and the table of traces/README.md all follow
// that one table. Reading gives a MeasuredTrace (what the file recorded, averaged over iterations); matching it to
// a network gives per-layer Measurements and says how each one was matched.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/budget.hpp"
#include "model/network.hpp"

namespace framesim::trace {

enum class MeasuredFormat {
  plain_csv,
  pytorch_trace,
  tflite_profile,
  tensorrt_profile,     // trtexec --exportProfile (and --exportLayerInfo beside it)
  nsys_csv,             // nsys stats --report cuda_gpu_trace --format csv
  nsys_sqlite,          // nsys export --type sqlite
  onnxruntime_profile,  // ONNX Runtime SessionOptions.enable_profiling
};
/// "plain CSV", "PyTorch profiler trace", "TFLite benchmark_model op profile", "TensorRT trtexec profile", ...
/// (the `name` of its row in measured_formats()).
std::string_view measured_format_name(MeasuredFormat f);

struct MeasuredTrace;
struct MeasuredFile;  // what detection looks at: the bytes, and where the content starts (measured_formats.hpp)

/// One measured format: how it is named, recognised and read, and what it records. The `written_by`,
/// `recognised_by`, `time_from` and `matched_by` texts are the columns of traces/README.md's table (a test
/// compares them).
struct MeasuredFormatTraits {
  MeasuredFormat format{};
  std::string_view name{};           // as messages and --help name it
  std::string_view written_by{};     // the tool and option that write it
  std::string_view recognised_by{};  // what in the content tells it apart
  std::string_view time_from{};      // what gives a layer's time
  std::string_view matched_by{};     // how its names are matched to the network's layers
  bool binary = false;               // recognised on the raw bytes, before the UTF-8 check (a SQLite database)
  bool fallback = false;             // what a file of its kind (JSON, text) is when no other row recognises it
  bool by_origin = false;            // its entries are (fused) layers matched by the ONNX nodes they were built from
  bool names_layers = true;          // false: its entries name kernels only (rarely a layer: no match is no surprise)
  bool (*recognises)(const MeasuredFile& file) = nullptr;
  MeasuredTrace (*read)(const MeasuredFile& file) = nullptr;
};
/// Every measured format, in the order of MeasuredFormat (recognition tries the rows that are not fallbacks in
/// this order, then the fallbacks).
const std::vector<MeasuredFormatTraits>& measured_formats();
/// The row of `f`.
const MeasuredFormatTraits& measured_format(MeasuredFormat f);

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
  /// TensorRT, Nsight Systems, ONNX Runtime: the ONNX nodes it was built from (a fused layer has several; an
  /// entry "A...B" stands for every node from A to B). Empty: taken from the name ("Conv_0 + Relu_1").
  std::vector<std::string> origins;
  bool data_movement = false;  // a TensorRT reformat layer, a memcpy: moves data, computes nothing of the network
  std::string feeds;           // data movement: the recorded entry it reformats for ("Conv_0 + Relu_1")
};

/// One timed piece of one measured frame (inference): a kernel (Nsight Systems) or a node (ONNX Runtime).
struct MeasuredSpan {
  int entry = -1;      // index into MeasuredTrace::entries
  double start_s = 0;  // from the start of the first frame
  double duration_s = 0;
  std::string stream;  // CUDA stream, or thread
};

/// One inference as recorded, for comparing a measured frame with a simulated one.
struct MeasuredFrame {
  double start_s = 0, end_s = 0;    // from the start of the first frame
  std::vector<MeasuredSpan> spans;  // in start order
};

struct MeasuredTrace {
  std::string path;  // as shown in messages
  MeasuredFormat format = MeasuredFormat::plain_csv;
  std::vector<MeasuredEntry> entries;  // execution order (PyTorch, TFLite run order) or file order (CSV)
  int iterations = 1;                  // PyTorch ProfilerStep ranges, TFLite runs; 1 when not recorded
  bool gpu_time = false;               // PyTorch: times are GPU kernel time (else the ops' CPU time)
  std::vector<std::string> notes;      // what was read and how
  std::vector<MeasuredFrame> frames;   // Nsight Systems, ONNX Runtime: every inference, in time order
};

/// Reads a measured-times file in any of the formats of measured_formats(). Throws core::UserError with
/// file:line:column (and the JSON key path for traces) on any problem: truncated files, wrong types, missing fields.
MeasuredTrace read_measured_trace(const std::filesystem::path& path);
/// The same from text; `display_path` names it in messages. A TensorRT profile is read without its layer
/// information (read_measured_trace finds that beside the file; add_tensorrt_layer_info adds it).
MeasuredTrace parse_measured_trace(const std::string& text, const std::string& display_path);

/// Where read_measured_trace looks for the --exportLayerInfo file of a TensorRT profile: the profile's file name
/// with its last "profile" replaced by "layers" (model.profile.json -> model.layers.json); empty when the name
/// has no "profile".
std::filesystem::path tensorrt_layer_info_path(const std::filesystem::path& profile);
/// Adds trtexec's layer information (--exportLayerInfo JSON: layer types, the ONNX nodes behind each layer) to
/// a TensorRT profile. Throws core::UserError on a malformed file or one of another engine.
void add_tensorrt_layer_info(MeasuredTrace& trace, const std::string& text, const std::string& display_path);

enum class MatchMethod {
  name,    // the recorded name is the layer's name
  alias,   // another name the entry answers to (TFLite output tensor; a PyTorch range's dotted suffix)
  order,   // PyTorch: the k-th top-level op of a type is the k-th layer of that type
  origin,  // TensorRT, Nsight, ONNX Runtime: an ONNX node the recorded layer was built from
};
std::string_view match_method_name(MatchMethod m);

struct LayerMatch {
  std::string layer;     // the network's layer
  std::string recorded;  // what the file calls it ("aten::conv2d #3", "[conv1/Relu]:0")
  MatchMethod method = MatchMethod::name;
  double time_s = 0;
};

/// What became of one recorded entry of a format that names fused layers (TensorRT, Nsight, ONNX Runtime).
enum class EntryFate {
  matched,        // one layer of the network, and that layer has no other entry
  merged,         // several layers of the network (a fused TensorRT layer): its time goes to the first of them
  split,          // one layer of the network that other entries also measure: their times are summed
  data_movement,  // a reformat layer or memcpy: its time goes to the layer it reformats for
  unmatched,      // no layer of the network
};
std::string_view entry_fate_name(EntryFate f);

struct EntryMatch {
  std::string recorded;  // the entry's name
  EntryFate fate = EntryFate::unmatched;
  std::vector<std::string> layers;  // the network's layers it measures (data movement: the one it is added to)
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
  std::vector<EntryMatch> entries;  // TensorRT, Nsight Systems, ONNX Runtime: each recorded entry, file order
};

/// Matches `trace` to the layers of `net`: by name (and alias); for PyTorch ops outside named ranges, by order
/// of occurrence within each op type (aten::conv2d, aten::linear/addmm/matmul, ...), checking counts agree and
/// the recorded input dims; for TensorRT, Nsight and ONNX Runtime, by the ONNX nodes each entry was built from
/// (fused_match.cpp). Throws core::UserError when a profile of those formats matches no layer at all (a profile
/// of another network).
MatchedMeasurements match_measurements(const MeasuredTrace& trace, const model::NetworkSpec& net);

/// How well a trace fits a network: `error` when nothing recorded names a layer of it (a trace of another network:
/// every name unmatched), `warning` when some recorded names match no layer (and no fused kernel containing one).
struct MatchVerdict {
  std::optional<std::string> error;
  std::optional<std::string> warning;
};
MatchVerdict judge_match(const MeasuredTrace& trace, const MatchedMeasurements& matched, const model::NetworkSpec& net);

/// Measurements under their recorded names, without a network: CSV rows; TFLite nodes by output tensor name;
/// PyTorch ranges by name and top-level ops outside ranges as "aten::conv2d #3".
std::vector<model::Measurement> to_measurements(const MeasuredTrace& trace);

/// read_measured_trace + to_measurements.
std::vector<model::Measurement> read_measurements(const std::filesystem::path& path);

/// The plain CSV alone. A header naming a layer column (layer, name or kernel) and one time column: `time` with
/// units in each cell ("84 us"), or time_s / time_ms / time_us / time_ns with bare numbers.
std::vector<model::Measurement> parse_measurements_csv(const std::string& text, const std::string& display_path);

}  // namespace framesim::trace
