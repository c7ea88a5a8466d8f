// Matching a measured trace to a network's layers (match_measurements, measured.hpp): by name, by a range's
// suffix, or by order with op types on both sides reduced to one class (PyTorch ops); the formats that name
// fused layers are matched by the ONNX nodes of each entry (fused_match.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string_view>
#include <tuple>

#include "core/text.hpp"
#include "trace/measured_formats.hpp"

namespace framesim::trace {

namespace {



// ---------------------------------------------------------------------------------------------------------------
// Matching PyTorch ops to layers by order: op types on both sides reduced to one class.
// ---------------------------------------------------------------------------------------------------------------

/// The class of a framesim layer op for order matching.
std::string layer_class(const model::LayerSpec& layer) {
  static const std::map<std::string, std::string, std::less<>> kSame{
      {"linear", "gemm"}, {"matmul", "gemm"}, {"relu6", "clip"}, {"clip", "clip"}, {"flatten", "reshape"}};
  if (auto it = kSame.find(layer.op); it != kSame.end()) return it->second;
  return layer.op;
}

/// The class of a PyTorch op ("aten::conv2d", "aten::relu_") for order matching; empty when framesim has none.
std::string torch_class(std::string_view op) {
  static const std::map<std::string, std::string, std::less<>> kTable{
      {"conv2d", "conv2d"},
      {"convolution", "conv2d"},
      {"_convolution", "conv2d"},
      {"cudnn_convolution", "conv2d"},
      {"mkldnn_convolution", "conv2d"},
      {"_conv_depthwise2d", "conv2d"},
      {"thnn_conv2d", "conv2d"},
      {"linear", "gemm"},
      {"addmm", "gemm"},
      {"mm", "gemm"},
      {"matmul", "gemm"},
      {"bmm", "gemm"},
      {"baddbmm", "gemm"},
      {"batch_norm", "batchnorm"},
      {"native_batch_norm", "batchnorm"},
      {"_native_batch_norm_legit_no_training", "batchnorm"},
      {"cudnn_batch_norm", "batchnorm"},
      {"relu", "relu"},
      {"relu6", "clip"},
      {"hardtanh", "clip"},
      {"clamp", "clip"},
      {"clip", "clip"},
      {"leaky_relu", "leaky_relu"},
      {"sigmoid", "sigmoid"},
      {"tanh", "tanh"},
      {"gelu", "gelu"},
      {"silu", "silu"},
      {"hardswish", "hardswish"},
      {"hardsigmoid", "hardsigmoid"},
      {"exp", "exp"},
      {"log", "log"},
      {"sqrt", "sqrt"},
      {"abs", "abs"},
      {"neg", "neg"},
      {"reciprocal", "reciprocal"},
      {"erf", "erf"},
      {"add", "add"},
      {"sub", "sub"},
      {"mul", "mul"},
      {"div", "div"},
      {"maximum", "max"},
      {"minimum", "min"},
      {"pow", "pow"},
      {"max_pool2d", "maxpool"},
      {"max_pool2d_with_indices", "maxpool"},
      {"avg_pool2d", "avgpool"},
      {"adaptive_avg_pool2d", "global_avgpool"},
      {"mean", "global_avgpool"},
      {"adaptive_max_pool2d", "global_maxpool"},
      {"layer_norm", "layernorm"},
      {"native_layer_norm", "layernorm"},
      {"rms_norm", "rmsnorm"},
      {"softmax", "softmax"},
      {"_softmax", "softmax"},
      {"embedding", "embedding"},
      {"scaled_dot_product_attention", "attention"},
      {"_scaled_dot_product_flash_attention", "attention"},
      {"_scaled_dot_product_efficient_attention", "attention"},
      {"reshape", "reshape"},
      {"view", "reshape"},
      {"flatten", "reshape"},
      {"_unsafe_view", "reshape"},
      {"squeeze", "reshape"},
      {"unsqueeze", "reshape"},
      {"permute", "transpose"},
      {"transpose", "transpose"},
      {"cat", "concat"},
      {"concat", "concat"},
      {"pad", "pad"},
      {"constant_pad_nd", "pad"},
      {"reflection_pad2d", "pad"},
      {"replication_pad2d", "pad"},
      {"slice", "slice"},
      {"narrow", "slice"},
      {"clone", "copy"},
      {"copy", "copy"},
      {"upsample_nearest2d", "resize"},
      {"upsample_bilinear2d", "resize"},
      {"_upsample_nearest_exact2d", "resize"},
      {"to", "cast"},
      {"_to_copy", "cast"}};
  if (!op.starts_with("aten::")) return "";
  std::string_view base = op.substr(6);
  if (!base.empty() && base.back() == '_' && base.front() != '_') base.remove_suffix(1);  // in place: relu_
  if (auto it = kTable.find(base); it != kTable.end()) return it->second;
  return "";
}

/// A range's dotted or slashed suffixes, longest first: "model.layer1.0.conv_a" -> "layer1.0.conv_a", "0.conv_a",
/// "conv_a".
std::vector<std::string> range_suffixes(const std::string& name) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < name.size(); ++i)
    if ((name[i] == '.' || name[i] == '/') && i + 1 < name.size()) out.push_back(name.substr(i + 1));
  return out;
}

}  // namespace

MatchedMeasurements match_measurements(const MeasuredTrace& trace, const model::NetworkSpec& net) {
  if (trace.format == MeasuredFormat::tensorrt_profile || trace.format == MeasuredFormat::nsys_csv ||
      trace.format == MeasuredFormat::nsys_sqlite || trace.format == MeasuredFormat::onnxruntime_profile)
    return match_by_origin(trace, net);
  MatchedMeasurements out;
  out.format = trace.format;
  out.notes = trace.notes;
  std::map<std::string, int, std::less<>> layer_index;
  for (std::size_t l = 0; l < net.layers.size(); ++l) layer_index[net.layers[l].name] = static_cast<int>(l);

  std::vector<double> layer_time(net.layers.size(), 0.0);
  std::vector<std::vector<LayerMatch>> found(net.layers.size());
  std::vector<model::Measurement> passthrough;
  auto credit = [&](int layer, const std::string& recorded, MatchMethod method, double time_s) {
    layer_time[static_cast<std::size_t>(layer)] += time_s;
    found[static_cast<std::size_t>(layer)].push_back(
        {net.layers[static_cast<std::size_t>(layer)].name, recorded, method, time_s});
  };
  auto lookup = [&](const std::string& name) -> int {
    auto it = layer_index.find(name);
    return it == layer_index.end() ? -1 : it->second;
  };

  if (trace.format != MeasuredFormat::pytorch_trace) {
    for (const auto& e : trace.entries) {
      int layer = lookup(e.name);
      MatchMethod method = MatchMethod::name;
      if (layer < 0)
        for (const auto& a : e.aliases)
          if ((layer = lookup(a)) >= 0) {
            method = MatchMethod::alias;
            break;
          }
      if (layer >= 0)
        credit(layer, e.name, method, e.time_s);
      else
        passthrough.push_back({recorded_name(trace, e), e.time_s});
    }
  } else {
    // 1. Ranges named after layers (record_function("conv1"), or a module path ending in the layer's name).
    std::vector<int> range_layer(trace.entries.size(), -1);
    std::vector<MatchMethod> range_method(trace.entries.size(), MatchMethod::name);
    for (std::size_t i = 0; i < trace.entries.size(); ++i) {
      const auto& e = trace.entries[i];
      if (!e.range) continue;
      int layer = lookup(e.name);
      if (layer < 0)
        for (const auto& suffix : range_suffixes(e.name))
          if ((layer = lookup(suffix)) >= 0) {
            range_method[i] = MatchMethod::alias;
            break;
          }
      range_layer[i] = layer;
    }
    // The matched range an entry lies in (-1: none), and each matched range's time without the matched ranges
    // inside it.
    auto matched_ancestor = [&](std::size_t i) {
      for (int p = trace.entries[i].parent; p >= 0; p = trace.entries[static_cast<std::size_t>(p)].parent)
        if (range_layer[static_cast<std::size_t>(p)] >= 0) return p;
      return -1;
    };
    std::vector<double> exclusive(trace.entries.size(), 0.0);
    for (std::size_t i = 0; i < trace.entries.size(); ++i)
      if (range_layer[i] >= 0) exclusive[i] = trace.entries[i].time_s;
    for (std::size_t i = 0; i < trace.entries.size(); ++i)
      if (range_layer[i] >= 0)
        if (int a = matched_ancestor(i); a >= 0) exclusive[static_cast<std::size_t>(a)] -= trace.entries[i].time_s;
    // A range name recorded several times (once per forward pass when the trace has no steps): the mean.
    std::vector<std::string> plain_ranges;
    std::map<std::string, std::tuple<int, MatchMethod, double, int>> by_range;  // name -> layer, method, sum, count
    std::vector<std::string> range_order;
    for (std::size_t i = 0; i < trace.entries.size(); ++i) {
      if (!trace.entries[i].range) continue;
      const std::string& name = trace.entries[i].name;
      if (range_layer[i] >= 0) {
        auto [it, fresh] = by_range.try_emplace(name, range_layer[i], range_method[i], 0.0, 0);
        if (fresh) range_order.push_back(name);
        std::get<2>(it->second) += std::max(0.0, exclusive[i]);
        std::get<3>(it->second) += 1;
      } else if (std::find(plain_ranges.begin(), plain_ranges.end(), name) == plain_ranges.end()) {
        plain_ranges.push_back(name);
      }
    }
    int most_repeated = 1;
    for (const auto& name : range_order) {
      const auto& [layer, method, sum, count] = by_range[name];
      credit(layer, name, method, sum / count);
      most_repeated = std::max(most_repeated, count);
    }
    if (most_repeated > 1 && trace.iterations == 1)
      out.notes.push_back(
          fmt::format("layer-named ranges recorded up to {} times (forward passes): averaged", most_repeated));

    // 2. Top-level ops outside matched ranges, by order within their class.
    std::map<std::string, std::vector<std::size_t>> ops_by_class;
    std::vector<std::size_t> unclassified;
    std::size_t inside_ranges = 0;
    std::map<std::string, int> occurrence_of_op;  // "aten::conv2d" -> occurrences so far (for names like "#3")
    std::vector<std::string> occurrence_name(trace.entries.size());
    for (std::size_t i = 0; i < trace.entries.size(); ++i) {
      const auto& e = trace.entries[i];
      if (e.range) continue;
      if (matched_ancestor(i) >= 0) {
        ++inside_ranges;
        continue;
      }
      occurrence_name[i] = fmt::format("{} #{}", e.op, ++occurrence_of_op[e.op]);
      const std::string c = torch_class(e.op);
      if (c.empty())
        unclassified.push_back(i);
      else
        ops_by_class[c].push_back(i);
    }
    std::map<std::string, std::vector<int>> layers_by_class;
    for (std::size_t l = 0; l < net.layers.size(); ++l)
      if (found[l].empty()) layers_by_class[layer_class(net.layers[l])].push_back(static_cast<int>(l));
    // Repetitions: the same op sequence several times is several forward passes (when the trace has no steps).
    std::map<int, std::size_t> votes;
    for (const auto& [c, ops] : ops_by_class) {
      auto it = layers_by_class.find(c);
      if (it == layers_by_class.end() || it->second.empty() || ops.size() % it->second.size() != 0) continue;
      votes[static_cast<int>(ops.size() / it->second.size())] += ops.size();
    }
    int repeats = 1;
    std::size_t best_votes = 0;
    for (const auto& [n, v] : votes)
      if (v > best_votes) {
        best_votes = v;
        repeats = n;
      }
    std::vector<std::string> dim_mismatches, count_mismatches;
    std::size_t order_matched = 0;
    for (const auto& [c, ops] : ops_by_class) {
      auto it = layers_by_class.find(c);
      const std::size_t n = it == layers_by_class.end() ? 0 : it->second.size();
      if (n == 0 || ops.size() != n * static_cast<std::size_t>(repeats)) {
        for (std::size_t i : ops) passthrough.push_back({occurrence_name[i], trace.entries[i].time_s});
        if (n > 0)
          count_mismatches.push_back(fmt::format("{} {} ops but {} {} layers{}", ops.size(), c, n, c,
                                                 repeats > 1 ? fmt::format(" x {} passes", repeats) : ""));
        continue;
      }
      for (std::size_t j = 0; j < ops.size(); ++j) {
        const auto& e = trace.entries[ops[j]];
        const int layer = it->second[j % n];
        if (j < n) {
          // One match per layer: the mean over the passes, under the first pass's name.
          double sum = 0;
          for (std::size_t r = j; r < ops.size(); r += n) sum += trace.entries[ops[r]].time_s;
          credit(layer, occurrence_name[ops[j]] + (repeats > 1 ? fmt::format(" (mean of {} passes)", repeats) : ""),
                 MatchMethod::order, sum / repeats);
          ++order_matched;
        }
        const auto& spec = net.layers[static_cast<std::size_t>(layer)];
        // (aten::addmm and aten::baddbmm take the bias first: their first input is not the layer's.)
        const bool bias_first = e.op == "aten::addmm" || e.op == "aten::baddbmm";
        if (!e.input_dims.empty() && !spec.inputs.empty() && !bias_first) {
          const auto& shape = net.tensors[static_cast<std::size_t>(spec.inputs.front())].shape;
          if (shape != e.input_dims && dim_mismatches.size() < 1000)
            dim_mismatches.push_back(fmt::format("{} reads {} but {} reads {}", occurrence_name[ops[j]],
                                                 model::shape_to_string(e.input_dims), spec.name,
                                                 model::shape_to_string(shape)));
        }
      }
    }
    for (std::size_t i : unclassified) passthrough.push_back({occurrence_name[i], trace.entries[i].time_s});

    if (order_matched > 0) {
      out.notes.push_back(fmt::format(
          "ops outside named ranges matched by order: the k-th op of a type is the k-th layer of that type "
          "(aten::conv2d -> conv2d, aten::linear/addmm/matmul -> linear or matmul, aten::batch_norm -> batchnorm, "
          "...){}",
          repeats > 1 ? fmt::format("; the op sequence holds {} passes over the network: averaged", repeats) : ""));
    }
    if (!count_mismatches.empty())
      out.notes.push_back("not matched by order, the counts disagree: " + core::join_list(count_mismatches, "; "));
    if (!dim_mismatches.empty()) {
      std::vector<std::string> shown(
          dim_mismatches.begin(),
          dim_mismatches.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(3, dim_mismatches.size())));
      out.notes.push_back(fmt::format("input dims disagree for {} order-matched ops (is the order right?): {}{}",
                                      dim_mismatches.size(), core::join_list(shown, "; "),
                                      dim_mismatches.size() > shown.size() ? "; ..." : ""));
    }
    if (!plain_ranges.empty()) {
      std::vector<std::string> shown(
          plain_ranges.begin(),
          plain_ranges.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(5, plain_ranges.size())));
      out.notes.push_back(fmt::format("ranges not named after a layer (their ops were matched on their own): {}{}",
                                      core::join_list(shown, ", "), plain_ranges.size() > shown.size() ? ", ..." : ""));
    }
    if (inside_ranges > 0)
      out.notes.push_back(fmt::format("{} op{} inside layer-named ranges count{} towards those layers", inside_ranges,
                                      inside_ranges == 1 ? "" : "s", inside_ranges == 1 ? "s" : ""));
  }

  // Measurements per layer, in network order; then what matched no layer.
  std::size_t by_name = 0, by_alias = 0, by_order = 0, doubled = 0;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    if (found[l].empty()) continue;
    out.measurements.push_back({net.layers[l].name, layer_time[l]});
    if (found[l].size() > 1) ++doubled;
    for (const auto& m : found[l]) {
      out.matches.push_back(m);
      (m.method == MatchMethod::name ? by_name : m.method == MatchMethod::alias ? by_alias : by_order) += 1;
    }
  }
  for (auto& m : passthrough) out.measurements.push_back(std::move(m));
  std::vector<std::string> methods;
  if (by_name) methods.push_back(fmt::format("{} by name", by_name));
  if (by_alias)
    methods.push_back(fmt::format("{} by alias ({})", by_alias,
                                  trace.format == MeasuredFormat::tflite_profile
                                      ? "the node's output tensor name"
                                      : "a range name ending in the layer's"));
  if (by_order) methods.push_back(fmt::format("{} by order", by_order));
  std::size_t layers_matched = 0;
  for (const auto& f : found) layers_matched += !f.empty();
  out.notes.push_back(fmt::format("matched {} of {} layers of {}{}{}{}", layers_matched, net.layers.size(), net.name,
                                  methods.empty() ? "" : ": ", core::join_list(methods, ", "),
                                  passthrough.empty()
                                      ? std::string()
                                      : fmt::format("; {} recorded name{} matching no layer (a fused kernel's name "
                                                    "still matches)",
                                                    passthrough.size(), passthrough.size() == 1 ? "" : "s")));
  if (doubled > 0)
    out.notes.push_back(fmt::format("{} layer{} matched several recorded entries: their times are summed", doubled,
                                    doubled == 1 ? "" : "s"));
  return out;
}

}  // namespace framesim::trace
