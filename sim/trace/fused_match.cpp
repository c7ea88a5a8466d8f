// Matching the formats that name fused layers (TensorRT, Nsight Systems, ONNX Runtime) to a network imported
// from ONNX: each recorded entry stands for the ONNX nodes it was built from (trtexec's layer information, or the
// entry's name: "Conv_0 + Relu_1", "PWN(Relu_3, Add_4)"), and the importer names each layer after its node.
//  - one entry, one layer that nothing else measures: matched;
//  - one entry, several layers (a TensorRT fusion): merged - the time goes to the first of them in network
//    order, the others are measured as 0 s inside it, so that a framesim kernel holding them all gets the whole
//    time and one holding only the others is left out of a calibration instead of counted twice;
//  - several entries, one layer (TensorRT splits a node, or runs it as several kernels): split - summed;
//  - a reformat layer or a copy: data movement - its time goes to the layer it reformats for;
//  - no layer: unmatched, kept under its recorded name.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string_view>

#include "core/text.hpp"
#include "core/units.hpp"
#include "trace/measured_formats.hpp"

namespace framesim::trace {

namespace {

std::vector<std::string> first_names(const std::vector<std::string>& names, std::size_t n) {
  std::vector<std::string> out(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(std::min(n, names.size())));
  if (names.size() > n) out.emplace_back("...");
  return out;
}

/// The network's layers by name.
class LayerIndex {
 public:
  explicit LayerIndex(const model::NetworkSpec& net) {
    for (std::size_t l = 0; l < net.layers.size(); ++l) index_[net.layers[l].name] = static_cast<int>(l);
  }
  /// The layer named `name`, -1 when there is none.
  int operator()(std::string_view name) const {
    auto it = index_.find(name);
    return it == index_.end() ? -1 : it->second;
  }

 private:
  std::map<std::string, int, std::less<>> index_;
};

/// The layers each entry measures, in network order (none for data movement): its name, then the ONNX nodes
/// it was built from (trtexec's layer information, else read from its name; a region "A...B" is every layer from
/// A to B). Nodes the network lacks go to `unknown_nodes` (the first 1000).
std::vector<std::vector<int>> layers_of_entries(const MeasuredTrace& trace, const LayerIndex& lookup,
                                                std::vector<std::string>& unknown_nodes) {
  std::vector<std::vector<int>> layers_of(trace.entries.size());
  for (std::size_t i = 0; i < trace.entries.size(); ++i) {
    const MeasuredEntry& e = trace.entries[i];
    if (e.data_movement) continue;
    std::vector<int>& ls = layers_of[i];
    if (int l = lookup(e.name); l >= 0) ls.push_back(l);
    // A kernel (grouped by its name) answers to its name alone.
    const std::vector<std::string> origins = e.op == "kernel"    ? std::vector<std::string>{}
                                             : e.origins.empty() ? tensorrt_name_origins(e.name)
                                                                 : e.origins;
    for (const auto& o : origins) {
      if (const std::size_t dots = o.find("..."); dots != std::string::npos) {  // a region "A...B"
        const int a = lookup(o.substr(0, dots));
        const int b = lookup(o.substr(dots + 3));
        if (a >= 0 && b >= a) {
          for (int l = a; l <= b; ++l) ls.push_back(l);
          continue;
        }
      }
      const int l = lookup(o);
      if (l >= 0) ls.push_back(l);
      else if (unknown_nodes.size() < 1000) unknown_nodes.push_back(o);
    }
    std::sort(ls.begin(), ls.end());
    ls.erase(std::unique(ls.begin(), ls.end()), ls.end());
  }
  return layers_of;
}

/// A profile none of whose entries is a layer of `net`: an error naming a few of each.
[[noreturn]] void refuse_other_network(const MeasuredTrace& trace, const model::NetworkSpec& net) {
  std::vector<std::string> recorded, layers;
  for (const auto& e : trace.entries) recorded.push_back(e.name);
  for (const auto& l : net.layers) layers.push_back(l.name);
  throw core::UserError({core::Diagnostic{
      {trace.path, trace.entries.front().line, trace.entries.front().line > 0 ? 1 : 0},
      "",
      fmt::format("none of its {} entries is a layer of {} ({}: {}; the network has {}): a profile of another "
                  "network?",
                  trace.entries.size(), net.name, measured_format_name(trace.format),
                  core::join_list(first_names(recorded, 4), ", "), core::join_list(first_names(layers, 4), ", "))}});
}

}  // namespace

MatchedMeasurements match_by_origin(const MeasuredTrace& trace, const model::NetworkSpec& net) {
  MatchedMeasurements out;
  out.format = trace.format;
  out.notes = trace.notes;
  const LayerIndex lookup(net);

  std::vector<std::string> unknown_nodes;
  const std::vector<std::vector<int>> layers_of = layers_of_entries(trace, lookup, unknown_nodes);
  std::vector<int> cover(net.layers.size(), 0);
  for (const auto& ls : layers_of)
    for (int l : ls) ++cover[static_cast<std::size_t>(l)];

  std::vector<double> layer_time(net.layers.size(), 0.0);
  std::vector<std::vector<LayerMatch>> found(net.layers.size());
  auto credit = [&](int layer, const std::string& recorded, double time_s) {
    layer_time[static_cast<std::size_t>(layer)] += time_s;
    const auto& name = net.layers[static_cast<std::size_t>(layer)].name;
    found[static_cast<std::size_t>(layer)].push_back(
        {name, recorded, recorded == name ? MatchMethod::name : MatchMethod::origin, time_s});
  };
  std::map<std::string, std::size_t, std::less<>> entry_by_name;
  for (std::size_t i = 0; i < trace.entries.size(); ++i) entry_by_name.emplace(trace.entries[i].name, i);

  std::vector<model::Measurement> passthrough;
  std::size_t counts[5] = {0, 0, 0, 0, 0};
  double data_movement_s = 0, attributed_s = 0;
  std::vector<std::string> unmatched;
  for (std::size_t i = 0; i < trace.entries.size(); ++i) {
    const MeasuredEntry& e = trace.entries[i];
    EntryMatch m;
    m.recorded = e.name;
    m.time_s = e.time_s;
    const auto& ls = layers_of[i];
    if (e.data_movement) {
      m.fate = EntryFate::data_movement;
      data_movement_s += e.time_s;
      auto target = entry_by_name.find(e.feeds);
      if (target != entry_by_name.end() && !layers_of[target->second].empty()) {
        const int l = layers_of[target->second].front();
        credit(l, e.name, e.time_s);
        attributed_s += e.time_s;
        m.layers.push_back(net.layers[static_cast<std::size_t>(l)].name);
      } else if (const int l = lookup(e.feeds); l >= 0) {
        credit(l, e.name, e.time_s);
        attributed_s += e.time_s;
        m.layers.push_back(net.layers[static_cast<std::size_t>(l)].name);
      } else {
        passthrough.push_back({e.name, e.time_s});
      }
    } else if (ls.empty()) {
      m.fate = EntryFate::unmatched;
      unmatched.push_back(e.name);
      passthrough.push_back({e.name, e.time_s});
    } else {
      m.fate = ls.size() > 1                                ? EntryFate::merged
               : cover[static_cast<std::size_t>(ls[0])] > 1 ? EntryFate::split
                                                            : EntryFate::matched;
      for (std::size_t k = 0; k < ls.size(); ++k) {
        credit(ls[k], e.name, k == 0 ? e.time_s : 0.0);
        m.layers.push_back(net.layers[static_cast<std::size_t>(ls[k])].name);
      }
    }
    ++counts[static_cast<int>(m.fate)];
    out.entries.push_back(std::move(m));
  }
  std::size_t matched_entries = counts[0] + counts[1] + counts[2];
  // Kernel names (an Nsight kernel table without NVTX ranges) rarely name layers: no match is no surprise there.
  const bool names_layers =
      measured_format(trace.format).names_layers &&
      std::any_of(trace.entries.begin(), trace.entries.end(), [](const MeasuredEntry& e) { return e.op != "kernel"; });
  if (matched_entries == 0 && !trace.entries.empty() && names_layers) refuse_other_network(trace, net);

  std::size_t layers_matched = 0;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    if (found[l].empty()) continue;
    ++layers_matched;
    out.measurements.push_back({net.layers[l].name, layer_time[l]});
    for (const auto& m : found[l]) out.matches.push_back(m);
  }
  for (auto& m : passthrough) out.measurements.push_back(std::move(m));

  out.notes.push_back(fmt::format(
      "matched {} of {} layers of {} through the ONNX nodes of {} recorded entries: {} matched one to one, {} merged "
      "(one entry, several layers: its time on the first, the others 0 s within it), {} split (several entries, one "
      "layer: summed), {} data movement ({} of {} added to the layers they reformat for), {} unmatched",
      layers_matched, net.layers.size(), net.name, trace.entries.size(), counts[0], counts[1], counts[2], counts[3],
      core::format_seconds(attributed_s), core::format_seconds(data_movement_s), counts[4]));
  if (!unmatched.empty())
    out.notes.push_back(fmt::format("entries matching no layer: {}", core::join_list(first_names(unmatched, 8), ", ")));
  if (!unknown_nodes.empty())
    out.notes.push_back(
        fmt::format("ONNX nodes named by the profile that the network lacks (folded by the importer, "
                    "or another network?): {}",
                    core::join_list(first_names(unknown_nodes, 8), ", ")));
  if (matched_entries * 2 < trace.entries.size() - counts[3])
    out.notes.push_back(fmt::format("warning: only {} of {} entries match a layer of {}: is this a profile of it?",
                                    matched_entries, trace.entries.size() - counts[3], net.name));
  return out;
}

}  // namespace framesim::trace
