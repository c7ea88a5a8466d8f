// Sensors and stages, each read on its own: a stage's unit, cores, inputs (by name: scenario_graph.cpp resolves
// them), policy, queue, priority, precision, work, split, slice, deadline, side work and measured layer times.
#include <algorithm>

#include <fmt/format.h>

#include "config/scenario_reader.hpp"
#include "config/split.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "model/handoff.hpp"
#include "trace/measured.hpp"

namespace framesim::config {

using model::Distribution;

namespace {

const schema::Table& kKeys = schema::scenario_table();

}  // namespace

void ScenarioReader::read_sensors(const Node& node) {
  for (auto& [name, value] : node.entries()) {
    model::SensorSpec s;
    s.name = name;
    MapReader m(value, kKeys, "sensors.<sensor>");
    if (auto t = m.get("trace")) {
      // A timestamp log replayed instead of rate and jitter; the rate is then the log's mean rate.
      for (const char* k : {"rate", "phase", "jitter"})
        if (m.has(k)) m.get(k)->error(fmt::format("{} does not go with trace (the log gives every capture time)", k));
      if (auto points = read_series_at(*t, std::nullopt)) {
        for (const auto& p : *points) s.timestamps_s.push_back(p.time_s);
        if (s.timestamps_s.size() < 2 || s.timestamps_s.back() <= 0) {
          t->error("a timestamp log needs at least two increasing times");
        } else {
          s.rate_Hz = static_cast<double>(s.timestamps_s.size() - 1) / s.timestamps_s.back();
        }
      }
      s.deadline_s = m.quantity("deadline");
      names_.emplace(name, std::pair{true, spec_.sensors.size()});
      spec_.sensors.push_back(s);
      continue;
    }
    s.rate_Hz = m.quantity("rate", MapReader::Need::required).value_or(30);
    s.phase_s = m.quantity_or_default("phase");
    if (auto j = m.get("jitter")) s.jitter_s = read_distribution(*j, m.declaration("jitter")).value_or(Distribution{});
    if (s.phase_s >= 1.0 / s.rate_Hz) m.get("phase")->error("must be shorter than the sensor's period");
    s.deadline_s = m.quantity("deadline");
    names_.emplace(name, std::pair{true, spec_.sensors.size()});
    spec_.sensors.push_back(s);
  }
  if (node.is_map() && spec_.sensors.empty()) node.error("needs at least one sensor");
}

void ScenarioReader::read_stages(const Node& node) {
  std::vector<Pending> pending;
  for (auto& [name, value] : node.entries()) {
    if (names_.count(name)) {
      value.error(fmt::format("\"{}\" names both a sensor and a stage", name));
      continue;
    }
    pending.push_back(read_stage(name, value));
    names_.emplace(name, std::pair{false, pending.size() - 1});
  }
  if (node.is_map() && node.yaml().size() == 0) node.error("needs at least one stage");
  resolve_inputs(pending);
  const auto order = order_stages(pending);
  if (!order) return;
  const auto deadline_nodes = store_in_order(pending, *order);
  check_joins();
  check_sink_deadlines(deadline_nodes);
}

ScenarioReader::Pending ScenarioReader::read_stage(const std::string& name, const Node& value) {
  MapReader m(value, kKeys, "stages.<stage>");
  Pending p{{}, value, {}, std::nullopt};
  auto& s = p.spec;
  s.name = name;
  auto unit = read_unit(m, true);
  s.unit = unit.value_or(0);
  read_cores(m, unit, s.cores, s.pinned);
  if (auto ins = m.required("inputs")) {
    for (const Node& i : ins->items()) {
      if (auto t = i.text()) {
        s.input_names.push_back(*t);
        p.input_nodes.push_back(i);
      }
    }
    if (ins->is_sequence() && s.input_names.empty()) ins->error("needs at least one input");
  }
  s.policy = m.choice_or_default("policy", model::kInputPolicies);
  if (auto q = m.get("queue")) {
    MapReader qr(*q, kKeys, "stages.<stage>.queue");
    s.queue_depth = static_cast<int>(qr.integer_or_default("depth"));
    s.overflow = qr.choice_or_default("overflow", model::kOverflows);
  } else {
    s.queue_depth = static_cast<int>(scenario_fallback("stages.<stage>.queue.depth"));
    s.overflow = scenario_fallback("stages.<stage>.queue.overflow", model::kOverflows);
  }
  s.priority = static_cast<int>(m.integer_or_default("priority"));
  stage_precision_.reset();
  if (auto prec = m.get("precision")) {
    if (auto t = prec->text()) {
      stage_precision_ = model::parse_layer_precision(*t);
      if (!stage_precision_)
        prec->error(fmt::format("\"{}\" is not a precision; use one of {} or wXaY like w4a16", *t,
                                core::join_list(model::precision_names(), ", ")));
      else if (!m.has("network")) prec->error("a precision applies to a network: the stage needs network");
    }
  }
  s.work = read_work(m, unit);
  stage_precision_.reset();
  if (auto sp = m.get("split")) {
    if (s.work.kind != model::WorkSpec::Kind::network) {
      if (!m.has("network")) sp->error("a split cuts a network: the stage needs network");
    } else if (unit) {
      s.split =
          read_split(*sp, spec_.networks[static_cast<std::size_t>(s.work.network)].network, spec_.hardware, *unit);
    }
  }
  if (m.has("slice")) s.slice_s = m.quantity("slice");
  // A slice is the stage's share of the frame budget (the deadline): longer than the whole, it is a typo.
  if (s.slice_s && *s.slice_s > spec_.deadline_s * (1 + 1e-12))
    m.get("slice")->error(
        fmt::format("{} is longer than the scenario's deadline ({}): a slice is the stage's share "
                    "of it",
                    core::format_seconds(*s.slice_s), core::format_seconds(spec_.deadline_s)));
  s.deadline_s = m.quantity("deadline");
  p.deadline = m.get("deadline");
  if (auto side = m.get("side_work")) s.side_work = read_side_work(*side, unit);
  // A unit with a `handoff` derives the host work of every network it runs (model/handoff.hpp).
  if (unit && s.work.kind == model::WorkSpec::Kind::network && s.work.network >= 0)
    for (auto& derived : model::handoff_side_work(spec_.hardware, *unit,
                                                  spec_.networks[static_cast<std::size_t>(s.work.network)].network))
      s.side_work.push_back(std::move(derived));
  if (auto meas = m.get("measured")) {
    if (s.work.kind != model::WorkSpec::Kind::network) {
      meas->error("measured layer times replay a network: the stage needs network");
    } else {
      read_measured(*meas, s, name);
    }
  }
  return p;
}

void ScenarioReader::read_measured(const Node& meas, model::StageSpec& s, const std::string& name) {
  auto written = meas.text();
  if (!written) return;
  const auto path = input_path(meas.document(), *written);
  try {
    // Matched to the stage's network: PyTorch op order and TFLite tensor names need it.
    const auto& net = spec_.networks[static_cast<std::size_t>(s.work.network)].network;
    const auto trace = trace::read_measured_trace(path);
    const auto matched = trace::match_measurements(trace, net);
    const auto verdict = trace::judge_match(trace, matched, net);
    if (verdict.error) meas.error(*verdict.error);
    if (verdict.warning) spec_.warnings.push_back({meas.location(), meas.path(), *verdict.warning});
    s.measured = matched.measurements;
    for (const auto& f : trace.frames) {
      auto& frame = s.measured_frames.emplace_back();
      frame.duration_s = f.end_s - f.start_s;
      for (const auto& span : f.spans)
        frame.spans.push_back({span.entry >= 0 ? trace.entries[static_cast<std::size_t>(span.entry)].name : "",
                               span.start_s - f.start_s, span.duration_s, span.stream});
    }
    s.measured_file = path.generic_string();
    for (const auto& n : matched.notes) spec_.notes.push_back(fmt::format("stage {}: {}", name, n));
  } catch (const core::UserError& e) {
    forward(e, meas);
  }
}

}  // namespace framesim::config
