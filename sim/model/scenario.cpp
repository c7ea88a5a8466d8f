#include "model/scenario.hpp"

#include <cmath>

#include "model/cost.hpp"
#include "model/plan.hpp"

namespace framesim::model {

double Distribution::mean() const {
  switch (kind) {
    case Kind::uniform: return (a + b) / 2;
    case Kind::constant:
    case Kind::normal:
    case Kind::lognormal:  // a is the mean of the draws (not the median)
    case Kind::exponential: return a;
  }
  return a;
}

double Distribution::sample(std::mt19937_64& rng) const {
  switch (kind) {
    case Kind::constant: return a;
    case Kind::normal: return b > 0 ? std::normal_distribution<double>(a, b)(rng) : a;
    case Kind::uniform: return b > a ? std::uniform_real_distribution<double>(a, b)(rng) : a;
    case Kind::lognormal: {
      // Parameterised by its mean and the sigma of the underlying normal: mu = ln(mean) - sigma^2 / 2.
      if (b <= 0) return a;
      const double mu = std::log(a) - b * b / 2;
      return std::lognormal_distribution<double>(mu, b)(rng);
    }
    case Kind::exponential: return a > 0 ? std::exponential_distribution<double>(1.0 / a)(rng) : 0.0;
  }
  return a;
}

std::string_view distribution_kind_name(Distribution::Kind k) { return kDistributionKinds.name(k); }

std::string_view input_policy_name(InputPolicy p) { return kInputPolicies.name(p); }
std::string_view overflow_name(Overflow o) { return kOverflows.name(o); }

namespace {

/// stage_floor_s of stage `s`, its network's kernels (if its work is a network) given as `kernels`.
double floor_of(const ScenarioSpec& spec, std::size_t s, const std::vector<Kernel>* kernels, Roofs roofs,
                std::optional<std::size_t> point) {
  const StageSpec& stage = spec.stages[s];
  const ComputeUnitSpec& unit = spec.hardware.units[stage.unit];
  const std::size_t operating_point = point.value_or(unit.fastest_point);
  RunPoint run;
  run.operating_point = operating_point;
  run.core_fraction = stage.cores > 0 ? static_cast<double>(stage.cores) / unit.cores : 1.0;
  const double scale = stage.work.scale.mean();
  switch (stage.work.kind) {
    case WorkSpec::Kind::none: return 0.0;
    case WorkSpec::Kind::time:
      return stage.work.time_s.mean() * scale * unit.nominal().frequency_Hz /
             unit.operating_points[operating_point].frequency_Hz;
    case WorkSpec::Kind::ops: {
      Kernel k;
      k.ops[stage.work.precision] = stage.work.ops * scale;
      k.total_ops = stage.work.ops * scale;
      k.bytes = stage.work.bytes_per_level;
      for (auto& b : k.bytes) b *= scale;
      return kernel_time(k, unit, bandwidths_Bps(spec.hardware, unit, run, roofs), run, roofs).bound_s;
    }
    case WorkSpec::Kind::network: {
      const auto bandwidths = bandwidths_Bps(spec.hardware, unit, run, roofs);
      double total = 0;
      for (const auto& k : *kernels) total += kernel_time(k, unit, bandwidths, run, roofs).bound_s;
      return total * scale;
    }
  }
  return 0.0;
}

/// The kernels of stage `s`'s network on its unit; none when its work is not a network.
std::vector<Kernel> stage_kernels(const ScenarioSpec& spec, std::size_t s) {
  const StageSpec& stage = spec.stages[s];
  if (stage.work.kind != WorkSpec::Kind::network) return {};
  return plan_network(spec.networks[static_cast<std::size_t>(stage.work.network)].network, spec.hardware, stage.unit)
      .kernels;
}

/// stage_dynamic_energy_J of stage `s`, its network's kernels (if its work is a network) given as `kernels`.
double energy_of(const ScenarioSpec& spec, std::size_t s, const std::vector<Kernel>* kernels,
                 std::optional<std::size_t> point) {
  const StageSpec& stage = spec.stages[s];
  const ComputeUnitSpec& unit = spec.hardware.units[stage.unit];
  const std::size_t op = point.value_or(unit.fastest_point);
  const double scale = stage.work.scale.mean();
  auto bytes_J = [&](const std::vector<double>& bytes) {
    double e = 0;
    for (std::size_t lv = 0; lv < bytes.size() && lv < spec.hardware.memory.size(); ++lv)
      e += memory_energy_J(spec.hardware.memory[lv], bytes[lv]);
    return e;
  };
  switch (stage.work.kind) {
    case WorkSpec::Kind::none: return 0.0;
    case WorkSpec::Kind::time: {
      // Busy for its time at nominal cycles: the cycles, hence the ops, do not change with the clock.
      const double core_fraction = stage.cores > 0 ? static_cast<double>(stage.cores) / unit.cores : 1.0;
      for (Precision p : kAllPrecisions)
        if (unit.peak_ops_per_s[p] && unit.energy_per_op_J[p])
          return stage.work.time_s.mean() * scale * effective_compute_ops_per_s(unit, p) * core_fraction *
                 energy_per_op_J(unit, p, op).value_or(0.0);
      return 0.0;
    }
    case WorkSpec::Kind::ops:
      return scale * (stage.work.ops * energy_per_op_J(unit, stage.work.precision, op).value_or(0.0) +
                      bytes_J(stage.work.bytes_per_level));
    case WorkSpec::Kind::network: {
      double total = 0;
      for (const auto& k : *kernels) {
        for (Precision p : kAllPrecisions)
          if (k.ops[p] && *k.ops[p] > 0) total += *k.ops[p] * energy_per_op_J(unit, p, op).value_or(0.0);
        total += bytes_J(k.bytes);
      }
      return total * scale;
    }
  }
  return 0.0;
}

}  // namespace

double ScenarioSpec::stage_floor_s(std::size_t s, Roofs roofs, std::optional<std::size_t> point) const {
  const std::vector<Kernel> kernels = stage_kernels(*this, s);
  return floor_of(*this, s, &kernels, roofs, point);
}

StageFloors::StageFloors(const ScenarioSpec& spec) : spec_(spec) {
  for (std::size_t s = 0; s < spec.stages.size(); ++s) kernels_.push_back(stage_kernels(spec, s));
}

double StageFloors::floor_s(std::size_t s, Roofs roofs, std::optional<std::size_t> operating_point) const {
  return floor_of(spec_, s, &kernels_[s], roofs, operating_point);
}

double ScenarioSpec::stage_dynamic_energy_J(std::size_t s, std::optional<std::size_t> point) const {
  const std::vector<Kernel> kernels = stage_kernels(*this, s);
  return energy_of(*this, s, &kernels, point);
}

double StageFloors::dynamic_energy_J(std::size_t s, std::optional<std::size_t> operating_point) const {
  return energy_of(spec_, s, &kernels_[s], operating_point);
}

std::vector<double> StageFloors::floors_s(Roofs roofs) const {
  std::vector<double> out;
  for (std::size_t s = 0; s < kernels_.size(); ++s) out.push_back(floor_s(s, roofs));
  return out;
}

std::vector<double> ScenarioSpec::stage_floors_s(Roofs roofs) const { return StageFloors(*this).floors_s(roofs); }

double ScenarioSpec::floor_end_to_end_s(const std::vector<double>& floors_s) const {
  // Stages are in topological order: the longest path ending at each is its floor plus its slowest input's.
  std::vector<double> done(stages.size(), 0.0);
  double longest = 0;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    double ready = 0;
    for (const auto& in : stages[s].inputs)
      if (!in.sensor) ready = std::max(ready, done[in.index]);
    done[s] = ready + floors_s[s];
    longest = std::max(longest, done[s]);
  }
  return longest;
}

}  // namespace framesim::model
