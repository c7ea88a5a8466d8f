// The one reader and writer of the run-summary record (see run_summary.hpp).
#include "run_summary.hpp"

#include <algorithm>
#include <array>
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

/// Walks a summary with the key path of where it is, so that every refusal says which key.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const { refuse_summary(file_, path, what); }
  static std::string join(const std::string& path, const std::string& key) { return path + "/" + key; }
  static const char* type_of(const json& v) { return v.is_null() ? "null" : v.type_name(); }

  const json& object(const json& parent, const std::string& path, const std::string& key) const {
    const json& v = member(parent, path, key);
    if (!v.is_object()) fail(join(path, key), fmt::format("expected an object, found {}", type_of(v)));
    return v;
  }
  const json& member(const json& parent, const std::string& path, const std::string& key) const {
    if (!parent.contains(key)) fail(join(path, key), "missing");
    return parent[key];
  }
  double number(const json& parent, const std::string& path, const std::string& key) const {
    const json& v = member(parent, path, key);
    if (!v.is_number()) fail(join(path, key), fmt::format("expected a number, found {}", type_of(v)));
    return v.get<double>();
  }
  std::int64_t integer(const json& parent, const std::string& path, const std::string& key) const {
    const json& v = member(parent, path, key);
    if (!v.is_number_integer()) fail(join(path, key), fmt::format("expected an integer, found {}", type_of(v)));
    return v.get<std::int64_t>();
  }
  /// Absent or null: nothing; present: a number.
  std::optional<double> maybe_number(const json& parent, const std::string& path, const std::string& key) const {
    if (!parent.contains(key) || parent[key].is_null()) return std::nullopt;
    return number(parent, path, key);
  }
  std::optional<std::int64_t> maybe_integer(const json& parent, const std::string& path, const std::string& key) const {
    if (!parent.contains(key)) return std::nullopt;
    return integer(parent, path, key);
  }

  StatBlock stat(const json& parent, const std::string& path, const std::string& key) const {
    return stat_of(object(parent, path, key), join(path, key));
  }
  /// The statistic block `j`, at `at`.
  StatBlock stat_of(const json& j, const std::string& at) const {
    if (!j.is_object()) fail(at, fmt::format("expected an object, found {}", type_of(j)));
    StatBlock s;
    s.count = integer(j, at, "count");
    for (const auto& [key, value] : kStatValues) s.*value = maybe_number(j, at, key);
    s.confidence = maybe_number(j, at, "confidence");
    if (s.count > 0 && !s.p99) fail(join(at, "p99"), "missing");
    if (j.contains("ci"))
      for (const auto& [name, p] : object(j, at, "ci").items()) {
        const std::string cp = join(join(at, "ci"), name);
        if (!p.is_array() || p.size() != 2) fail(cp, "expected [low, high]");
        for (std::size_t i = 0; i < 2; ++i)
          if (!p[i].is_null() && !p[i].is_number()) fail(fmt::format("{}/{}", cp, i), "expected a number or null");
        StatBlock::Interval& ci = s.ci[name];
        if (p[0].is_number()) ci.lo = p[0].get<double>();
        if (p[1].is_number()) ci.hi = p[1].get<double>();
      }
    if (j.contains("few_samples")) {
      const json& few = member(j, at, "few_samples");
      if (!few.is_array()) fail(join(at, "few_samples"), fmt::format("expected an array, found {}", type_of(few)));
      for (std::size_t i = 0; i < few.size(); ++i) {
        if (!few[i].is_string()) fail(fmt::format("{}/few_samples/{}", at, i), "expected a statistic's name");
        s.few_samples.push_back(few[i].get<std::string>());
      }
    }
    return s;
  }
  std::optional<std::string> maybe_string(const json& parent, const std::string& path, const std::string& key) const {
    if (!parent.contains(key)) return std::nullopt;
    const json& v = parent[key];
    if (!v.is_string()) fail(join(path, key), fmt::format("expected a string, found {}", type_of(v)));
    return v.get<std::string>();
  }
  std::string string(const json& parent, const std::string& path, const std::string& key) const {
    if (!parent.contains(key)) fail(join(path, key), "missing");
    return *maybe_string(parent, path, key);
  }

  WindowSummary window(const json& windows, const std::string& path, const std::string& key) const {
    const json& w = object(windows, path, key);
    const std::string at = join(path, key);
    WindowSummary out;
    out.frames = integer(w, at, "frames");
    out.misses.late = integer(w, at, "late");
    out.misses.dropped = integer(w, at, "dropped");
    if (integer(w, at, "missed") != out.misses.missed()) fail(join(at, "missed"), "is not late + dropped");
    out.miss_rate = number(w, at, "miss_rate");
    out.latency_s = stat(w, at, "latency_s");
    if (w.contains("stages"))
      for (const auto& [name, st] : object(w, at, "stages").items()) {
        const std::string sp = join(join(at, "stages"), name);
        if (!st.is_object()) fail(sp, fmt::format("expected an object, found {}", type_of(st)));
        if (st.contains("latency_s")) out.stage_latency_s[name] = stat(st, sp, "latency_s");
      }
    return out;
  }

 private:
  std::string file_;
};

}  // namespace

void refuse_summary(const std::string& file, const std::string& path, const std::string& what) {
  throw core::UserError(fmt::format("{}: {}: {} (is it a summary.json written by `framesim run`?)", file,
                                    path.empty() ? "/" : path, what));
}

StatBlock read_stat_block(const json& j, const std::string& path, const std::string& file) {
  return Reader(file).stat_of(j, path);
}

namespace {

/// The typed parts of summary.json beyond the windows, read (see read_run_summary).
void read_paths_and_provenance(const Reader& r, const json& summary, RunSummary& s) {
  if (summary.contains("paths")) {
    const json& paths = r.member(summary, "", "paths");
    if (!paths.is_array()) r.fail("/paths", fmt::format("expected an array, found {}", Reader::type_of(paths)));
    for (std::size_t i = 0; i < paths.size(); ++i) {
      const std::string at = fmt::format("/paths/{}", i);
      const json& p = paths[i];
      if (!p.is_object()) r.fail(at, fmt::format("expected an object, found {}", Reader::type_of(p)));
      PathSummary path;
      path.name = r.string(p, at, "name");
      path.miss_rate = r.number(p, at, "miss_rate");
      if (p.contains("verdict"))
        path.sustained_p99_s = r.maybe_number(r.object(p, at, "verdict"), at + "/verdict", "sustained_p99_s");
      s.paths.push_back(path);
    }
  }
  if (summary.contains("utilisation") && r.object(summary, "", "utilisation").contains("units"))
    for (const auto& [name, unit] : r.object(summary["utilisation"], "/utilisation", "units").items())
      s.unit_busy[name] = r.number(unit, "/utilisation/units/" + name, "busy");
  if (summary.contains("provenance") && summary["provenance"].is_object()) {
    const json& prov = summary["provenance"];
    for (const char* key : {"overrides", "inputs"})
      if (prov.contains(key) && !prov[key].is_array())
        r.fail(fmt::format("/provenance/{}", key),
               fmt::format("expected an array, found {}", Reader::type_of(prov[key])));
    if (prov.contains("overrides"))
      for (std::size_t i = 0; i < prov["overrides"].size(); ++i) {
        const std::string at = fmt::format("/provenance/overrides/{}", i);
        const json& o = prov["overrides"][i];
        if (!o.is_object()) r.fail(at, "expected an object");
        s.overrides.push_back(r.string(o, at, "path") + "=" + r.string(o, at, "value"));
      }
    if (prov.contains("inputs"))
      for (std::size_t i = 0; i < prov["inputs"].size(); ++i) {
        const std::string at = fmt::format("/provenance/inputs/{}", i);
        const json& in = prov["inputs"][i];
        if (!in.is_object()) r.fail(at, "expected an object");
        s.input_sha256[r.string(in, at, "file")] = r.string(in, at, "sha256");
      }
  }
}

}  // namespace

RunSummary read_run_summary(const json& summary, const std::string& file) {
  const Reader r(file);
  if (!summary.is_object()) r.fail("", fmt::format("expected an object, found {}", Reader::type_of(summary)));
  RunSummary s;
  s.file = file;
  s.rest = summary;
  const json& scenario = r.object(summary, "", "scenario");
  s.scenario.name = r.maybe_string(scenario, "/scenario", "name");
  s.scenario.file = r.maybe_string(scenario, "/scenario", "file");
  s.scenario.hardware = r.maybe_string(scenario, "/scenario", "hardware");
  if (scenario.contains("seed")) {
    if (!scenario["seed"].is_number_unsigned()) r.fail("/scenario/seed", "expected a whole number, 0 or more");
    s.scenario.seed = scenario["seed"].get<std::uint64_t>();
  }
  s.scenario.duration_s = r.maybe_number(scenario, "/scenario", "duration_s");
  s.scenario.warmup_s = r.maybe_number(scenario, "/scenario", "warmup_s");
  s.scenario.deadline_s = r.number(scenario, "/scenario", "deadline_s");
  const json& windows = r.object(summary, "", "windows");
  s.all = r.window(windows, "/windows", "all");
  s.sustained = r.window(windows, "/windows", "sustained");
  if (windows.contains("cold")) s.cold = r.window(windows, "/windows", "cold");
  if (summary.contains("verdict")) {
    const json& v = r.object(summary, "", "verdict");
    s.at_confidence = r.maybe_string(v, "/verdict", "at_confidence");
    s.sustained_p99_s = r.maybe_number(v, "/verdict", "sustained_p99_s");
    s.estimate_end_to_end_s = r.maybe_number(v, "/verdict", "estimate_end_to_end_s");
    s.bound_end_to_end_s = r.maybe_number(v, "/verdict", "bound_end_to_end_s");
  }
  if (summary.contains("frames"))
    s.longest_miss_run = r.maybe_integer(r.object(summary, "", "frames"), "/frames", "longest_miss_run");
  if (summary.contains("staleness"))
    for (const auto& [name, task] : r.object(summary, "", "staleness").items()) {
      const std::string at = "/staleness/" + name;
      if (!task.is_object()) r.fail(at, fmt::format("expected an object, found {}", Reader::type_of(task)));
      s.staleness_time_s[name] = r.stat(task, at, "time_s");
    }
  const json& energy = r.object(summary, "", "energy");
  s.energy_per_frame_J = r.stat(energy, "/energy", "per_frame_J");
  s.mean_power_W = r.number(energy, "/energy", "mean_power_W");
  const json& thermal = r.object(summary, "", "thermal");
  s.throttled_fraction = r.number(thermal, "/thermal", "throttled_fraction");
  if (thermal.contains("has_thermal_model")) {
    if (!thermal["has_thermal_model"].is_boolean()) r.fail("/thermal/has_thermal_model", "expected true or false");
    s.has_thermal_model = thermal["has_thermal_model"].get<bool>();
  }
  s.max_temperature_C = r.maybe_number(thermal, "/thermal", "max_C");
  if (summary.contains("run")) {
    const json& run = r.object(summary, "", "run");
    s.wall_s = r.maybe_number(run, "/run", "wall_s");
    s.cpu_s = r.maybe_number(run, "/run", "cpu_s");
  }
  if (summary.contains("why") && summary["why"].is_object() && summary["why"].contains("sustained_tail"))
    s.sustained_tail = summary["why"]["sustained_tail"];
  if (summary.contains("slowdown")) s.slowdown = summary["slowdown"];
  read_paths_and_provenance(r, summary, s);
  return s;
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
  for (const auto& [name, q] : {std::pair{"p50", &s.q50}, {"p90", &s.q90}, {"p99", &s.q99}, {"p99_9", &s.q999}}) {
    b.ci[name] = {q->lo, q->hi};
    if (q->few_samples()) b.few_samples.emplace_back(name);
  }
  b.confidence = kConfidence;
  return b;
}

json stat_json(const StatBlock& s) {
  json j = {{"count", s.count}};
  const auto put = [&j](const char* key, const std::optional<double>& v) {
    if (v) j[key] = *v;
  };
  for (const auto& [key, value] : kStatValues) put(key, s.*value);
  if (!s.ci.empty()) {
    json ci = json::object();
    const auto end = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    for (const auto& [name, interval] : s.ci) ci[name] = json::array({end(interval.lo), end(interval.hi)});
    j["ci"] = ci;
  }
  put("confidence", s.confidence);
  if (s.count > 0 || !s.few_samples.empty()) j["few_samples"] = s.few_samples;
  return j;
}

const char* percentile_name(std::optional<double> StatBlock::*which) {
  for (const auto& [key, value] : kStatValues)
    if (value == which) return key;
  return "";
}

json summary_json(const Summary& s) { return stat_json(stat_block(s)); }

namespace {

void write_window(json& into, const WindowSummary& w) {
  into["frames"] = w.frames;
  into["late"] = w.misses.late;
  into["dropped"] = w.misses.dropped;
  into["missed"] = w.misses.missed();
  into["miss_rate"] = w.miss_rate;
  into["latency_s"] = stat_json(w.latency_s);
  for (const auto& [name, stat] : w.stage_latency_s) into["stages"][name]["latency_s"] = stat_json(stat);
}

}  // namespace

json write_run_summary(const RunSummary& s) {
  json j = s.rest;
  if (s.details) write_run_details(j, *s.details);
  json& scenario = j["scenario"];
  if (s.scenario.name) scenario["name"] = *s.scenario.name;
  if (s.scenario.file) scenario["file"] = *s.scenario.file;
  if (s.scenario.hardware) scenario["hardware"] = *s.scenario.hardware;
  if (s.scenario.seed) scenario["seed"] = *s.scenario.seed;
  if (s.scenario.duration_s) scenario["duration_s"] = *s.scenario.duration_s;
  if (s.scenario.warmup_s) scenario["warmup_s"] = *s.scenario.warmup_s;
  scenario["deadline_s"] = s.scenario.deadline_s;
  write_window(j["windows"]["all"], s.all);
  write_window(j["windows"]["sustained"], s.sustained);
  if (s.cold) write_window(j["windows"]["cold"], *s.cold);
  // "frames": the whole counted run, the all window's counts again.
  json& frames = j["frames"];
  frames["counted"] = s.all.frames;
  frames["late"] = s.all.misses.late;
  frames["dropped"] = s.all.misses.dropped;
  frames["missed"] = s.all.misses.missed();
  frames["miss_rate"] = s.all.miss_rate;
  if (s.longest_miss_run) frames["longest_miss_run"] = *s.longest_miss_run;
  if (s.at_confidence) j["verdict"]["at_confidence"] = *s.at_confidence;
  if (s.sustained_p99_s) j["verdict"]["sustained_p99_s"] = *s.sustained_p99_s;
  if (s.estimate_end_to_end_s) j["verdict"]["estimate_end_to_end_s"] = *s.estimate_end_to_end_s;
  if (s.bound_end_to_end_s) j["verdict"]["bound_end_to_end_s"] = *s.bound_end_to_end_s;
  for (const auto& [name, stat] : s.staleness_time_s) j["staleness"][name]["time_s"] = stat_json(stat);
  j["energy"]["per_frame_J"] = stat_json(s.energy_per_frame_J);
  j["energy"]["mean_power_W"] = s.mean_power_W;
  j["thermal"]["throttled_fraction"] = s.throttled_fraction;
  j["thermal"]["has_thermal_model"] = s.has_thermal_model;
  if (s.max_temperature_C) j["thermal"]["max_C"] = *s.max_temperature_C;
  if (s.wall_s) j["run"]["wall_s"] = *s.wall_s;
  if (s.cpu_s) j["run"]["cpu_s"] = *s.cpu_s;
  if (s.sustained_tail) j["why"]["sustained_tail"] = *s.sustained_tail;
  if (s.slowdown) j["slowdown"] = *s.slowdown;
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

RunSummary read_back(const RunSummary& s, const std::string& file) {
  const json written = write_run_summary(s);
  RunSummary back = read_run_summary(written, file);
  back.details = read_run_details(written, file);
  if (!back.estimate_end_to_end_s) refuse_summary(file, "/verdict/estimate_end_to_end_s", "missing");
  if (!back.bound_end_to_end_s) refuse_summary(file, "/verdict/bound_end_to_end_s", "missing");
  if (!back.longest_miss_run) refuse_summary(file, "/frames/longest_miss_run", "missing");
  if (!back.max_temperature_C) refuse_summary(file, "/thermal/max_C", "missing");
  return back;
}

RunSummary read_run_summary_file(const std::string& file) { return read_run_summary(read_json_file(file), file); }

}  // namespace framesim::analysis
