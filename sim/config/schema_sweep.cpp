// Key declarations of sweep files (the axes over a scenario's keys).
#include "config/schema.hpp"

#include <fmt/format.h>

#include "config/schema_tables.hpp"
#include "config/sweep.hpp"
#include "model/hardware.hpp"
#include "model/network.hpp"
#include "model/op_class.hpp"
#include "model/precision.hpp"
#include "model/scenario.hpp"

// The tables name only the fields a key sets (designated initializers); the others keep their defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace framesim::config::schema {

using core::Dimension;
using namespace tables;

// Each table lists a mapping's keys in the order the reader's messages name them ("expected a mapping with keys

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
           .default_note = "the scenario's",
           .example = "\"6 s\"",
           .description = "--duration for every point"},
          {.path = "mode",
           .kind = Kind::choice,
           .choices = kSweepModes.names(),
           .fallback = "grid",
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
           .fallback = "1",
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
           .choices = kAxisScales.names(),
           .default_note = "linear",
           .example = "log",
           .description = "how a range is sampled (log: positive range)"},
          {.path = "axes.<key_path>.integer",
           .kind = Kind::boolean,
           .default_note = "false",
           .example = "true",
           .description = "round each sample of a range"},
      }};
  return table;
}

}  // namespace framesim::config::schema
