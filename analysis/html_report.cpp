#include "run_analysis.hpp"

namespace framesim::analysis {
std::string RunAnalysis::html_report(const nlohmann::json&) const { return "<!DOCTYPE html><html></html>"; }
}  // namespace framesim::analysis
