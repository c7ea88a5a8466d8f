#include "model/scenario.hpp"

#include <cmath>

namespace framesim::model {

double Distribution::mean() const {
  switch (kind) {
    case Kind::constant: return a;
    case Kind::normal: return a;
    case Kind::uniform: return (a + b) / 2;
    case Kind::lognormal: return a;
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

std::string_view distribution_kind_name(Distribution::Kind k) {
  switch (k) {
    case Distribution::Kind::constant: return "constant";
    case Distribution::Kind::normal: return "normal";
    case Distribution::Kind::uniform: return "uniform";
    case Distribution::Kind::lognormal: return "lognormal";
    case Distribution::Kind::exponential: return "exponential";
  }
  return "?";
}

std::string_view input_policy_name(InputPolicy p) { return p == InputPolicy::all ? "all" : "latest"; }
std::string_view overflow_name(Overflow o) { return o == Overflow::drop_oldest ? "drop_oldest" : "drop_newest"; }

std::vector<std::size_t> ScenarioSpec::consumers_of_stage(std::size_t s) const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < stages.size(); ++i)
    for (const auto& in : stages[i].inputs)
      if (!in.sensor && in.index == s) out.push_back(i);
  return out;
}

std::vector<std::size_t> ScenarioSpec::consumers_of_sensor(std::size_t sensor) const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < stages.size(); ++i)
    for (const auto& in : stages[i].inputs)
      if (in.sensor && in.index == sensor) out.push_back(i);
  return out;
}

}  // namespace framesim::model
