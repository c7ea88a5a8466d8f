// Key declarations of map files: the search space of `framesim map` (which unit, split, precision and
// priority each stage may take, which clock cap each unit) and what the search optimises.
#include "config/schema.hpp"

#include "config/schema_tables.hpp"

// The tables name only the fields a key sets (designated initializers); the others keep their defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace framesim::config::schema {

using core::Dimension;
using namespace tables;

const Table& map_table() {
  static const Table table{
      "map",
      "Where a scenario's stages may run, searched by simulation (`framesim map SCENARIO --space FILE`)",
      {
          {.path = "name", .kind = Kind::text, .example = "orin-two-networks", .description = "the search's name"},
          {.path = "objective",
           .kind = Kind::choice,
           .choices = names_of({"energy", "p99"}),
           .required = true,
           .example = "energy",
           .description = "energy: the least energy per frame among the mappings whose every path (a sensor to a "
                          "last stage) has its p99 within the deadline in the sustained window, without drops; "
                          "p99: the least worst-path p99 in the sustained window"},
          {.path = "budget",
           .kind = Kind::integer,
           .min = 1,
           .max = 10000,
           .fallback = "50",
           .example = "40",
           .description = "simulations at most (the baselines included)"},
          {.path = "strategy",
           .kind = Kind::choice,
           .choices = names_of({"auto", "exhaustive", "local", "genetic"}),
           .fallback = "auto",
           .example = "auto",
           .description = "exhaustive: every mapping the static pass keeps; local: best-improvement local search "
                          "from the statically best mappings, one stage changed at a time; genetic: a population "
                          "seeded by the statically best mappings (budget / 4 of them, 2 to 16), bred by "
                          "tournament, crossover stage by stage and a mutation of one stage, the best surviving; "
                          "auto: exhaustive when the kept mappings fit the budget, else local"},
          {.path = "seed",
           .kind = Kind::integer,
           .min = 0,
           .max = 4294967295,
           .fallback = "1",
           .example = "7",
           .description = "the genetic search's draws: the same seed, the same search"},
          {.path = "duration",
           .kind = Kind::quantity,
           .dimension = Dimension::Seconds,
           .range = Range::positive,
           .default_note = "the scenario's",
           .example = "\"10 s\"",
           .description = "--duration for every simulation"},
          {.path = "stages",
           .kind = Kind::map,
           .in_template = true,
           .description = "stage -> its choices; a stage not listed keeps what the scenario says (this, "
                          "clock_caps or both)"},
          {.path = "stages.<stage>",
           .kind = Kind::map,
           .in_template = true,
           .description = "the choices of one stage of the scenario"},
          {.path = "stages.<stage>.units",
           .kind = Kind::list,
           .default_note = "the scenario's unit",
           .in_template = true,
           .example = "[gpu, dla0]",
           .description = "units it may run on"},
          {.path = "stages.<stage>.units[]", .kind = Kind::text, .description = "a unit of the hardware"},
          {.path = "stages.<stage>.splits",
           .kind = Kind::list,
           .default_note = "none",
           .example = "[12, 30]",
           .description = "cut points to try besides no split: layers from the cut on run on another of its units"},
          {.path = "stages.<stage>.splits[]",
           .kind = Kind::any,
           .description = "a layer of its network: index (0 is the first) or name"},
          {.path = "stages.<stage>.precisions",
           .kind = Kind::list,
           .default_note = "the scenario's",
           .example = "[int8, fp16]",
           .description = "precisions it may run its network in (stages.<stage>.precision)"},
          {.path = "stages.<stage>.precisions[]", .kind = Kind::text, .description = "a precision"},
          {.path = "stages.<stage>.priorities",
           .kind = Kind::list,
           .default_note = "the scenario's",
           .example = "[0, 1]",
           .description = "priorities it may take on its unit's scheduler (stages.<stage>.priority, the scheduler's "
                          "semantics); the static pass does not see them"},
          {.path = "stages.<stage>.priorities[]",
           .kind = Kind::integer,
           .min = -1000,
           .max = 1000,
           .description = "a priority"},
          {.path = "clock_caps",
           .kind = Kind::map,
           .description = "unit -> the clock caps it may run under (scenario clock_caps.<unit>: the fastest "
                          "operating point the unit starts at and the governor never exceeds); a unit not listed "
                          "keeps the scenario's cap or none. The static pass takes each stage's floor at its "
                          "unit's capped clock and its energy at that point's voltage and static power"},
          {.path = "clock_caps.<unit>",
           .kind = Kind::list,
           .example = "[625MHz-15W, 421MHz-7W]",
           .description = "caps to try, one per mapping (list the nominal point to try the unit uncapped); the "
                          "unit needs two operating points or more"},
          {.path = "clock_caps.<unit>[]",
           .kind = Kind::text,
           .description = "one of the unit's operating points: its name, or its frequency within 0.5 %"},
      }};
  return table;
}

}  // namespace framesim::config::schema
