// The detail parts of a run's summary (run_details.hpp), read and written through their one declaration.
#include "run_details.hpp"

#include "summary_fields.hpp"

namespace framesim::analysis {

RunDetails read_run_details(const nlohmann::json& summary, const std::string& file) {
  RunDetails d;
  read_fields(summary, "", file, d);
  return d;
}

void write_run_details(nlohmann::json& summary, const RunDetails& d) { write_fields(summary, d); }

QuantileDetails quantile_details(const Quantile& q) { return {q.p, q.value, q.count, {q.lo, q.hi}, q.few_samples()}; }

std::map<std::string, double> LatencyParts::by_key() const {
  nlohmann::json j = nlohmann::json::object();
  write_fields(j, *this);
  return j.get<std::map<std::string, double>>();
}

}  // namespace framesim::analysis
