// Key declarations of network files (and the repeat-block fragment).
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

namespace {

/// The network's name, description, source, default precision and fusion.
std::vector<Key> network_file_keys() {
  return {
      {.path = "name",
       .kind = Kind::text,
       .required = true,
       .example = "my-net",
       .description = "the network's name, shown in reports"},
      {.path = "description", .kind = Kind::text, .example = "\"a small CNN\"", .description = "one line"},
      {.path = "source", .kind = Kind::text, .description = "where it comes from (free text)"},
      {.path = "precision",
       .kind = Kind::text,
       .default_note = "fp32",
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
       .default_note = "the activations'",
       .example = "fp16",
       .description = "the arithmetic's precision"},
      {.path = "fusion",
       .kind = Kind::choice,
       .choices = model::kFusionModes.names(),
       .default_note = "auto",
       .example = "auto",
       .description = "auto: elementwise epilogues join their producer, and groups; explicit: only the groups "
                      "given (group); none: every layer alone"},
  };
}

/// The network's input tensors: shapes and precisions.
std::vector<Key> network_input_keys() {
  return {
      {.path = "inputs",
       .kind = Kind::map,
       .required = true,
       .example = "{image: [1, 3, 224, 224]}",
       .description = "name -> input tensor ({} for a network whose layers read only their weights)"},
      {.path = "inputs.<input>",
       .kind = Kind::list,
       .example = "[1, 3, 224, 224]",
       .description = "the tensor's shape ([] for a scalar), or a mapping {shape, precision}"},
      {.path = "inputs.<input>[]",
       .kind = Kind::integer,
       .min = 1,
       .max = kMaxDimension,
       .description = "one dimension"},
      {.path = "inputs.<input>.shape",
       .kind = Kind::list,
       .required = true,
       .example = "[1, 3, 224, 224]",
       .description = "the tensor's shape ([] for a scalar)"},
      {.path = "inputs.<input>.shape[]",
       .kind = Kind::integer,
       .min = 1,
       .max = kMaxDimension,
       .description = "one dimension"},
      {.path = "inputs.<input>.precision",
       .kind = Kind::choice,
       .choices = model::precision_names(),
       .default_note = "the network's activations'",
       .example = "int8",
       .description = "the tensor's precision"},
  };
}

/// The layers (each one's op, inputs, precision and fusion group) and the outputs.
std::vector<Key> network_layer_keys() {
  return {
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
       .default_note = "OPN (the op and its index)",
       .example = "conv1",
       .description = "the layer's name, unique; later layers read it by this name"},
      {.path = "layers[].op",
       .kind = Kind::text,
       .required = true,
       .example = "conv2d",
       .description = "the operation (`framesim ops` lists them)"},
      {.path = "layers[].input",
       .kind = Kind::text,
       .default_note = "the previous layer's output",
       .example = "image",
       .description = "the tensor or layer it reads; not with inputs"},
      {.path = "layers[].inputs",
       .kind = Kind::list,
       .example = "[a, b]",
       .description = "the tensors or layers it reads (add, concat, matmul, ...); not with input"},
      {.path = "layers[].inputs[]", .kind = Kind::text, .description = "a tensor or layer name"},
      {.path = "layers[].precision",
       .kind = Kind::text,
       .default_note = "the network's",
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
       .default_note = "the activations'",
       .example = "fp16",
       .description = "the arithmetic's precision"},
      {.path = "layers[].group",
       .kind = Kind::text,
       .example = "block1",
       .description = "fusion group: consecutive layers with one group run as one kernel (fusion auto or "
                      "explicit)"},
      {.path = "outputs",
       .kind = Kind::list,
       .default_note = "every layer output nothing reads",
       .example = "[logits]",
       .description = "the network's outputs; when given, a layer output nothing reads and not listed is an error"},
      {.path = "outputs[]", .kind = Kind::text, .description = "a layer's name"},
  };
}

}  // namespace

const Table& network_table() {
  static const Table table{
      "network",
      "A network as layers: each layer's op and parameters give its operations and bytes (`framesim ops` lists "
      "the ops and their parameters)",
      joined({network_file_keys(), network_input_keys(), network_layer_keys()})};
  return table;
}

}  // namespace framesim::config::schema
