// Calibration of the contention model (contention.hpp) from co-run measurements: networks run together on
// named units, each one's time per inference alone and together.
//
// The prediction is an analytic steady state that mirrors the engine's model, not a simulation. Every member i
// runs its kernels back to back on its own unit, forever. Alone, its time per inference is T_i^0 = sum_k t_k
// (the budget's roofline times). Together, its traffic on a level l is D_il = bytes_il / T_i, the others'
// utilisation of l is rho_il = sum_{j != i, j uses l} D_jl / (bandwidth_l x efficiency_l), and every kernel
// runs with the private port of port_bandwidth_Bps(l, unit_i, rho_il) (bandwidth / s_i): T_i = sum_k t_k at
// those ports. The T_i are found by damped fixed-point iteration; slowdown_i = T_i / T_i^0.
// What it leaves out (the engine has them): max-min sharing once the summed demand passes the level's
// bandwidth, the traffic varying within an inference (it uses the average over one), queueing and
// scheduling (side work, two networks on one unit — refused), and the engine's sampling period.
//
// The fit chooses the contention_sensitivity sigma_u of every unit that runs in some row, minimising
//   (1/N) sum_r (ln predicted_r - ln measured_r)^2 + lambda sum_u (sigma_u - prior_u)^2
// over sigma_u in [0, max_sensitivity] (derivative-free: a grid along each coordinate, then golden section,
// swept until nothing moves). The level's curve is kept: the model depends on sigma_u x (f - 1) only, so a
// scale of the curve is the same degree of freedom as the sensitivities together. A unit whose sigma changes
// no row's prediction between 0 and the maximum (a compute-bound network with slack everywhere, or a unit
// on no level with a curve) is not identifiable and is left at its prior.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/hardware.hpp"
#include "model/plan.hpp"

namespace framesim::model {

/// One network of a co-run, on its unit at nominal operating points.
struct CorunMember {
  std::string network;          // for reports
  std::size_t unit = 0;         // index into HardwareSpec::units; distinct within a co-run
  std::vector<Kernel> kernels;  // plan_network(...).kernels
};

/// One measured row: the networks that ran together and the slowdown of one of them.
struct CorunRow {
  std::string label;
  std::vector<CorunMember> members;  // two or more
  std::size_t measured = 0;          // index into members: whose slowdown was measured
  double measured_slowdown = 1;      // time together / time alone (> 0)
};

/// The steady co-run slowdown (time per inference together / alone) of every member. Alone (one member) 1.
std::vector<double> corun_slowdowns(const HardwareSpec& hw, const std::vector<CorunMember>& members);

struct CorunOptions {
  double lambda = 1e-6;         // weight of the pull toward the file's sensitivities: a tie-breaker
  double max_sensitivity = 10;  // upper bound of every sensitivity
  int significant_digits = 4;   // fitted values are rounded to this many digits (what the YAML says)
};

struct CorunParameter {
  std::size_t unit = 0;
  double prior = 1;          // the file's contention_sensitivity
  double fitted = 1;         // rounded; the prior when not identifiable
  bool identifiable = true;  // false: no row's prediction depends on it; left at the prior
  bool at_bound = false;     // fitted at 0 or at max_sensitivity
};

struct CorunFit {
  HardwareSpec calibrated;  // `hw` with the fitted sensitivities
  std::vector<CorunParameter> parameters;
  std::vector<double> prior_slowdown;      // per row, with the file's parameters
  std::vector<double> predicted_slowdown;  // per row, calibrated
  double rms_log = 0;                      // sqrt(mean (ln predicted / measured)^2), calibrated
  double prior_rms_log = 0;                // the same with the file's parameters
};

/// Fits the sensitivities of the units that run in `rows` (non-empty). Pure.
CorunFit fit_corun(const HardwareSpec& hw, const std::vector<CorunRow>& rows, const CorunOptions& options = {});

}  // namespace framesim::model
