// The SoC as framesim sees it: compute units, memory levels, operating points, thermal envelope.
// Specs are plain immutable values produced once by config/ (from YAML) and validated there.
// Units: every double carries its unit in its name (_s, _bytes, _Bps, _ops_per_s, _J, _W, _C, _Hz, _V).
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/enum_table.hpp"
#include "model/op_class.hpp"
#include "model/precision.hpp"

namespace framesim::model {

enum class MemoryKind { registers, sram, cache, dram, flash };
/// The names of memory kinds (`memory.<level>.kind`).
inline constexpr auto kMemoryKinds = core::enum_table<MemoryKind>({{MemoryKind::registers, "registers"},
                                                                   {MemoryKind::sram, "sram"},
                                                                   {MemoryKind::cache, "cache"},
                                                                   {MemoryKind::dram, "dram"},
                                                                   {MemoryKind::flash, "flash"}});
std::string_view memory_kind_name(MemoryKind k);
/// On-chip levels can hold a whole weight set; flash is read-only (weights only).
inline bool is_on_chip(MemoryKind k) {
  return k == MemoryKind::registers || k == MemoryKind::sram || k == MemoryKind::cache;
}
inline bool is_writable(MemoryKind k) { return k != MemoryKind::flash; }

/// A memory clock setting: bandwidth scales with frequency relative to the first (highest) point.
struct MemoryOperatingPoint {
  std::string name;
  double frequency_Hz = 0;
};

/// How a shared level slows each master below saturation (see model/contention.hpp): a piecewise-linear curve
/// from the utilisation the *other* masters put on the level (their bytes/s over its effective bandwidth, in
/// [0, 1]) to the factor by which a master's memory time at the level grows. The curve starts at (0, 1) —
/// a master alone is never slowed — rises through `points` (utilisation increasing, factor non-decreasing)
/// and stays at the last factor beyond the last point.
struct ContentionCurve {
  std::vector<std::pair<double, double>> points;  // (others' utilisation, slowdown factor >= 1)
};

struct MemoryLevelSpec {
  std::string name;
  MemoryKind kind = MemoryKind::dram;
  double capacity_bytes = 0;
  double bandwidth_Bps = 0;                            // peak, at the first memory operating point
  double efficiency = 1.0;                             // fraction of peak a streaming kernel reaches (the soft roof)
  double latency_s = 0;                                // unloaded access latency
  double energy_per_byte_J = 0;                        // per byte served by this level
  double line_bytes = 64;                              // access granularity: a random access pulls a whole line
  std::vector<MemoryOperatingPoint> operating_points;  // empty: fixed clock
  std::vector<std::string> users;                      // units whose memory path includes this level
  std::optional<ContentionCurve> contention;           // none: no slowdown below saturation (max-min only)

  bool shared() const { return users.size() > 1; }
  /// Peak bandwidth at memory operating point `op` (0 when the level has a fixed clock).
  double bandwidth_at_Bps(std::size_t op) const;
};

/// A DVFS point of a compute unit. Peaks are quoted at the first (highest-frequency) point.
struct OperatingPoint {
  std::string name;
  double frequency_Hz = 0;
  double voltage_V = 0;
  std::optional<double> static_power_W;  // if unset: the unit's static power scaled by V/V_nominal
};

/// How a unit shares its cores between the jobs (stage executions, task releases) that want them.
///   fifo:       jobs in release order, each to completion;
///   priority:   non-preemptive fixed priority: at every kernel boundary the highest-priority job (then the
///               earliest released) gets the cores — the running job included;
///   preemptive: fixed priority; a higher-priority release takes the cores mid-kernel, the preempted kernel
///               later resumes its remaining work;
///   time_slice: round robin in release order: a job runs for a quantum, then yields to the next waiting one.
/// A forced switch (a preemption, an expired quantum) costs `switch_cost_s` of idle cores, paid by the job
/// that gets them and again by the switched-out job when it resumes.
enum class SchedulingPolicy { fifo, priority, preemptive, time_slice };
std::string_view scheduling_policy_name(SchedulingPolicy p);
/// The names of scheduling policies (`units.<unit>.scheduler.policy`, a scenario's `schedulers`).
inline constexpr auto kSchedulingPolicies =
    core::enum_table<SchedulingPolicy>({{SchedulingPolicy::fifo, "fifo"},
                                        {SchedulingPolicy::priority, "priority"},
                                        {SchedulingPolicy::preemptive, "preemptive"},
                                        {SchedulingPolicy::time_slice, "time_slice"}});

struct SchedulerSpec {
  SchedulingPolicy policy = SchedulingPolicy::priority;
  double quantum_s = 0;      // time_slice only (> 0)
  double switch_cost_s = 0;  // preemptive and time_slice
};

enum class UnitKind { cpu, gpu, npu, dsp, isp, mcu, accelerator };
/// The names of unit kinds (`units.<unit>.kind`).
inline constexpr auto kUnitKinds = core::enum_table<UnitKind>({{UnitKind::cpu, "cpu"},
                                                               {UnitKind::gpu, "gpu"},
                                                               {UnitKind::npu, "npu"},
                                                               {UnitKind::dsp, "dsp"},
                                                               {UnitKind::isp, "isp"},
                                                               {UnitKind::mcu, "mcu"},
                                                               {UnitKind::accelerator, "accelerator"}});

/// The shape of a unit's datapath (`geometry`): hard facts of the silicon that decide how much of the compute
/// roof a layer of a given shape can fill. Only the *estimate* uses them (cost.hpp, shape_utilisation); the
/// bound stays at the peak. A layer of reduction length K (input channels per group x kernel window) and N
/// output channels per group:
///   array R x C (a systolic or MAC array, R along the reduction, C along the output channels): it fills
///     K x N / (ceil(K/R) R x ceil(N/C) C) of the array; a depthwise layer puts its channels on the columns and
///     its window (K = kh x kw) on the rows;
///   lanes L (a SIMD datapath, the lanes along the reduction): K / (ceil(K/L) L); a depthwise layer vectorises
///     across its channels instead: C / (ceil(C/L) L).
struct UnitGeometry {
  int array_rows = 0;  // 0: no array declared
  int array_cols = 0;
  int lanes = 0;  // 0: no vector lanes declared
  bool any() const { return array_rows > 0 || lanes > 0; }
};
std::string_view unit_kind_name(UnitKind k);

/// What a unit can run, as an accelerator's runtime declares it (NVIDIA's DLA runs convolutions, pooling and
/// activations but no matrix product of two activations): a layer it refuses runs on `fallback` instead, with a
/// hand-over each way (model/placement.hpp). A layer is supported when its op class is in `op_classes` or its op
/// name in `ops` (both empty: any op), its compute precision in `precisions` (empty: any) and none of the
/// tensors it reads or writes is larger than `max_tensor_bytes`. Free layers (reshapes) run anywhere.
struct UnitCapabilities {
  std::vector<OpClass> op_classes;
  std::vector<std::string> ops;  // op names as networks write them ("conv2d", "relu")
  std::vector<Precision> precisions;
  std::optional<double> max_tensor_bytes;
  std::optional<std::size_t> fallback;  // index into HardwareSpec::units
};

/// What a stage on an accelerator (DLA, NPU) needs from a host unit for every inference (`handoff`): the
/// runtime's reformat of the network's input and output tensors between the host's layout and the
/// accelerator's, and the engine launch. The stage's side work is derived from it (model/handoff.hpp).
struct HandoffSpec {
  std::size_t unit = 0;     // the host unit (index into HardwareSpec::units), never the accelerator itself
  bool input = true;        // reformat every network input before the accelerator runs
  bool output = true;       // reformat every network output after it
  double efficiency = 1.0;  // useful bytes over the bytes the host moves (strided layouts waste bursts)
  double launch_s = 0;      // fixed host time per inference (enqueue, submit, wait)
  std::optional<Precision> host_precision;  // the host-side tensors' precision (unset: the network's)
};

/// How a unit's runtime keeps weights on chip when the whole set does not fit (`units.<unit>.weight_caching`):
/// `whole`: on chip only when every weight fits there (the capacity rule of plan.hpp), else all streamed;
/// `partial`: as many as fit beside the activation peak, in execution order, the rest streamed (the Edge TPU
/// compiler's parameter caching).
enum class WeightCaching { whole, partial };
inline constexpr auto kWeightCaching =
    core::enum_table<WeightCaching>({{WeightCaching::whole, "whole"}, {WeightCaching::partial, "partial"}});

struct ComputeUnitSpec {
  std::string name;
  UnitKind kind = UnitKind::cpu;
  int cores = 1;
  PerPrecision<double> peak_ops_per_s;  // whole unit, at the nominal operating point
  PerPrecision<double> efficiency;      // soft roof per precision (unset: 1)
  /// Soft roof per op class and precision (`efficiency.by_op`); unset entries fall back to `efficiency`.
  std::array<PerPrecision<double>, kOpClassCount> efficiency_by_op{};
  double dispatch_overhead_s = 0;  // per kernel launch
  /// Per output element of a conv, depthwise or matmul layer, at the nominal clock (scales with f_nominal / f):
  /// the runtime's epilogue (requantise, clamp, store) that a short reduction cannot hide. Estimate only.
  double output_cost_s = 0;
  std::optional<double> outstanding_bytes;  // bytes it can keep in flight (Little's law cap)
  /// How strongly contention curves act on this unit: its factor is 1 + sensitivity x (curve - 1). 1: as the
  /// curve says; 0: immune (e.g. a unit whose traffic the memory controller prioritises).
  double contention_sensitivity = 1.0;
  /// Fraction o of the shorter of a kernel's compute and memory times that the longer one hides (model/
  /// overlap.hpp): t = max(c, m) + (1 - o) min(c, m). 1: perfect overlap (the roofline); 0: none.
  double overlap = 1.0;
  std::array<std::optional<double>, kOpClassCount> overlap_by_op{};  // per op class; unset: `overlap`
  std::optional<HandoffSpec> handoff;                                // host work per inference of a stage on this unit
  std::vector<std::size_t> memory_path;          // indices into HardwareSpec::memory, innermost first
  std::vector<OperatingPoint> operating_points;  // descending frequency; [0] is nominal
  /// The fastest operating point a scenario allows (its `clock_caps`): the unit starts there and the governor
  /// never picks a faster one. 0: no cap.
  std::size_t fastest_point = 0;
  double static_power_W = 0;             // at the nominal operating point
  PerPrecision<double> energy_per_op_J;  // at the nominal voltage
  SchedulerSpec scheduler;               // how stages and tasks share it (a scenario may override)
  UnitGeometry geometry;                 // datapath shape (none declared: every shape fills the roof)
  /// Where the runtime keeps the weights (a runtime profile's `weights`): an index into HardwareSpec::memory on
  /// the unit's path. Unset: the capacity rule of plan.hpp decides.
  std::optional<std::size_t> weights_level;
  WeightCaching weight_caching = WeightCaching::whole;  // with no weights_level: how much goes on chip
  bool runtime_fuses = true;  // false: the runtime runs every layer as its own kernel (a profile's `fusion: none`)
  std::optional<UnitCapabilities> capabilities;  // none: it runs every layer

  double efficiency_for(Precision p) const { return efficiency[p].value_or(1.0); }
  /// The soft roof of op class `c` in precision `p`: its `by_op` entry, else the precision's efficiency.
  double efficiency_for(Precision p, OpClass c) const {
    return efficiency_by_op[static_cast<std::size_t>(c)][p].value_or(efficiency_for(p));
  }
  /// The overlap of op class `c`: its `overlap_by_op` entry, else `overlap`.
  double overlap_for(OpClass c) const { return overlap_by_op[static_cast<std::size_t>(c)].value_or(overlap); }
  /// True when some op class has an efficiency of its own.
  bool has_efficiency_by_op() const;
  const OperatingPoint& nominal() const { return operating_points.front(); }
  /// The operating point it starts at: the nominal one, or its clock cap's.
  const OperatingPoint& fastest_allowed() const { return operating_points[fastest_point]; }
  /// The operating point `text` names: its name, else a frequency within 0.5 % of its clock (as the totals
  /// tables match a clock). None: no such point.
  std::optional<std::size_t> find_operating_point(std::string_view text) const;
};

enum class GovernorPolicy { step, bang_bang };
/// The names of governor policies (`thermal.governor.policy`).
inline constexpr auto kGovernorPolicies =
    core::enum_table<GovernorPolicy>({{GovernorPolicy::step, "step"}, {GovernorPolicy::bang_bang, "bang_bang"}});
std::string_view governor_policy_name(GovernorPolicy p);

/// Lumped RC die model: C dT/dt = P - (T - T_ambient)/R, and the governor that reacts to it.
struct ThermalSpec {
  double ambient_C = 25;
  double resistance_K_per_W = 1;
  double capacitance_J_per_K = 1;
  double trip_C = 85;
  double release_C = 75;
  double governor_period_s = 0.1;
  GovernorPolicy policy = GovernorPolicy::step;
  std::vector<std::string> throttled;  // units and memory levels the governor may slow; empty: all that can

  /// The steady power that holds the die exactly at the trip temperature: the sustained envelope.
  double sustained_power_W() const { return (trip_C - ambient_C) / resistance_K_per_W; }
  /// The die temperature `dt_s` after `temperature_C` under constant `power_W` at `ambient_C`: the exact
  /// solution of the RC equation, T_ss + (T - T_ss) e^(-dt/RC) with T_ss = T_ambient + P R.
  double step_C(double temperature_C, double ambient_C, double power_W, double dt_s) const;
};

struct HardwareSpec {
  std::string name;
  std::string description;
  std::string source_file;  // the YAML it came from
  std::vector<MemoryLevelSpec> memory;
  std::vector<ComputeUnitSpec> units;
  std::optional<ThermalSpec> thermal;
  /// The file's `source:` texts (where its figures come from) by the key path of their mapping: "" (top level),
  /// "memory.dram", "units.gpu", "thermal". The model does not use them; a written file carries them along.
  std::map<std::string, std::string> sources;
  /// The runtime profile laid over the file (model/runtime.hpp), empty when none: what every estimate made
  /// with this spec came from, as reports say it ("x-cube-ai-8.0 (hardware/runtimes/....yaml)").
  std::string runtime;
  std::string runtime_file;

  std::optional<std::size_t> find_unit(std::string_view unit_name) const;
  std::optional<std::size_t> find_level(std::string_view level_name) const;
};

}  // namespace framesim::model
