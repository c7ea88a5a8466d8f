// The search of `framesim map`: a mapping gives each stage of the space one option (unit, split, precision,
// priority) and each unit with clock caps in the space one cap; the static pass bounds every option from the cost
// model at its unit's capped clock and discards mappings that cannot fit (a unit over 100 % busy, a path whose
// floor exceeds the deadline); the search picks which mappings to simulate. Simulation itself is the caller's
// (map_command.cpp runs batches through `framesim sweep`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/map_space.hpp"
#include "config/override.hpp"
#include "core/error.hpp"
#include "model/scenario.hpp"

namespace framesim::cli {

/// One part of a stage (a split stage has several) as the static pass costs it, at every operating point of its
/// unit: which point counts is the unit's clock cap in the mapping.
struct PartCost {
  std::size_t unit = 0;          // index into the hardware's units
  std::vector<double> floor_s;   // per item, per operating point of the unit
  std::vector<double> energy_J;  // dynamic energy per item, per operating point
};

/// One choice for one axis: a stage's (unit, split, precision, priority) or a unit's clock cap.
struct StageOption {
  std::string unit;
  std::optional<std::string> split_at, split_unit;  // a cut: layers from split_at on split_unit
  std::optional<std::string> precision;
  std::optional<int> priority;
  std::string label;  // "dla0", "gpu|dla0@12", "gpu int8 p1"; a cap as written ("421MHz-7W")
  // From the static pass (one load of the scenario with only this option changed):
  std::optional<std::string> refused;  // why it cannot load (capabilities, roofs, a bad cut)
  std::vector<PartCost> parts;         // its parts, in sequence (hand-overs in their floors)
  // A clock-cap axis: the operating point of the axis's unit it caps the unit at, as written in the space.
  std::optional<std::size_t> cap_point;
  std::string cap_text;
};

/// An axis of the space: a stage's options, or (cap_unit set) the clock caps of one unit, named
/// "clock_caps.<unit>" after the scenario key every mapping sets.
struct StageAxis {
  std::string stage;
  std::vector<StageOption> options;
  bool split_key = false, precision_key = false, priority_key = false;  // which keys every mapping sets
  double rate_Hz = 0;                                                   // items per second (its sensor's)
  std::optional<std::size_t> cap_unit;                                  // index into the hardware's units
};

/// A mapping: an option index per axis.
using Mapping = std::vector<std::size_t>;

/// What the static pass says about a mapping.
struct StaticVerdict {
  bool fits = false;
  std::string reason;             // when it does not
  double max_utilisation = 0;     // the busiest unit's floor utilisation
  double worst_path_floor_s = 0;  // the longest sensor -> sink path through the floors
  /// Energy per frame of the first sensor at the floors: the stages' dynamic energy (each at its unit's capped
  /// point's voltage) and every unit's static power at its capped point, per frame; tasks and background
  /// traffic are not in it.
  double energy_J = 0;
};

/// What a simulation of a mapping gave (from its summary.json).
struct Outcome {
  double worst_p99_s = std::numeric_limits<double>::infinity();  // sustained window, worst path
  std::map<std::string, double> path_p99_s;                      // per sink stage
  double energy_J = std::numeric_limits<double>::infinity();     // mean per frame
  std::int64_t dropped = 0;                                      // sustained window
  int missing_paths = 0;                                         // paths whose p99 exceeds the deadline
  bool meets = false;                                            // every path within the deadline, no drops
};

class MapSearch {
 public:
  /// Reads the space against the scenario (`base`, loaded without overrides) and bounds every option.
  MapSearch(const std::filesystem::path& scenario, const model::ScenarioSpec& base, const config::MapSpace& space);

  const std::vector<StageAxis>& axes() const { return axes_; }
  /// Mappings in the space (the product of the option counts).
  double space_size() const;
  std::string label(const Mapping& m) const;
  /// The overrides that turn the scenario into mapping `m` (every axis' unit, and its split, precision and
  /// priority keys when the axis has them; every clock-cap axis' clock_caps.<unit>).
  std::vector<config::Override> overrides(const Mapping& m) const;
  StaticVerdict judge(const Mapping& m) const;
  /// Every mapping that fits statically, best static rank first (lowest max utilisation, then floor), at most
  /// `limit`; `kept` is set to how many fit in all.
  std::vector<Mapping> ranked(std::size_t limit, std::size_t& kept) const;
  /// Mappings differing from `m` in one axis, the axes in turn (every axis's first other option, then its second).
  std::vector<Mapping> neighbours(const Mapping& m) const;
  /// The mapping with the scenario's own choice on every axis, if it is in the space.
  std::optional<Mapping> own() const;
  /// Every stage on `unit` (as far as its options allow), or nothing; a unit with caps in the space keeps the
  /// scenario's cap when the space lists it, else takes the fastest cap listed (so do one_per_unit's).
  std::optional<Mapping> all_on(const std::string& unit) const;
  /// Each network stage on a different unit, in stage order (the GPU first), or nothing.
  std::optional<Mapping> one_per_unit() const;

  /// Whether `a` beats `b` for `objective` ("energy": meeting every deadline first, then less energy, then a
  /// lower worst p99; "p99": a lower worst p99, then less energy).
  static bool better(const Outcome& a, const Outcome& b, const std::string& objective);

 private:
  /// The option of cap axis `axis` the baselines take (the scenario's own cap, else the fastest listed).
  std::size_t baseline_cap(const StageAxis& axis) const;
  void add_cap_axes(const config::MapSpace& space, core::Diagnostics& problems);

  const model::ScenarioSpec& base_;
  std::vector<StageAxis> axes_;
  struct FixedPart {
    std::string stage;  // logical name
    PartCost cost;
    double rate_Hz = 0;
  };
  std::vector<FixedPart> fixed_;                  // the parts of the stages outside the space
  double primary_rate_Hz = 0;                     // the first sensor's: energy is per frame of it
  std::vector<std::string> logical_;              // stage names as the file writes them (parts folded)
  std::vector<std::vector<std::size_t>> inputs_;  // logical inputs of each logical stage
};

/// What the genetic search needs of the simulations (map_command.cpp's driver).
struct GeneticHooks {
  std::function<void(const std::vector<Mapping>&)> evaluate;   // simulates a batch (within the budget)
  std::function<bool(const Mapping&)> known;                   // simulated already
  std::function<bool(const Mapping&, const Mapping&)> better;  // both simulated: the first wins
  std::function<std::size_t()> left;                           // simulations the budget leaves
};

/// Genetic search (map_genetic.cpp): a population seeded by the static ranking (its best `population`
/// mappings), then per generation `population` children, each of two parents picked by tournament (two drawn,
/// the better kept), crossed over stage by stage and mutated (one stage given another option), kept only if the
/// static pass keeps it and it is not simulated yet; the generation is simulated as one batch and the best
/// `population` of parents and children live on. It ends when the budget is spent or no new child is found.
/// Deterministic: its draws come from `seed` alone.
void genetic_search(const MapSearch& search, const std::vector<Mapping>& ranked, std::size_t population,
                    std::uint64_t seed, const GeneticHooks& hooks);

}  // namespace framesim::cli
