// The references between a scenario's parts: each stage's inputs resolved to sensors and stages and the stages put
// in data-flow order, joins and sink deadlines checked, and the tasks and chains that name stages.
#include <algorithm>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "config/scenario_reader.hpp"
#include "core/text.hpp"

namespace framesim::config {

namespace {

const schema::Table& kKeys = schema::scenario_table();

}  // namespace

void ScenarioReader::resolve_inputs(std::vector<Pending>& pending) {
  std::vector<std::string> all_names;
  for (const auto& [n, v] : names_) all_names.push_back(n);
  for (auto& p : pending) {
    std::set<std::string> seen;
    for (std::size_t i = 0; i < p.spec.input_names.size(); ++i) {
      const auto& in = p.spec.input_names[i];
      if (!seen.insert(in).second) {
        p.input_nodes[i].error(fmt::format("\"{}\" is listed twice", in));
        continue;
      }
      auto it = names_.find(in);
      if (it == names_.end()) {
        std::string message = fmt::format("no sensor or stage \"{}\"", in);
        if (auto near = core::closest_match(in, all_names)) message += fmt::format(" (did you mean \"{}\"?)", *near);
        p.input_nodes[i].error(message);
        continue;
      }
      if (!it->second.first && it->second.second == static_cast<std::size_t>(&p - pending.data())) {
        p.input_nodes[i].error("a stage cannot read its own output");
        continue;
      }
      p.spec.inputs.push_back({it->second.first, it->second.second});
    }
  }
}

std::optional<std::vector<int>> ScenarioReader::order_stages(const std::vector<Pending>& pending) {
  std::vector<int> order;
  std::vector<int> state(pending.size(), 0);  // 0 new, 1 on the path being explored, 2 done
  std::vector<std::size_t> path;
  std::optional<std::vector<std::size_t>> cycle;
  std::function<void(std::size_t)> visit = [&](std::size_t i) {
    if (state[i] == 2 || cycle) return;
    if (state[i] == 1) {
      cycle.emplace(std::find(path.begin(), path.end(), i), path.end());
      return;
    }
    state[i] = 1;
    path.push_back(i);
    for (const auto& in : pending[i].spec.inputs)
      if (!in.sensor) visit(in.index);
    path.pop_back();
    state[i] = 2;
    order.push_back(static_cast<int>(i));
  };
  for (std::size_t i = 0; i < pending.size() && !cycle; ++i) visit(i);
  if (cycle) {
    // Report at the cycle's first stage in the file, naming the whole loop.
    const std::size_t first = *std::min_element(cycle->begin(), cycle->end());
    std::vector<std::string> names;
    auto start = std::find(cycle->begin(), cycle->end(), first);
    for (std::size_t k = 0; k <= cycle->size(); ++k)
      names.push_back(pending[(*cycle)[static_cast<std::size_t>((start - cycle->begin() + static_cast<long>(k)) %
                                                                static_cast<long>(cycle->size()))]]
                          .spec.name);
    std::reverse(names.begin(), names.end());  // in data-flow order: each reads the one before
    pending[first].node.error(
        fmt::format("stages form a cycle: {} (stages must form a DAG)", fmt::join(names, " -> ")));
    return std::nullopt;
  }
  return order;
}

std::vector<std::optional<Node>> ScenarioReader::store_in_order(const std::vector<Pending>& pending,
                                                                const std::vector<int>& order) {
  std::vector<std::size_t> new_index(pending.size());
  for (std::size_t k = 0; k < order.size(); ++k) new_index[static_cast<std::size_t>(order[k])] = k;
  for (int i : order) {
    model::StageSpec s = pending[static_cast<std::size_t>(i)].spec;
    s.declared = static_cast<std::size_t>(i);
    for (auto& in : s.inputs)
      if (!in.sensor) in.index = new_index[in.index];
    spec_.stages.push_back(std::move(s));
  }
  for (auto& [n, v] : names_)
    if (!v.first) v.second = new_index[v.second];
  std::vector<std::optional<Node>> deadline_nodes;  // in the new order
  for (std::size_t i = 0; i < pending.size(); ++i) {
    stage_nodes_.push_back(pending[static_cast<std::size_t>(order[i])].node);
    deadline_nodes.push_back(pending[static_cast<std::size_t>(order[i])].deadline);
  }
  return deadline_nodes;
}

void ScenarioReader::check_joins() {
  for (std::size_t i = 0; i < spec_.stages.size(); ++i) {
    const auto& s = spec_.stages[i];
    if (s.policy != model::InputPolicy::all || s.inputs.size() < 2) continue;
    std::set<std::size_t> sources;
    bool resolved = true;
    for (const auto& in : s.inputs) {
      const auto origin = origin_sensor(in);
      resolved = resolved && origin.has_value();
      if (origin) sources.insert(*origin);
    }
    if (!resolved) continue;  // an input that names nothing is reported already
    if (sources.size() > 1)
      stage_nodes_[i].error(
          fmt::format("stage \"{}\" joins inputs from different sensors with policy all (same frame from every input); "
                      "use policy: latest",
                      s.name));
  }
}

void ScenarioReader::check_sink_deadlines(const std::vector<std::optional<Node>>& deadline_nodes) {
  for (std::size_t i = 0; i < spec_.stages.size(); ++i) {
    if (!spec_.stages[i].deadline_s || !deadline_nodes[i]) continue;
    for (const auto& reader : spec_.stages)
      if (std::any_of(reader.inputs.begin(), reader.inputs.end(),
                      [i](const model::InputRef& in) { return !in.sensor && in.index == i; })) {
        deadline_nodes[i]->error(
            fmt::format("stage \"{}\" is read by \"{}\": a stage's deadline is for the paths ending "
                        "at it, so it goes on a sink (a stage no other stage reads)",
                        spec_.stages[i].name, reader.name));
        break;
      }
  }
}

std::optional<std::size_t> ScenarioReader::origin_sensor(const model::InputRef& in) const {
  if (in.sensor) return in.index;
  const auto& inputs = spec_.stages[in.index].inputs;
  if (inputs.empty()) return std::nullopt;
  return origin_sensor(inputs.front());
}

void ScenarioReader::read_tasks(const Node& node) {
  for (auto& [name, value] : node.entries()) {
    MapReader m(value, kKeys, "tasks.<task>");
    model::TaskSpec t;
    t.name = name;
    t.rate_Hz = m.quantity("rate").value_or(100);
    t.phase_s = m.quantity_or_default("phase");
    auto unit = read_unit(m, false);
    t.unit = unit;
    read_cores(m, unit, t.cores, t.pinned);
    if (m.has("deadline")) t.deadline_s = m.quantity("deadline");
    t.priority = static_cast<int>(m.integer_or_default("priority"));
    t.work = read_work(m, unit);
    if (t.work.kind != model::WorkSpec::Kind::none && !m.has("unit"))
      value.error("a task with work needs a unit to run on");
    if (auto r = m.get("reads")) {
      if (auto s = r->text()) {
        auto it = names_.find(*s);
        if (it != names_.end() && it->second.first) {
          r->error(fmt::format("\"{}\" is a sensor, not a stage: a task reads a stage's newest result", *s));
        } else if (it == names_.end()) {
          std::vector<std::string> stages;
          for (const auto& st : spec_.stages) stages.push_back(st.name);
          std::string message = fmt::format("no stage \"{}\"", *s);
          if (auto near = core::closest_match(*s, stages)) message += fmt::format(" (did you mean \"{}\"?)", *near);
          r->error(message);
        } else {
          t.reads_stage = it->second.second;
        }
      }
    }
    if (t.work.kind == model::WorkSpec::Kind::none && !t.reads_stage)
      value.error("a task needs work to do or a stage to read (reads)");
    spec_.tasks.push_back(std::move(t));
  }
}

void ScenarioReader::read_chains(const Node& node) {
  for (auto& [name, value] : node.entries()) {
    model::ChainSpec chain;
    chain.name = name;
    const auto items = value.items();
    if (!value.is_sequence() || items.size() < 2) {
      value.error(
          "a chain lists a sensor, then the stages it flows through (each reading the one before), "
          "optionally ending with the task that reads the last stage");
      continue;
    }
    bool ok = true;
    for (std::size_t k = 0; k < items.size() && ok; ++k) {
      auto element = items[k].text();
      if (!element) {
        ok = false;
        break;
      }
      auto it = names_.find(*element);
      if (k == 0) {
        ok = it != names_.end() && it->second.first;
        if (ok) chain.sensor = it->second.second;
        else items[k].error(fmt::format("a chain starts at a sensor; \"{}\" is not one", *element));
        continue;
      }
      const bool last = k + 1 == items.size();
      if (it == names_.end() && last) {
        auto task =
            std::find_if(spec_.tasks.begin(), spec_.tasks.end(), [&](const auto& t) { return t.name == *element; });
        ok = task != spec_.tasks.end() && !chain.stages.empty() && task->reads_stage == chain.stages.back();
        if (ok) chain.task = static_cast<std::size_t>(task - spec_.tasks.begin());
        else
          items[k].error(
              fmt::format("\"{}\" is not a stage, nor a task that reads \"{}\"", *element,
                          chain.stages.empty() ? std::string("a stage") : spec_.stages[chain.stages.back()].name));
        continue;
      }
      ok = it != names_.end() && !it->second.first;
      if (!ok) {
        items[k].error(fmt::format("\"{}\" is not a stage", *element));
        continue;
      }
      const std::size_t stage = it->second.second;
      const model::InputRef previous =
          chain.stages.empty() ? model::InputRef{true, chain.sensor} : model::InputRef{false, chain.stages.back()};
      const auto& inputs = spec_.stages[stage].inputs;
      auto edge = std::find_if(inputs.begin(), inputs.end(), [&](const model::InputRef& in) {
        return in.sensor == previous.sensor && in.index == previous.index;
      });
      ok = edge != inputs.end();
      if (!ok) {
        items[k].error(fmt::format("stage \"{}\" does not read \"{}\"", *element, items[k - 1].text().value_or("")));
        continue;
      }
      chain.stages.push_back(stage);
      chain.input_edges.push_back(static_cast<std::size_t>(edge - inputs.begin()));
    }
    if (ok && chain.stages.empty()) value.error("a chain needs at least one stage");
    else if (ok) spec_.chains.push_back(std::move(chain));
  }
}

}  // namespace framesim::config
