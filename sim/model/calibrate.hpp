// Calibration: fit a unit's effective roofs to measured kernel times.
//
// The roofline bound of kernel k on the unit (cost.hpp) is
//   t_k = max(sum_p F_kp / (peak_p x e_p x f/f_nom), max_l M_kl / min(bw_l x eff_l, outstanding / latency_l)) + o
// The fit chooses the compute efficiency e_p of every precision the measured kernels compute in, the bandwidth
// efficiency eff_l of every memory level they move bytes at, and the dispatch overhead o, minimising the mean
// squared log error  (1/K) sum_k (ln t_k - ln measured_k)^2  with 0 < e, eff <= 1 and o >= 0. The search is
// derivative-free (Nelder-Mead on the logarithms of the parameters, restarted until it stops improving, then a
// line search along each parameter): the bound is a max of terms, so its gradient jumps where the binding term
// changes. Pure C++: no YAML, no SimGrid.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/budget.hpp"
#include "model/cost.hpp"
#include "model/hardware.hpp"
#include "model/network.hpp"
#include "model/plan.hpp"

namespace framesim::model {

/// One measured kernel: the work the roofline needs (ops per precision, bytes per level) and its time.
struct CalibrationSample {
  std::string network;    // for reports
  std::string kernel;     // the kernel's name ("conv1+bn1+relu1")
  Kernel work;            // from plan_network: ops per precision and bytes per level
  double measured_s = 0;  // > 0
  bool partial = false;   // some of its layers had no measurement: the time covers only the others
};

/// A network's kernels on one unit, with the measured times matched to them the way `framesim budget`
/// matches them (a kernel's own name, or the sum of the times of its layers).
struct SampleSet {
  std::vector<CalibrationSample> samples;  // measured kernels with a time > 0
  std::vector<std::string> unmatched;      // measurement names matching no layer or kernel
  std::vector<std::string> unmeasured;     // kernels without any measurement
  std::vector<std::string> partial;        // kernels measured through only some of their layers
  std::vector<std::string> zero;           // kernels measured at 0 s: kept out of the fit (no logarithm)
};

/// Matches `measured` to the kernels of `net` on `unit` of `hw`. Precondition: missing_roofs(net, unit) is empty.
SampleSet match_samples(const HardwareSpec& hw, std::size_t unit, const NetworkSpec& net,
                        const std::vector<Measurement>& measured, const RunPoint& run = {});

/// How well a hardware description predicts measured kernels.
struct KernelFit {
  std::string network, kernel;
  double measured_s = 0;
  double bound_s = 0;  // the roofline bound with the hardware's roofs
  double ratio = 0;    // measured / bound
  LimitKind limit = LimitKind::compute;
  int limit_level = -1;
  bool partial = false;
};

struct FitError {
  std::vector<KernelFit> kernels;
  double rms_log = 0;                              // sqrt(mean (ln ratio)^2)
  double mean_log = 0;                             // mean ln ratio: > 0 when the model is optimistic on average
  double worst_ratio = 1;                          // the ratio with the largest |ln ratio|
  std::size_t worst = 0;                           // its index in `kernels`
  double measured_total_s = 0, bound_total_s = 0;  // sums over the kernels
};

/// The error of `hw` (its roofs as they stand) on `samples` run on `unit` at `run`. Samples must be non-empty.
FitError fit_error(const HardwareSpec& hw, std::size_t unit, const std::vector<CalibrationSample>& samples,
                   const RunPoint& run = {});

enum class ParameterKind { compute_efficiency, bandwidth_efficiency, dispatch_overhead };

struct FittedParameter {
  ParameterKind kind = ParameterKind::compute_efficiency;
  Precision precision = Precision::fp32;  // compute_efficiency
  std::size_t level = 0;                  // bandwidth_efficiency: index into HardwareSpec::memory
  double before = 0;                      // the file's value (efficiency 1 when it gave none)
  double after = 0;                       // the fitted value, rounded as written
  int binding = 0;                        // kernels whose bound this parameter sets at the fit (overhead: every kernel)
  bool constrained = true;  // false: it binds no kernel, so the data only bound it from below (kept as given
                            // when the given value binds nothing either)
  bool at_limit = false;    // an efficiency pinned at 1: kernels ran faster than the peak roof allows
};

struct CalibrationOptions {
  int significant_digits = 4;   // fitted values are rounded to this many digits (what the YAML says)
  int max_evaluations = 40000;  // of the objective, over all restarts
};

struct CalibrationResult {
  HardwareSpec calibrated;  // `hw` with the fitted efficiencies and overhead
  std::vector<FittedParameter> parameters;
  FitError before;  // the file's roofs on the samples
  FitError after;   // the calibrated roofs (rounded) on the samples
  int evaluations = 0;
};

/// Fits the roofs of `unit` of `hw` to `samples` (kernels of any number of networks, all run on `unit` at `run`).
/// Only parameters that some sample exercises are fitted: precisions with ops > 0 and levels with bytes > 0.
/// Memory-level efficiencies belong to the level, so they change for every unit that shares it.
/// Precondition: samples non-empty, each with measured_s > 0 and a roof on `unit` for every precision it uses.
CalibrationResult calibrate(const HardwareSpec& hw, std::size_t unit, const std::vector<CalibrationSample>& samples,
                            const RunPoint& run = {}, const CalibrationOptions& options = {});

/// "fp32 compute efficiency", "dram bandwidth efficiency", "dispatch overhead".
std::string parameter_name(const HardwareSpec& hw, const FittedParameter& p);

}  // namespace framesim::model
