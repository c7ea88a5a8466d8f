// The one reader and writer of the run-summary record (see run_summary.hpp).
#include "run_summary.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/text.hpp"

namespace framesim::analysis {

using nlohmann::json;

namespace {

/// Walks a summary with the key path of where it is, so that every refusal says which key.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw core::UserError(fmt::format("{}: {}: {} (is it a summary.json written by `framesim run`?)", file_,
                                      path.empty() ? "/" : path, what));
  }
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
    const json& j = object(parent, path, key);
    const std::string at = join(path, key);
    StatBlock s;
    s.count = integer(j, at, "count");
    s.mean = maybe_number(j, at, "mean");
    s.p50 = maybe_number(j, at, "p50");
    s.p90 = maybe_number(j, at, "p90");
    s.p99 = maybe_number(j, at, "p99");
    s.p99_9 = maybe_number(j, at, "p99_9");
    s.max = maybe_number(j, at, "max");
    if (s.count > 0 && !s.p99) fail(join(at, "p99"), "missing");
    if (j.contains("ci")) {
      const json& ci = object(j, at, "ci");
      if (ci.contains("p99")) {
        const json& p = ci["p99"];
        const std::string cp = join(join(at, "ci"), "p99");
        if (!p.is_array() || p.size() != 2) fail(cp, "expected [low, high]");
        for (std::size_t i = 0; i < 2; ++i)
          if (!p[i].is_null() && !p[i].is_number()) fail(fmt::format("{}/{}", cp, i), "expected a number or null");
        if (p[0].is_number()) s.p99_ci_lo = p[0].get<double>();
        if (p[1].is_number()) s.p99_ci_hi = p[1].get<double>();
      }
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

RunSummary read_run_summary(const json& summary, const std::string& file) {
  const Reader r(file);
  if (!summary.is_object()) r.fail("", fmt::format("expected an object, found {}", Reader::type_of(summary)));
  RunSummary s;
  s.file = file;
  s.deadline_s = r.number(r.object(summary, "", "scenario"), "/scenario", "deadline_s");
  const json& windows = r.object(summary, "", "windows");
  s.all = r.window(windows, "/windows", "all");
  s.sustained = r.window(windows, "/windows", "sustained");
  if (summary.contains("verdict")) {
    const json& v = r.object(summary, "", "verdict");
    if (v.contains("at_confidence")) {
      if (!v["at_confidence"].is_string())
        r.fail("/verdict/at_confidence",
               fmt::format("expected a string, found {}", Reader::type_of(v["at_confidence"])));
      s.at_confidence = v["at_confidence"].get<std::string>();
    }
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
  return s;
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

RunSummary read_run_summary_file(const std::string& file) { return read_run_summary(read_json_file(file), file); }

}  // namespace framesim::analysis
