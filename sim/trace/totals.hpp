// Whole-network measurements: the numbers users actually have (vendor tables, benchmark suites, benchmark_model
// totals, a stopwatch). One CSV format, `#` comment lines allowed, a header naming the columns:
//
//   network,precision,operating_point,latency,energy[,hardware,unit,set,id,device,mode,source,runtime]
//   ../networks/mobilenet_v1_224.yaml,int8,500MHz,"2.4 ms",,../../hardware/coral_edge_tpu.yaml,edgetpu,calibration,...
//
// network: a network YAML (or .onnx/.tflite), relative to the table's folder. precision: every layer's
// precision (empty: the network's own). operating_point: the unit's operating point by name, or a clock ("280 MHz",
// matched to the point of that frequency); empty: nominal. latency: per inference, with its unit. energy: per
// inference (optional). hardware, unit: the device (a validation suite names them per row; `framesim calibrate`
// takes the hardware from its command line). set: calibration or held_out. id, device, mode, source: text for
// reports (where the figure was published, on what, in which power mode). runtime: the software stack that ran
// it ("x-cube-ai-8.0", "tensorrt-8.5"): `framesim validate` fits one runtime profile per device and runtime.
// scope: network (default: the time is the network's alone) or application (a whole application's time, pre- and
// post-processing included); an application row names in `stages` a scenario whose stages are that
// application's pipeline, is never fitted on (set held_out) and is reported apart from the network rows.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace framesim::trace {

struct TotalRow {
  int line = 0;  // in the table, for messages
  std::string id;
  std::filesystem::path network;   // resolved against the table's folder
  std::string precision;           // as written ("" = the network's own)
  std::string operating_point;     // a point's name, or "" (nominal)
  std::optional<double> clock_Hz;  // when the column held a frequency instead of a name
  double latency_s = 0;
  std::optional<double> energy_J;
  std::optional<std::filesystem::path> hardware;  // resolved against the table's folder
  std::string unit;
  bool held_out = false;  // set: held_out (else calibration)
  std::string device, mode, source;
  std::string runtime;                          // "" when not said
  bool application = false;                     // scope: application (else network)
  std::optional<std::filesystem::path> stages;  // scope application: the scenario of its stages (resolved)
};

struct TotalsTable {
  std::string display_path;
  std::vector<TotalRow> rows;
};

/// Reads a totals table; every problem (unknown column, missing latency, bad quantity, unknown set) is collected
/// and thrown together as core::UserError with file:line:column and the column name.
TotalsTable read_totals(const std::filesystem::path& path);

}  // namespace framesim::trace
