#include "cli/map_search.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "config/cut.hpp"
#include "config/scenario.hpp"
#include "config/unit_names.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "model/cost.hpp"
#include "model/precision.hpp"

namespace framesim::cli {

namespace {

std::string logical_name(const model::StageSpec& s) { return s.part_of.empty() ? s.name : s.part_of; }

/// The rate of the sensor a stage's first input leads back to.
double origin_rate_Hz(const model::ScenarioSpec& spec, std::size_t stage) {
  const model::InputRef* in = &spec.stages[stage].inputs.front();
  while (!in->sensor) in = &spec.stages[in->index].inputs.front();
  return spec.sensors[in->index].rate_Hz;
}

/// A space's split points, each checked as the scenario reader checks a cut (an index or a layer name, after the
/// first layer and inside the network); a cut moves the layers after it to another of the stage's units, so
/// splits need two units to choose from.
void check_splits(const config::MapStageChoices& choices, const model::NetworkSpec& net, std::size_t units,
                  core::Diagnostics& problems) {
  for (std::size_t k = 0; k < choices.splits.size(); ++k) {
    std::string problem;
    if (config::cut_layer(choices.splits[k], net, problem)) continue;
    const auto& at = k < choices.split_origins.size() ? choices.split_origins[k] : choices.origin;
    problems.add(at, fmt::format("stages.{}.splits[{}]", choices.stage, k), problem);
  }
  if (!choices.splits.empty() && units < 2)
    problems.add(choices.origin, "stages." + choices.stage + ".splits",
                 "a cut moves the layers after it to another of the stage's units: give at least two `units`");
}

/// Stage `s` of `spec` at every operating point of its unit (`floors`: of `spec`).
PartCost part_cost(const model::ScenarioSpec& spec, const model::StageFloors& floors, std::size_t s) {
  PartCost c;
  c.unit = spec.stages[s].unit;
  for (std::size_t k = 0; k < spec.hardware.units[c.unit].operating_points.size(); ++k) {
    c.floor_s.push_back(floors.floor_s(s, model::Roofs::effective, k));
    c.energy_J.push_back(floors.dynamic_energy_J(s, k));
  }
  return c;
}

/// `text` as a double-quoted YAML scalar (an override's value).
std::string yaml_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

MapSearch::MapSearch(const std::filesystem::path& scenario, const model::ScenarioSpec& base,
                     const config::MapSpace& space)
    : base_(base) {
  // Logical stages (a split stage's parts folded into one) and their inputs.
  std::map<std::string, std::size_t> index_of;
  std::vector<std::size_t> logical_of(base.stages.size());
  for (std::size_t s = 0; s < base.stages.size(); ++s) {
    const std::string name = logical_name(base.stages[s]);
    auto [it, added] = index_of.emplace(name, logical_.size());
    if (added) {
      logical_.push_back(name);
      inputs_.emplace_back();
    }
    logical_of[s] = it->second;
  }
  for (std::size_t s = 0; s < base.stages.size(); ++s)
    for (const auto& in : base.stages[s].inputs)
      if (!in.sensor && logical_of[in.index] != logical_of[s]) inputs_[logical_of[s]].push_back(logical_of[in.index]);

  core::Diagnostics problems;
  std::set<std::string> in_space;
  for (const auto& choices : space.stages) {
    auto where = [&](const std::string& message) { problems.add(choices.origin, "stages." + choices.stage, message); };
    if (!index_of.count(choices.stage)) {
      std::string message = fmt::format("the scenario has no stage \"{}\"", choices.stage);
      if (auto near = core::closest_match(choices.stage, logical_))
        message += fmt::format(" (did you mean \"{}\"?)", *near);
      where(message);
      continue;
    }
    in_space.insert(choices.stage);
    // The stage as the scenario has it: its unit (the first part's), network, split.
    std::size_t first = 0;
    while (logical_name(base.stages[first]) != choices.stage) ++first;
    const auto& stage = base.stages[first];
    if (!stage.split.empty()) {
      where("the scenario splits this stage already: the space cannot take the split away (remove it from the file)");
      continue;
    }
    const bool network = stage.work.kind == model::WorkSpec::Kind::network;
    if (!network && (!choices.splits.empty() || !choices.precisions.empty())) {
      where("splits and precisions need a stage that runs a network");
      continue;
    }
    for (const auto& u : choices.units)
      if (!base.hardware.find_unit(u)) where(fmt::format("{} has no unit \"{}\"", base.hardware.source_file, u));
    for (const auto& p : choices.precisions)
      if (!model::parse_layer_precision(p)) where(fmt::format("\"{}\" is not a precision", p));
    const std::vector<std::string> units =
        choices.units.empty() ? std::vector<std::string>{base.hardware.units[stage.unit].name} : choices.units;
    if (network)
      check_splits(choices, base.networks[static_cast<std::size_t>(stage.work.network)].network, units.size(),
                   problems);
    StageAxis axis;
    axis.stage = choices.stage;
    axis.rate_Hz = origin_rate_Hz(base, first);
    axis.split_key = !choices.splits.empty();
    axis.precision_key = !choices.precisions.empty();
    axis.priority_key = !choices.priorities.empty();
    std::vector<std::optional<std::string>> precisions{std::nullopt};
    if (axis.precision_key) precisions.assign(choices.precisions.begin(), choices.precisions.end());
    std::vector<std::optional<int>> priorities{std::nullopt};
    if (axis.priority_key) priorities.assign(choices.priorities.begin(), choices.priorities.end());
    for (const auto& u : units)
      for (const auto& p : precisions)
        for (const auto& pr : priorities) {
          auto add = [&](std::optional<std::string> at, std::optional<std::string> to) {
            StageOption o{u, at, to, p, pr, u, std::nullopt, {}, std::nullopt, {}};
            if (at) o.label += fmt::format("|{}@{}", *to, *at);
            if (p) o.label += " " + *p;
            if (pr) o.label += fmt::format(" p{}", *pr);
            axis.options.push_back(std::move(o));
          };
          add(std::nullopt, std::nullopt);
          for (const auto& k : choices.splits)
            for (const auto& v : units)
              if (v != u) add(k, v);
        }
    axes_.push_back(std::move(axis));
  }
  add_cap_axes(space, problems);
  problems.throw_if_any();
  primary_rate_Hz = base.sensors.empty() ? 0.0 : base.sensors.front().rate_Hz;

  // The static pass, per option: the scenario with only that option, its parts' floors.
  for (auto& axis : axes_) {
    if (axis.cap_unit) continue;
    for (std::size_t k = 0; k < axis.options.size(); ++k) {
      StageOption& o = axis.options[k];
      std::vector<config::Override> ov;
      const std::string prefix = "stages." + axis.stage + ".";
      ov.push_back({prefix + "unit", o.unit, {}});
      if (axis.split_key)
        ov.push_back({prefix + "split",
                      o.split_at ? fmt::format("{{at: \"{}\", unit: {}}}", *o.split_at, *o.split_unit) : "[]",
                      {}});
      if (o.precision) ov.push_back({prefix + "precision", *o.precision, {}});
      if (o.priority) ov.push_back({prefix + "priority", std::to_string(*o.priority), {}});
      try {
        const auto spec = config::load_scenario(scenario, ov);
        const model::StageFloors floors(spec);
        for (std::size_t s = 0; s < spec.stages.size(); ++s)
          if (logical_name(spec.stages[s]) == axis.stage) o.parts.push_back(part_cost(spec, floors, s));
      } catch (const core::UserError& e) {
        o.refused = e.diagnostics().empty() ? std::string(e.what()) : e.diagnostics().front().message;
      }
    }
  }
  const model::StageFloors base_floors(base);
  for (std::size_t s = 0; s < base.stages.size(); ++s) {
    const std::string name = logical_name(base.stages[s]);
    if (!in_space.count(name)) fixed_.push_back({name, part_cost(base, base_floors, s), origin_rate_Hz(base, s)});
  }
}

void MapSearch::add_cap_axes(const config::MapSpace& space, core::Diagnostics& problems) {
  const auto& hw = base_.hardware;
  for (const auto& caps : space.clock_caps) {
    const std::string key = "clock_caps." + caps.unit;
    const auto unit = hw.find_unit(caps.unit);
    if (!unit) {
      problems.add(caps.origin, key, config::no_unit_message(hw, caps.unit));
      continue;
    }
    const auto& u = hw.units[*unit];
    std::vector<std::string> names;
    for (const auto& p : u.operating_points)
      names.push_back(fmt::format("{} ({})", p.name, core::format_hertz(p.frequency_Hz)));
    if (u.operating_points.size() < 2) {
      problems.add(caps.origin, key,
                   fmt::format("unit \"{}\" has a single operating point (no DVFS in {}): nothing to cap", caps.unit,
                               hw.source_file));
      continue;
    }
    StageAxis axis;
    axis.stage = key;
    axis.cap_unit = *unit;
    for (std::size_t k = 0; k < caps.points.size(); ++k) {
      const auto& at = k < caps.point_origins.size() ? caps.point_origins[k] : caps.origin;
      const std::string item = fmt::format("{}[{}]", key, k);
      const auto point = u.find_operating_point(caps.points[k]);
      if (!point) {
        problems.add(at, item,
                     fmt::format("unit \"{}\" has no operating point \"{}\" (a cap names one of its points, by name "
                                 "or frequency); it has {}",
                                 caps.unit, core::quote_capped(caps.points[k]), core::join_list(names, ", ")));
        continue;
      }
      bool twice = false;
      for (const auto& o : axis.options)
        if (o.cap_point == point) {
          problems.add(at, item,
                       fmt::format("\"{}\" is the operating point \"{}\" names already (one simulation twice)",
                                   caps.points[k], o.cap_text));
          twice = true;
        }
      if (twice) continue;
      StageOption o;
      o.unit = caps.unit;
      o.label = caps.points[k];
      o.cap_point = point;
      o.cap_text = caps.points[k];
      axis.options.push_back(std::move(o));
    }
    if (axis.options.empty()) {
      if (caps.points.empty()) problems.add(caps.origin, key, "needs at least one operating point");
      continue;
    }
    axes_.push_back(std::move(axis));
  }
}

std::size_t MapSearch::baseline_cap(const StageAxis& axis) const {
  const std::size_t own = base_.hardware.units[*axis.cap_unit].fastest_point;
  std::size_t best = 0;
  for (std::size_t k = 0; k < axis.options.size(); ++k) {
    if (*axis.options[k].cap_point == own) return k;
    if (*axis.options[k].cap_point < *axis.options[best].cap_point) best = k;
  }
  return best;
}

double MapSearch::space_size() const {
  double n = 1;
  for (const auto& a : axes_) n *= static_cast<double>(a.options.size());
  return n;
}

std::string MapSearch::label(const Mapping& m) const {
  std::vector<std::string> parts;
  for (std::size_t a = 0; a < axes_.size(); ++a)
    parts.push_back(fmt::format("{}={}", axes_[a].stage, axes_[a].options[m[a]].label));
  return core::join_list(parts, ", ");
}

std::vector<config::Override> MapSearch::overrides(const Mapping& m) const {
  std::vector<config::Override> out;
  for (std::size_t a = 0; a < axes_.size(); ++a) {
    const auto& axis = axes_[a];
    const auto& o = axis.options[m[a]];
    if (axis.cap_unit) {
      out.push_back({axis.stage, yaml_quoted(o.cap_text), {}});
      continue;
    }
    const std::string prefix = "stages." + axis.stage + ".";
    out.push_back({prefix + "unit", o.unit, {}});
    if (axis.split_key)
      out.push_back({prefix + "split",
                     o.split_at ? fmt::format("{{at: \"{}\", unit: {}}}", *o.split_at, *o.split_unit) : "[]",
                     {}});
    if (axis.precision_key) out.push_back({prefix + "precision", *o.precision, {}});
    if (axis.priority_key) out.push_back({prefix + "priority", std::to_string(*o.priority), {}});
  }
  return out;
}

StaticVerdict MapSearch::judge(const Mapping& m) const {
  StaticVerdict v;
  const auto& hw = base_.hardware;
  // Each unit's clock: its cap in the mapping, else the scenario's (its fastest allowed point).
  std::vector<std::size_t> point;
  for (const auto& u : hw.units) point.push_back(u.fastest_point);
  for (std::size_t a = 0; a < axes_.size(); ++a)
    if (axes_[a].cap_unit) point[*axes_[a].cap_unit] = *axes_[a].options[m[a]].cap_point;
  std::map<std::string, double> busy;
  std::map<std::string, double> floor;
  double dynamic_W = 0;  // the stages' dynamic energy per second
  auto add = [&](const std::string& stage, const PartCost& part, double rate_Hz) {
    const std::size_t k = point[part.unit];
    busy[hw.units[part.unit].name] += part.floor_s[k] * rate_Hz;
    floor[stage] += part.floor_s[k];
    dynamic_W += part.energy_J[k] * rate_Hz;
  };
  for (const auto& f : fixed_) add(f.stage, f.cost, f.rate_Hz);
  for (std::size_t a = 0; a < axes_.size(); ++a) {
    if (axes_[a].cap_unit) continue;
    const auto& o = axes_[a].options[m[a]];
    if (o.refused) {
      v.reason = fmt::format("{}: {}", axes_[a].stage, *o.refused);
      return v;
    }
    for (const auto& part : o.parts) add(axes_[a].stage, part, axes_[a].rate_Hz);
  }
  double static_W = 0;
  for (std::size_t u = 0; u < hw.units.size(); ++u) static_W += model::static_power_W(hw.units[u], point[u]);
  if (primary_rate_Hz > 0) v.energy_J = (dynamic_W + static_W) / primary_rate_Hz;
  std::string busiest;
  for (const auto& [u, b] : busy)
    if (b > v.max_utilisation) v.max_utilisation = b, busiest = u;
  std::vector<double> path(logical_.size(), 0.0);
  std::vector<bool> feeds(logical_.size(), false);
  for (std::size_t l = 0; l < logical_.size(); ++l) {
    double before = 0;
    for (std::size_t in : inputs_[l]) before = std::max(before, path[in]), feeds[in] = true;
    path[l] = before + floor[logical_[l]];
  }
  for (std::size_t l = 0; l < logical_.size(); ++l)
    if (!feeds[l]) v.worst_path_floor_s = std::max(v.worst_path_floor_s, path[l]);
  if (v.max_utilisation > 1 + 1e-9) {
    v.reason = fmt::format("{} would be {:.0f} % busy at its floor", busiest, 100 * v.max_utilisation);
  } else if (v.worst_path_floor_s > base_.deadline_s * (1 + 1e-9)) {
    v.reason = fmt::format("a path's floor ({}) exceeds the deadline ({})", core::format_seconds(v.worst_path_floor_s),
                           core::format_seconds(base_.deadline_s));
  } else {
    v.fits = true;
  }
  return v;
}

std::vector<Mapping> MapSearch::ranked(std::size_t limit, std::size_t& kept) const {
  struct Ranked {
    Mapping m;
    StaticVerdict v;
  };
  std::vector<Ranked> all;
  Mapping m(axes_.size(), 0);
  kept = 0;
  const double total = space_size();
  for (double i = 0; i < total; ++i) {
    auto v = judge(m);
    if (v.fits) {
      ++kept;
      all.push_back({m, v});
    }
    for (std::size_t a = axes_.size(); a-- > 0;) {  // the last axis fastest
      if (++m[a] < axes_[a].options.size()) break;
      m[a] = 0;
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const Ranked& x, const Ranked& y) {
    if (x.v.max_utilisation != y.v.max_utilisation) return x.v.max_utilisation < y.v.max_utilisation;
    return x.v.worst_path_floor_s < y.v.worst_path_floor_s;
  });
  std::vector<Mapping> out;
  for (std::size_t i = 0; i < all.size() && out.size() < limit; ++i) out.push_back(all[i].m);
  return out;
}

std::vector<Mapping> MapSearch::neighbours(const Mapping& m) const {
  // Round robin over the stages (each stage's first other option, then each one's second, ...): a batch the
  // budget cuts short still tries every stage, not the first stage's options alone.
  std::vector<Mapping> out;
  std::size_t most = 0;
  for (const auto& axis : axes_) most = std::max(most, axis.options.size());
  for (std::size_t k = 0; k < most; ++k)
    for (std::size_t a = 0; a < axes_.size(); ++a) {
      if (k >= axes_[a].options.size() || k == m[a]) continue;
      Mapping n = m;
      n[a] = k;
      out.push_back(n);
    }
  return out;
}

std::optional<Mapping> MapSearch::own() const {
  Mapping m;
  for (const auto& axis : axes_) {
    if (axis.cap_unit) {
      std::optional<std::size_t> found;
      for (std::size_t k = 0; k < axis.options.size() && !found; ++k)
        if (*axis.options[k].cap_point == base_.hardware.units[*axis.cap_unit].fastest_point) found = k;
      if (!found) return std::nullopt;
      m.push_back(*found);
      continue;
    }
    std::size_t first = 0;
    while (logical_name(base_.stages[first]) != axis.stage) ++first;
    const auto& s = base_.stages[first];
    std::optional<std::size_t> found;
    // The precision the stage's network is in as the scenario has it (its first layer's).
    std::optional<model::LayerPrecision> written;
    if (s.work.kind == model::WorkSpec::Kind::network) {
      const auto& net = base_.networks[static_cast<std::size_t>(s.work.network)].network;
      if (!net.layers.empty()) written = net.layers.front().precision;
    }
    auto same_precision = [&](const std::optional<std::string>& p) {
      if (!p) return true;
      const auto parsed = model::parse_layer_precision(*p);
      return parsed && written && model::layer_precision_name(*parsed) == model::layer_precision_name(*written);
    };
    for (std::size_t k = 0; k < axis.options.size() && !found; ++k) {
      const auto& o = axis.options[k];
      if (o.unit == base_.hardware.units[s.unit].name && !o.split_at && same_precision(o.precision) &&
          (!o.priority || *o.priority == s.priority))
        found = k;
    }
    if (!found) return std::nullopt;
    m.push_back(*found);
  }
  return m;
}

std::optional<Mapping> MapSearch::all_on(const std::string& unit) const {
  Mapping m;
  for (const auto& axis : axes_) {
    if (axis.cap_unit) {
      m.push_back(baseline_cap(axis));
      continue;
    }
    std::optional<std::size_t> found;
    for (std::size_t k = 0; k < axis.options.size() && !found; ++k)
      if (axis.options[k].unit == unit && !axis.options[k].split_at) found = k;
    if (!found) return std::nullopt;
    m.push_back(*found);
  }
  return m;
}

std::optional<Mapping> MapSearch::one_per_unit() const {
  Mapping m;
  std::set<std::string> taken;
  for (const auto& axis : axes_) {
    if (axis.cap_unit) {
      m.push_back(baseline_cap(axis));
      continue;
    }
    std::optional<std::size_t> found;
    // The GPU first, then the other units in the hardware's order.
    std::vector<std::string> order;
    for (const auto& u : base_.hardware.units)
      if (u.kind == model::UnitKind::gpu) order.push_back(u.name);
    for (const auto& u : base_.hardware.units)
      if (u.kind != model::UnitKind::gpu) order.push_back(u.name);
    for (const auto& unit : order) {
      if (taken.count(unit)) continue;
      for (std::size_t k = 0; k < axis.options.size() && !found; ++k)
        if (axis.options[k].unit == unit && !axis.options[k].split_at && !axis.options[k].refused) found = k;
      if (found) break;
    }
    if (!found) return std::nullopt;
    taken.insert(axis.options[*found].unit);
    m.push_back(*found);
  }
  return m;
}

bool MapSearch::better(const Outcome& a, const Outcome& b, const std::string& objective) {
  if (objective == "energy") {
    if (a.meets != b.meets) return a.meets;
    if (a.meets) {
      if (a.energy_J != b.energy_J) return a.energy_J < b.energy_J;
      return a.worst_p99_s < b.worst_p99_s;
    }
    // Both miss: fewer paths out of their deadline first (a stage moved onto its deadline is progress even
    // while another path still bounds the worst p99), then the worst path.
    if (a.missing_paths != b.missing_paths) return a.missing_paths < b.missing_paths;
    if (a.worst_p99_s != b.worst_p99_s) return a.worst_p99_s < b.worst_p99_s;
    return a.energy_J < b.energy_J;
  }
  if (a.worst_p99_s != b.worst_p99_s) return a.worst_p99_s < b.worst_p99_s;
  return a.energy_J < b.energy_J;
}

}  // namespace framesim::cli
