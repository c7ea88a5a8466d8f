// Whether a measured trace belongs to the network it is given with (see judge_match in measured.hpp).
#include <fmt/format.h>

#include "core/text.hpp"
#include "trace/measured.hpp"

namespace framesim::trace {

namespace {

/// The first `count` of `names`, then "..." when there are more.
std::string some(const std::vector<std::string>& names, std::size_t count = 4) {
  std::vector<std::string> shown;
  for (const auto& n : names) {
    if (shown.size() == count) {
      shown.emplace_back("...");
      break;
    }
    shown.push_back(core::quote_capped(n, 40));
  }
  return core::join_list(shown, ", ");
}

}  // namespace

MatchVerdict judge_match(const MeasuredTrace& trace, const MatchedMeasurements& matched,
                         const model::NetworkSpec& net) {
  MatchVerdict verdict;
  std::vector<std::string> layer_names;
  for (const auto& l : net.layers) layer_names.push_back(l.name);
  // What matched no layer is passed on under its recorded name: it still counts when a layer's name is part of it
  // (a fused kernel "conv1+relu1").
  std::vector<std::string> unmatched;
  bool any_layer = !matched.matches.empty();
  for (const auto& m : matched.measurements) {
    bool names_layer = false;
    for (const auto& l : layer_names)
      if (!l.empty() && m.name.find(l) != std::string::npos) names_layer = true;
    if (names_layer) any_layer = true;
    else unmatched.push_back(m.name);
  }
  if (!any_layer && !trace.entries.empty()) {
    verdict.error = fmt::format("{}: nothing recorded matches a layer of {} ({}: {}; the network has {})", trace.path,
                                net.source_file.empty() ? net.name : net.source_file,
                                measured_format_name(trace.format), some(unmatched), some(layer_names));
  } else if (!unmatched.empty()) {
    verdict.warning = fmt::format("{}: {} of {} recorded name{} match no layer of {} ({}): a trace of another network?",
                                  trace.path, unmatched.size(), matched.measurements.size(),
                                  matched.measurements.size() == 1 ? "" : "s", net.name, some(unmatched));
  }
  return verdict;
}

}  // namespace framesim::trace
