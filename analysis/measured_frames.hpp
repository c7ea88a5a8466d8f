// Measured frames beside simulated ones: a stage that replays a profile which recorded every inference (Nsight
// Systems, ONNX Runtime) gets the measured timeline written out (measured_timeline.csv: each frame's kernels or
// nodes with their start from the frame's start, in the shape of kernels.csv) and the measured frame times
// compared with the stage's simulated service times in summary.json.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/scenario.hpp"
#include "run_details.hpp"
#include "stats.hpp"

namespace framesim::analysis {

/// Writes measured_timeline.csv into `folder` when any stage has measured frames (nothing otherwise, or when `folder`
/// is empty) and returns each such stage's measured frames against `service`, its simulated service times over the
/// counted frames.
std::map<std::string, MeasuredFramesDetails> write_measured_frames(const model::ScenarioSpec& spec,
                                                                   const std::filesystem::path& folder,
                                                                   const std::vector<Summary>& service);

}  // namespace framesim::analysis
