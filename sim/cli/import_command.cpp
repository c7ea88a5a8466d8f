// `framesim import MODEL [--input NAME=1x3x224x224]... [-o network.yaml]`: an ONNX or TFLite model as a
// framesim network (YAML), with what could not be mapped listed.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/console.hpp"
#include "config/network_writer.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/text.hpp"
#include "trace/import.hpp"

namespace framesim::cli {

namespace {

struct ImportArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::string out;
};

}  // namespace

std::pair<std::string, model::Shape> parse_input(const std::string& text) {
  const auto eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw core::UserError(fmt::format("--input: expected NAME=1x3x224x224, got \"{}\"", text));
  model::Shape shape;
  std::string dims = text.substr(eq + 1);
  std::size_t start = 0;
  while (start <= dims.size()) {
    const auto x = dims.find('x', start);
    const std::string part = dims.substr(start, x == std::string::npos ? std::string::npos : x - start);
    try {
      std::size_t used = 0;
      const long long d = std::stoll(part, &used);
      if (used != part.size() || d <= 0) throw std::invalid_argument(part);
      shape.push_back(d);
    } catch (const std::exception&) {
      throw core::UserError(fmt::format("--input: \"{}\" in \"{}\" is not a positive dimension", part, text));
    }
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return {text.substr(0, eq), shape};
}

namespace {

int run_import(const ImportArgs& a) {
  std::error_code ec;
  if (!a.out.empty() && std::filesystem::is_directory(a.out, ec))
    throw core::UserError(
        fmt::format("-o: {} is a directory; give the network file to write, e.g. {}/network.yaml", a.out, a.out));
  trace::ImportOptions options;
  for (const auto& i : a.inputs) options.input_shapes.insert(parse_input(i));
  const trace::ImportResult result = trace::import_model(a.model, options);
  const auto& net = result.network;
  std::vector<std::string> header{fmt::format("Imported by `framesim import` from {}: {}, {} parameters, {} ops.",
                                              a.model, core::counted(net.layers.size(), "layer"), net.total_params(),
                                              net.total_ops())};
  for (const auto& w : result.warnings) header.push_back("warning: " + w);
  const std::string yaml = config::network_to_yaml(net, header);
  std::vector<std::string> lines;
  for (const auto& w : result.warnings) lines.push_back("warning: " + w);
  print_warnings(lines);
  if (a.out.empty()) {
    std::cout << yaml;
  } else {
    core::write_file_atomic(a.out, yaml);
    print_note(fmt::format("{}: {} ({}) written to {}", a.model, core::counted(net.layers.size(), "layer"),
                           core::counted(result.warnings.size(), "warning"), a.out));
  }
  return 0;
}

}  // namespace

Command add_import_command(CLI::App& app) {
  auto args = std::make_shared<ImportArgs>();
  auto* sub = app.add_subcommand("import", "turn an ONNX or TFLite model into a framesim network (YAML)");
  sub->add_option("model", args->model, "model file (.onnx or .tflite)")->required();
  sub->add_option("--input", args->inputs,
                  "shape of a graph input with dynamic dimensions: NAME=1x3x224x224 (repeatable)");
  sub->add_option("-o,--out", args->out, "write the network YAML here (default: print it)");
  return {sub, [args] { return run_import(*args); }};
}

}  // namespace framesim::cli
