// Whole-network measurements (trace/totals.hpp) turned into calibration samples, shared by `framesim calibrate
// --totals` and `framesim validate`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/calibrate.hpp"
#include "model/hardware.hpp"
#include "model/network.hpp"
#include "trace/totals.hpp"

namespace framesim::cli {

/// Networks loaded once per (file, precision): a table names the same network on several devices.
class NetworkCache {
 public:
  const model::NetworkSpec& get(const std::string& path, const std::string& precision);

 private:
  std::map<std::pair<std::string, std::string>, model::NetworkSpec> nets_;
};

/// The sample of one row on `unit` of `hw`: the network's kernels, the row's operating point (by name, or the
/// point whose frequency is the row's clock), the measured latency and energy. Throws core::UserError naming
/// the table, line and column for an operating point the unit does not have.
model::TotalSample total_sample(const trace::TotalsTable& table, const trace::TotalRow& row,
                                const model::HardwareSpec& hw, std::size_t unit, const model::NetworkSpec& net);

/// The fitted parameters as a table (prior, fitted, what the data say about each), and the fit's warnings.
std::string fitted_parameters_text(const model::HardwareSpec& hw, const model::TotalsFit& fit);

}  // namespace framesim::cli
