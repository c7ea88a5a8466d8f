// What runs where: a distribution's parameters, the unit and cores of a stage or task, its work (a network, a time
// or ops and bytes), the side work it places on other units, and the schedulers and clock caps a scenario sets.
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "config/scenario_reader.hpp"
#include "config/scheduler.hpp"
#include "config/unit_names.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "model/budget.hpp"

namespace framesim::config {

using core::Dimension;
using model::Distribution;

namespace {

const schema::Table& kKeys = schema::scenario_table();

// Limits of distribution parameters beyond the dimension's (README "Limits").
constexpr double kMaxLognormalSigma = 3.0;
constexpr double kMaxTimeStddev_s = 60.0;

}  // namespace

std::optional<Distribution> read_distribution(const Node& node, const schema::Key& decl) {
  const Dimension dim = decl.dimension;
  const Range range = decl.range;
  if (!node.is_map()) {
    if (auto v = node.quantity(dim, range)) return Distribution::fixed(*v);
    return std::nullopt;
  }
  MapReader m(node, schema::distribution_table(), "");
  auto kind = m.choice("distribution", model::kDistributionKinds);
  if (!kind) return std::nullopt;
  const std::string_view kind_name = model::kDistributionKinds.name(*kind);
  Distribution d;
  auto need = [&](std::string_view key_name, Range r) -> std::optional<double> {
    auto n = m.required(key_name);
    return n ? n->quantity(dim, r) : std::nullopt;
  };
  auto forbid_others = [&](std::initializer_list<std::string_view> allowed) {
    for (std::string_view key : {"value", "mean", "stddev", "min", "max", "sigma"}) {
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end() || !m.has(key)) continue;
      m.get(key)->error(
          fmt::format("not a parameter of a {} distribution (it takes {})", kind_name, fmt::join(allowed, ", ")));
    }
  };
  switch (*kind) {
    case Distribution::Kind::constant:
      forbid_others({"value"});
      d = Distribution::fixed(need("value", range).value_or(0));
      break;
    case Distribution::Kind::normal:
      forbid_others({"mean", "stddev"});
      d = {Distribution::Kind::normal, need("mean", Range::any).value_or(0),
           need("stddev", Range::non_negative).value_or(0)};
      if (dim == Dimension::Seconds && d.b > kMaxTimeStddev_s)
        m.get("stddev")->error(fmt::format("must be at most {} (a spread of hours is no jitter or work time)",
                                           core::format_seconds(kMaxTimeStddev_s)));
      break;
    case Distribution::Kind::uniform:
      forbid_others({"min", "max"});
      d = {Distribution::Kind::uniform, need("min", Range::any).value_or(0), need("max", Range::any).value_or(0)};
      if (d.b < d.a) m.get("max")->error("must not be below min");
      break;
    case Distribution::Kind::lognormal:
      forbid_others({"mean", "sigma"});
      d = {Distribution::Kind::lognormal, need("mean", Range::positive).value_or(1),
           m.number("sigma", MapReader::Need::required).value_or(0)};
      if (d.b > kMaxLognormalSigma)
        m.get("sigma")->error(
            fmt::format("must be at most {} (a factor of {:.0f} per sigma; a larger one is no "
                        "measurement of real hardware)",
                        kMaxLognormalSigma, std::exp(kMaxLognormalSigma)));
      break;
    case Distribution::Kind::exponential:
      forbid_others({"mean"});
      d = {Distribution::Kind::exponential, need("mean", Range::positive).value_or(1), 0};
      break;
  }
  return d;
}

std::optional<std::size_t> ScenarioReader::read_unit(const MapReader& m, bool required) {
  auto name = m.text("unit", required ? MapReader::Need::required : MapReader::Need::declared);
  if (!name || !hardware_loaded_) return std::nullopt;
  if (auto u = spec_.hardware.find_unit(*name)) return u;
  m.get("unit")->error(no_unit_message(spec_.hardware, *name, true));
  return std::nullopt;
}

model::WorkSpec ScenarioReader::read_work(const MapReader& m, std::optional<std::size_t> unit) {
  model::WorkSpec w;
  if (m.has("network") && m.has("work")) {
    m.get("work")->error("give either network or work, not both");
    return w;
  }
  if (auto n = m.get("network")) {
    auto name = n->text();
    if (!name) return w;
    auto it = std::find_if(spec_.networks.begin(), spec_.networks.end(),
                           [&](const auto& named) { return named.name == *name; });
    if (it == spec_.networks.end() && declared_networks_.count(*name)) return w;
    if (it == spec_.networks.end()) {
      std::vector<std::string> names;
      for (const auto& named : spec_.networks) names.push_back(named.name);
      if (names.empty()) {
        n->error(fmt::format("no network \"{}\": declare it under networks", *name));
      } else {
        std::string message = fmt::format("no network \"{}\"", *name);
        if (auto near = core::closest_match(*name, names)) message += fmt::format(" (did you mean \"{}\"?)", *near);
        else message += fmt::format("; networks: {}", core::join_list(names, ", "));
        n->error(message);
      }
      return w;
    }
    w.kind = model::WorkSpec::Kind::network;
    w.network = static_cast<int>(it - spec_.networks.begin());
    if (stage_precision_) w.network = network_at_precision(w.network, *stage_precision_);
    if (unit) {
      const auto& u = spec_.hardware.units[*unit];
      auto missing = model::missing_roofs(spec_.networks[static_cast<std::size_t>(w.network)].network, u);
      if (!missing.empty()) {
        std::vector<std::string> need;
        for (auto p : missing) need.emplace_back(model::precision_name(p));
        n->error(fmt::format("network \"{}\" computes in {} but unit \"{}\" has no roof for it", *name,
                             core::join_list(need, ", "), u.name));
      }
    }
  } else if (auto work = m.get("work")) {
    MapReader wr(*work, schema::work_table(), "");
    if (wr.has("time") && wr.has("ops")) {
      work->error("give either time or ops, not both");
    } else if (auto t = wr.get("time")) {
      w.kind = model::WorkSpec::Kind::time;
      w.time_s = read_distribution(*t, wr.declaration("time")).value_or(Distribution{});
      if (wr.has("bytes") || wr.has("precision")) work->error("bytes and precision go with ops, not with time");
    } else if (wr.has("ops")) {
      w.kind = model::WorkSpec::Kind::ops;
      w.ops = wr.quantity("ops").value_or(0);
      if (auto p = wr.get("precision")) {
        if (auto s = wr.choice("precision")) w.precision = *model::parse_precision(*s);
      }
      w.bytes_per_level.assign(spec_.hardware.memory.size(), 0.0);
      if (auto b = wr.get("bytes")) {
        for (auto& [level, value] : b->entries()) {
          if (!hardware_loaded_) continue;
          auto lv = spec_.hardware.find_level(level);
          if (!lv) {
            value.error(no_level_message(level));
            continue;
          }
          if (!unit) continue;  // the unit is reported already
          const auto& path = spec_.hardware.units[*unit].memory_path;
          if (std::count(path.begin(), path.end(), *lv) == 0) {
            value.error(
                fmt::format("unit \"{}\" does not reach memory level \"{}\"", spec_.hardware.units[*unit].name, level));
            continue;
          }
          w.bytes_per_level[*lv] = value.quantity(*schema::work_table().find("bytes.<level>")).value_or(0);
        }
      }
      if (unit && w.ops > 0 && !spec_.hardware.units[*unit].peak_ops_per_s[w.precision])
        (wr.has("precision") ? *wr.get("precision") : *wr.get("ops"))
            .error(fmt::format("unit \"{}\" has no {} roof", spec_.hardware.units[*unit].name,
                               model::precision_name(w.precision)));
    } else {
      work->error("needs time or ops");
    }
  }
  if (auto v = m.get("variability")) {
    w.scale = read_distribution(*v, m.declaration("variability")).value_or(Distribution::fixed(1.0));
    if (w.kind == model::WorkSpec::Kind::none) v->error("variability needs a network or work to scale");
  }
  return w;
}

int ScenarioReader::network_at_precision(int index, const model::LayerPrecision& precision) {
  const auto& named = spec_.networks[static_cast<std::size_t>(index)];
  const std::string name = fmt::format("{}@{}", named.name, model::layer_precision_name(precision));
  for (std::size_t i = 0; i < spec_.networks.size(); ++i)
    if (spec_.networks[i].name == name) return static_cast<int>(i);
  model::NetworkSpec net = model::with_precision(named.network, precision);
  spec_.networks.push_back({name, std::move(net)});
  return static_cast<int>(spec_.networks.size()) - 1;
}

void ScenarioReader::read_cores(const MapReader& m, std::optional<std::size_t> unit, int& cores,
                                std::vector<int>& pinned) {
  cores = 0;
  auto node = m.get("cores");
  if (!node) return;
  const int unit_cores = unit ? spec_.hardware.units[*unit].cores : 64;
  const std::string unit_name = unit ? spec_.hardware.units[*unit].name : "";
  if (node->is_sequence()) {
    std::set<std::int64_t> seen;
    for (const Node& item : node->items()) {
      auto c = item.integer(0, unit_cores - 1);
      if (!c) continue;
      if (!seen.insert(*c).second) item.error(fmt::format("core {} is listed twice", *c));
      else pinned.push_back(static_cast<int>(*c));
    }
    if (node->items().empty()) node->error("needs at least one core index");
    cores = static_cast<int>(pinned.size());
    return;
  }
  auto n = m.integer("cores");
  if (!n) return;
  if (unit && *n > unit_cores) {
    node->error(fmt::format("unit \"{}\" has {} cores", unit_name, unit_cores));
    return;
  }
  cores = static_cast<int>(*n);
}

void ScenarioReader::read_schedulers(const Node& node) {
  for (auto& [name, value] : node.entries()) {
    auto unit = spec_.hardware.find_unit(name);
    if (!unit) {
      if (!hardware_loaded_) continue;
      value.error(no_unit_message(spec_.hardware, name));
      continue;
    }
    spec_.hardware.units[*unit].scheduler = read_scheduler(value);
  }
}

void ScenarioReader::read_clock_caps(const Node& node) {
  for (auto& [name, value] : node.entries()) {
    auto unit = spec_.hardware.find_unit(name);
    if (!unit) {
      if (!hardware_loaded_) continue;
      value.error(no_unit_message(spec_.hardware, name));
      continue;
    }
    auto& u = spec_.hardware.units[*unit];
    const auto text = value.text();
    if (!text) continue;
    std::vector<std::string> names;
    for (const auto& p : u.operating_points)
      names.push_back(fmt::format("{} ({})", p.name, core::format_hertz(p.frequency_Hz)));
    if (u.operating_points.size() < 2) {
      value.error(fmt::format("unit \"{}\" has a single operating point ({}): no DVFS, nothing to cap", name,
                              core::join_list(names, ", ")));
      continue;
    }
    const auto point = u.find_operating_point(*text);
    if (!point) {
      value.error(
          fmt::format("unit \"{}\" has no operating point \"{}\" (a cap names one of its points, by name "
                      "or frequency); it has {}",
                      name, core::quote_capped(*text), core::join_list(names, ", ")));
      continue;
    }
    u.fastest_point = *point;
  }
}

std::vector<model::SideWorkSpec> ScenarioReader::read_side_work(const Node& node,
                                                                std::optional<std::size_t> stage_unit) {
  std::vector<model::SideWorkSpec> out;
  auto read_one = [&](const Node& item) {
    MapReader m(item, kKeys, "stages.<stage>.side_work");
    if (!m.ok()) return;
    model::SideWorkSpec side;
    auto unit = read_unit(m, true);
    if (unit && stage_unit && *unit == *stage_unit)
      m.get("unit")->error("side work goes to another unit than the stage's own (put it in the stage's work)");
    side.unit = unit.value_or(0);
    side.after = m.choice_or_default("when", model::kSideWorkWhen);
    side.work = read_work(m, unit);
    if (side.work.kind == model::WorkSpec::Kind::none && !m.has("work") && !m.has("network"))
      item.error("side work needs work or network");
    out.push_back(side);
  };
  if (node.is_sequence()) {
    for (const Node& item : node.items()) read_one(item);
  } else {
    read_one(node);
  }
  return out;
}

}  // namespace framesim::config
