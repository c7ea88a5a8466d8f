// Key declarations of runtime profiles (model/runtime.hpp): a runtime's efficiencies, launch cost, fusion and
// weight placement, laid over one hardware file.
#include "config/schema.hpp"

#include "config/schema_tables.hpp"
#include "model/runtime.hpp"

// The tables name only the fields a key sets (designated initializers); the others keep their defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace framesim::config::schema {

using core::Dimension;

const Table& runtime_table() {
  static const Table table{
      "runtime",
      "The efficiencies, launch and output costs, fusion and weight placement one software stack (TensorRT, TFLite "
      "and a delegate, X-CUBE-AI, TFLM, microTVM, Plumerai, the Edge TPU compiler) gives one hardware file's units",
      {
          {.path = "runtime",
           .kind = Kind::text,
           .required = true,
           .example = "x-cube-ai-8.0",
           .description = "the runtime's name (and version), shown beside every estimate made with the profile"},
          {.path = "description", .kind = Kind::text, .example = "\"STM32Cube.AI 8.0\"", .description = "one line"},
          {.path = "source",
           .kind = Kind::text,
           .description = "where its figures come from (a fit: which measurements) (free text)"},
          {.path = "hardware",
           .kind = Kind::text,
           .required = true,
           .example = "stm32h7a3",
           .description = "the `name:` of the hardware file it was made for; laying it over another is refused"},
          {.path = "units",
           .kind = Kind::map,
           .required = true,
           .description = "unit name (of the hardware file) -> what the runtime sets on it"},
          {.path = "units.<unit>", .kind = Kind::map, .description = "one unit"},
          {.path = "units.<unit>.efficiency",
           .kind = Kind::number,
           .range = Range::unit_interval,
           .default_note = "the hardware file's",
           .in_template = true,
           .example = "0.4",
           .description = "the runtime's soft roof, as in a hardware file (a number, or a mapping of precisions, "
                          "all and by_op); given, it replaces the file's whole efficiency table of the unit"},
          {.path = "units.<unit>.efficiency.<precision>",
           .kind = Kind::number,
           .range = Range::unit_interval,
           .example = "0.4",
           .description = "the efficiency in that precision"},
          {.path = "units.<unit>.efficiency.all",
           .kind = Kind::number,
           .range = Range::unit_interval,
           .example = "0.4",
           .description = "every precision the mapping does not name"},
          {.path = "units.<unit>.efficiency.by_op",
           .kind = Kind::map,
           .example = "{depthwise: 0.2}",
           .description = "op class -> efficiency (conv, depthwise, matmul, elementwise, pooling, data_movement)"},
          {.path = "units.<unit>.efficiency.by_op.<op_class>",
           .kind = Kind::number,
           .range = Range::unit_interval,
           .example = "0.2",
           .description = "that class's efficiency: a number, or a mapping of precisions"},
          {.path = "units.<unit>.efficiency.by_op.<op_class>.<precision>",
           .kind = Kind::number,
           .range = Range::unit_interval,
           .example = "0.2",
           .description = "that class's efficiency in that precision"},
          {.path = "units.<unit>.dispatch_overhead",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::non_negative,
           .default_note = "the hardware file's",
           .example = "\"5 us\"",
           .description = "the runtime's fixed cost per kernel launch, at most 1 s"},
          {.path = "units.<unit>.output_cost",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::non_negative,
           .default_note = "the hardware file's",
           .example = "\"90 ns\"",
           .description = "the runtime's cost per output element of a conv, depthwise or matmul layer (requantise, "
                          "clamp, store) at the first operating point, scaling with 1 / frequency: what makes a "
                          "short reduction (a depthwise, a thin pointwise) slower per op than a long one. The "
                          "estimate's only; at most 1 us"},
          {.path = "units.<unit>.weights",
           .kind = Kind::text,
           .default_note = "the capacity rule (the first on-chip level holding every weight, else the last level)",
           .example = "flash",
           .description = "the memory level (on the unit's path) the runtime keeps the weights in, e.g. flash for "
                          "an MCU runtime that reads them in place"},
          {.path = "units.<unit>.weight_caching",
           .kind = Kind::choice,
           .choices = model::kWeightCaching.names(),
           .default_note = "the hardware file's",
           .example = "partial",
           .description = "as in a hardware file: `partial` when the runtime keeps on chip as many weights as fit "
                          "and streams only the rest (the Edge TPU compiler), `whole` when it streams them all "
                          "unless every one fits"},
          {.path = "units.<unit>.fusion",
           .kind = Kind::choice,
           .choices = model::kRuntimeFusion.names(),
           .default_note = "auto",
           .example = "none",
           .description = "`auto`: the network's fusion (epilogues, folded batchnorm) as written; `none`: the "
                          "runtime runs every layer as its own kernel"},
          {.path = "units.<unit>.source", .kind = Kind::text, .description = "free text"},
      }};
  return table;
}

}  // namespace framesim::config::schema
