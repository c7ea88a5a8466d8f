// Internal to cli/: what the calibrate command's three modes share (calibrate_command.cpp: per-layer traces and
// the command; calibrate_totals_command.cpp: --totals and --corun).
#pragma once

#include <string>
#include <vector>

#include "model/calibrate.hpp"
#include "model/hardware.hpp"
#include "model/network.hpp"
#include "trace/measured.hpp"

namespace framesim::cli::calibrate {

/// The options of `framesim calibrate`.
struct CalibrateArgs {
  std::string hardware;
  std::vector<std::string> pairs;  // NETWORK MEASURED ...
  std::vector<std::string> predict;
  std::string unit;
  std::string precision;
  std::string operating_point;
  std::string out;
  std::string totals;         // whole-network measurements (trace/totals.hpp)
  std::string corun;          // co-run measurements (trace/corun.hpp)
  std::string write_runtime;  // --totals: also write the fit as a runtime profile (model/runtime.hpp)
  std::string runtime_name;   // its name
  bool no_fusion = false;
  bool allow_partial = false;  // fit from a trace that measures less than kMinCoveredShare of its network's kernels
};

/// A network and what was measured of it, matched.
struct Measured {
  std::string measured_path;
  model::NetworkSpec net;
  trace::MatchedMeasurements matched;
  model::SampleSet set;
};

/// A network file (YAML, ONNX or TFLite) at --precision, without fusion under --no-fusion.
model::NetworkSpec load_any_network(const std::string& path, const CalibrateArgs& a);
/// Reads what was measured of `net` (already loaded) and matches it to the kernels of `unit`.
Measured measure(const model::HardwareSpec& hw, std::size_t unit, const model::RunPoint& run, model::NetworkSpec net,
                 const std::string& measured_path);
/// Refuses a fit from `m` when its trace measures less than half of the network's kernels (as planned on the unit:
/// a fused group is one kernel, measured by its own name or its layers'), unless `allow_partial`.
void check_coverage(const Measured& m, bool allow_partial);
/// A time as reports write it ("1.2 ms").
std::string seconds(double s);
/// A ratio as reports write it ("1.23x").
std::string ratio(double r);

/// --totals: whole-network measurements, alone or with per-layer traces, fitted per op class.
int run_calibrate_totals(const CalibrateArgs& a);
/// --corun: co-run slowdowns fitted with per-unit contention sensitivities.
int run_calibrate_corun(const CalibrateArgs& a);

}  // namespace framesim::cli::calibrate
