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

/// What has been matched so far: each layer's summed time and its matches, and the recorded entries that match no
/// layer (kept under their recorded names).
class Matching {
 public:
  explicit Matching(const model::NetworkSpec& net)
      : net_(net), layer_time_(net.layers.size(), 0.0), found_(net.layers.size()) {
    for (std::size_t l = 0; l < net.layers.size(); ++l) layer_index_[net.layers[l].name] = static_cast<int>(l);
  }
  const model::NetworkSpec& net() const { return net_; }
  /// The index of the layer named `name`, or -1.
  int layer(const std::string& name) const {
    auto it = layer_index_.find(name);
    return it == layer_index_.end() ? -1 : it->second;
  }
  bool matched(std::size_t layer) const { return !found_[layer].empty(); }
  /// Adds `time_s`, recorded as `recorded`, to `layer`.
  void credit(int layer, const std::string& recorded, MatchMethod method, double time_s) {
    layer_time_[static_cast<std::size_t>(layer)] += time_s;
    found_[static_cast<std::size_t>(layer)].push_back(
        {net_.layers[static_cast<std::size_t>(layer)].name, recorded, method, time_s});
  }
  void pass_through(model::Measurement m) { passthrough_.push_back(std::move(m)); }
  /// The measurements per layer in network order, then what matched no layer; the notes on the counts by method.
  void finish(const MeasuredTrace& trace, MatchedMeasurements& out);

 private:
  const model::NetworkSpec& net_;
  std::map<std::string, int, std::less<>> layer_index_;
  std::vector<double> layer_time_;
  std::vector<std::vector<LayerMatch>> found_;
  std::vector<model::Measurement> passthrough_;
};

void Matching::finish(const MeasuredTrace& trace, MatchedMeasurements& out) {
  std::size_t by_name = 0, by_alias = 0, by_order = 0, doubled = 0;
  for (std::size_t l = 0; l < net_.layers.size(); ++l) {
    if (found_[l].empty()) continue;
    out.measurements.push_back({net_.layers[l].name, layer_time_[l]});
    if (found_[l].size() > 1) ++doubled;
    for (const auto& m : found_[l]) {
      out.matches.push_back(m);
      (m.method == MatchMethod::name ? by_name : m.method == MatchMethod::alias ? by_alias : by_order) += 1;
    }
  }
  for (auto& m : passthrough_) out.measurements.push_back(std::move(m));
  std::vector<std::string> methods;
  if (by_name) methods.push_back(fmt::format("{} by name", by_name));
  if (by_alias)
    methods.push_back(fmt::format("{} by alias ({})", by_alias,
                                  trace.format == MeasuredFormat::tflite_profile
                                      ? "the node's output tensor name"
                                      : "a range name ending in the layer's"));
  if (by_order) methods.push_back(fmt::format("{} by order", by_order));
  std::size_t layers_matched = 0;
  for (const auto& f : found_) layers_matched += !f.empty();
  out.notes.push_back(fmt::format("matched {} of {} layers of {}{}{}{}", layers_matched, net_.layers.size(), net_.name,
                                  methods.empty() ? "" : ": ", core::join_list(methods, ", "),
                                  passthrough_.empty()
                                      ? std::string()
                                      : fmt::format("; {} recorded name{} matching no layer (a fused kernel's name "
                                                    "still matches)",
                                                    passthrough_.size(), passthrough_.size() == 1 ? "" : "s")));
  if (doubled > 0)
    out.notes.push_back(fmt::format("{} layer{} matched several recorded entries: their times are summed", doubled,
                                    doubled == 1 ? "" : "s"));
}

/// Plain CSV and TFLite: each entry by its name, else by one of its aliases (a TFLite node's output tensors).
void match_by_name(const MeasuredTrace& trace, Matching& matching) {
  for (const auto& e : trace.entries) {
    int layer = matching.layer(e.name);
    MatchMethod method = MatchMethod::name;
    if (layer < 0)
      for (const auto& a : e.aliases)
        if ((layer = matching.layer(a)) >= 0) {
          method = MatchMethod::alias;
          break;
        }
    if (layer >= 0) matching.credit(layer, e.name, method, e.time_s);
    else matching.pass_through({recorded_name(trace, e), e.time_s});
  }
}

/// PyTorch ranges named after layers: the layer of each entry that is such a range (-1 for the others), and the
/// ranges named after no layer.
struct RangeMatch {
  std::vector<int> layer_of_entry;
  std::vector<std::string> unnamed;
};

/// The matched range entry `i` lies in (-1: none).
int matched_ancestor(const MeasuredTrace& trace, const RangeMatch& ranges, std::size_t i) {
  for (int p = trace.entries[i].parent; p >= 0; p = trace.entries[static_cast<std::size_t>(p)].parent)
    if (ranges.layer_of_entry[static_cast<std::size_t>(p)] >= 0) return p;
  return -1;
}

/// Ranges named after layers (record_function("conv1"), or a module path ending in the layer's name), each
/// credited with its time without the matched ranges inside it; a range name recorded several times (once per
/// forward pass when the trace has no steps) with the mean.
RangeMatch match_ranges(const MeasuredTrace& trace, Matching& matching, std::vector<std::string>& notes) {
  RangeMatch ranges;
  ranges.layer_of_entry.assign(trace.entries.size(), -1);
  std::vector<MatchMethod> range_method(trace.entries.size(), MatchMethod::name);
  for (std::size_t i = 0; i < trace.entries.size(); ++i) {
    const auto& e = trace.entries[i];
    if (!e.range) continue;
    int layer = matching.layer(e.name);
    if (layer < 0)
      for (const auto& suffix : range_suffixes(e.name))
        if ((layer = matching.layer(suffix)) >= 0) {
          range_method[i] = MatchMethod::alias;
          break;
        }
    ranges.layer_of_entry[i] = layer;
  }
  std::vector<double> exclusive(trace.entries.size(), 0.0);
  for (std::size_t i = 0; i < trace.entries.size(); ++i)
    if (ranges.layer_of_entry[i] >= 0) exclusive[i] = trace.entries[i].time_s;
  for (std::size_t i = 0; i < trace.entries.size(); ++i)
    if (ranges.layer_of_entry[i] >= 0)
      if (int a = matched_ancestor(trace, ranges, i); a >= 0)
        exclusive[static_cast<std::size_t>(a)] -= trace.entries[i].time_s;
  std::map<std::string, std::tuple<int, MatchMethod, double, int>> by_range;  // name -> layer, method, sum, count
  std::vector<std::string> range_order;
  for (std::size_t i = 0; i < trace.entries.size(); ++i) {
    if (!trace.entries[i].range) continue;
    const std::string& name = trace.entries[i].name;
    if (ranges.layer_of_entry[i] >= 0) {
      auto [it, fresh] = by_range.try_emplace(name, ranges.layer_of_entry[i], range_method[i], 0.0, 0);
      if (fresh) range_order.push_back(name);
      std::get<2>(it->second) += std::max(0.0, exclusive[i]);
      std::get<3>(it->second) += 1;
    } else if (std::find(ranges.unnamed.begin(), ranges.unnamed.end(), name) == ranges.unnamed.end()) {
      ranges.unnamed.push_back(name);
    }
  }
  int most_repeated = 1;
  for (const auto& name : range_order) {
    const auto& [layer, method, sum, count] = by_range[name];
    matching.credit(layer, name, method, sum / count);
    most_repeated = std::max(most_repeated, count);
  }
  if (most_repeated > 1 && trace.iterations == 1)
    notes.push_back(
        fmt::format("layer-named ranges recorded up to {} times (forward passes): averaged", most_repeated));
  return ranges;
}

/// The top-level PyTorch ops outside matched ranges, by class (torch_class), each with its name by occurrence
/// ("aten::conv2d #3").
struct OpsOutsideRanges {
  std::map<std::string, std::vector<std::size_t>> by_class;  // entry indices, in order
  std::vector<std::size_t> unclassified;
  std::vector<std::string> occurrence_name;  // per entry
  std::size_t inside_ranges = 0;             // ops inside matched ranges (counted there)
};

OpsOutsideRanges ops_outside_ranges(const MeasuredTrace& trace, const RangeMatch& ranges) {
  OpsOutsideRanges ops;
  ops.occurrence_name.resize(trace.entries.size());
  std::map<std::string, int> occurrence_of_op;  // "aten::conv2d" -> occurrences so far
  for (std::size_t i = 0; i < trace.entries.size(); ++i) {
    const auto& e = trace.entries[i];
    if (e.range) continue;
    if (matched_ancestor(trace, ranges, i) >= 0) {
      ++ops.inside_ranges;
      continue;
    }
    ops.occurrence_name[i] = fmt::format("{} #{}", e.op, ++occurrence_of_op[e.op]);
    const std::string c = torch_class(e.op);
    if (c.empty()) ops.unclassified.push_back(i);
    else ops.by_class[c].push_back(i);
  }
  return ops;
}

/// How many forward passes the op sequence holds (when the trace has no steps): the multiple of the layer count
/// that most ops vote for, class by class, claimed only when every op type of the trace agrees with it (each type's
/// count is that many times its layer count). `disagree` says which types do not when the claim is refused.
struct Passes {
  int repeats = 1;                    // the passes claimed (1: none)
  int candidate = 1;                  // what most ops voted for
  std::vector<std::string> disagree;  // "53 conv2d ops, not 20 conv2d layers x 33 passes", ...
  std::size_t op_types = 0;           // op types of the trace framesim has a class for
};

Passes forward_passes(const OpsOutsideRanges& ops, const std::map<std::string, std::vector<int>>& layers_by_class) {
  std::map<int, std::size_t> votes;
  for (const auto& [c, entries] : ops.by_class) {
    auto it = layers_by_class.find(c);
    if (it == layers_by_class.end() || it->second.empty() || entries.size() % it->second.size() != 0) continue;
    votes[static_cast<int>(entries.size() / it->second.size())] += entries.size();
  }
  Passes p;
  std::size_t best_votes = 0;
  for (const auto& [n, v] : votes)
    if (v > best_votes) {
      best_votes = v;
      p.candidate = n;
    }
  p.op_types = ops.by_class.size();
  if (p.candidate == 1) return p;
  for (const auto& [c, entries] : ops.by_class) {
    auto it = layers_by_class.find(c);
    const std::size_t n = it == layers_by_class.end() ? 0 : it->second.size();
    if (entries.size() != n * static_cast<std::size_t>(p.candidate))
      p.disagree.push_back(fmt::format("{} {} op{}, not {} {} layer{} x {}", entries.size(), c,
                                       entries.size() == 1 ? "" : "s", n, c, n == 1 ? "" : "s", p.candidate));
  }
  if (p.disagree.empty()) p.repeats = p.candidate;
  return p;
}

/// Ops outside matched ranges, by order within their class: the k-th op of a class is the k-th still unmatched
/// layer of that class (averaged over the forward passes); a class whose counts disagree is not matched.
void match_ops_by_order(const MeasuredTrace& trace, const OpsOutsideRanges& ops, Matching& matching,
                        std::vector<std::string>& notes) {
  const model::NetworkSpec& net = matching.net();
  std::map<std::string, std::vector<int>> layers_by_class;
  for (std::size_t l = 0; l < net.layers.size(); ++l)
    if (!matching.matched(l)) layers_by_class[layer_class(net.layers[l])].push_back(static_cast<int>(l));
  const Passes passes = forward_passes(ops, layers_by_class);
  const int repeats = passes.repeats;
  std::vector<std::string> dim_mismatches, count_mismatches;
  std::size_t order_matched = 0, ops_credited = 0, classified = 0;
  for (const auto& [c, entries] : ops.by_class) {
    classified += entries.size();
    auto it = layers_by_class.find(c);
    const std::size_t n = it == layers_by_class.end() ? 0 : it->second.size();
    if (n == 0 || entries.size() != n * static_cast<std::size_t>(repeats)) {
      for (std::size_t i : entries) matching.pass_through({ops.occurrence_name[i], trace.entries[i].time_s});
      if (n > 0)
        count_mismatches.push_back(fmt::format("{} {} ops but {} {} layers{}", entries.size(), c, n, c,
                                               repeats > 1 ? fmt::format(" x {} passes", repeats) : ""));
      continue;
    }
    ops_credited += entries.size();
    for (std::size_t j = 0; j < entries.size(); ++j) {
      const auto& e = trace.entries[entries[j]];
      const int layer = it->second[j % n];
      if (j < n) {
        // One match per layer: the mean over the passes, under the first pass's name.
        double sum = 0;
        for (std::size_t r = j; r < entries.size(); r += n) sum += trace.entries[entries[r]].time_s;
        matching.credit(
            layer, ops.occurrence_name[entries[j]] + (repeats > 1 ? fmt::format(" (mean of {} passes)", repeats) : ""),
            MatchMethod::order, sum / repeats);
        ++order_matched;
      }
      const auto& spec = net.layers[static_cast<std::size_t>(layer)];
      // (aten::addmm and aten::baddbmm take the bias first: their first input is not the layer's.)
      const bool bias_first = e.op == "aten::addmm" || e.op == "aten::baddbmm";
      if (!e.input_dims.empty() && !spec.inputs.empty() && !bias_first) {
        const auto& shape = net.tensors[static_cast<std::size_t>(spec.inputs.front())].shape;
        if (shape != e.input_dims && dim_mismatches.size() < 1000)
          dim_mismatches.push_back(fmt::format("{} reads {} but {} reads {}", ops.occurrence_name[entries[j]],
                                               model::shape_to_string(e.input_dims), spec.name,
                                               model::shape_to_string(shape)));
      }
    }
  }
  for (std::size_t i : ops.unclassified) matching.pass_through({ops.occurrence_name[i], trace.entries[i].time_s});

  if (order_matched > 0) {
    notes.push_back(fmt::format(
        "ops outside named ranges matched by order: the k-th op of a type is the k-th layer of that type "
        "(aten::conv2d -> conv2d, aten::linear/addmm/matmul -> linear or matmul, aten::batch_norm -> batchnorm, "
        "...){}",
        repeats > 1 ? fmt::format("; the op sequence holds {} passes over the network: averaged", repeats) : ""));
  }
  if (!passes.disagree.empty()) {
    // Most ops suggest repeated passes, but a pass of this network does not hold every op type the trace has: a
    // trace of another network (or of a different export). Nothing is averaged over passes.
    std::vector<std::string> shown(
        passes.disagree.begin(),
        passes.disagree.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(5, passes.disagree.size())));
    notes.push_back(fmt::format(
        "not {} passes over the network: {} of {} op types disagree ({}{}); no passes averaged (a trace of another "
        "network?); by order, {} of {} ops outside named ranges matched a layer (types whose count equals the "
        "network's)",
        passes.candidate, passes.disagree.size(), passes.op_types, core::join_list(shown, "; "),
        passes.disagree.size() > shown.size() ? "; ..." : "", ops_credited, classified + ops.unclassified.size()));
  }
  if (!count_mismatches.empty())
    notes.push_back("not matched by order, the counts disagree: " + core::join_list(count_mismatches, "; "));
  if (!dim_mismatches.empty()) {
    std::vector<std::string> shown(
        dim_mismatches.begin(),
        dim_mismatches.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(3, dim_mismatches.size())));
    notes.push_back(fmt::format("input dims disagree for {} order-matched ops (is the order right?): {}{}",
                                dim_mismatches.size(), core::join_list(shown, "; "),
                                dim_mismatches.size() > shown.size() ? "; ..." : ""));
  }
}

/// PyTorch: ranges named after layers first, then the ops outside them by order.
void match_pytorch(const MeasuredTrace& trace, Matching& matching, std::vector<std::string>& notes) {
  const RangeMatch ranges = match_ranges(trace, matching, notes);
  const OpsOutsideRanges ops = ops_outside_ranges(trace, ranges);
  match_ops_by_order(trace, ops, matching, notes);
  if (!ranges.unnamed.empty()) {
    std::vector<std::string> shown(
        ranges.unnamed.begin(),
        ranges.unnamed.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(5, ranges.unnamed.size())));
    notes.push_back(fmt::format("ranges not named after a layer (their ops were matched on their own): {}{}",
                                core::join_list(shown, ", "), ranges.unnamed.size() > shown.size() ? ", ..." : ""));
  }
  if (ops.inside_ranges > 0)
    notes.push_back(fmt::format("{} op{} inside layer-named ranges count{} towards those layers", ops.inside_ranges,
                                ops.inside_ranges == 1 ? "" : "s", ops.inside_ranges == 1 ? "s" : ""));
}

}  // namespace

MatchedMeasurements match_measurements(const MeasuredTrace& trace, const model::NetworkSpec& net) {
  if (measured_format(trace.format).by_origin) return match_by_origin(trace, net);
  MatchedMeasurements out;
  out.format = trace.format;
  out.notes = trace.notes;
  Matching matching(net);
  if (trace.format == MeasuredFormat::pytorch_trace) match_pytorch(trace, matching, out.notes);
  else match_by_name(trace, matching);
  matching.finish(trace, out);
  return out;
}

}  // namespace framesim::trace
