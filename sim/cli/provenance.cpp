#include <filesystem>
#include <map>
#include <set>

#include "cli/commands.hpp"
#include "core/files.hpp"

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

nlohmann::json provenance(const std::vector<std::string>& files, const std::vector<config::Override>& overrides) {
  // The output folder is written as <out>: the same inputs give byte-identical folders wherever they are written.
  nlohmann::json command = nlohmann::json::array();
  const auto& line = stored_command_line();
  for (std::size_t i = 0; i < line.size(); ++i) {
    const std::string& a = line[i];
    command.push_back(a.rfind("--out=", 0) == 0 ? "--out=<out>" : a);
    if ((a == "-o" || a == "--out") && i + 1 < line.size()) {
      command.push_back("<out>");
      ++i;
    }
  }
  nlohmann::json set = nlohmann::json::array();
  for (const auto& o : overrides) set.push_back({{"path", o.path}, {"value", o.value_yaml}});
  nlohmann::json inputs = nlohmann::json::array();
  std::set<std::string> seen;
  for (const auto& f : files) {
    if (!seen.insert(f).second) continue;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(f, ec)) continue;
    const std::string bytes = core::read_file(f, core::kMaxModelFileBytes);  // models as well as YAML
    inputs.push_back({{"file", f}, {"bytes", bytes.size()}, {"sha256", digest_of(f, bytes)}});
  }
  return {{"framesim_version", FRAMESIM_VERSION}, {"command_line", command}, {"overrides", set}, {"inputs", inputs}};
}

}  // namespace framesim::cli
