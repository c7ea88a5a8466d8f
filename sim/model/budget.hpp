// The fifteen-minute budget of the seed text as data: the machine, the model, the floor, the verdict
// against the frame slice, the layers split at the ridge, what fusion saved, and the energy floor.
// Writers in analysis/ turn a BudgetReport into text, JSON and an SVG roofline.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/cost.hpp"
#include "model/plan.hpp"

namespace framesim::model {

/// A measured time for a layer (or a fused kernel), by name.
struct Measurement {
  std::string name;
  double time_s = 0;
};

/// Two kernels (or layers) set side by side: "B does 256x fewer ops, moves 73 % of the bytes, runs 14.4x faster".
struct Comparison {
  std::string first, second;  // as asked for
  std::size_t first_kernel = 0, second_kernel = 0;
};

struct BudgetOptions {
  std::size_t unit = 0;
  RunPoint run;
  std::optional<double> slice_s;  // the model's share of the frame
  std::optional<double> rate_Hz;  // inferences per second, for watts
  std::vector<Measurement> measured;
  std::vector<std::pair<std::string, std::string>> compare;  // pairs of kernel or layer names
};

struct RoofRow {
  Precision precision = Precision::fp32;
  double peak_ops_per_s = 0;       // datasheet, at the nominal clock
  double effective_ops_per_s = 0;  // x efficiency x clock x cores
};

struct LevelRow {
  std::size_t level = 0;
  double peak_Bps = 0;
  double streaming_Bps = 0;                              // x efficiency x memory clock
  std::optional<double> littles_cap_Bps;                 // outstanding / latency
  double effective_Bps = 0;                              // what kernels get: min of the two
  std::vector<std::pair<Precision, double>> ridge;       // effective C / effective B (ops per byte)
  std::vector<std::pair<Precision, double>> peak_ridge;  // peak C / peak B
};

/// The seed's reading of a measurement against the model, with the bound and the estimate named apart.
enum class Diagnosis {
  below_bound,           // faster than the bound at peak roofs: impossible, a wrong input
  faster_than_estimate,  // between the bound and the estimate: the efficiencies are pessimistic
  at_roof,               // the estimate's "floor" bands of the seed: [1, 2) of the estimate
  uncounted_bytes,       // [2, 8)
  overhead,              // >= 8
};
std::string_view diagnosis_text(Diagnosis d);
/// The band's name in JSON output, as the enumerator is spelled (`below_bound`, ..., `overhead`).
std::string_view diagnosis_name(Diagnosis d);
/// Bands on measured / estimate: < 1 faster than the estimate (or, below the bound, impossible); [1, 2) at the
/// roof ("~1.2x: stop"); [2, 8) bytes not counted ("~3x"); >= 8 overhead, not bandwidth ("~20x").
/// `measured_over_bound` < 1 is below_bound whatever the estimate says.
Diagnosis diagnose(double measured_over_estimate, double measured_over_bound);
/// The same when bound and estimate coincide (peak roofs, no overhead): one ratio.
inline Diagnosis diagnose(double measured_over_bound) { return diagnose(measured_over_bound, measured_over_bound); }

struct KernelRow {
  std::size_t kernel = 0;
  KernelTime time;   // the estimate: effective roofs, Little's cap, dispatch overhead
  KernelTime bound;  // the bound: peak roofs, no overhead (never above a correct measurement)
  Energy energy;
  double offchip_bytes = 0;     // bytes at levels that are not on chip (DRAM, flash)
  double fraction_of_peak = 0;  // achieved ops/s at the bound over the peak of its precision mix
  std::string precision;        // "fp32", "w4a16", mixed: "fp16+int8"
  std::optional<double> measured_s;
  std::optional<double> ratio;        // measured / estimate
  std::optional<double> bound_ratio;  // measured / bound (< 1: impossible)
  std::optional<Diagnosis> diagnosis;
};

struct FusionRow {
  std::size_t kernel = 0;
  int traversals_before = 0, traversals_after = 0;
  int tail_before = 0, tail_after = 0;
  double activation_bytes_before = 0, activation_bytes_after = 0;
};

struct FusionSummary {
  int traversals_before = 0, traversals_after = 0;
  double bytes_before = 0, bytes_after = 0;  // all levels
  double offchip_bytes_before = 0, offchip_bytes_after = 0;
  double memory_s_before = 0, memory_s_after = 0;    // sum over kernels of the binding memory time
  double traffic_s_before = 0, traffic_s_after = 0;  // sum over kernels and levels of M_l / B_l
  double floor_s_before = 0, floor_s_after = 0;
  std::vector<FusionRow> groups;  // kernels of more than one layer
};

struct BudgetReport {
  std::string hardware;
  std::string network;
  std::size_t unit = 0;
  RunPoint run;

  // 1. the machine
  std::vector<RoofRow> roofs;
  std::vector<LevelRow> levels;
  std::optional<double> sustained_power_W;

  // 2. the model
  double params = 0, weight_bytes = 0, ops = 0, state_bytes = 0;
  double peak_activation_bytes = 0;
  std::vector<LevelFootprint> footprint;
  bool fits = true;
  int layers = 0;

  // 3. the floor
  double compute_s = 0;                  // sum of F/C
  std::vector<double> memory_s;          // per level, sum of M_l / B_l
  double overhead_s = 0;                 // sum of dispatch overheads
  double model_floor_s = 0;              // max(sum F/C, max_l sum M_l/B_l): the seed's step 3 on totals
  double estimate_s = 0;                 // sum over kernels of max(...) + overhead at effective roofs: the verdict's
  double bound_s = 0;                    // sum over kernels of max(...) at peak roofs, no overhead: the bound
  double no_overlap_s = 0;               // sum over kernels of the no-overlap time
  double weight_read_bytes = 0;          // weight bytes read per inference
  double weight_stream_s = 0;            // those bytes at the weights' level bandwidth: the seed's batch-one formula
  double weight_streamed_bytes = 0;      // the part of them read from the weights' level (the rest cached on chip)
  LimitKind limit = LimitKind::compute;  // what binds the model as a whole
  int limit_level = -1;

  // 4. the verdict
  std::optional<double> slice_s;
  /// The verdict uses the estimate; a bound above the slice makes it impossible whatever the kernels reach.
  bool within_slice() const { return slice_s && estimate_s <= *slice_s; }
  bool impossible() const { return slice_s && bound_s > *slice_s; }

  // 5. kernels (execution order) and the order by intensity
  ExecutionPlan plan;
  std::vector<KernelRow> kernels;
  std::vector<std::size_t> by_intensity;  // ascending

  // fusion
  FusionSummary fusion;

  // 6. energy
  double offchip_bytes = 0;
  double energy_floor_J = 0;  // off-chip bytes x their energy per byte
  Energy energy;              // the whole estimate: arithmetic + every level + static over the floor
  std::optional<double> rate_Hz;

  // --compare
  std::vector<Comparison> comparisons;

  // --measured
  std::vector<std::string> unmatched_measurements;
  std::vector<std::string> unmeasured_kernels;
  bool has_measurements = false;
  /// A whole-network measurement (a measured name equal to the network's name, or "total"), and its reading.
  std::optional<double> measured_total_s;
  std::optional<Diagnosis> total_diagnosis;
};

/// Builds the budget of `net` on unit `options.unit` of `hw`. Pure; the network must be valid for the unit
/// (every precision it computes in has a roof there — see missing_roofs).
BudgetReport make_budget(const HardwareSpec& hw, const NetworkSpec& net, const BudgetOptions& options);

/// The kernel a name stands for: a kernel's own name, or the kernel containing the layer of that name.
std::optional<std::size_t> find_kernel(const ExecutionPlan& plan, const NetworkSpec& net, std::string_view name);

/// Precisions the network computes in that `unit` has no roof for (empty when the budget can run).
std::vector<Precision> missing_roofs(const NetworkSpec& net, const ComputeUnitSpec& unit);

}  // namespace framesim::model
