#include "config/sweep.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "config/yaml.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace framesim::config {

namespace {

const schema::Table& kKeys = schema::sweep_table();

const std::array kRangeDimensions{core::Dimension::BytesPerSecond,  core::Dimension::Bytes,
                                  core::Dimension::OpsPerSecond,    core::Dimension::Ops,
                                  core::Dimension::Seconds,         core::Dimension::Hertz,
                                  core::Dimension::Watts,           core::Dimension::Joules,
                                  core::Dimension::Celsius,         core::Dimension::KelvinPerWatt,
                                  core::Dimension::JoulesPerKelvin, core::Dimension::Volts,
                                  core::Dimension::MetresPerSecond};

/// A value in SI units as text every reader of that dimension accepts (round-trip precision).
std::string quantity_text(double v, std::optional<core::Dimension> d) {
  const std::string_view unit = d ? core::base_unit(*d) : std::string_view{};
  if (unit.empty()) return fmt::format("{}", v);
  return fmt::format("{} {}", v, unit);
}

std::string label_of(double v, std::optional<core::Dimension> d) {
  if (!d) return core::format_number(v, 4);
  switch (*d) {
    case core::Dimension::Bytes: return core::format_bytes(v);
    case core::Dimension::BytesPerSecond: return core::format_bandwidth(v);
    case core::Dimension::Seconds: return core::format_seconds(v);
    case core::Dimension::Hertz: return core::format_hertz(v);
    case core::Dimension::Watts: return core::format_watts(v);
    case core::Dimension::Celsius: return core::format_number(v, 4) + " C";
    default: return quantity_text(v, d);
  }
}

/// `node` as one line of YAML text (flow style).
std::string flow_text(const YAML::Node& node) {
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

/// A scalar as the label a table shows: the text as written, lists flattened.
std::string label_of(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  return flow_text(node);
}

SweepAxis read_axis(const std::string& path, const Node& node) {
  SweepAxis axis;
  axis.path = path;
  axis.origin = node.location();
  if (node.is_sequence()) {
    for (const Node& item : node.items()) {
      axis.values.push_back(flow_text(item.yaml()));
      axis.labels.push_back(label_of(YAML::Load(axis.values.back())));  // the value as the override reads it
      axis.origins.push_back(item.location());
    }
    if (axis.values.empty()) node.error("an axis needs at least one value");
    return axis;
  }
  MapReader m(node, kKeys, "axes.<key_path>");
  if (!m.ok()) return axis;
  if (m.has("values") == m.has("range")) {
    node.error("give either values (a list) or range ([low, high], Latin hypercube)");
    return axis;
  }
  if (auto values = m.get("values")) return read_axis(path, *values);
  auto range = m.get("range");
  axis.range = true;
  auto ends = range->items();
  if (ends.size() != 2) {
    range->error("expected [low, high]");
    return axis;
  }
  auto low_text = ends[0].text(), high_text = ends[1].text();
  if (!low_text || !high_text) return axis;
  // The dimension both ends parse as; a plain number when they carry no unit.
  double low = 0, high = 0;
  bool found = false;
  auto plain = [](const std::string& t) -> std::optional<double> {
    double v = 0;
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  };
  if (auto a = plain(*low_text), b = plain(*high_text); a && b) {
    low = *a, high = *b, found = true;
  } else {
    for (auto d : kRangeDimensions) {
      auto lo = core::parse_quantity(*low_text, d), hi = core::parse_quantity(*high_text, d);
      if (lo.value && hi.value) {
        low = *lo.value, high = *hi.value, axis.dimension = d, found = true;
        break;
      }
    }
  }
  if (!found) {
    range->error(
        fmt::format("\"{}\" and \"{}\" are not two quantities of one kind (or two numbers)", *low_text, *high_text));
    return axis;
  }
  if (!(low < high)) {
    range->error("the low end must be below the high end");
    return axis;
  }
  axis.low = low;
  axis.high = high;
  if (auto scale = m.choice("scale", kAxisScales)) axis.log_scale = *scale;
  if (axis.log_scale && low <= 0) m.get("scale")->error("a log scale needs a positive range");
  axis.integer = m.boolean("integer").value_or(false);
  return axis;
}

}  // namespace

SweepSpec load_sweep(const std::filesystem::path& path) {
  core::Diagnostics diagnostics;
  auto doc = Document::load(path, diagnostics);
  Node root(doc, doc->root(), "");
  SweepSpec sweep;
  sweep.source_file = doc->display_path();
  MapReader m(root, kKeys, "");
  if (m.ok()) {
    sweep.name = m.text("name").value_or("");
    m.text("description");
    if (auto s = m.required("scenario")) {
      if (auto t = s->text()) {
        sweep.scenario = resolve_path(*doc, *t);
        std::error_code ec;
        if (!std::filesystem::is_regular_file(sweep.scenario, ec))
          s->error(fmt::format("{}: {}", sweep.scenario.generic_string(),
                               std::filesystem::exists(sweep.scenario, ec) ? "not a file" : "no such file"));
      }
    }
    if (m.quantity("duration")) sweep.duration = m.get("duration")->yaml().Scalar();
    sweep.mode = m.choice_or_default("mode", kSweepModes);
    sweep.samples = static_cast<int>(m.integer("samples").value_or(0));
    sweep.seed = static_cast<std::uint64_t>(m.integer_or_default("seed"));
    if (sweep.mode == SweepMode::latin_hypercube && !m.has("samples"))
      root.error("a latin_hypercube sweep needs samples (how many points)");
    if (sweep.mode != SweepMode::latin_hypercube && m.has("samples"))
      m.get("samples")->error("samples is for mode: latin_hypercube");
    if (auto axes = m.required("axes")) {
      for (auto& [key, value] : axes->entries()) sweep.axes.push_back(read_axis(key, value));
      if (axes->is_map() && sweep.axes.empty()) axes->error("needs at least one axis");
      for (std::size_t i = 0; i < sweep.axes.size(); ++i) {
        const auto& axis = sweep.axes[i];
        if (axis.range && sweep.mode != SweepMode::latin_hypercube)
          diagnostics.add(axis.origin, "axes." + axis.path,
                          "a range axis needs mode: latin_hypercube (or give values)");
        if (sweep.mode == SweepMode::grid && i + 1 == sweep.axes.size()) {
          // The grid's size, without overflowing: refused past kMaxSweepPoints.
          double points = 1;
          for (const auto& a : sweep.axes) points *= static_cast<double>(std::max<std::size_t>(1, a.values.size()));
          if (points > static_cast<double>(kMaxSweepPoints))
            diagnostics.add(axes->location(), "axes",
                            fmt::format("a grid of {} axes is {:.4g} points; a sweep has at most {} (use mode: "
                                        "latin_hypercube with samples, or fewer values)",
                                        sweep.axes.size(), points, kMaxSweepPoints));
        }
        if (sweep.mode == SweepMode::zip && !axis.range && axis.values.size() != sweep.axes.front().values.size())
          diagnostics.add(
              axis.origin, "axes." + axis.path,
              fmt::format("zipped axes need as many values each: {} has {}, {} has {}", sweep.axes.front().path,
                          sweep.axes.front().values.size(), axis.path, axis.values.size()));
      }
    }
  }
  diagnostics.throw_if_any();
  return sweep;
}

std::vector<SweepPoint> expand_sweep(const SweepSpec& sweep) {
  std::vector<SweepPoint> points;
  auto add_value = [](SweepPoint& p, const SweepAxis& axis, std::size_t v) {
    p.overrides.push_back({axis.path, axis.values[v], axis.origins[v]});
    p.labels.push_back(axis.labels[v]);
  };
  switch (sweep.mode) {
    case SweepMode::grid: {
      std::size_t total = 1;
      for (const auto& a : sweep.axes) total *= a.values.size();
      for (std::size_t i = 0; i < total; ++i) {
        SweepPoint p;
        p.index = i;
        std::size_t rest = i;
        std::vector<std::size_t> choice(sweep.axes.size());
        for (std::size_t k = sweep.axes.size(); k-- > 0;) {  // the last axis varies fastest
          choice[k] = rest % sweep.axes[k].values.size();
          rest /= sweep.axes[k].values.size();
        }
        for (std::size_t k = 0; k < sweep.axes.size(); ++k) add_value(p, sweep.axes[k], choice[k]);
        points.push_back(std::move(p));
      }
      break;
    }
    case SweepMode::zip: {
      const std::size_t n = sweep.axes.empty() ? 0 : sweep.axes.front().values.size();
      for (std::size_t i = 0; i < n; ++i) {
        SweepPoint p;
        p.index = i;
        for (const auto& axis : sweep.axes) add_value(p, axis, i);
        points.push_back(std::move(p));
      }
      break;
    }
    case SweepMode::latin_hypercube: {
      // Each axis is cut into `samples` equal strata; every stratum is used once, in a random order per axis,
      // with a uniform sample inside it (on a log scale where asked).
      const auto n = static_cast<std::size_t>(sweep.samples);
      std::mt19937_64 rng(sweep.seed);
      std::vector<std::vector<double>> unit(sweep.axes.size(), std::vector<double>(n));
      for (auto& column : unit) {
        std::vector<std::size_t> strata(n);
        std::iota(strata.begin(), strata.end(), 0);
        std::shuffle(strata.begin(), strata.end(), rng);
        std::uniform_real_distribution<double> u(0.0, 1.0);
        for (std::size_t i = 0; i < n; ++i)
          column[i] = (static_cast<double>(strata[i]) + u(rng)) / static_cast<double>(n);
      }
      for (std::size_t i = 0; i < n; ++i) {
        SweepPoint p;
        p.index = i;
        for (std::size_t k = 0; k < sweep.axes.size(); ++k) {
          const auto& axis = sweep.axes[k];
          const double f = unit[k][i];
          if (!axis.range) {
            add_value(p, axis,
                      std::min(axis.values.size() - 1,
                               static_cast<std::size_t>(f * static_cast<double>(axis.values.size()))));
            continue;
          }
          double v = axis.log_scale ? std::exp(std::log(axis.low) + f * (std::log(axis.high) - std::log(axis.low)))
                                    : axis.low + f * (axis.high - axis.low);
          if (axis.integer) v = std::round(v);
          p.overrides.push_back({axis.path, quantity_text(v, axis.dimension), axis.origin});
          p.labels.push_back(label_of(v, axis.dimension));
        }
        points.push_back(std::move(p));
      }
      break;
    }
  }
  return points;
}

}  // namespace framesim::config
