#include "measured_frames.hpp"

#include <fmt/format.h>

#include "core/csv.hpp"
#include "core/files.hpp"
#include "run_summary.hpp"

namespace framesim::analysis {

std::map<std::string, MeasuredFramesDetails> write_measured_frames(const model::ScenarioSpec& spec,
                                                                   const std::filesystem::path& folder,
                                                                   const std::vector<Summary>& service) {
  std::map<std::string, MeasuredFramesDetails> out;
  std::string csv = "stage,frame,piece,name,start_s,duration_s,stream\n";
  bool any = false;
  for (std::size_t s = 0; s < spec.stages.size(); ++s) {
    const auto& st = spec.stages[s];
    if (st.measured_frames.empty()) continue;
    any = true;
    Samples measured;
    for (std::size_t f = 0; f < st.measured_frames.size(); ++f) {
      const auto& frame = st.measured_frames[f];
      measured.add(frame.duration_s);
      for (std::size_t p = 0; p < frame.spans.size(); ++p) {
        const auto& span = frame.spans[p];
        csv += fmt::format("{},{},{},{},{},{},{}\n", core::csv_field(st.name), f, p, core::csv_field(span.name),
                           span.start_s, span.duration_s, core::csv_field(span.stream));
      }
    }
    const Summary m = measured.summary();
    MeasuredFramesDetails& entry = out[st.name];
    entry.file = st.measured_file;
    entry.frames = st.measured_frames.size();
    entry.measured_s = stat_block(m);
    entry.simulated_service_s = stat_block(service[s]);
    if (service[s].count > 0 && m.p50 > 0) entry.simulated_over_measured_p50 = service[s].p50 / m.p50;
  }
  if (any && !folder.empty()) core::write_file_atomic(folder / "measured_timeline.csv", csv);
  return out;
}

}  // namespace framesim::analysis
