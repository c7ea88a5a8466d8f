#include "config/schema.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "config/sweep.hpp"
#include "core/text.hpp"
#include "model/hardware.hpp"
#include "model/network.hpp"
#include "model/op_class.hpp"
#include "model/precision.hpp"

namespace framesim::config {

std::string_view range_text(Range range) {
  switch (range) {
    case Range::any: return "";
    case Range::positive: return "positive";
    case Range::non_negative: return "not negative";
    case Range::unit_interval: return "in (0, 1]";
    case Range::fraction: return "in [0, 1]";
  }
  return "";
}

}  // namespace framesim::config

// The tables name only the fields a key sets (designated initializers); the others keep their defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace framesim::config::schema {

using core::Dimension;

namespace {

/// Shape dimensions and op parameters are at most 2^31 - 1 (config/readers.hpp, kMaxParam).
constexpr std::int64_t kMaxDimension = 2147483647;

std::vector<std::string> names_of(std::initializer_list<std::string_view> names) {
  return {names.begin(), names.end()};
}

std::vector<std::string> scheduling_policies() {
  return {std::begin(model::kSchedulingPolicies), std::end(model::kSchedulingPolicies)};
}

std::vector<std::string> memory_kinds() {
  std::vector<std::string> out;
  for (auto k : {model::MemoryKind::registers, model::MemoryKind::sram, model::MemoryKind::cache,
                 model::MemoryKind::dram, model::MemoryKind::flash})
    out.emplace_back(model::memory_kind_name(k));
  return out;
}

std::vector<std::string> unit_kinds() {
  std::vector<std::string> out;
  for (auto k : {model::UnitKind::cpu, model::UnitKind::gpu, model::UnitKind::npu, model::UnitKind::dsp,
                 model::UnitKind::isp, model::UnitKind::mcu, model::UnitKind::accelerator})
    out.emplace_back(model::unit_kind_name(k));
  return out;
}

std::vector<std::string> split(std::string_view pattern) {
  // "a.b[].c" -> {"a", "b", "[]", "c"}; "layers[3].op" -> {"layers", "[]", "op"} (an index is an item).
  std::vector<std::string> out;
  std::string current;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '.') {
      if (!current.empty()) out.push_back(current);
      current.clear();
    } else if (c == '[') {
      if (!current.empty()) out.push_back(current);
      current.clear();
      const auto close = pattern.find(']', i);
      out.emplace_back("[]");
      i = close == std::string_view::npos ? pattern.size() : close;
    } else {
      current += c;
    }
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

}  // namespace

std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::text: return "text";
    case Kind::path: return "path";
    case Kind::boolean: return "boolean";
    case Kind::integer: return "integer";
    case Kind::number: return "number";
    case Kind::quantity: return "quantity";
    case Kind::choice: return "choice";
    case Kind::distribution: return "distribution";
    case Kind::list: return "list";
    case Kind::map: return "mapping";
    case Kind::any: return "any value";
  }
  return "";
}

std::string_view Key::name() const {
  if (path.size() >= 2 && path.compare(path.size() - 2, 2, "[]") == 0)
    return std::string_view(path).substr(path.size() - 2);
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? std::string_view(path) : std::string_view(path).substr(dot + 1);
}

std::string_view Key::parent() const {
  const std::string_view p(path);
  if (p.size() >= 2 && p.substr(p.size() - 2) == "[]") return p.substr(0, p.size() - 2);
  const auto dot = p.rfind('.');
  return dot == std::string_view::npos ? std::string_view{} : p.substr(0, dot);
}

bool Key::named() const {
  const auto n = name();
  return n.size() > 2 && n.front() == '<' && n.back() == '>';
}

const Key* Table::find(std::string_view pattern) const {
  for (const auto& k : keys)
    if (k.path == pattern) return &k;
  return nullptr;
}

std::vector<const Key*> Table::children(std::string_view pattern) const {
  std::vector<const Key*> out;
  for (const auto& k : keys)
    if (k.parent() == pattern) out.push_back(&k);
  return out;
}

std::optional<std::vector<std::string>> placeholder_names(std::string_view placeholder) {
  if (placeholder == "<precision>") return model::precision_names();
  if (placeholder == "<op_class>") return model::op_class_names();
  return std::nullopt;
}

std::string placeholder_example(std::string_view placeholder) {
  static const std::vector<std::pair<std::string_view, std::string_view>> examples{
      {"<level>", "dram"},       {"<unit>", "gpu"},
      {"<sensor>", "camera"},    {"<stage>", "detector"},
      {"<network>", "detector"}, {"<input>", "image"},
      {"<task>", "controller"},  {"<name>", "display"},
      {"<chain>", "perception"}, {"<key_path>", "sensors.camera.rate"},
      {"<precision>", "fp16"},   {"<op_class>", "depthwise"}};
  for (const auto& [p, e] : examples)
    if (p == placeholder) return std::string(e);
  return std::string(placeholder.substr(1, placeholder.size() - 2));
}

// ---- the tables ----
//
// Each table lists a mapping's keys in the order the reader's messages name them ("expected a mapping with keys
// ..."), each nested key after the key that holds it.

const Table& scheduler_table() {
  static const Table table{
      "scheduler",
      "How the stages and tasks on one unit share its cores: a policy name, or a mapping",
      {
          {.path = "policy",
           .kind = Kind::choice,
           .choices = scheduling_policies(),
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
           .description = "how long a job runs before it yields (policy time_slice only, and required there)"},
          {.path = "switch_cost",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::non_negative,
           .default_value = "0",
           .example = "\"50 us\"",
           .description = "idle time on a forced switch (policies preemptive and time_slice): the job that gets the "
                          "cores pays it before running, the switched-out job again when it resumes"},
      }};
  return table;
}

const Table& distribution_table() {
  static const Table table{
      "distribution",
      "A random quantity: a constant (a quantity), or a mapping naming the distribution and its parameters, each in "
      "the unit of the key it belongs to (variability: plain numbers)",
      {
          {.path = "distribution",
           .kind = Kind::choice,
           .choices = names_of({"constant", "normal", "uniform", "lognormal", "exponential"}),
           .required = true,
           .example = "normal",
           .description = "constant takes value; normal mean and stddev; uniform min and max; lognormal mean and "
                          "sigma; exponential mean"},
          {.path = "value",
           .kind = Kind::any,
           .example = "\"3 ms\"",
           .description = "constant: the value, in the unit of the key it belongs to"},
          {.path = "mean",
           .kind = Kind::any,
           .example = "\"3 ms\"",
           .description = "the mean of the value itself, in the unit of the key it belongs to (normal, exponential; "
                          "lognormal: positive, and not the mean of the logarithm: the underlying normal has "
                          "mu = ln(mean) - sigma^2 / 2)"},
          {.path = "stddev",
           .kind = Kind::any,
           .example = "\"0.3 ms\"",
           .description = "normal: the standard deviation, not negative (a time: at most 1 min)"},
          {.path = "min",
           .kind = Kind::any,
           .example = "\"2 ms\"",
           .description = "uniform: the low end, in the unit of the key it belongs to"},
          {.path = "max",
           .kind = Kind::any,
           .example = "\"4 ms\"",
           .description = "uniform: the high end, not below min"},
          {.path = "sigma",
           .kind = Kind::number,
           .range = Range::non_negative,
           .example = "0.2",
           .description = "lognormal: the standard deviation of the underlying normal (of the logarithm), at most 3"},
      }};
  return table;
}

const Table& work_table() {
  static const Table table{
      "work",
      "Work without a network: a compute time, or operations and the bytes they move",
      {
          {.path = "time",
           .kind = Kind::distribution,
           .dimension = Dimension::Seconds,
           .range = Range::non_negative,
           .fragment = &distribution_table(),
           .example = "\"4 ms\"",
           .description = "the job's time at the unit's nominal clock on the cores it is given: not per core (more "
                          "cores do not shorten it), longer at a throttled clock; not with ops"},
          {.path = "ops",
           .kind = Kind::quantity,
           .dimension = Dimension::Ops,
           .range = Range::non_negative,
           .example = "\"2 GOP\"",
           .description = "operations, run at the unit's roof for `precision`; not with time"},
          {.path = "precision",
           .kind = Kind::choice,
           .choices = model::precision_names(),
           .default_value = "fp32",
           .example = "int8",
           .description = "the precision the ops run in (with ops)"},
          {.path = "bytes",
           .kind = Kind::map,
           .example = "{dram: \"12 MB\"}",
           .description = "bytes moved per memory level (with ops); each level must be on the unit's memory path"},
          {.path = "bytes.<level>",
           .kind = Kind::quantity,
           .dimension = Dimension::Bytes,
           .range = Range::non_negative,
           .example = "\"12 MB\"",
           .description = "bytes moved at that level"},
      }};
  return table;
}

const Table& repeat_table() {
  static const Table table{
      "repeat block",
      "A list item of a network's layers that repeats a block of layers; `@input` inside names the block's input",
      {
          {.path = "repeat",
           .kind = Kind::integer,
           .min = 1,
           .max = 100000,
           .required = true,
           .example = "4",
           .description = "how many times the block is repeated"},
          {.path = "name",
           .kind = Kind::text,
           .required = true,
           .example = "res",
           .description = "the block's name; instance i's layers are named NAME.i.LAYER, and NAME stands for the "
                          "block's last output"},
          {.path = "layers",
           .kind = Kind::list,
           .required = true,
           .example = "[{op: relu}]",
           .description = "the block's layers (layers or nested repeat blocks)"},
      }};
  return table;
}

const Table& hardware_table() {
  static const Table table{
      "hardware",
      "One device as framesim sees it: memory levels, compute units that reach them, one thermal envelope",
      {
          {.path = "name",
           .kind = Kind::text,
           .required = true,
           .example = "my-soc",
           .description = "the device's name, shown in reports"},
          {.path = "description", .kind = Kind::text, .example = "\"a made-up SoC\"", .description = "one line"},
          {.path = "source", .kind = Kind::text, .description = "where the figures come from (free text)"},
          {.path = "memory",
           .kind = Kind::map,
           .required = true,
           .description = "level name -> memory level (at least one)"},
          {.path = "memory.<level>", .kind = Kind::map, .description = "one memory level"},
          {.path = "memory.<level>.kind",
           .kind = Kind::choice,
           .choices = memory_kinds(),
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
           .default_value = "1",
           .example = "0.7",
           .description = "fraction of peak a streaming kernel reaches (the soft roof)"},
          {.path = "memory.<level>.latency",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::non_negative,
           .default_value = "0",
           .example = "\"100 ns\"",
           .description = "unloaded access latency; with a unit's outstanding it gives the Little's-law cap "
                          "outstanding / latency"},
          {.path = "memory.<level>.energy_per_byte",
           .kind = Kind::quantity,
           .dimension = Dimension::JoulesPerByte,
           .range = Range::non_negative,
           .default_value = "0",
           .example = "\"20 pJ/bit\"",
           .description = "energy of each byte served by this level"},
          {.path = "memory.<level>.line",
           .kind = Kind::quantity,
           .dimension = Dimension::Bytes,
           .range = Range::positive,
           .default_value = "64 B",
           .example = "\"64 B\"",
           .description = "access granularity: a random access (gather) pulls a whole line"},
          {.path = "memory.<level>.operating_points",
           .kind = Kind::list,
           .default_value = "none (a fixed clock)",
           .description = "memory clock points, highest first; bandwidth scales with frequency / first frequency"},
          {.path = "memory.<level>.operating_points[]", .kind = Kind::map, .description = "one memory clock point"},
          {.path = "memory.<level>.operating_points[].name",
           .kind = Kind::text,
           .default_value = "opN (its index)",
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
           .default_value = "none (max-min sharing only)",
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
          {.path = "units",
           .kind = Kind::map,
           .required = true,
           .description = "unit name -> compute unit (at least one); a unit may not share a name with a level"},
          {.path = "units.<unit>", .kind = Kind::map, .description = "one compute unit"},
          {.path = "units.<unit>.kind",
           .kind = Kind::choice,
           .choices = unit_kinds(),
           .required = true,
           .example = "gpu",
           .description = "informational"},
          {.path = "units.<unit>.cores",
           .kind = Kind::integer,
           .min = 1,
           .max = 64,
           .default_value = "1",
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
           .default_value = "1",
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
          {.path = "units.<unit>.dispatch_overhead",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::non_negative,
           .default_value = "0",
           .example = "\"5 us\"",
           .description = "fixed cost per kernel launch (per fused layer group), at most 1 s"},
          {.path = "units.<unit>.outstanding",
           .kind = Kind::quantity,
           .dimension = Dimension::Bytes,
           .range = Range::positive,
           .default_value = "none (no cap)",
           .example = "\"64 KiB\"",
           .description = "bytes the unit keeps in flight; caps each level at outstanding / latency"},
          {.path = "units.<unit>.contention_sensitivity",
           .kind = Kind::number,
           .range = Range::non_negative,
           .default_value = "1",
           .example = "1",
           .description = "how strongly contention curves act on this unit: its factor is 1 + sensitivity x "
                          "(curve - 1)"},
          {.path = "units.<unit>.memory",
           .kind = Kind::list,
           .required = true,
           .example = "[dram]",
           .description =
               "the levels the unit reaches, innermost first; at least one writable. The order is checked: "
               "registers, then sram and cache levels from the smallest up, then dram, then flash; a path in "
               "another order ([dram, npu_sram]) is refused with the order expected"},
          {.path = "units.<unit>.memory[]", .kind = Kind::text, .description = "a memory level's name"},
          {.path = "units.<unit>.operating_points",
           .kind = Kind::list,
           .default_value = "one fixed clock (no DVFS: roofs never scale)",
           .description = "DVFS points, highest frequency first; compute roofs scale with frequency / first "
                          "frequency"},
          {.path = "units.<unit>.operating_points[]", .kind = Kind::map, .description = "one DVFS point"},
          {.path = "units.<unit>.operating_points[].name",
           .kind = Kind::text,
           .default_value = "opN (its index)",
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
           .default_value = "1 V",
           .example = "\"0.8 V\"",
           .description = "the supply voltage: energy per op scales with (V / V0)^2"},
          {.path = "units.<unit>.operating_points[].static_power",
           .kind = Kind::quantity,
           .dimension = Dimension::Watts,
           .range = Range::non_negative,
           .default_value = "the unit's static_power x V / V0",
           .example = "\"0.5 W\"",
           .description = "leakage at this point"},
          {.path = "units.<unit>.static_power",
           .kind = Kind::quantity,
           .dimension = Dimension::Watts,
           .range = Range::non_negative,
           .default_value = "0",
           .example = "\"1 W\"",
           .description = "leakage at the first point; other points scale it by V / V0 unless they give their own"},
          {.path = "units.<unit>.energy_per_op",
           .kind = Kind::map,
           .default_value = "none",
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
           .default_value = "none",
           .example = "\"10 W\"",
           .description = "instead of energy_per_op: the unit's whole power flat out at its effective roof; each "
                          "precision's energy per op becomes (busy_power - static_power) / (peak x efficiency). "
                          "Must exceed static_power"},
          {.path = "units.<unit>.scheduler",
           .kind = Kind::choice,
           .choices = scheduling_policies(),
           .default_value = "priority",
           .fragment = &scheduler_table(),
           .example = "priority",
           .description = "how stages and tasks share the unit: a policy, or a mapping (see the scheduler keys)"},
          {.path = "units.<unit>.source", .kind = Kind::text, .description = "free text"},
          {.path = "thermal",
           .kind = Kind::map,
           .default_value = "none (never throttles)",
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
           .choices = names_of({"step", "bang_bang"}),
           .default_value = "step",
           .example = "step",
           .description = "step: one operating point per period; bang_bang: straight to the slowest or fastest"},
          {.path = "thermal.governor.throttle",
           .kind = Kind::list,
           .default_value = "all units and levels with operating points",
           .example = "[gpu]",
           .description = "what the governor may slow down"},
          {.path = "thermal.governor.throttle[]", .kind = Kind::text, .description = "a unit or memory level"},
          {.path = "thermal.source", .kind = Kind::text, .description = "free text"},
      }};
  return table;
}

const Table& network_table() {
  static const Table table{
      "network",
      "A network as layers: each layer's op and parameters give its operations and bytes (`framesim ops` lists "
      "the ops and their parameters)",
      {
          {.path = "name",
           .kind = Kind::text,
           .required = true,
           .example = "my-net",
           .description = "the network's name, shown in reports"},
          {.path = "description", .kind = Kind::text, .example = "\"a small CNN\"", .description = "one line"},
          {.path = "source", .kind = Kind::text, .description = "where it comes from (free text)"},
          {.path = "precision",
           .kind = Kind::text,
           .default_value = "fp32",
           .example = "int8",
           .description = "every layer's precision unless it gives its own: a precision (fp32, fp16, bf16, int32, "
                          "int16, int8, int4), wXaY (w4a16: int4 weights, fp16 activations), or a mapping"},
          {.path = "precision.weights",
           .kind = Kind::choice,
           .choices = model::precision_names(),
           .required = true,
           .example = "int8",
           .description = "the weights' precision"},
          {.path = "precision.activations",
           .kind = Kind::choice,
           .choices = model::precision_names(),
           .required = true,
           .example = "fp16",
           .description = "the activations' precision"},
          {.path = "precision.compute",
           .kind = Kind::choice,
           .choices = model::precision_names(),
           .default_value = "the activations'",
           .example = "fp16",
           .description = "the arithmetic's precision"},
          {.path = "fusion",
           .kind = Kind::choice,
           .choices = names_of({"auto", "explicit", "none"}),
           .default_value = "auto",
           .example = "auto",
           .description = "auto: elementwise epilogues join their producer, and groups; explicit: only the groups "
                          "given (group); none: every layer alone"},
          {.path = "inputs",
           .kind = Kind::map,
           .required = true,
           .example = "{image: [1, 3, 224, 224]}",
           .description = "name -> input tensor (at least one)"},
          {.path = "inputs.<input>",
           .kind = Kind::list,
           .example = "[1, 3, 224, 224]",
           .description = "the tensor's shape, or a mapping {shape, precision}"},
          {.path = "inputs.<input>[]",
           .kind = Kind::integer,
           .min = 1,
           .max = kMaxDimension,
           .description = "one dimension"},
          {.path = "inputs.<input>.shape",
           .kind = Kind::list,
           .required = true,
           .example = "[1, 3, 224, 224]",
           .description = "the tensor's shape"},
          {.path = "inputs.<input>.shape[]",
           .kind = Kind::integer,
           .min = 1,
           .max = kMaxDimension,
           .description = "one dimension"},
          {.path = "inputs.<input>.precision",
           .kind = Kind::choice,
           .choices = model::precision_names(),
           .default_value = "the network's activations'",
           .example = "int8",
           .description = "the tensor's precision"},
          {.path = "layers",
           .kind = Kind::list,
           .required = true,
           .example = "[{name: conv1, op: conv2d, out_channels: 16, kernel: 3, stride: 2}, {name: pool, op: "
                      "global_avgpool}]",
           .description = "the layers in order (at least one); each reads the previous one's output unless it says "
                          "otherwise. A list item with repeat is a repeat block (see the repeat block keys)"},
          {.path = "layers[]",
           .kind = Kind::map,
           .description = "one layer: the keys below and the op's own parameters (`framesim ops`)"},
          {.path = "layers[].name",
           .kind = Kind::text,
           .default_value = "OPN (the op and its index)",
           .example = "conv1",
           .description = "the layer's name, unique; later layers read it by this name"},
          {.path = "layers[].op",
           .kind = Kind::text,
           .required = true,
           .example = "conv2d",
           .description = "the operation (`framesim ops` lists them)"},
          {.path = "layers[].input",
           .kind = Kind::text,
           .default_value = "the previous layer's output",
           .example = "image",
           .description = "the tensor or layer it reads; not with inputs"},
          {.path = "layers[].inputs",
           .kind = Kind::list,
           .example = "[a, b]",
           .description = "the tensors or layers it reads (add, concat, matmul, ...); not with input"},
          {.path = "layers[].inputs[]", .kind = Kind::text, .description = "a tensor or layer name"},
          {.path = "layers[].precision",
           .kind = Kind::text,
           .default_value = "the network's",
           .example = "fp16",
           .description = "the layer's precision, written as the network's"},
          {.path = "layers[].precision.weights",
           .kind = Kind::choice,
           .choices = model::precision_names(),
           .required = true,
           .example = "int8",
           .description = "the weights' precision"},
          {.path = "layers[].precision.activations",
           .kind = Kind::choice,
           .choices = model::precision_names(),
           .required = true,
           .example = "fp16",
           .description = "the activations' precision"},
          {.path = "layers[].precision.compute",
           .kind = Kind::choice,
           .choices = model::precision_names(),
           .default_value = "the activations'",
           .example = "fp16",
           .description = "the arithmetic's precision"},
          {.path = "layers[].group",
           .kind = Kind::text,
           .example = "block1",
           .description = "fusion group: consecutive layers with one group run as one kernel (fusion auto or "
                          "explicit)"},
          {.path = "outputs",
           .kind = Kind::list,
           .default_value = "every layer output nothing reads",
           .example = "[logits]",
           .description = "the network's outputs; when given, a layer output nothing reads and not listed is an error"},
          {.path = "outputs[]", .kind = Kind::text, .description = "a layer's name"},
      }};
  return table;
}

const Table& scenario_table() {
  static const Table table{
      "scenario",
      "A pipeline on a device: sensors, stages (a DAG) and tasks on the hardware's units, for a duration",
      {
          {.path = "name",
           .kind = Kind::text,
           .required = true,
           .example = "my-pipeline",
           .description = "the scenario's name, shown in reports"},
          {.path = "description", .kind = Kind::text, .example = "\"camera -> detector\"", .description = "one line"},
          {.path = "hardware",
           .kind = Kind::path,
           .required = true,
           .example = "hardware.yaml",
           .description = "the device (a hardware file), relative to this file"},
          {.path = "networks",
           .kind = Kind::map,
           .example = "{detector: network.yaml}",
           .description = "name -> a network the stages run"},
          {.path = "networks.<network>",
           .kind = Kind::path,
           .example = "network.yaml",
           .description = "a network file (.yaml), or a model (.onnx, .tflite) imported as `framesim import` would; "
                          "or a mapping {file, precision, fusion, inputs}"},
          {.path = "networks.<network>.file",
           .kind = Kind::path,
           .required = true,
           .example = "network.yaml",
           .description = "the network or model file"},
          {.path = "networks.<network>.precision",
           .kind = Kind::text,
           .default_value = "the file's",
           .example = "fp16",
           .description = "every layer at this precision (a precision or wXaY like w4a16)"},
          {.path = "networks.<network>.fusion",
           .kind = Kind::choice,
           .choices = names_of({"auto", "explicit", "none"}),
           .default_value = "the file's",
           .example = "auto",
           .description = "the fusion mode the runtime applies"},
          {.path = "networks.<network>.inputs",
           .kind = Kind::map,
           .example = "{image: [1, 3, 224, 224]}",
           .description = "shapes for a model file's dynamic inputs"},
          {.path = "networks.<network>.inputs.<input>",
           .kind = Kind::list,
           .example = "[1, 3, 224, 224]",
           .description = "the input's shape"},
          {.path = "networks.<network>.inputs.<input>[]",
           .kind = Kind::integer,
           .min = 1,
           .max = kMaxDimension,
           .description = "one dimension"},
          {.path = "seed",
           .kind = Kind::integer,
           .min = 0,
           .default_value = "1",
           .example = "1",
           .description = "the random seed; same inputs and seed: byte-identical run folder"},
          {.path = "duration",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::positive,
           .in_template = true,
           .example = "\"10 s\"",
           .description = "how long the sensors capture; this or frames is required"},
          {.path = "frames",
           .kind = Kind::integer,
           .min = 1,
           .example = "300",
           .description = "how long the sensors capture, in frames of the first sensor; not with duration"},
          {.path = "warmup",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::non_negative,
           .default_value = "0",
           .example = "\"1 s\"",
           .description = "frames captured before this are simulated but not counted"},
          {.path = "windows",
           .kind = Kind::map,
           .default_value = "a quarter of the counted time each, at most 60 s",
           .description = "the first and last parts of the counted time, compared side by side"},
          {.path = "windows.cold",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::positive,
           .example = "\"30 s\"",
           .description = "the cold window, from the end of the warm-up"},
          {.path = "windows.sustained",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::positive,
           .example = "\"60 s\"",
           .description = "the sustained window, to the end"},
          {.path = "deadline",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::positive,
           .default_value = "the first sensor's period",
           .example = "\"33 ms\"",
           .description = "end to end, capture -> last stage"},
          {.path = "thermal",
           .kind = Kind::map,
           .description = "the enclosure: replaces values of the hardware's thermal block (which must exist)"},
          {.path = "thermal.ambient",
           .kind = Kind::quantity,
           .dimension = Dimension::Celsius,
           .default_value = "the hardware's",
           .example = "\"45 C\"",
           .description = "air temperature"},
          {.path = "thermal.ambient_trace",
           .kind = Kind::path,
           .example = "ambient.csv",
           .description = "the ambient temperature over time (a CSV time_s,temperature); not with ambient"},
          {.path = "thermal.resistance",
           .kind = Kind::quantity,
           .dimension = Dimension::KelvinPerWatt,
           .range = Range::positive,
           .default_value = "the hardware's",
           .example = "\"6 C/W\"",
           .description = "junction-to-ambient thermal resistance"},
          {.path = "thermal.capacitance",
           .kind = Kind::quantity,
           .dimension = Dimension::JoulesPerKelvin,
           .range = Range::positive,
           .default_value = "the hardware's",
           .example = "\"20 J/C\"",
           .description = "heat capacity"},
          {.path = "thermal.trip",
           .kind = Kind::quantity,
           .dimension = Dimension::Celsius,
           .default_value = "the hardware's",
           .example = "\"85 C\"",
           .description = "throttling threshold"},
          {.path = "thermal.release",
           .kind = Kind::quantity,
           .dimension = Dimension::Celsius,
           .default_value = "the hardware's",
           .example = "\"80 C\"",
           .description = "release threshold"},
          {.path = "thermal.initial",
           .kind = Kind::quantity,
           .dimension = Dimension::Celsius,
           .default_value = "ambient (a cold start)",
           .example = "\"60 C\"",
           .description = "the die temperature at the start"},
          {.path = "speed",
           .kind = Kind::quantity,
           .dimension = Dimension::MetresPerSecond,
           .range = Range::non_negative,
           .example = "\"1 m/s\"",
           .description = "the robot's speed, to turn staleness into distance"},
          {.path = "sample_period",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::positive,
           .default_value = "100 ms (the governor's period when there is one)",
           .example = "\"100 ms\"",
           .description = "the time-series step"},
          {.path = "contention_period",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::positive,
           .default_value = "10 ms with a contention curve, else every tick",
           .example = "\"10 ms\"",
           .description = "how often each unit's memory ports are reloaded from the other masters' traffic"},
          {.path = "trace", .kind = Kind::map, .description = "what the kernel-level trace covers"},
          {.path = "trace.kernels",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::non_negative,
           .default_value = "1 s",
           .example = "\"1 s\"",
           .description = "per-kernel slices in trace.json and rows in kernels.csv for the first this long"},
          {.path = "sensors", .kind = Kind::map, .required = true, .description = "name -> sensor (at least one)"},
          {.path = "sensors.<sensor>", .kind = Kind::map, .description = "a periodic sensor, or a replayed log"},
          {.path = "sensors.<sensor>.rate",
           .kind = Kind::quantity,
           .dimension = Dimension::Hertz,
           .range = Range::positive,
           .in_template = true,
           .example = "\"30 Hz\"",
           .description = "capture rate; required unless trace"},
          {.path = "sensors.<sensor>.phase",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::non_negative,
           .default_value = "0",
           .example = "\"5 ms\"",
           .description = "time of the first capture, shorter than the period"},
          {.path = "sensors.<sensor>.jitter",
           .kind = Kind::distribution,
           .dimension = Dimension::Seconds,
           .range = Range::non_negative,
           .default_value = "0",
           .fragment = &distribution_table(),
           .example = "\"1 ms\"",
           .description = "a distribution added to each capture time"},
          {.path = "sensors.<sensor>.trace",
           .kind = Kind::path,
           .example = "camera.csv",
           .description =
               "a timestamp log (timestamp_ns, time_s, ...; traces/README.md) replayed as it is from its first "
               "time, instead of rate, phase and jitter. A log of n captures over T seconds covers T n / (n - 1); "
               "a longer run is refused (the sensor would fall silent)"},
          {.path = "stages",
           .kind = Kind::map,
           .required = true,
           .description = "name -> stage (at least one); any order, they must form a DAG"},
          {.path = "stages.<stage>", .kind = Kind::map, .description = "one stage of the pipeline"},
          {.path = "stages.<stage>.unit",
           .kind = Kind::text,
           .required = true,
           .example = "gpu",
           .description = "the hardware unit it runs on"},
          {.path = "stages.<stage>.cores",
           .kind = Kind::integer,
           .min = 1,
           .default_value = "all of the unit's",
           .example = "2",
           .description = "how many of the unit's cores, or a list of core indices (pinned: partitioned scheduling)"},
          {.path = "stages.<stage>.cores[]", .kind = Kind::integer, .min = 0, .description = "a core index"},
          {.path = "stages.<stage>.inputs",
           .kind = Kind::list,
           .required = true,
           .example = "[camera]",
           .description = "the sensors or stages it reads"},
          {.path = "stages.<stage>.inputs[]", .kind = Kind::text, .description = "a sensor or stage"},
          {.path = "stages.<stage>.policy",
           .kind = Kind::choice,
           .choices = names_of({"all", "latest"}),
           .default_value = "all",
           .example = "latest",
           .description = "all: a join waits for the same frame from every input; latest: runs on each new item "
                          "of its first input and takes the newest of the others"},
          {.path = "stages.<stage>.queue", .kind = Kind::map, .description = "its input queue"},
          {.path = "stages.<stage>.queue.depth",
           .kind = Kind::integer,
           .min = 1,
           .max = 1 << 20,
           .default_value = "2",
           .example = "2",
           .description = "items it holds"},
          {.path = "stages.<stage>.queue.overflow",
           .kind = Kind::choice,
           .choices = names_of({"drop_oldest", "drop_newest"}),
           .default_value = "drop_oldest",
           .example = "drop_oldest",
           .description = "which item a full queue drops"},
          {.path = "stages.<stage>.priority",
           .kind = Kind::integer,
           .min = -1000,
           .max = 1000,
           .default_value = "0",
           .example = "1",
           .description = "higher first on a shared unit, as its scheduler says"},
          {.path = "stages.<stage>.network",
           .kind = Kind::text,
           .example = "detector",
           .description = "the network it runs (a name under networks); not with work"},
          {.path = "stages.<stage>.work",
           .kind = Kind::map,
           .fragment = &work_table(),
           .in_template = true,
           .example = "{time: \"4 ms\"}",
           .description = "work without a network (see the work keys); not with network"},
          {.path = "stages.<stage>.variability",
           .kind = Kind::distribution,
           .dimension = Dimension::Ratio,
           .range = Range::positive,
           .default_value = "1",
           .fragment = &distribution_table(),
           .example = "1",
           .description = "a per-frame multiplier on the work"},
          {.path = "stages.<stage>.slice",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::positive,
           .example = "\"12 ms\"",
           .description =
               "its share of the frame budget, judged in the verdict; not longer than the scenario\'s deadline"},
          {.path = "stages.<stage>.measured",
           .kind = Kind::path,
           .example = "detector_profile.json",
           .description = "measured layer times (traces/README.md lists the formats), replayed instead of the "
                          "roofline; the stage needs network"},
          {.path = "stages.<stage>.side_work",
           .kind = Kind::map,
           .or_list = true,
           .example = "{unit: cpu, work: {time: \"0.5 ms\"}}",
           .description = "work the stage places on another unit for every item (reformats, copies, a launch): a "
                          "mapping or a list of them; the stage waits for it"},
          {.path = "stages.<stage>.side_work.unit",
           .kind = Kind::text,
           .required = true,
           .example = "cpu",
           .description = "the unit, not the stage's own"},
          {.path = "stages.<stage>.side_work.when",
           .kind = Kind::choice,
           .choices = names_of({"before", "after"}),
           .default_value = "before",
           .example = "before",
           .description = "before or after the stage's own kernels"},
          {.path = "stages.<stage>.side_work.network",
           .kind = Kind::text,
           .example = "reformat",
           .description = "a network it runs; not with work"},
          {.path = "stages.<stage>.side_work.work",
           .kind = Kind::map,
           .fragment = &work_table(),
           .example = "{time: \"0.5 ms\"}",
           .description = "work without a network; not with network"},
          {.path = "stages.<stage>.side_work.variability",
           .kind = Kind::distribution,
           .dimension = Dimension::Ratio,
           .range = Range::positive,
           .default_value = "1",
           .fragment = &distribution_table(),
           .description = "a per-frame multiplier on the work"},
          {.path = "tasks", .kind = Kind::map, .description = "name -> periodic task (a controller, a planner)"},
          {.path = "tasks.<task>",
           .kind = Kind::map,
           .description = "a periodic task; with work each release is a job on its unit: its response time "
                          "(release -> completion) is reported against its deadline in the summary and tasks.csv"},
          {.path = "tasks.<task>.rate",
           .kind = Kind::quantity,
           .dimension = Dimension::Hertz,
           .range = Range::positive,
           .required = true,
           .example = "\"100 Hz\"",
           .description = "release rate"},
          {.path = "tasks.<task>.phase",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::non_negative,
           .default_value = "0",
           .example = "\"1 ms\"",
           .description = "time of the first release"},
          {.path = "tasks.<task>.unit",
           .kind = Kind::text,
           .example = "cpu",
           .description = "the unit it runs on (required with work)"},
          {.path = "tasks.<task>.cores",
           .kind = Kind::integer,
           .min = 1,
           .default_value = "all of the unit's",
           .example = "1",
           .description = "how many cores, or a list of core indices"},
          {.path = "tasks.<task>.cores[]", .kind = Kind::integer, .min = 0, .description = "a core index"},
          {.path = "tasks.<task>.priority",
           .kind = Kind::integer,
           .min = -1000,
           .max = 1000,
           .default_value = "0",
           .example = "2",
           .description = "higher first on a shared unit"},
          {.path = "tasks.<task>.deadline",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::positive,
           .default_value = "its period",
           .example = "\"10 ms\"",
           .description = "response time (release -> completion) it is judged against"},
          {.path = "tasks.<task>.network",
           .kind = Kind::text,
           .example = "planner",
           .description = "a network it runs; not with work"},
          {.path = "tasks.<task>.work",
           .kind = Kind::map,
           .fragment = &work_table(),
           .example = "{time: \"1 ms\"}",
           .description = "work without a network; not with network"},
          {.path = "tasks.<task>.variability",
           .kind = Kind::distribution,
           .dimension = Dimension::Ratio,
           .range = Range::positive,
           .default_value = "1",
           .fragment = &distribution_table(),
           .description = "a per-release multiplier on the work"},
          {.path = "tasks.<task>.reads",
           .kind = Kind::text,
           .example = "detector",
           .description = "the stage whose newest result it reads (staleness is measured there)"},
          {.path = "background",
           .kind = Kind::map,
           .description = "name -> traffic from a master outside the pipeline (display, DMA, another process)"},
          {.path = "background.<name>", .kind = Kind::map, .description = "one source of traffic"},
          {.path = "background.<name>.memory",
           .kind = Kind::text,
           .required = true,
           .example = "dram",
           .description = "the memory level it loads"},
          {.path = "background.<name>.rate",
           .kind = Kind::quantity,
           .dimension = Dimension::BytesPerSecond,
           .range = Range::positive,
           .example = "\"2 GB/s\"",
           .description = "a steady rate; required unless profile"},
          {.path = "background.<name>.profile",
           .kind = Kind::path,
           .example = "display.csv",
           .description = "the rate over time (a CSV time_s,rate, steps); not with rate"},
          {.path = "schedulers",
           .kind = Kind::map,
           .description = "unit -> a scheduler replacing the hardware file's for this scenario"},
          {.path = "schedulers.<unit>",
           .kind = Kind::choice,
           .choices = scheduling_policies(),
           .fragment = &scheduler_table(),
           .example = "fifo",
           .description = "a policy, or a mapping (see the scheduler keys)"},
          {.path = "chains",
           .kind = Kind::map,
           .description = "name -> a cause-effect chain, reported as distributions: data age (actuation - capture of "
                          "the sample behind it) and reaction time (capture -> the first actuation that reflects that "
                          "sample or a newer one)"},
          {.path = "chains.<chain>",
           .kind = Kind::list,
           .example = "[camera, detector, planner]",
           .description = "a sensor, the stages it flows through (each reading the one before), optionally the "
                          "task that reads the last stage"},
          {.path = "chains.<chain>[]", .kind = Kind::text, .description = "a sensor, stage or task"},
      }};
  return table;
}

const Table& sweep_table() {
  static const Table table{
      "sweep",
      "One scenario run at many points of a design space (`framesim sweep`)",
      {
          {.path = "name",
           .kind = Kind::text,
           .required = true,
           .example = "my-sweep",
           .description = "the sweep's name"},
          {.path = "description",
           .kind = Kind::text,
           .example = "\"bandwidth x precision\"",
           .description = "one line"},
          {.path = "scenario",
           .kind = Kind::path,
           .required = true,
           .example = "scenario.yaml",
           .description = "the scenario every point runs, relative to this file"},
          {.path = "duration",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::positive,
           .default_value = "the scenario's",
           .example = "\"6 s\"",
           .description = "--duration for every point"},
          {.path = "mode",
           .kind = Kind::choice,
           .choices = names_of({"grid", "zip", "latin_hypercube"}),
           .default_value = "grid",
           .example = "grid",
           .description = "grid: every combination (the last axis varies fastest); zip: point i takes value i of "
                          "every axis; latin_hypercube: samples points, each axis cut into samples strata used once"},
          {.path = "samples",
           .kind = Kind::integer,
           .min = 1,
           .max = static_cast<std::int64_t>(kMaxSweepPoints),
           .example = "24",
           .description = "how many points (mode latin_hypercube only, and required there)"},
          {.path = "seed",
           .kind = Kind::integer,
           .min = 0,
           .default_value = "1",
           .example = "1",
           .description = "the Latin hypercube's random seed"},
          {.path = "axes",
           .kind = Kind::map,
           .required = true,
           .example = "{sensors.camera.rate: [\"30 Hz\", \"60 Hz\"]}",
           .description = "key path -> values. A key path is what `run --set` takes: a scenario key "
                          "(sensors.camera.rate), hardware.PATH in the hardware file, network.NAME.PATH in a "
                          "network's file"},
          {.path = "axes.<key_path>",
           .kind = Kind::list,
           .example = "[\"30 Hz\", \"60 Hz\"]",
           .description = "the values, or a mapping {values} or {range, scale, integer}"},
          {.path = "axes.<key_path>[]", .kind = Kind::any, .description = "one value (any YAML)"},
          {.path = "axes.<key_path>.values",
           .kind = Kind::list,
           .example = "[fp16, int8]",
           .description = "the values; not with range"},
          {.path = "axes.<key_path>.values[]", .kind = Kind::any, .description = "one value (any YAML)"},
          {.path = "axes.<key_path>.range",
           .kind = Kind::list,
           .example = "[\"34 GB/s\", \"68 GB/s\"]",
           .description = "[low, high]: two quantities of one kind or two numbers, low below high (mode "
                          "latin_hypercube)"},
          {.path = "axes.<key_path>.range[]", .kind = Kind::text, .description = "one end"},
          {.path = "axes.<key_path>.scale",
           .kind = Kind::choice,
           .choices = names_of({"linear", "log"}),
           .default_value = "linear",
           .example = "log",
           .description = "how a range is sampled (log: positive range)"},
          {.path = "axes.<key_path>.integer",
           .kind = Kind::boolean,
           .default_value = "false",
           .example = "true",
           .description = "round each sample of a range"},
      }};
  return table;
}

std::vector<const Table*> file_tables() {
  return {&hardware_table(), &network_table(), &scenario_table(), &sweep_table()};
}

std::vector<const Table*> fragment_tables() {
  return {&scheduler_table(), &distribution_table(), &work_table(), &repeat_table()};
}

const Table* file_table(std::string_view name) {
  for (const Table* t : file_tables())
    if (t->name == name) return t;
  return nullptr;
}

std::optional<Match> match(const Table& table, std::string_view concrete_path) {
  const Table* current = &table;
  std::string pattern;
  const Key* key = nullptr;
  const auto parts = split(concrete_path);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    // A `<key_path>` (a sweep axis) is itself a dotted path: it takes every component up to the axis' own keys.
    if (key && key->name() == "<key_path>" && part != "[]" && !current->find(key->path + "." + part)) continue;
    if (key && key->fragment && part != "[]") {
      current = key->fragment;
      pattern.clear();
    }
    const Key* next = nullptr;
    const Key* named = nullptr;
    for (const Key* child : current->children(pattern)) {
      if (child->name() == part) next = child;
      if (child->named() && part != "[]") {
        const auto allowed = placeholder_names(child->name());
        if (!allowed || std::find(allowed->begin(), allowed->end(), part) != allowed->end()) named = child;
      }
    }
    if (!next) next = named;
    // A mapping that may also be a list of such mappings (side_work): its items are the mapping.
    if (!next && part == "[]" && key && key->or_list) continue;
    if (!next) return std::nullopt;
    key = next;
    pattern = key->path;
  }
  if (!key) return std::nullopt;
  return Match{current, key};
}

std::string value_summary(const Key& key) {
  std::string out;
  switch (key.kind) {
    case Kind::quantity:
    case Kind::distribution:
      if (key.dimension == Dimension::Ratio) {
        out = "a number";
      } else {
        out = fmt::format("{} like \"{}\"", core::with_article(core::dimension_name(key.dimension)),
                          core::dimension_example(key.dimension));
      }
      if (key.kind == Kind::distribution) out += " or a distribution";
      break;
    case Kind::number: out = "a number"; break;
    case Kind::integer:
      if (key.min != INT64_MIN && key.max != INT64_MAX) out = fmt::format("an integer {}..{}", key.min, key.max);
      else if (key.min != INT64_MIN) out = fmt::format("an integer >= {}", key.min);
      else out = "an integer";
      break;
    case Kind::choice: out = "one of " + core::join_list(key.choices, ", "); break;
    case Kind::text: out = "text"; break;
    case Kind::path: out = "a file path"; break;
    case Kind::boolean: out = "true or false"; break;
    case Kind::list: out = "a list"; break;
    case Kind::map: out = key.or_list ? "a mapping or a list of mappings" : "a mapping"; break;
    case Kind::any: out = "any value"; break;
  }
  if ((key.kind == Kind::number || key.kind == Kind::quantity || key.kind == Kind::distribution) &&
      key.range != Range::any)
    out += fmt::format(", {}", range_text(key.range));
  return out;
}

std::vector<Flat> flatten(const Table& table) {
  std::vector<Flat> out;
  auto walk = [&](auto&& self, std::string_view pattern) -> void {
    for (const Key* k : table.children(pattern)) {
      out.push_back({k->path, k});
      self(self, k->path);
    }
  };
  walk(walk, "");
  return out;
}

}  // namespace framesim::config::schema
