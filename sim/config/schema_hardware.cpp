// Key declarations of hardware files (and the scheduler fragment a unit and a scenario share).
#include "config/schema.hpp"

#include <fmt/format.h>

#include "config/schema_tables.hpp"
#include "config/sweep.hpp"
#include "model/hardware.hpp"
#include "model/network.hpp"
#include "model/op_class.hpp"
#include "model/precision.hpp"

// The tables name only the fields a key sets (designated initializers); the others keep their defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace framesim::config::schema {

using core::Dimension;
using namespace tables;

// Each table lists a mapping's keys in the order the reader's messages name them ("expected a mapping with keys
// ...), each nested key after the key that holds it.

const Table& scheduler_table() {
  static const Table table{
      "scheduler",
      "How the stages and tasks on one unit share its cores: a policy name, or a mapping",
      {
          {.path = "policy",
           .kind = Kind::choice,
           .choices = model::kSchedulingPolicies.names(),
           .required = true,
           .example = "time_slice",
           .description = "`priority`: non-preemptive fixed priority (at every kernel boundary the highest-priority "
                          "job, then the earliest released, gets the cores); `fifo`: jobs in release order, each to "
                          "completion; `preemptive`: a higher-priority release takes the cores mid-kernel; "
                          "`time_slice`: round robin in release order, a job runs for `quantum` then yields"},
          {.path = "quantum",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::positive,
           .example = "\"2 ms\"",
           .description =
               "how long a job runs before it yields (policy time_slice only, and required there; at least 1 us)"},
          {.path = "switch_cost",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::non_negative,
           .fallback = "0",
           .example = "\"50 us\"",
           .description = "idle time on a forced switch (policies preemptive and time_slice): the job that gets the "
                          "cores pays it before running, the switched-out job again when it resumes"},
      }};
  return table;
}

/// The device as a whole.
std::vector<Key> hardware_file_keys() {
  return {
      {.path = "name",
       .kind = Kind::text,
       .required = true,
       .example = "my-soc",
       .description = "the device's name, shown in reports"},
      {.path = "description", .kind = Kind::text, .example = "\"a made-up SoC\"", .description = "one line"},
      {.path = "source", .kind = Kind::text, .description = "where the figures come from (free text)"},
  };
}

/// The memory levels.
std::vector<Key> memory_keys() {
  return {
      {.path = "memory",
       .kind = Kind::map,
       .required = true,
       .description = "level name -> memory level (at least one)"},
      {.path = "memory.<level>", .kind = Kind::map, .description = "one memory level"},
      {.path = "memory.<level>.kind",
       .kind = Kind::choice,
       .choices = model::kMemoryKinds.names(),
       .required = true,
       .example = "dram",
       .description = "registers, sram and cache are on chip (they can hold a whole weight set); flash is "
                      "read-only (weights only: every unit needs a writable level in its path)"},
      {.path = "memory.<level>.capacity",
       .kind = Kind::quantity,
       .dimension = Dimension::Bytes,
       .range = Range::positive,
       .required = true,
       .example = "\"8 GiB\"",
       .description = "bytes it holds"},
      {.path = "memory.<level>.bandwidth",
       .kind = Kind::quantity,
       .dimension = Dimension::BytesPerSecond,
       .range = Range::positive,
       .required = true,
       .example = "\"68 GB/s\"",
       .description = "peak, at the first memory operating point"},
      {.path = "memory.<level>.efficiency",
       .kind = Kind::number,
       .range = Range::unit_interval,
       .fallback = "1",
       .example = "0.7",
       .description = "fraction of peak a streaming kernel reaches (the soft roof)"},
      {.path = "memory.<level>.latency",
       .kind = Kind::quantity,
       .dimension = Dimension::Seconds,
       .range = Range::non_negative,
       .fallback = "0",
       .example = "\"100 ns\"",
       .description = "unloaded access latency; with a unit's outstanding it gives the Little's-law cap "
                      "outstanding / latency"},
      {.path = "memory.<level>.energy_per_byte",
       .kind = Kind::quantity,
       .dimension = Dimension::JoulesPerByte,
       .range = Range::non_negative,
       .fallback = "0",
       .example = "\"20 pJ/bit\"",
       .description = "energy of each byte served by this level"},
      {.path = "memory.<level>.line",
       .kind = Kind::quantity,
       .dimension = Dimension::Bytes,
       .range = Range::positive,
       .fallback = "64 B",
       .example = "\"64 B\"",
       .description = "access granularity: a random access (gather) pulls a whole line"},
      {.path = "memory.<level>.operating_points",
       .kind = Kind::list,
       .default_note = "none (a fixed clock)",
       .description = "memory clock points, highest first; bandwidth scales with frequency / first frequency"},
      {.path = "memory.<level>.operating_points[]", .kind = Kind::map, .description = "one memory clock point"},
      {.path = "memory.<level>.operating_points[].name",
       .kind = Kind::text,
       .default_note = "opN (its index)",
       .example = "max",
       .description = "the point's name"},
      {.path = "memory.<level>.operating_points[].frequency",
       .kind = Kind::quantity,
       .dimension = Dimension::Hertz,
       .range = Range::positive,
       .required = true,
       .example = "\"3.2 GHz\"",
       .description = "the memory clock at this point"},
      {.path = "memory.<level>.contention",
       .kind = Kind::map,
       .default_note = "none (max-min sharing only)",
       .description = "slowdown below saturation: a master's memory time at the level is multiplied by the "
                      "curve's factor at the utilisation of the level by the other masters "
                      "(sim/model/contention.hpp)"},
      {.path = "memory.<level>.contention.slowdown",
       .kind = Kind::list,
       .required = true,
       .example = "[[0.1, 1.0], [0.6, 1.5]]",
       .description = "points [utilisation, factor]: utilisation in [0, 1] increasing, factor at least 1 and "
                      "never falling; from (0, 1), flat after the last point"},
      {.path = "memory.<level>.contention.slowdown[]",
       .kind = Kind::list,
       .description = "one point [utilisation, factor]"},
      {.path = "memory.<level>.contention.slowdown[][]",
       .kind = Kind::number,
       .description = "the others' utilisation (in [0, 1]), then the factor (at least 1)"},
      {.path = "memory.<level>.contention.source", .kind = Kind::text, .description = "free text"},
      {.path = "memory.<level>.source", .kind = Kind::text, .description = "free text"},
  };
}

/// A compute unit: its kind, cores, peaks and efficiencies.
std::vector<Key> unit_compute_keys() {
  return {
      {.path = "units",
       .kind = Kind::map,
       .required = true,
       .description = "unit name -> compute unit (at least one); a unit may not share a name with a level"},
      {.path = "units.<unit>", .kind = Kind::map, .description = "one compute unit"},
      {.path = "units.<unit>.kind",
       .kind = Kind::choice,
       .choices = model::kUnitKinds.names(),
       .required = true,
       .example = "gpu",
       .description = "informational"},
      {.path = "units.<unit>.cores",
       .kind = Kind::integer,
       .min = 1,
       .max = 64,
       .fallback = "1",
       .example = "4",
       .description = "cores (CPU cores, GPU SMs); a stage may use some of them"},
      {.path = "units.<unit>.peak",
       .kind = Kind::map,
       .required = true,
       .example = "{fp32: \"2 TFLOP/s\", fp16: \"4 TFLOP/s\"}",
       .description = "the whole unit's peak per precision at the first operating point; give only the "
                      "datapaths the unit has (a network computing in a precision without a roof is refused)"},
      {.path = "units.<unit>.peak.<precision>",
       .kind = Kind::quantity,
       .dimension = Dimension::OpsPerSecond,
       .range = Range::positive,
       .example = "\"10 TFLOP/s\"",
       .description = "the peak in that precision"},
      {.path = "units.<unit>.efficiency",
       .kind = Kind::number,
       .range = Range::unit_interval,
       .default_note = "1",
       .example = "0.6",
       .description = "soft roof: fraction of peak real kernels reach. A number applies to every precision; a "
                      "mapping names precisions (only those with a peak), all and by_op"},
      {.path = "units.<unit>.efficiency.<precision>",
       .kind = Kind::number,
       .range = Range::unit_interval,
       .example = "0.6",
       .description = "the efficiency in that precision"},
      {.path = "units.<unit>.efficiency.all",
       .kind = Kind::number,
       .range = Range::unit_interval,
       .example = "0.6",
       .description = "every precision the mapping does not name"},
      {.path = "units.<unit>.efficiency.by_op",
       .kind = Kind::map,
       .example = "{depthwise: 0.3}",
       .description = "op class -> efficiency: a kernel's ops run at its layer's class's efficiency, else the "
                      "precision's. conv: dense and grouped convolution; depthwise: one input channel per "
                      "group; matmul: linear, matmul, attention; elementwise: elementwise, activations, norms, "
                      "softmax; pooling: pooling, reductions; data_movement: copies, gathers, resizes, custom"},
      {.path = "units.<unit>.efficiency.by_op.<op_class>",
       .kind = Kind::number,
       .range = Range::unit_interval,
       .example = "0.3",
       .description = "that class's efficiency: a number, or a mapping of precisions"},
      {.path = "units.<unit>.efficiency.by_op.<op_class>.<precision>",
       .kind = Kind::number,
       .range = Range::unit_interval,
       .example = "0.3",
       .description = "that class's efficiency in that precision"},
  };
}

/// A compute unit's costs per kernel beyond its roofs: launch and output overheads, memory in flight, how
/// contention and weight placement act on it, and how its compute and memory times overlap.
std::vector<Key> unit_kernel_cost_keys() {
  return {
      {.path = "units.<unit>.dispatch_overhead",
       .kind = Kind::quantity,
       .dimension = Dimension::Seconds,
       .range = Range::non_negative,
       .fallback = "0",
       .example = "\"5 us\"",
       .description = "fixed cost per kernel launch (per fused layer group), at most 1 s"},
      {.path = "units.<unit>.output_cost",
       .kind = Kind::quantity,
       .dimension = Dimension::Seconds,
       .range = Range::non_negative,
       .default_note = "0",
       .example = "\"90 ns\"",
       .description = "the runtime's cost per output element of a conv, depthwise or matmul layer (requantise, "
                      "clamp, store) at the first operating point, scaling with 1 / frequency: what makes a "
                      "short reduction (a depthwise, a thin pointwise) slower per op than a long one. The "
                      "estimate's only; at most 1 us"},
      {.path = "units.<unit>.outstanding",
       .kind = Kind::quantity,
       .dimension = Dimension::Bytes,
       .range = Range::positive,
       .default_note = "none (no cap)",
       .example = "\"64 KiB\"",
       .description = "bytes the unit keeps in flight; caps each level at outstanding / latency"},
      {.path = "units.<unit>.contention_sensitivity",
       .kind = Kind::number,
       .range = Range::non_negative,
       .fallback = "1",
       .example = "1",
       .description = "how strongly contention curves act on this unit: its factor is 1 + sensitivity x "
                      "(curve - 1)"},
      {.path = "units.<unit>.weight_caching",
       .kind = Kind::choice,
       .choices = model::kWeightCaching.names(),
       .fallback = "whole",
       .example = "partial",
       .description = "where the weights live when the whole set does not fit an on-chip level of the unit's "
                      "path beside the activation peak: `whole`: all stream from the path's last level; "
                      "`partial`: as many as fit stay on chip (in execution order), only the rest stream (the "
                      "Edge TPU compiler's parameter caching). The estimate's only: the bound always takes the "
                      "best case (every on-chip level's capacity holds weights). A runtime profile may set it"},
      {.path = "units.<unit>.overlap",
       .kind = Kind::number,
       .range = Range::fraction,
       .fallback = "1",
       .default_note = "perfect overlap: the roofline",
       .example = "0.5",
       .description = "fraction o of the shorter of a kernel's compute and memory times that the longer hides: "
                      "t = max(c, m) + (1 - o) min(c, m); the non-hidden part stretches with the memory's "
                      "loaded latency under co-run (sim/model/overlap.hpp)"},
      {.path = "units.<unit>.overlap_by_op",
       .kind = Kind::map,
       .example = "{conv: 0.4}",
       .description = "op class -> overlap (the classes of efficiency.by_op); unnamed classes take overlap"},
      {.path = "units.<unit>.overlap_by_op.<op_class>",
       .kind = Kind::number,
       .range = Range::fraction,
       .example = "0.4",
       .description = "that class's overlap"},
  };
}

/// A unit's hand-off to another unit and its geometry.
std::vector<Key> unit_handoff_keys() {
  return {
      {.path = "units.<unit>.handoff",
       .kind = Kind::map,
       .default_note = "none",
       .example = "{unit: gpu, efficiency: 0.8, launch: \"50 us\"}",
       .description = "what a stage on this unit (an accelerator) needs from a host unit per inference: the "
                      "reformat of the network's input and output tensors and a launch, run as side work "
                      "(sim/model/handoff.hpp); a part of a split stage on it reformats the tensors handed to "
                      "it and from it (sim/model/placement.hpp)"},
      {.path = "units.<unit>.handoff.unit",
       .kind = Kind::text,
       .required = true,
       .example = "gpu",
       .description = "the host unit that runs the reformats and the launch (another unit of the file)"},
      {.path = "units.<unit>.handoff.reformat",
       .kind = Kind::list,
       .default_note = "[input, output]",
       .example = "[input, output]",
       .description = "which of the network's tensors the host reformats: its inputs (before), its outputs "
                      "(after)"},
      {.path = "units.<unit>.handoff.reformat[]",
       .kind = Kind::choice,
       .choices = names_of({"input", "output"}),
       .description = "input or output"},
      {.path = "units.<unit>.handoff.efficiency",
       .kind = Kind::number,
       .range = Range::unit_interval,
       .fallback = "1",
       .example = "0.8",
       .description = "useful bytes over the bytes the host moves: each tensor is read in one layout and "
                      "written in the other, divided by this"},
      {.path = "units.<unit>.handoff.launch",
       .kind = Kind::quantity,
       .dimension = Dimension::Seconds,
       .range = Range::non_negative,
       .fallback = "0",
       .example = "\"50 us\"",
       .description = "fixed host time per inference (the engine's enqueue and submit), before the accelerator "
                      "runs"},
      {.path = "units.<unit>.handoff.host_precision",
       .kind = Kind::choice,
       .choices = model::precision_names(),
       .default_note = "the network's",
       .example = "fp32",
       .description = "precision of the host-side tensors (trtexec's default I/O is fp32 linear)"},
      // Datapath geometry (model/hardware.hpp, UnitGeometry): shape-dependent efficiency of the estimate.
      {.path = "units.<unit>.geometry",
       .kind = Kind::map,
       .default_note = "none (every layer shape fills the compute roof)",
       .example = "{array: [64, 64]}",
       .description = "the shape of the datapath, a hard fact of the silicon: the estimate runs a conv, "
                      "depthwise or matmul layer at its class's efficiency times the fraction of the datapath "
                      "its shape fills (whole tiles); the bound never uses it"},
      {.path = "units.<unit>.geometry.array",
       .kind = Kind::list,
       .example = "[64, 64]",
       .description = "a systolic or MAC array [rows, columns]: rows along the reduction (input channels per "
                      "group x kernel window), columns along the output channels; a depthwise layer puts its "
                      "channels on the columns and its window on the rows"},
      {.path = "units.<unit>.geometry.array[]",
       .kind = Kind::integer,
       .min = 1,
       .max = 65536,
       .description = "rows, then columns"},
      {.path = "units.<unit>.geometry.lanes",
       .kind = Kind::integer,
       .min = 1,
       .max = 4096,
       .example = "4",
       .description = "SIMD lanes along the reduction (a depthwise layer: along its channels), e.g. 4 int8 "
                      "values per 32-bit word on a Cortex-M"},
      {.path = "units.<unit>.geometry.source",
       .kind = Kind::text,
       .description = "where the geometry comes from (free text)"},
  };
}

/// A unit's memory, operating points and power.
std::vector<Key> unit_dvfs_and_power_keys() {
  return {
      {.path = "units.<unit>.memory",
       .kind = Kind::list,
       .required = true,
       .example = "[dram]",
       .description = "the levels the unit reaches, innermost first; at least one writable. The order is checked: "
                      "registers, then sram and cache levels from the smallest up, then dram, then flash; a path in "
                      "another order ([dram, npu_sram]) is refused with the order expected"},
      {.path = "units.<unit>.memory[]", .kind = Kind::text, .description = "a memory level's name"},
      {.path = "units.<unit>.operating_points",
       .kind = Kind::list,
       .default_note = "one fixed clock (no DVFS: roofs never scale)",
       .description = "DVFS points, highest frequency first; compute roofs scale with frequency / first "
                      "frequency"},
      {.path = "units.<unit>.operating_points[]", .kind = Kind::map, .description = "one DVFS point"},
      {.path = "units.<unit>.operating_points[].name",
       .kind = Kind::text,
       .default_note = "opN (its index)",
       .example = "max",
       .description = "the point's name"},
      {.path = "units.<unit>.operating_points[].frequency",
       .kind = Kind::quantity,
       .dimension = Dimension::Hertz,
       .range = Range::positive,
       .required = true,
       .example = "\"1 GHz\"",
       .description = "the clock at this point"},
      {.path = "units.<unit>.operating_points[].voltage",
       .kind = Kind::quantity,
       .dimension = Dimension::Volts,
       .range = Range::positive,
       .fallback = "1 V",
       .example = "\"0.8 V\"",
       .description = "the supply voltage: energy per op scales with (V / V0)^2"},
      {.path = "units.<unit>.operating_points[].static_power",
       .kind = Kind::quantity,
       .dimension = Dimension::Watts,
       .range = Range::non_negative,
       .default_note = "the unit's static_power x V / V0",
       .example = "\"0.5 W\"",
       .description = "leakage at this point"},
      {.path = "units.<unit>.static_power",
       .kind = Kind::quantity,
       .dimension = Dimension::Watts,
       .range = Range::non_negative,
       .fallback = "0",
       .example = "\"1 W\"",
       .description = "leakage at the first point; other points scale it by V / V0 unless they give their own"},
      {.path = "units.<unit>.energy_per_op",
       .kind = Kind::map,
       .default_note = "none",
       .example = "{fp16: \"0.5 pJ\"}",
       .description = "dynamic energy per operation at the first point's voltage, per precision (only "
                      "precisions with a peak); not with busy_power"},
      {.path = "units.<unit>.energy_per_op.<precision>",
       .kind = Kind::quantity,
       .dimension = Dimension::JoulesPerOp,
       .range = Range::non_negative,
       .example = "\"0.5 pJ\"",
       .description = "the energy of one operation in that precision"},
      {.path = "units.<unit>.busy_power",
       .kind = Kind::quantity,
       .dimension = Dimension::Watts,
       .range = Range::positive,
       .default_note = "none",
       .example = "\"10 W\"",
       .description = "instead of energy_per_op: the unit's whole power flat out at its effective roof; each "
                      "precision's energy per op becomes (busy_power - static_power) / (peak x efficiency). "
                      "Must exceed static_power"},
  };
}

/// A unit's scheduler, source and capabilities.
std::vector<Key> unit_scheduler_keys() {
  return {
      {.path = "units.<unit>.scheduler",
       .kind = Kind::choice,
       .choices = model::kSchedulingPolicies.names(),
       .default_note = "priority",
       .fragment = &scheduler_table(),
       .example = "priority",
       .description = "how stages and tasks share the unit: a policy, or a mapping (see the scheduler keys)"},
      {.path = "units.<unit>.source", .kind = Kind::text, .description = "free text"},
      {.path = "units.<unit>.capabilities",
       .kind = Kind::map,
       .default_note = "none (it runs every layer)",
       .example = "{op_classes: [conv, pooling], precisions: [int8, fp16], fallback: gpu}",
       .description = "what the unit can run (a DLA or NPU without some layer types): a layer is supported when "
                      "its op class is in op_classes or its op in ops, its compute precision in precisions and "
                      "no tensor it reads or writes exceeds max_tensor; the others run on fallback, as parts of "
                      "their own with a hand-over each way (the tensors at the shared level, and the handoff of "
                      "an accelerator part: sim/model/placement.hpp). Checked against every network at load"},
      {.path = "units.<unit>.capabilities.op_classes",
       .kind = Kind::list,
       .default_note = "none (ops decides; both absent: every op)",
       .example = "[conv, depthwise, pooling]",
       .description = "the op classes it runs"},
      {.path = "units.<unit>.capabilities.op_classes[]",
       .kind = Kind::choice,
       .choices = model::op_class_names(),
       .description = "an op class"},
      {.path = "units.<unit>.capabilities.ops",
       .kind = Kind::list,
       .default_note = "none (op_classes decides; both absent: every op)",
       .example = "[conv2d, maxpool, relu, add]",
       .description = "ops it runs, by the names networks use (framesim ops lists them)"},
      {.path = "units.<unit>.capabilities.ops[]", .kind = Kind::text, .description = "an op name"},
      {.path = "units.<unit>.capabilities.precisions",
       .kind = Kind::list,
       .default_note = "any",
       .example = "[int8, fp16]",
       .description = "the compute precisions it runs"},
      {.path = "units.<unit>.capabilities.precisions[]",
       .kind = Kind::choice,
       .choices = model::precision_names(),
       .description = "a precision"},
      {.path = "units.<unit>.capabilities.max_tensor",
       .kind = Kind::quantity,
       .dimension = Dimension::Bytes,
       .range = Range::positive,
       .default_note = "no limit",
       .example = "\"8 MiB\"",
       .description = "the largest tensor a layer it runs may read or write"},
      {.path = "units.<unit>.capabilities.fallback",
       .kind = Kind::text,
       .default_note = "none (a layer it refuses is an error)",
       .example = "gpu",
       .description = "the unit that runs the layers it refuses (not itself)"},
      {.path = "units.<unit>.capabilities.source", .kind = Kind::text, .description = "free text"},
  };
}

/// The thermal envelope and its governor.
std::vector<Key> thermal_keys() {
  return {
      {.path = "thermal",
       .kind = Kind::map,
       .default_note = "none (never throttles)",
       .description = "one lumped RC node, C dT/dt = P - (T - T_ambient) / R, and its governor; the sustained "
                      "envelope is (trip - ambient) / R"},
      {.path = "thermal.ambient",
       .kind = Kind::quantity,
       .dimension = Dimension::Celsius,
       .required = true,
       .example = "\"25 C\"",
       .description = "air (or enclosure) temperature"},
      {.path = "thermal.resistance",
       .kind = Kind::quantity,
       .dimension = Dimension::KelvinPerWatt,
       .range = Range::positive,
       .required = true,
       .example = "\"4 C/W\"",
       .description = "junction-to-ambient thermal resistance of the whole assembly"},
      {.path = "thermal.capacitance",
       .kind = Kind::quantity,
       .dimension = Dimension::JoulesPerKelvin,
       .range = Range::positive,
       .required = true,
       .example = "\"20 J/C\"",
       .description = "heat capacity of the lumped node; R x C is the time constant"},
      {.path = "thermal.trip",
       .kind = Kind::quantity,
       .dimension = Dimension::Celsius,
       .required = true,
       .example = "\"85 C\"",
       .description = "above this the governor slows down; above ambient"},
      {.path = "thermal.release",
       .kind = Kind::quantity,
       .dimension = Dimension::Celsius,
       .required = true,
       .example = "\"80 C\"",
       .description = "below this the governor speeds up again; below trip"},
      {.path = "thermal.governor",
       .kind = Kind::map,
       .required = true,
       .example = "{period: \"100 ms\"}",
       .description = "the governor that moves units along their operating points"},
      {.path = "thermal.governor.period",
       .kind = Kind::quantity,
       .dimension = Dimension::Seconds,
       .range = Range::positive,
       .required = true,
       .example = "\"100 ms\"",
       .description = "how often the governor samples"},
      {.path = "thermal.governor.policy",
       .kind = Kind::choice,
       .choices = model::kGovernorPolicies.names(),
       .fallback = "step",
       .example = "step",
       .description = "step: one operating point per period; bang_bang: straight to the slowest or fastest"},
      {.path = "thermal.governor.throttle",
       .kind = Kind::list,
       .default_note = "all units and levels with operating points",
       .example = "[gpu]",
       .description = "what the governor may slow down"},
      {.path = "thermal.governor.throttle[]", .kind = Kind::text, .description = "a unit or memory level"},
      {.path = "thermal.source", .kind = Kind::text, .description = "free text"},
  };
}

const Table& hardware_table() {
  static const Table table{
      "hardware", "One device as framesim sees it: memory levels, compute units that reach them, one thermal envelope",
      joined({hardware_file_keys(), memory_keys(), unit_compute_keys(), unit_kernel_cost_keys(), unit_handoff_keys(),
              unit_dvfs_and_power_keys(), unit_scheduler_keys(), thermal_keys()})};
  return table;
}

}  // namespace framesim::config::schema
