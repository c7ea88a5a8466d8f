#include "compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "html.hpp"
#include "run_summary.hpp"
#include "stats.hpp"
#include "svg.hpp"
#include "table.hpp"
#include "tail_plot.hpp"

namespace framesim::analysis {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// Each side's confidence, so that the difference's interval has at least kConfidence (Bonferroni).
constexpr double kSideConfidence = 1 - (1 - kConfidence) / 2;

json parse_json(const fs::path& file) { return read_json_file(file.string()); }

std::vector<double> counted_latencies(const fs::path& folder, double warmup_s) {
  const fs::path file = folder / "frames.csv";
  std::string error;
  int line = 0;
  const auto rows = core::parse_csv(core::read_file(file), &error, &line);
  if (!error.empty()) throw core::UserError(fmt::format("{}:{}: {}", file.string(), line, error));
  if (rows.empty()) throw core::UserError(fmt::format("{}: empty: not a framesim frames table", file.string()));
  std::map<std::string, std::size_t> column;
  for (std::size_t c = 0; c < rows[0].cells.size(); ++c) column[rows[0].cells[c].text] = c;
  for (const char* needed : {"outcome", "latency_s", "capture_s"})
    if (!column.count(needed))
      throw core::UserError(fmt::format("{}: no column \"{}\": not a framesim frames table", file.string(), needed));
  std::vector<double> out;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto& cells = rows[i].cells;
    auto cell = [&](const char* name) -> const std::string& {
      const std::size_t c = column.at(name);
      if (c >= cells.size()) throw core::UserError(fmt::format("{}:{}: too few cells", file.string(), rows[i].line));
      return cells[c].text;
    };
    if (cell("outcome") != "completed") continue;
    // Counted frames: the column says so (older run folders: captured after the warm-up).
    const bool counted = column.count("counted") ? cell("counted") == "1" : std::stod(cell("capture_s")) >= warmup_s;
    if (!counted) continue;
    try {
      out.push_back(std::stod(cell("latency_s")));
    } catch (const std::exception&) {
      throw core::UserError(
          fmt::format("{}:{}: latency_s: not a number: \"{}\"", file.string(), rows[i].line, cell("latency_s")));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// A metric of both sides: its difference and, when both sides have one, the interval of the difference.
json row(const std::string& metric, const std::string& unit, double a, double b,
         std::optional<std::pair<double, double>> ci) {
  // No ratio of temperatures in Celsius: its zero is not a zero of temperature, so B / A means nothing.
  const bool ratio = a != 0 && unit != "C";
  json r{{"metric", metric}, {"unit", unit},        {"a", a},
         {"b", b},           {"difference", b - a}, {"ratio", ratio ? json(b / a) : json(nullptr)}};
  if (ci) {
    r["ci"] = {ci->first, ci->second};
    r["significant"] = ci->first > 0 || ci->second < 0;
  } else {
    r["ci"] = nullptr;
  }
  return r;
}

json run_rows(const CompareInput& a, const CompareInput& b) {
  json rows = json::array();
  for (const auto& [name, p] : {std::pair{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p99.9", 0.999}}) {
    if (a.latency_s.empty() || b.latency_s.empty()) break;
    const Quantile qa = quantile_of_sorted(a.latency_s, p, kSideConfidence);
    const Quantile qb = quantile_of_sorted(b.latency_s, p, kSideConfidence);
    std::optional<std::pair<double, double>> ci;
    if (qa.lo && qa.hi && qb.lo && qb.hi) ci = std::pair{*qb.lo - *qa.hi, *qb.hi - *qa.lo};
    json r = row(fmt::format("latency {}", name), "s", qa.value, qb.value, ci);
    r["count"] = {a.latency_s.size(), b.latency_s.size()};
    rows.push_back(r);
  }
  auto mean_ci = [](const std::vector<double>& v) {
    double m = 0, s2 = 0;
    for (double x : v) m += x;
    m /= static_cast<double>(v.size());
    for (double x : v) s2 += (x - m) * (x - m);
    const double se =
        std::sqrt(s2 / std::max<double>(1, static_cast<double>(v.size()) - 1) / static_cast<double>(v.size()));
    return std::pair{m, se};
  };
  if (!a.latency_s.empty() && !b.latency_s.empty()) {
    const auto [ma, sa] = mean_ci(a.latency_s);
    const auto [mb, sb] = mean_ci(b.latency_s);
    const double half = 1.959964 * std::sqrt(sa * sa + sb * sb);  // normal approximation
    rows.push_back(row("latency mean", "s", ma, mb, std::pair{mb - ma - half, mb - ma + half}));
  }
  const RunSummary& sa = a.summary;
  const RunSummary& sb = b.summary;
  auto both = [&](const std::string& metric, const std::string& unit, const std::optional<double>& va,
                  const std::optional<double>& vb) {
    if (va && vb) rows.push_back(row(metric, unit, *va, *vb, std::nullopt));
  };
  both("miss rate", "", sa.all.miss_rate, sb.all.miss_rate);
  both("sustained p99", "s", sa.sustained_p99_s, sb.sustained_p99_s);
  both("energy per frame", "J", sa.energy_per_frame_J.mean, sb.energy_per_frame_J.mean);
  both("mean power", "W", sa.mean_power_W, sb.mean_power_W);
  both("max temperature", "C", sa.max_temperature_C, sb.max_temperature_C);
  both("throttled fraction", "", sa.throttled_fraction, sb.throttled_fraction);
  // Every path both runs have: its sustained p99 and its misses.
  for (const auto& pa : sa.paths)
    for (const auto& pb : sb.paths) {
      if (pa.name != pb.name) continue;
      both("path " + pa.name + ": sustained p99", "s", pa.sustained_p99_s, pb.sustained_p99_s);
      rows.push_back(row("path " + pa.name + ": miss rate", "", pa.miss_rate, pb.miss_rate, std::nullopt));
    }
  for (const auto& [u, busy] : sa.unit_busy)
    if (sb.unit_busy.count(u)) rows.push_back(row("busy " + u, "", busy, sb.unit_busy.at(u), std::nullopt));
  return rows;
}

json budget_rows(const CompareInput& a, const CompareInput& b) {
  json rows = json::array();
  const auto& ja = a.document;
  const auto& jb = b.document;
  rows.push_back(row("estimate", "s", ja["floor"]["estimate_s"].get<double>(), jb["floor"]["estimate_s"].get<double>(),
                     std::nullopt));
  rows.push_back(
      row("bound", "s", ja["floor"]["bound_s"].get<double>(), jb["floor"]["bound_s"].get<double>(), std::nullopt));
  rows.push_back(row("compute time", "s", ja["floor"]["compute_s"].get<double>(),
                     jb["floor"]["compute_s"].get<double>(), std::nullopt));
  rows.push_back(row("energy per inference", "J", ja["energy"]["total_J"].get<double>(),
                     jb["energy"]["total_J"].get<double>(), std::nullopt));
  rows.push_back(row("off-chip bytes", "B", ja["energy"]["offchip_bytes"].get<double>(),
                     jb["energy"]["offchip_bytes"].get<double>(), std::nullopt));
  std::map<std::string, double> kb;
  for (const auto& k : jb["kernels"]) kb[k["name"].get<std::string>()] = k["estimate_s"].get<double>();
  for (const auto& k : ja["kernels"]) {
    const auto it = kb.find(k["name"].get<std::string>());
    if (it != kb.end())
      rows.push_back(
          row("kernel " + it->first + " estimate", "s", k["estimate_s"].get<double>(), it->second, std::nullopt));
  }
  return rows;
}

std::string value_text(double v, const std::string& unit) {
  if (unit == "s") return core::format_seconds(v);
  if (unit == "J") return core::format_joules(v);
  if (unit == "W") return core::format_watts(v);
  if (unit == "B") return core::format_bytes(v);
  if (unit == "C") return core::format_number(v, 4) + " C";
  return core::format_number(v, 4);
}

std::vector<std::vector<std::string>> table_rows(const json& c) {
  std::vector<std::vector<std::string>> out;
  for (const auto& r : c["rows"]) {
    const std::string unit = r["unit"].get<std::string>();
    std::string ci = "exact";
    if (c["kind"] == "runs")
      ci = r["ci"].is_null() ? "-"
                             : fmt::format("[{}, {}]{}", value_text(r["ci"][0].get<double>(), unit),
                                           value_text(r["ci"][1].get<double>(), unit),
                                           r["significant"].get<bool>() ? " significant" : "");
    out.push_back({r["metric"].get<std::string>(), value_text(r["a"].get<double>(), unit),
                   value_text(r["b"].get<double>(), unit), value_text(r["difference"].get<double>(), unit),
                   r["ratio"].is_null() ? "-" : core::format_number(r["ratio"].get<double>(), 4) + "x", ci});
  }
  return out;
}

/// The lines telling A and B apart (runs): overrides, seed and duration when they differ, input files whose hash
/// differs.
std::string differences_text(const json& c) {
  if (!c.contains("differences")) return "";
  const auto& d = c["differences"];
  std::string out;
  for (const char* side : {"a", "b"}) {
    const auto& o = d[std::string(side) + "_overrides"];
    std::vector<std::string> items;
    for (const auto& v : o) items.push_back("--set " + v.get<std::string>());
    out += fmt::format("  {} overrides: {}\n", side[0] == 'a' ? "A" : "B",
                       items.empty() ? std::string("none") : fmt::format("{}", fmt::join(items, " ")));
  }
  if (d["a_seed"] != d["b_seed"]) out += fmt::format("  seed: A {}, B {}\n", d["a_seed"].dump(), d["b_seed"].dump());
  if (d["a_duration_s"] != d["b_duration_s"] && d["a_duration_s"].is_number() && d["b_duration_s"].is_number())
    out += fmt::format("  duration: A {}, B {}\n", core::format_seconds(d["a_duration_s"].get<double>()),
                       core::format_seconds(d["b_duration_s"].get<double>()));
  if (d["inputs_that_differ"].empty()) {
    out += "  inputs: the same files, byte for byte (SHA-256)\n";
  } else {
    auto sha = [](const json& v) { return v.is_null() ? std::string("not read") : v.get<std::string>().substr(0, 12); };
    for (const auto& f : d["inputs_that_differ"])
      out += fmt::format("  input {} differs: A {}, B {} (SHA-256)\n", f["file"].get<std::string>(), sha(f["a"]),
                         sha(f["b"]));
  }
  return out;
}

}  // namespace

CompareInput load_compare_input(const fs::path& path) {
  CompareInput in;
  in.name = path.string();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw core::UserError(fmt::format("{}: no such run folder or budget file", path.string()));
  if (fs::is_directory(path, ec)) {
    if (!fs::is_regular_file(path / "summary.json", ec) || !fs::is_regular_file(path / "frames.csv", ec))
      throw core::UserError(fmt::format(
          "{}: not a framesim run folder (it needs summary.json and frames.csv, as `framesim run` writes them)",
          path.string()));
    in.run = true;
    const json document = parse_json(path / "summary.json");
    if (!document.is_object() || !document.contains("scenario") || !document.contains("windows"))
      throw core::UserError(fmt::format("{}: not a framesim run summary", (path / "summary.json").string()));
    in.summary = read_run_summary(document, (path / "summary.json").string());
    // Older summaries without the warm-up: frames.csv's `counted` column decides (counted_latencies).
    in.latency_s = counted_latencies(path, in.summary.scenario.warmup_s.value_or(0.0));
    return in;
  }
  in.document = parse_json(path);
  if (!in.document.is_object() || !in.document.contains("floor") || !in.document.contains("kernels") ||
      !in.document.contains("energy") || !in.document["floor"].contains("estimate_s"))
    throw core::UserError(fmt::format(
        "{}: not a framesim budget (the output of `framesim budget --json`) nor a run folder", path.string()));
  return in;
}

/// The precisions a budget's kernels run at, the one with the most operations first ("fp16", "int8 + fp32").
std::string budget_precision(const json& budget) {
  std::map<std::string, double> ops;
  for (const auto& k : budget["kernels"])
    if (k.contains("precision") && k["precision"].is_string())
      ops[k["precision"].get<std::string>()] += k["ops"].get<double>();
  std::vector<std::pair<std::string, double>> order(ops.begin(), ops.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  std::vector<std::string> names;
  for (const auto& [name, n] : order) names.push_back(name);
  return names.empty() ? "?" : fmt::format("{}", fmt::join(names, " + "));
}

/// What tells two runs apart besides their scenario's name: each side's --set overrides, seed and duration, and
/// the input files whose SHA-256 differ (or that only one side read).
json run_differences(const RunSummary& a, const RunSummary& b) {
  const auto ia = a.input_sha256();
  const auto ib = b.input_sha256();
  json differ = json::array();
  for (const auto& [file, sha] : ia) {
    const auto it = ib.find(file);
    if (it == ib.end()) differ.push_back({{"file", file}, {"a", sha}, {"b", nullptr}});
    else if (it->second != sha) differ.push_back({{"file", file}, {"a", sha}, {"b", it->second}});
  }
  for (const auto& [file, sha] : ib)
    if (!ia.count(file)) differ.push_back({{"file", file}, {"a", nullptr}, {"b", sha}});
  // Older or hand-made summaries may lack a field: null then.
  const auto or_null = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  return {{"a_overrides", a.override_texts()},
          {"b_overrides", b.override_texts()},
          {"a_seed", or_null(a.scenario.seed)},
          {"b_seed", or_null(b.scenario.seed)},
          {"a_duration_s", or_null(a.scenario.duration_s)},
          {"b_duration_s", or_null(b.scenario.duration_s)},
          {"inputs_that_differ", differ}};
}

json compare_json(const CompareInput& a, const CompareInput& b) {
  if (a.run != b.run)
    throw core::UserError(fmt::format("compare: {} is a {} and {} a {}: compare two runs or two budgets", a.name,
                                      a.run ? "run folder" : "budget", b.name, b.run ? "run folder" : "budget"));
  auto title = [](const CompareInput& in) {
    return in.run ? in.summary.scenario.name.value_or("?")
                  : in.document["network"]["name"].get<std::string>() + " on " +
                        in.document["hardware"]["name"].get<std::string>() + " / " +
                        in.document["unit"].get<std::string>() + ", " + budget_precision(in.document);
  };
  json c{{"kind", a.run ? "runs" : "budgets"},
         {"a", {{"path", a.name}, {"title", title(a)}}},
         {"b", {{"path", b.name}, {"title", title(b)}}},
         {"rows", a.run ? run_rows(a, b) : budget_rows(a, b)}};
  if (a.run) c["differences"] = run_differences(a.summary, b.summary);
  if (a.run)
    c["method"] = fmt::format(
        "latency percentiles recomputed from frames.csv (counted, completed frames), nearest rank; "
        "each side's interval at {}%, the difference's [lo_B - hi_A, hi_B - lo_A] at least {}%; "
        "the mean's interval by the normal approximation",
        core::format_number(kSideConfidence * 100, 4), core::format_number(kConfidence * 100, 3));
  return c;
}

std::string compare_text(const json& c) {
  std::string out = fmt::format("framesim compare ({}):\n  A: {} ({})\n  B: {} ({})\n\n", c["kind"].get<std::string>(),
                                c["a"]["title"].get<std::string>(), c["a"]["path"].get<std::string>(),
                                c["b"]["title"].get<std::string>(), c["b"]["path"].get<std::string>());
  out.erase(out.size() - 1);
  out += differences_text(c) + "\n";
  Table t({"metric", "A", "B", "B - A", "B / A", c["kind"] == "runs" ? "95% CI of B - A" : "interval"});
  for (auto& r : table_rows(c)) t.add(std::move(r));
  out += t.render(2);
  if (c.contains("method")) out += "  " + c["method"].get<std::string>() + "\n";
  return out;
}

std::string compare_html(const json& c, const CompareInput& a, const CompareInput& b) {
  std::string body =
      fmt::format("<h1>framesim compare: {} vs {}</h1>\n", html::escape(c["a"]["title"].get<std::string>()),
                  html::escape(c["b"]["title"].get<std::string>()));
  body += html::table({"", "A", "B"}, {{"path", c["a"]["path"].get<std::string>(), c["b"]["path"].get<std::string>()},
                                       {"", c["a"]["title"].get<std::string>(), c["b"]["title"].get<std::string>()}});
  if (c.contains("differences")) body += "<pre id=\"differences\">" + html::escape(differences_text(c)) + "</pre>\n";
  if (a.run) {
    const double deadline = a.summary.scenario.deadline_s;
    double hi = deadline;
    for (const auto* side : {&a, &b})
      if (!side->latency_s.empty()) hi = std::max(hi, side->latency_s.back());
    Plot plot(
        "Latency tails, A and B", Axis{0, hi * 1.1, false, "end-to-end latency", "s"},
        Axis{tail_floor(std::max(a.latency_s.size(), b.latency_s.size())), 1, true, "fraction of frames slower", ""});
    plot.set_id("tails");
    add_latency_tail(plot, a.latency_s, 1, "A");
    add_latency_tail(plot, b.latency_s, 0, "B");
    plot.reference(deadline, Line::vertical, 2, fmt::format("deadline {}", core::format_seconds(deadline)));
    body += html::heading("Latency tails") +
            html::figure(plot.render(), "tails", "Both runs' counted frames, each with its 95% band.");
  }
  body += html::heading("Differences");
  auto rows = table_rows(c);
  for (auto& r : rows)
    for (auto& cell : r) cell = html::escape(cell);
  if (!rows.empty()) rows.front()[3] = html::number("first-difference", table_rows(c).front()[3]);
  body += html::table({"metric", "A", "B", "B - A", "B / A", c["kind"] == "runs" ? "95% CI of B - A" : "interval"},
                      rows, html::Cells::markup);
  if (c.contains("method")) body += "<p class=\"note\">" + html::escape(c["method"].get<std::string>()) + "</p>\n";
  return html::page("framesim compare", body);
}

}  // namespace framesim::analysis
