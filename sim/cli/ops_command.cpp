// `framesim ops`: the operation catalogue with each op's parameters (self-documenting).
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "model/network.hpp"

namespace framesim::cli {

Command add_ops_command(CLI::App& app) {
  auto* sub = app.add_subcommand("ops", "list the network operations framesim knows and their parameters");
  return {sub, [] {
            for (const auto& op : model::op_catalogue()) {
              std::string inputs = op.max_inputs < 0 ? fmt::format("{}+", op.min_inputs)
                                   : op.min_inputs == op.max_inputs
                                       ? fmt::format("{}", op.min_inputs)
                                       : fmt::format("{}-{}", op.min_inputs, op.max_inputs);
              std::cout << fmt::format("{:<16} {} (inputs: {})\n", op.name, op.description, inputs);
              for (const auto& p : op.params)
                std::cout << fmt::format("    {:<16} {}{}: {}\n", p.key, model::param_type_name(p.type),
                                         p.required ? ", required" : "", p.description);
            }
            return 0;
          }};
}

}  // namespace framesim::cli
