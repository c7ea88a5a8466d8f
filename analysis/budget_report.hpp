// Writers for the static budget: the terminal report (the seed's six steps; budget_report.cpp), JSON
// (budget_json.cpp), and the stacked roofline as SVG with every kernel as a point and the HTML page
// (budget_html.cpp).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "model/budget.hpp"

namespace framesim::analysis {

std::string budget_text(const model::BudgetReport& r, const model::HardwareSpec& hw, const model::NetworkSpec& net);
nlohmann::json budget_json(const model::BudgetReport& r, const model::HardwareSpec& hw, const model::NetworkSpec& net);
/// report.html of a budget: the verdict, the roofline, the kernels costliest first and the text report.
std::string budget_html(const model::BudgetReport& r, const model::HardwareSpec& hw, const model::NetworkSpec& net);
std::string roofline_svg(const model::BudgetReport& r, const model::HardwareSpec& hw, const model::NetworkSpec& net);

}  // namespace framesim::analysis
