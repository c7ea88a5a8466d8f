// Calibration of the co-run model from co-run measurements: networks run together on named units, each one's
// time per inference alone and together.
//
// The prediction is an analytic steady state that mirrors the engine's model, not a simulation. Every member i
// runs its network back to back on its own unit u_i, forever; a member on a unit with a `handoff`
// (model/handoff.hpp) also has host jobs x_ij per inference on the host unit h_i (each reformat: its bytes at
// the host's port plus the host's dispatch overhead; the launch), which it waits for. Per inference:
//   own_i  = sum_k t_k  (kernel_time at the ports of port_bandwidth_Bps(l, u_i, rho_il): the memory time
//            stretched by s_i, and the overlap's stall (1 - o) min(c, m) with it, model/overlap.hpp)
//   L_u    = sum_{j hosted on u} (sum_j x_j) / T_j      the share of unit u's time others' hand-offs take
//   w_i    = sum over i's host jobs of the work in progress on the host when it arrives (fifo, non-preemptive):
//            sum_c rho_c x_c / 2 over the host's own inferences and the other members' host jobs c
//   T_i    = (own_i + sum_j x_ij + w_i) / (1 - L_{u_i});   alone T_i^0 = own_i^0 + sum_j x_ij^0
// with D_il = bytes_il / T_i the traffic (a hand-off's bytes count as its host's), rho_il = sum_{other units}
// D / (bandwidth_l x efficiency_l). The T_i are found by damped fixed-point iteration; slowdown_i = T_i / T_i^0.
// What it leaves out (the engine has them): max-min sharing once the summed demand passes a level's
// bandwidth, the traffic varying within an inference, queueing of several waiting jobs, two networks on one
// unit (refused), and the engine's sampling period.
//
// The fit chooses, within bounds, the parameters the rows' units have: each unit's contention_sensitivity
// sigma_u ([0, max_sensitivity]) and overlap o_u ([0, 1]), and each hand-off's efficiency ([0.05, 1]) and
// launch ([0, max_launch]), minimising
//   (1/N) sum_r (ln predicted_r - ln measured_r)^2 + lambda sum_p ((theta_p - prior_p) / scale_p)^2
// (derivative-free: a grid along each coordinate, then golden section, swept until nothing moves). The level's
// curve is kept: the model depends on sigma_u x (f - 1) only. A parameter no row's prediction depends on (over
// its range, the others at their priors) is left at its prior; one whose effect on the rows the others can
// reproduce (the columns of d ln predicted / d theta at the fit are dependent) is reported as not pinned.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "model/hardware.hpp"
#include "model/network.hpp"
#include "model/plan.hpp"

namespace framesim::model {

/// One network of a co-run, on its unit at nominal operating points.
struct CorunMember {
  std::string network;          // for reports
  std::size_t unit = 0;         // index into HardwareSpec::units; distinct within a co-run
  std::vector<Kernel> kernels;  // plan_network(...).kernels
  /// Hand-off bytes of its inputs and outputs at efficiency 1 (reformat_bytes; 0 without a handoff).
  double reformat_in_bytes = 0, reformat_out_bytes = 0;
};

/// A member for `net` on `unit`: its kernels and, when the unit has a handoff, its reformat bytes.
CorunMember corun_member(const HardwareSpec& hw, std::size_t unit, const NetworkSpec& net);

/// One measured row: the networks that ran together and the slowdown of one of them.
struct CorunRow {
  std::string label;
  std::vector<CorunMember> members;  // two or more
  std::size_t measured = 0;          // index into members: whose slowdown was measured
  double measured_slowdown = 1;      // time together / time alone (> 0)
};

/// The steady co-run slowdown (time per inference together / alone) of every member. Alone (one member) 1.
std::vector<double> corun_slowdowns(const HardwareSpec& hw, const std::vector<CorunMember>& members);
/// The steady time per inference of every member, together (`together`) or each alone.
std::vector<double> corun_times_s(const HardwareSpec& hw, const std::vector<CorunMember>& members, bool together);

struct CorunOptions {
  double lambda = 1e-6;         // weight of the pull toward the file's parameters: a tie-breaker
  double max_sensitivity = 10;  // upper bound of every sensitivity
  double max_launch_s = 2e-3;   // upper bound of a hand-off's launch time
  bool fit_overlap = true;      // fit each unit's overlap too
  bool fit_handoff = true;      // fit each hand-off's efficiency and launch
  int significant_digits = 4;   // fitted values are rounded to this many digits (what the YAML says)
};

enum class CorunParameterKind { sensitivity, overlap, handoff_efficiency, handoff_launch };
/// "contention_sensitivity", "overlap", "handoff.efficiency", "handoff.launch": the key under units.<unit>.
std::string_view corun_parameter_key(CorunParameterKind k);

struct CorunParameter {
  std::size_t unit = 0;
  CorunParameterKind kind = CorunParameterKind::sensitivity;
  double prior = 1;          // the file's value
  double fitted = 1;         // rounded; the prior when not identifiable
  bool identifiable = true;  // false: no row's prediction depends on it; left at the prior
  bool pinned = true;        // identifiable and not reproducible by the other parameters at the fit
  bool at_bound = false;     // fitted at a bound of its range
};

struct CorunFit {
  HardwareSpec calibrated;  // `hw` with the fitted parameters
  std::vector<CorunParameter> parameters;
  std::vector<double> prior_slowdown;      // per row, with the file's parameters
  std::vector<double> predicted_slowdown;  // per row, calibrated
  double rms_log = 0;                      // sqrt(mean (ln predicted / measured)^2), calibrated
  double prior_rms_log = 0;                // the same with the file's parameters
};

/// Fits the parameters of the units that run in `rows` (non-empty). Pure.
CorunFit fit_corun(const HardwareSpec& hw, const std::vector<CorunRow>& rows, const CorunOptions& options = {});

/// Leave-one-row-out: for every row, the slowdown predicted by the fit on all the other rows (a row alone
/// predicts with the file's parameters). rows.size() >= 1.
std::vector<double> leave_one_out(const HardwareSpec& hw, const std::vector<CorunRow>& rows,
                                  const CorunOptions& options = {});

}  // namespace framesim::model
