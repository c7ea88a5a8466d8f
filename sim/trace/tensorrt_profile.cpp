// TensorRT's per-layer profile and layer information, as trtexec writes them.
//
// Schema (trtexec's README and its --help, TensorRT 8.x-10.x; sample/common/sampleReporting.cpp writes them):
//  --exportProfile=P.json: a JSON array; the first record holds the number of timed runs, then one record per
//  layer in execution order, times in milliseconds over all runs (timeMs), per run (averageMs, medianMs) and the
//  share of the whole (percentage):
//    [ {"count" : 1000}
//    , {"name" : "Conv_0 + Relu_1", "timeMs" : 52.1, "averageMs" : 0.0521, "medianMs" : 0.0512, "percentage" : 30.1}
//    ]
//  --exportLayerInfo=L.json (with --profilingVerbosity=detailed): {"Layers": [...], "Bindings": [...]}, one
//  object per layer with "Name", "LayerType" ("CaskConvolution", "PointWiseV2", "Reformat", ...), "Inputs" and
//  "Outputs" (tensor descriptions) and "Metadata", which lists the ONNX nodes the layer came from as
//  "[ONNX Layer: Conv_0]\x1f[ONNX Layer: Relu_1]" (the ONNX parser's processMetadata; a node inside a local
//  function adds " | caller (function)"). Without detailed verbosity a layer is only its name (a string).
//
// Layer names speak of their ONNX nodes too: "Conv_0 + Relu_1" (fused vertically), "PWN(Relu_3, Add_4)"
// (a pointwise fusion), "Conv_1 || Conv_2" (horizontally), "{ForeignNode[Conv_5...Add_9]}" (a Myelin region from
// node to node), "Reformatting CopyNode for Input Tensor 0 to Conv_0 + Relu_1" (a reformat layer, no ONNX node).
#include <fmt/format.h>

#include <map>
#include <set>

#include <algorithm>
#include <cmath>

#include "core/text.hpp"
#include "core/units.hpp"
#include "trace/measured_formats.hpp"

namespace framesim::trace {

namespace {

void add_origins_of_part(std::string_view part, std::vector<std::string>& out) {
  part = trim(part);
  if (part.empty()) return;
  if (part.front() == '{' && part.back() == '}') {  // {ForeignNode[A...B]}
    const std::size_t open = part.find('[');
    const std::size_t close = part.rfind(']');
    if (open != std::string_view::npos && close != std::string_view::npos && close > open)
      out.emplace_back(trim(part.substr(open + 1, close - open - 1)));
    return;
  }
  if (part.starts_with("PWN(") && part.back() == ')') {
    // Arguments separated by ", " at parenthesis depth 0 (PWN nests: "PWN(PWN(Sigmoid_3), Mul_4)").
    const std::string_view inner = part.substr(4, part.size() - 5);
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= inner.size(); ++i) {
      if (i == inner.size() || (inner[i] == ',' && depth == 0)) {
        add_origins_of_part(inner.substr(start, i - start), out);
        start = i + 1;
      } else if (inner[i] == '(') {
        ++depth;
      } else if (inner[i] == ')') {
        --depth;
      }
    }
    return;
  }
  if (part.starts_with("(Unnamed Layer")) return;  // made by TensorRT, no ONNX node
  out.emplace_back(part);
}

/// Splits `s` at `sep` outside parentheses and brackets.
std::vector<std::string_view> split_outside(std::string_view s, std::string_view sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(' || s[i] == '[' || s[i] == '{') ++depth;
    if (s[i] == ')' || s[i] == ']' || s[i] == '}') --depth;
    if (depth == 0 && s.substr(i, sep.size()) == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + sep.size();
      i += sep.size() - 1;
    }
  }
  out.push_back(s.substr(start));
  return out;
}

/// The ONNX nodes in a layer-information "Metadata" string: "[ONNX Layer: A]\x1f[ONNX Layer: B | f (F)]" -> A, B.
std::vector<std::string> metadata_origins(const std::string& metadata) {
  std::vector<std::string> out;
  const std::string_view tag = "[ONNX Layer: ";
  for (std::size_t at = metadata.find(tag); at != std::string::npos; at = metadata.find(tag, at + 1)) {
    const std::size_t begin = at + tag.size();
    std::size_t end = metadata.find(']', begin);
    if (end == std::string::npos) end = metadata.size();
    std::string_view node(metadata.data() + begin, end - begin);
    if (const std::size_t bar = node.find(" | "); bar != std::string_view::npos) node = node.substr(0, bar);
    node = trim(node);
    if (!node.empty() && std::find(out.begin(), out.end(), node) == out.end()) out.emplace_back(node);
  }
  return out;
}

}  // namespace

std::string tensorrt_reformat_target(const std::string& layer_name) {
  for (std::string_view prefix : {"Reformatting CopyNode for ", "reformatting copynode for "}) {
    if (!std::string_view(layer_name).starts_with(prefix)) continue;
    const std::size_t to = layer_name.find(" to ", prefix.size());
    return to == std::string::npos ? std::string() : layer_name.substr(to + 4);
  }
  // TensorRT 7: "Conv_0 + Relu_1 input reformatter 0", "... output reformatter 0".
  for (std::string_view marker : {" input reformatter ", " output reformatter "})
    if (const std::size_t at = layer_name.rfind(marker); at != std::string::npos) return layer_name.substr(0, at);
  return "";
}

std::vector<std::string> tensorrt_name_origins(const std::string& layer_name) {
  std::vector<std::string> out;
  if (!tensorrt_reformat_target(layer_name).empty()) return out;
  for (std::string_view vertical : split_outside(layer_name, " + "))
    for (std::string_view horizontal : split_outside(vertical, " || ")) add_origins_of_part(horizontal, out);
  return out;
}

MeasuredTrace parse_tensorrt_profile(const Json& doc, const std::string& path) {
  MeasuredTrace trace;
  trace.path = path;
  trace.format = MeasuredFormat::tensorrt_profile;
  Problems problems(path);
  if (doc.type != Json::Type::array || doc.items.empty() || doc.items.front().type != Json::Type::object) {
    problems.add(doc.line, doc.column, "",
                 "expected trtexec's profile: an array whose first record is {\"count\": N} (--exportProfile)");
    problems.throw_if_any();
  }
  const Json& head = doc.items.front();
  const auto count = JsonFields(head, "[0]", problems).count("count", true, "the number of timed runs");
  if (count && *count < 1)
    problems.add(head.find("count")->line, head.find("count")->column, "[0].count",
                 fmt::format("expected a whole number of runs (at least 1), got {}", *count));
  std::set<std::string> seen;
  for (std::size_t i = 1; i < doc.items.size(); ++i) {
    const Json& r = doc.items[i];
    const std::string here = fmt::format("[{}]", i);
    if (r.type != Json::Type::object) {
      problems.add(r.line, r.column, here,
                   fmt::format("expected a layer record (an object), got {}", json_type_name(r.type)));
      continue;
    }
    const JsonFields f(r, here, problems);
    const auto name = f.text("name", true);
    const auto average_s = f.duration("averageMs", 1e-3, true, "the mean time per run in milliseconds");
    f.duration("timeMs", 1e-3, false, "the time over all runs in milliseconds");
    f.duration("medianMs", 1e-3, false, "the median time per run in milliseconds");
    if (const auto share = f.number("percentage", false, "the share of the whole");
        share && (!std::isfinite(*share) || *share < 0 || *share > 100)) {
      const Json* v = r.find("percentage");
      problems.add(v->line, v->column, here + ".percentage",
                   fmt::format("expected a share between 0 and 100, got {}", *share));
    }
    if (!name || !average_s) continue;
    if (name->empty()) {
      problems.add(r.find("name")->line, r.find("name")->column, here + ".name", "empty layer name");
      continue;
    }
    if (!seen.insert(*name).second) {
      problems.add(r.find("name")->line, r.find("name")->column, here + ".name",
                   fmt::format("layer \"{}\" is listed twice (two profiles in one file?)", *name));
      continue;
    }
    MeasuredEntry e;
    e.name = *name;
    e.time_s = *average_s;
    e.line = r.line;
    e.feeds = tensorrt_reformat_target(*name);
    e.data_movement = !e.feeds.empty();
    e.iterations = count ? static_cast<int>(*count) : 1;
    trace.entries.push_back(std::move(e));
  }
  if (doc.items.size() == 1 && problems.empty())
    problems.add(doc.line, doc.column, "", "the profile has the run count but no layer records (truncated file?)");
  problems.throw_if_any();
  trace.iterations = count ? static_cast<int>(*count) : 1;
  double total_s = 0;
  for (const auto& e : trace.entries) total_s += e.time_s;
  trace.notes.push_back(fmt::format("{}: {} layers, averageMs per run (mean of {} runs), {} in all per run",
                                    measured_format_name(trace.format), trace.entries.size(), trace.iterations,
                                    core::format_seconds(total_s)));
  return trace;
}

void add_tensorrt_layer_info(MeasuredTrace& trace, const std::string& text, const std::string& display_path) {
  Problems problems(display_path);
  // Leading '#' comment lines, as in every measured file.
  std::size_t pos = 0;
  int line = 1;
  skip_comment_lines(text, pos, line);
  JsonReader reader(text, display_path, pos, line);
  const Json doc = reader.read_document("trtexec's layer information {\"Layers\": [...]}");
  const Json* layers = doc.type == Json::Type::object ? doc.find("Layers") : nullptr;
  if (!layers || layers->type != Json::Type::array) {
    problems.add(doc.line, doc.column, "Layers",
                 "expected trtexec's layer information: an object {\"Layers\": [...]} (--exportLayerInfo)");
    problems.throw_if_any();
  }
  struct Info {
    std::string type;
    std::vector<std::string> origins;
  };
  std::map<std::string, Info, std::less<>> by_name;
  bool detailed = false;
  for (std::size_t i = 0; i < layers->items.size(); ++i) {
    const Json& l = layers->items[i];
    const std::string here = fmt::format("Layers[{}]", i);
    if (l.type == Json::Type::string) {  // --profilingVerbosity=layer_names_only: the name alone
      by_name[l.text];
      continue;
    }
    if (l.type != Json::Type::object) {
      problems.add(l.line, l.column, here,
                   fmt::format("expected a layer (an object or a name), got {}", json_type_name(l.type)));
      continue;
    }
    detailed = true;
    const JsonFields f(l, here, problems);
    const auto name = f.text("Name", true);
    const auto type = f.text("LayerType", false);
    const auto metadata = f.text("Metadata", false);
    for (const char* key : {"Inputs", "Outputs"})
      if (const Json* v = l.find(key); v && v->type != Json::Type::array)
        problems.add(v->line, v->column, fmt::format("{}.{}", here, key),
                     fmt::format("expected an array of tensors, got {}", json_type_name(v->type)));
    if (!name) continue;
    Info& info = by_name[*name];
    info.type = type.value_or("");
    if (metadata) info.origins = metadata_origins(*metadata);
  }
  problems.throw_if_any();
  std::size_t known = 0, with_origins = 0;
  std::vector<std::string> missing;
  for (auto& e : trace.entries) {
    auto it = by_name.find(e.name);
    if (it == by_name.end()) {
      missing.push_back(e.name);
      continue;
    }
    ++known;
    e.op = it->second.type;
    if (!it->second.origins.empty()) {
      e.origins = it->second.origins;
      ++with_origins;
    }
    if (it->second.type == "Reformat" && !e.data_movement) {
      e.data_movement = true;
      e.feeds = tensorrt_reformat_target(e.name);
    }
  }
  if (known == 0 && !trace.entries.empty())
    throw core::UserError({core::Diagnostic{
        {display_path, doc.line, doc.column},
        "Layers",
        fmt::format("none of the {} layers of the profile {} is here (\"{}\", ...): layer information of another "
                    "engine?",
                    trace.entries.size(), trace.path, trace.entries.front().name)}});
  trace.notes.push_back(
      fmt::format("layer information from {}: {} of {} layers described, {} with their ONNX nodes{}", display_path,
                  known, trace.entries.size(), with_origins,
                  detailed ? "" : " (names only: build with --profilingVerbosity=detailed for the ONNX nodes)"));
  if (!missing.empty())
    trace.notes.push_back(
        fmt::format("{} profiled layers not in the layer information (their ONNX nodes are read "
                    "from their names): {}",
                    missing.size(), core::join_list(missing, ", ")));
}

}  // namespace framesim::trace
