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
#include <optional>
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

/// Fewest measured kernels from which `calibrate` fits the dispatch overhead (below: the file's value is kept).
inline constexpr std::size_t kMinSamplesForOverhead = 3;

/// Fits the roofs of `unit` of `hw` to `samples` (kernels of any number of networks, all run on `unit` at `run`).
/// Only parameters that some sample exercises are fitted: precisions with ops > 0 and levels with bytes > 0.
/// Memory-level efficiencies belong to the level, so they change for every unit that shares it.
/// Precondition: samples non-empty, each with measured_s > 0 and a roof on `unit` for every precision it uses.
CalibrationResult calibrate(const HardwareSpec& hw, std::size_t unit, const std::vector<CalibrationSample>& samples,
                            const RunPoint& run = {}, const CalibrationOptions& options = {});

/// "fp32 compute efficiency", "dram bandwidth efficiency", "dispatch overhead".
std::string parameter_name(const HardwareSpec& hw, const FittedParameter& p);

}  // namespace framesim::model

namespace framesim::model {

// ---- calibration from whole-network totals (and per-layer samples, as one-kernel totals) ----
//
// A sample is a set of kernels run back to back whose total time (and optionally energy) was measured: a
// whole network, or one kernel of a per-layer trace. The estimate of sample i is t_i = sum_k t_k(theta) at
// effective roofs. The fit chooses theta = the compute efficiency of every op class the samples compute in
// (for the precisions they use), the bandwidth efficiency of every level they move bytes at, the dispatch
// overhead and the output cost (the last two only when the samples can tell them from the roofs: see
// overhead_identifiable, output_cost_identifiable), minimising
//   (1/N) sum_i (ln t_i - ln measured_i)^2 + lambda sum_j (ln theta_j - ln prior_j)^2
// with efficiencies in [1e-3, 1] and the overhead in [0, 1 s] (ln of overhead + 1 us, so 0 is reachable), the
// priors being the hardware file's values (an overhead or output cost of 0 pulls nothing). Then, with time fixed,
// energy E_i = a x arithmetic_i + b x static_i + memory_i: a scales every energy per operation, b the static power. A
// parameter the data hardly moves (RMS d ln t / d ln theta below TotalsOptions::min_sensitivity) is left at its prior
// and reported as such.

struct TotalSample {
  std::string network;  // what leave-one-network-out leaves out
  std::string runtime;  // what leave-one-runtime-out leaves out ("" when not said)
  std::string label;    // for reports
  std::vector<Kernel> kernels;
  RunPoint run;
  double measured_s = 0;             // > 0
  std::optional<double> measured_J;  // > 0 when given
};

enum class TotalParameterKind {
  class_efficiency,
  bandwidth_efficiency,
  dispatch_overhead,
  output_cost,
  energy_per_op,
  static_power
};

struct TotalParameter {
  TotalParameterKind kind = TotalParameterKind::class_efficiency;
  OpClass op_class = OpClass::conv;  // class_efficiency
  std::size_t level = 0;             // bandwidth_efficiency
  double prior = 0;                  // the file's value (energy_per_op, static_power: a scale, prior 1)
  double fitted = 0;
  double sensitivity = 0;  // RMS over samples of d ln(prediction) / d ln(parameter) at the fit
  bool pinned = true;      // false: the data cannot pin it down; left at the prior
  bool at_bound = false;   // an efficiency at 1 (or at the 1e-3 floor), an overhead at 0
  std::string note;        // why it was not fitted, when that is not the sensitivity ("one network: ...")
};

struct TotalsOptions {
  double lambda = 0.01;           // weight of the pull toward the priors
  double min_sensitivity = 0.05;  // below this a parameter is not pinned down by the data
  int max_evaluations = 20000;
};

struct TotalsFit {
  HardwareSpec calibrated;
  std::vector<TotalParameter> parameters;
  std::vector<double> predicted_s;                 // per sample, calibrated estimate
  std::vector<std::optional<double>> predicted_J;  // per sample with a measured energy
  double rms_log_s = 0;                            // sqrt(mean (ln predicted / measured)^2) over samples
  std::vector<std::string> warnings;               // implausible values, said out loud
};

/// The estimate (effective roofs) of a sample's total time on `unit` of `hw`.
double total_estimate_s(const HardwareSpec& hw, std::size_t unit, const TotalSample& s);
/// The bound (peak roofs, no overhead) of a sample's total time: no correct measurement is below it.
double total_bound_s(const HardwareSpec& hw, std::size_t unit, const TotalSample& s);
/// The energy of a sample at its estimated time: arithmetic + every level + static power over that time.
double total_energy_J(const HardwareSpec& hw, std::size_t unit, const TotalSample& s);

/// Fits `unit` of `hw` to `samples` (non-empty, all on that unit). Pure.
TotalsFit fit_totals(const HardwareSpec& hw, std::size_t unit, const std::vector<TotalSample>& samples,
                     const TotalsOptions& options = {});

/// "depthwise efficiency", "dram bandwidth efficiency", "dispatch overhead", "energy per op (scale)", ...
std::string total_parameter_name(const HardwareSpec& hw, const TotalParameter& p);

/// Whether a totals fit may free the dispatch overhead: only when the samples come from two networks or more
/// whose kernel counts differ by at least kMinKernelCountSpread (max / min). The total of one network (or of
/// networks with as many kernels each) cannot tell a per-kernel cost from a slower roof.
inline constexpr double kMinKernelCountSpread = 1.5;
bool overhead_identifiable(const std::vector<TotalSample>& samples);
/// The same for the output cost: two networks or more that spend at least kMinComputeShare of their estimate
/// (with `hw`'s roofs) in compute-bound kernels, and whose shaped layers' outputs per op differ by
/// kMinKernelCountSpread. A memory-bound network does not count: its compute roof does not show, so beside one
/// compute-bound network the output cost and that roof could trade against each other freely.
inline constexpr double kMinComputeShare = 0.5;
bool output_cost_identifiable(const HardwareSpec& hw, std::size_t unit, const std::vector<TotalSample>& samples);

struct LeaveOneOut {
  std::string network;      // the network (or runtime) left out
  std::size_t samples = 0;  // of that network
  double error = 0;         // geometric mean of |ln(predicted / measured)| over its samples, as a ratio - 1
  double prior_error = 0;   // the same with the file's roofs (no fit): what the fit must beat
};

/// For every network with samples, refits without them and predicts them. Networks are left out only when at
/// least one other network remains.
std::vector<LeaveOneOut> leave_one_network_out(const HardwareSpec& hw, std::size_t unit,
                                               const std::vector<TotalSample>& samples,
                                               const TotalsOptions& options = {});
/// The same by runtime (TotalSample::runtime): how far a fit on the other runtimes' rows of the device is from
/// a runtime it has not seen. Needs two runtimes or more; samples without a runtime are never left out.
std::vector<LeaveOneOut> leave_one_runtime_out(const HardwareSpec& hw, std::size_t unit,
                                               const std::vector<TotalSample>& samples,
                                               const TotalsOptions& options = {});
/// The geometric mean over left-out groups of (1 + error), minus 1: `error` or, with `prior`, `prior_error`.
double mean_held_out_error(const std::vector<LeaveOneOut>& loo, bool prior = false);

/// A totals fit checked on data it has not seen: fit_totals on every sample, leave-one-network-out beside the
/// file's own error on the same networks. When the fit predicts left-out networks worse than the file's roofs
/// do, the prior is kept (calibrated = the file) and said so: a fit must not make an unseen network worse.
struct CheckedFit {
  TotalsFit fit;  // when kept_prior: `calibrated` is the file, `predicted_s` the file's estimates
  std::vector<LeaveOneOut> by_network;
  std::vector<LeaveOneOut> by_runtime;
  bool checked = false;     // false: one network only, nothing to hold out
  bool kept_prior = false;  // the held-out error of the fit was above the prior's
  std::string verdict;      // one line for reports
};
CheckedFit fit_totals_checked(const HardwareSpec& hw, std::size_t unit, const std::vector<TotalSample>& samples,
                              const TotalsOptions& options = {});

}  // namespace framesim::model
