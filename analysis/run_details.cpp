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

}  // namespace framesim::analysis
