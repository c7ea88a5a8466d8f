// The measured formats, one row each (measured.hpp, MeasuredFormatTraits): their names, how each is recognised
// and read, and what it records. read_measured_trace, matching, `--help` and traces/README.md follow this table.
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "trace/importers.hpp"
#include "trace/json_reader.hpp"
#include "trace/measured.hpp"
#include "trace/measured_formats.hpp"

namespace framesim::trace {

namespace {

using Marker = MeasuredFile::Marker;

/// ONNX Runtime's profile: an array of events whose categories are "Session" and "Node" (PyTorch's are cpu_op,
/// kernel, ...). Looks at the head of the file.
bool looks_like_onnxruntime(const std::string& head) {
  return head.find("\"cat\":\"Session\"") != std::string::npos || head.find("\"cat\":\"Node\"") != std::string::npos;
}

Json json_document(const MeasuredFile& f, const char* what) {
  JsonReader reader(f.text, f.path, f.pos, f.line);
  return reader.read_document(what);
}

MeasuredTrace read_plain(const MeasuredFile& f) { return parse_plain_csv(f.text, f.path); }

std::vector<MeasuredFormatTraits> make_table() {
  using F = MeasuredFormat;
  std::vector<MeasuredFormatTraits> t;
  t.push_back({.format = F::plain_csv,
               .name = "plain CSV",
               .written_by = "you (a `layer,time` table)",
               .recognised_by = "anything else",
               .time_from = "the time column",
               .matched_by = "by name (a layer or a fused kernel)",
               .fallback = true,
               .recognises = [](const MeasuredFile& f) { return !f.json; },
               .read = read_plain});
  t.push_back({.format = F::pytorch_trace,
               .name = "PyTorch profiler trace",
               .written_by = "`torch.profiler` `export_chrome_trace` (Kineto's Chrome trace JSON)",
               .recognised_by = "first character `{` or `[`",
               .time_from = "GPU kernel time of each op (else its CPU time), mean over profiler steps",
               .matched_by = "ranges by name; ops by order within their type",
               .fallback = true,
               .recognises = [](const MeasuredFile& f) { return f.json; },
               .read = [](const MeasuredFile& f) { return parse_pytorch_trace(f.text, f.path, f.pos, f.line); }});
  t.push_back({.format = F::tflite_profile,
               .name = "TFLite benchmark_model op profile",
               .written_by = "`benchmark_model --enable_op_profiling=true --profiling_output_csv_file=F`",
               .recognised_by = "its section titles and `=====` table bars",
               .time_from = "`avg_ms` × `times called`",
               .matched_by = "by the node's output tensor name",
               .recognises = [](const MeasuredFile& f) { return !f.json && f.marker == Marker::tflite; },
               .read = [](const MeasuredFile& f) { return parse_tflite_profile(f.text, f.path); }});
  t.push_back({.format = F::tensorrt_profile,
               .name = "TensorRT trtexec profile",
               .written_by = "`trtexec --exportProfile` (and `--exportLayerInfo` beside it)",
               .recognised_by = "a JSON array starting `{\"count\": N}`",
               .time_from = "`averageMs`",
               .matched_by = "by the ONNX nodes of each layer (layer information, else its name)",
               .by_origin = true,
               .recognises =
                   [](const MeasuredFile& f) {
                     return f.json && (f.json_head.starts_with("[{\"count\":") ||
                                       (f.json_head.starts_with("[{") &&
                                        f.json_head.find("\"averageMs\":") != std::string::npos));
                   },
               .read =
                   [](const MeasuredFile& f) {
                     return parse_tensorrt_profile(json_document(f, "a trtexec profile"), f.path);
                   }});
  t.push_back({.format = F::nsys_csv,
               .name = "Nsight Systems cuda_gpu_trace CSV",
               .written_by = "`nsys stats --report cuda_gpu_trace --format csv`",
               .recognised_by = "columns in `(ns)` beside `Name`",
               .time_from = "GPU time of the kernels, mean over frames",
               .matched_by = "kernels by name",
               .by_origin = true,
               .names_layers = false,
               .recognises = [](const MeasuredFile& f) { return !f.json && f.marker == Marker::nsys; },
               .read = [](const MeasuredFile& f) { return parse_nsys_csv(f.text, f.path); }});
  t.push_back({.format = F::nsys_sqlite,
               .name = "Nsight Systems SQLite export",
               .written_by = "`nsys export --type sqlite`",
               .recognised_by = "the SQLite file header",
               .time_from = "GPU time of the kernels of each NVTX range, mean over frames",
               .matched_by = "ranges by the ONNX nodes in their (TensorRT) names",
               .binary = true,
               .by_origin = true,
               .recognises =
                   [](const MeasuredFile& f) { return f.text.starts_with(std::string_view("SQLite format 3\0", 16)); },
               .read = [](const MeasuredFile& f) { return importers().parse_nsys_sqlite(f.text, f.path); }});
  t.push_back({.format = F::onnxruntime_profile,
               .name = "ONNX Runtime profile",
               .written_by = "`SessionOptions.enable_profiling`",
               .recognised_by = "a JSON array of `\"Session\"`/`\"Node\"` events",
               .time_from = "`<node>_kernel_time` durations, mean over `model_run`s",
               .matched_by = "by node name",
               .by_origin = true,
               .recognises =
                   [](const MeasuredFile& f) {
                     return f.json && f.json_head.starts_with("[") && looks_like_onnxruntime(f.json_head);
                   },
               .read =
                   [](const MeasuredFile& f) {
                     return parse_onnxruntime_profile(json_document(f, "an ONNX Runtime profile"), f.path);
                   }});
  return t;
}

}  // namespace

const std::vector<MeasuredFormatTraits>& measured_formats() {
  static const std::vector<MeasuredFormatTraits> table = make_table();
  return table;
}

const MeasuredFormatTraits& measured_format(MeasuredFormat f) {
  for (const auto& row : measured_formats())
    if (row.format == f) return row;
  FRAMESIM_ASSERT(false, "every MeasuredFormat has a row in measured_formats()");
  return measured_formats().front();
}

std::string_view measured_format_name(MeasuredFormat f) { return measured_format(f).name; }

}  // namespace framesim::trace
