// Real models in: ONNX and TFLite files become the same NetworkSpec a network YAML gives, so the budget, the
// engine and `framesim import -o network.yaml` treat them alike.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/network.hpp"

namespace framesim::trace {

struct ImportOptions {
  /// Shapes for graph inputs whose dimensions are dynamic (or to override them): name -> shape.
  std::map<std::string, model::Shape> input_shapes;
};

struct ImportResult {
  model::NetworkSpec network;
  /// Ops framesim does not know (costed as data movement of their tensors), dropped nodes, assumptions.
  std::vector<std::string> warnings;
};

/// Reads an ONNX model. Shapes come from ONNX shape inference; each node becomes a layer of framesim's op set
/// (see onnx_import.cpp for the mapping); precisions come from initializer types. Throws core::UserError naming
/// the file (and node) on a problem, e.g. a dynamic dimension without --input.
ImportResult import_onnx(const std::filesystem::path& path, const ImportOptions& options = {});

/// Reads a TFLite flatbuffer (the schema subset in tflite_schema.fbs); likewise.
ImportResult import_tflite(const std::filesystem::path& path, const ImportOptions& options = {});

/// By extension (.onnx, .tflite).
ImportResult import_model(const std::filesystem::path& path, const ImportOptions& options = {});

}  // namespace framesim::trace
