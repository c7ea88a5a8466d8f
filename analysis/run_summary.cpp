// The one reader and writer of the run-summary record (see run_summary.hpp).
#include "run_summary.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/text.hpp"
#include "summary_fields.hpp"

namespace framesim::analysis {

using nlohmann::json;

namespace {

/// A statistic block's values by their keys: the one spelling of each, for reading, writing and naming them.
constexpr std::array<std::pair<const char*, std::optional<double> StatBlock::*>, 8> kStatValues{
    {{"mean", &StatBlock::mean},
     {"stddev", &StatBlock::stddev},
     {"min", &StatBlock::min},
     {"p50", &StatBlock::p50},
     {"p90", &StatBlock::p90},
     {"p99", &StatBlock::p99},
     {"p99_9", &StatBlock::p99_9},
     {"max", &StatBlock::max}}};

/// A statistic block's keys, for writing it (stat_json) and reading it (read_stat_block).
template <class Io, class S>
void stat_fields(Io& io, S& s) {
  io("count", s.count);
  for (const auto& [key, value] : kStatValues) io(key, s.*value);
  io.nonempty("ci", s.ci);
  io("confidence", s.confidence);
  if (s.count > 0) io.defaulted("few_samples", s.few_samples);  // [] when every statistic is bounded
  else io.nonempty("few_samples", s.few_samples);
}

}  // namespace

void refuse_summary(const std::string& file, const std::string& path, const std::string& what) {
  // Records are read from other files too (a sweep folder's provenance.json): the hint is for a summary's.
  const bool summary = std::filesystem::path(file).filename() == "summary.json";
  throw core::UserError(fmt::format("{}: {}: {}{}", file, path.empty() ? "/" : path, what,
                                    summary ? " (is it a summary.json written by `framesim run`?)" : ""));
}

StatBlock read_stat_block(const json& j, const std::string& path, const std::string& file) {
  if (!j.is_object())
    refuse_summary(file, path, fmt::format("expected an object, found {}", j.is_null() ? "null" : j.type_name()));
  StatBlock s;
  FieldReader r(j, path, file);
  stat_fields(r, s);
  if (s.count > 0 && !s.p99) refuse_summary(file, path + "/" + percentile_name(&StatBlock::p99), "missing");
  return s;
}

RunSummary read_run_summary(const json& summary, const std::string& file) {
  RunSummary s;
  read_fields(summary, "", file, s);
  s.file = file;
  s.rest = summary;
  return s;
}

std::vector<std::string> RunSummary::override_texts() const {
  std::vector<std::string> out;
  if (provenance)
    for (const auto& o : provenance->overrides) out.push_back(o.path + "=" + o.value);
  return out;
}

std::map<std::string, std::string> RunSummary::input_sha256() const {
  std::map<std::string, std::string> out;
  if (provenance)
    for (const auto& in : provenance->inputs) out[in.file] = in.sha256;
  return out;
}

StatBlock stat_block(const Summary& s) {
  StatBlock b;
  b.count = static_cast<std::int64_t>(s.count);
  if (s.count == 0) return b;
  b.mean = s.mean;
  b.stddev = s.stddev;
  b.min = s.min;
  b.p50 = s.p50;
  b.p90 = s.p90;
  b.p99 = s.p99;
  b.p99_9 = s.p999;
  b.max = s.max;
  for (const auto& [which, q] : {std::pair{&StatBlock::p50, &s.q50},
                                 {&StatBlock::p90, &s.q90},
                                 {&StatBlock::p99, &s.q99},
                                 {&StatBlock::p99_9, &s.q999}}) {
    const char* name = percentile_name(which);
    b.ci[name] = {q->lo, q->hi};
    if (q->few_samples()) b.few_samples.emplace_back(name);
  }
  b.confidence = kConfidence;
  return b;
}

json stat_json(const StatBlock& s) {
  json j = json::object();
  FieldWriter w(j);
  stat_fields(w, s);
  return j;
}

const char* percentile_name(std::optional<double> StatBlock::*which) {
  for (const auto& [key, value] : kStatValues)
    if (value == which) return key;
  return "";
}

bool StatBlock::p99_few_samples() const {
  return std::find(few_samples.begin(), few_samples.end(), percentile_name(&StatBlock::p99)) != few_samples.end();
}
std::optional<double> StatBlock::p99_ci_lo() const {
  const auto it = ci.find(percentile_name(&StatBlock::p99));
  return it == ci.end() ? std::nullopt : it->second.lo;
}
std::optional<double> StatBlock::p99_ci_hi() const {
  const auto it = ci.find(percentile_name(&StatBlock::p99));
  return it == ci.end() ? std::nullopt : it->second.hi;
}

json summary_json(const Summary& s) { return stat_json(stat_block(s)); }

json write_run_summary(const RunSummary& s) {
  json j = s.rest;
  if (s.details) write_run_details(j, *s.details);
  write_fields(j, s);
  return j;
}

json read_json_file(const std::string& file) {
  const std::string text = core::read_own_file(file);
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // FILE:LINE:COL: what is wrong, without the library's "[json.exception.parse_error.101] parse error at ...".
    const std::size_t at = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    const auto [line, column] = core::line_column(text, at);
    std::string what = e.what();
    if (const auto colon = what.find(": ", what.find("parse error")); colon != std::string::npos)
      what = what.substr(colon + 2);
    throw core::UserError({core::Diagnostic{{file, line, column}, "", "not valid JSON: " + what}});
  } catch (const json::exception& e) {
    throw core::UserError(fmt::format("{}: not JSON: {}", file, e.what()));
  }
}

RunSummary read_back(const RunSummary& s, const std::string& file) { return read_back(write_run_summary(s), file); }

RunSummary read_back_record(const json& written, const std::string& file) {
  RunSummary back;
  FieldReader strict(written, "", file, /*read_back=*/true);
  RunSummary::fields(strict, back);
  back.file = file;
  return back;
}

RunSummary read_back(const json& written, const std::string& file) {
  RunSummary back = read_back_record(written, file);
  back.rest = written;
  back.details = read_run_details(written, file);
  return back;
}

RunSummary read_run_summary_file(const std::string& file) { return read_run_summary(read_json_file(file), file); }

}  // namespace framesim::analysis
