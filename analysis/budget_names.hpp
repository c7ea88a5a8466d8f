// What the budget's writers share (budget_report.cpp, budget_json.cpp, budget_html.cpp): the names of a budget's
// limits, its operating point and a kernel's ops. Internal to analysis/.
#pragma once

#include <string>

#include "model/budget.hpp"

namespace framesim::analysis {

/// What binds kernel time `t`: "compute", a memory level's name, or "overhead".
std::string limit_name(const model::KernelTime& t, const model::HardwareSpec& hw);
/// What binds the whole network: "compute-bound", "<level>-bound" or "overhead-bound".
std::string overall_limit(const model::BudgetReport& r, const model::HardwareSpec& hw);
/// The operating point the budget was made at.
const model::OperatingPoint& op_point(const model::BudgetReport& r, const model::HardwareSpec& hw);
/// The ops of a kernel's layers, joined by "+" ("conv+relu").
std::string kernel_op(const model::Kernel& k, const model::NetworkSpec& net);

}  // namespace framesim::analysis
