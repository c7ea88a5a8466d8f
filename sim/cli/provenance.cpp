#include <filesystem>
#include <map>
#include <set>

#include "cli/commands.hpp"
#include "core/files.hpp"
#include "summary_fields.hpp"

namespace framesim::cli {

namespace {

std::vector<std::string>& stored_command_line() {
  static std::vector<std::string> line;
  return line;
}

}  // namespace

void set_command_line(int argc, char** argv) {
  auto& line = stored_command_line();
  line.assign({"framesim"});
  for (int i = 1; i < argc; ++i) line.emplace_back(argv[i]);
}

namespace {
/// SHA-256 of a file's bytes, remembered with them: a sweep's points (children of one process) hash the files
/// they share once, in the sweep (the same bytes, the same digest).
std::string digest_of(const std::string& file, const std::string& bytes) {
  static std::map<std::string, std::pair<std::string, std::string>> known;  // file -> (bytes, digest)
  auto& [kept, digest] = known[file];
  if (digest.empty() || kept != bytes) {
    kept = bytes;
    digest = core::sha256_hex(bytes);
  }
  return digest;
}
}  // namespace

analysis::Provenance provenance_record(const std::vector<std::string>& files,
                                       const std::vector<config::Override>& overrides) {
  // The output folder is written as <out>: the same inputs give byte-identical folders wherever they are written.
  analysis::Provenance p;
  p.framesim_version = FRAMESIM_VERSION;
  const auto& line = stored_command_line();
  for (std::size_t i = 0; i < line.size(); ++i) {
    const std::string& a = line[i];
    p.command_line.push_back(a.rfind("--out=", 0) == 0 ? "--out=<out>" : a);
    if ((a == "-o" || a == "--out") && i + 1 < line.size()) {
      p.command_line.emplace_back("<out>");
      ++i;
    }
  }
  for (const auto& o : overrides) p.overrides.push_back({o.path, o.value_yaml});
  std::set<std::string> seen;
  for (const auto& f : files) {
    if (!seen.insert(f).second) continue;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(f, ec)) continue;
    const std::string bytes = core::read_file(f, core::kMaxModelFileBytes);  // models as well as YAML
    p.inputs.push_back({f, digest_of(f, bytes), bytes.size()});
  }
  return p;
}

nlohmann::json provenance(const std::vector<std::string>& files, const std::vector<config::Override>& overrides) {
  nlohmann::json j = nlohmann::json::object();
  analysis::write_fields(j, provenance_record(files, overrides));
  return j;
}

}  // namespace framesim::cli
