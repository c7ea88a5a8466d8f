#include "engine/fluid.hpp"

#include <algorithm>
#include <cfloat>

namespace framesim::engine {

namespace {
/// SimGrid's "maxmin/precision": what is left of a constraint below this is nothing.
constexpr double kWorkPrecision = 1e-5;
/// maxmin/precision x surf/precision (framesim sets the latter to 1e-12): a flow with less work left is done.
constexpr double kRemainsPrecision = 1e-5 * 1e-12;
/// surf/precision: a latency below this has elapsed.
constexpr double kTimingPrecision = 1e-12;

void double_update(double& variable, double value, double precision) {
  variable -= value;
  if (variable < precision) variable = 0.0;
}
}  // namespace

std::size_t FluidSystem::add_constraint(double capacity, double speed, int cores) {
  Constraint c;
  c.capacity = capacity;
  c.speed = speed;
  c.cores = cores;
  constraints_.push_back(c);
  dirty_ = true;
  return constraints_.size() - 1;
}

void FluidSystem::set_capacity(std::size_t constraint, double capacity) {
  constraints_[constraint].capacity = capacity;
  dirty_ = true;
}

void FluidSystem::set_speed(std::size_t constraint, double speed) {
  Constraint& c = constraints_[constraint];
  c.speed = speed;
  c.capacity = speed * c.cores;
  for (Flow& f : flows_)
    if (f.alive && f.speed_of == constraint) update_bound(f);
  dirty_ = true;
}

void FluidSystem::update_bound(Flow& f) const {
  // As L07Action::update_bound: only once the latency is paid; no compute, no bound.
  if (f.latency_s > 0 || f.cycles_per_entry <= 0) return;
  f.bound = constraints_[f.speed_of].speed / f.cycles_per_entry;
}

std::size_t FluidSystem::start(const FlowSpec& spec, std::uint64_t owner) {
  std::size_t id;
  if (free_.empty()) {
    id = flows_.size();
    flows_.emplace_back();
  } else {
    id = free_.back();
    free_.pop_back();
  }
  Flow& f = flows_[id];
  std::vector<Element> elements = std::move(f.elements);  // keeps its capacity
  f = Flow{};
  f.elements = std::move(elements);
  f.elements.assign(spec.elements.begin(), spec.elements.end());
  f.speed_of = spec.speed_of;
  f.cycles_per_entry = spec.cycles_per_entry;
  f.latency_s = spec.latency_s;
  f.alive = true;
  f.endless = spec.endless;
  f.owner = owner;
  // A ptask with nothing to compute or move is done at once (its latency still passes first).
  const bool any = std::any_of(f.elements.begin(), f.elements.end(), [](const Element& e) { return e.weight > 0; });
  if (!any && !f.endless) f.remains = 0;
  update_bound(f);
  dirty_ = true;
  return id;
}

void FluidSystem::stop(std::size_t flow) {
  flows_[flow].alive = false;
  free_.push_back(flow);
  dirty_ = true;
}

void FluidSystem::solve() {
  if (!dirty_) return;
  dirty_ = false;
  // Scratch kept between solves: the flows to raise, the constraints they use, and for each such constraint
  // its uses (flow, weight) as one contiguous range of uses_.
  list_.clear();
  for (std::size_t i = 0; i < flows_.size(); ++i) {
    Flow& f = flows_[i];
    f.value = 0;
    f.fixed = true;
    if (!f.alive || f.latency_s > 0) continue;  // disabled (penalty 0) while its latency lasts
    bool consumes = false;
    for (const Element& e : f.elements) consumes = consumes || e.weight != 0;
    if (consumes) {
      f.fixed = false;
      list_.push_back(i);
    } else {
      f.value = 1.0;
    }
  }
  for (Constraint& c : constraints_) {
    c.listed = false;
    c.uses_begin = c.uses_end = 0;
  }
  cnsts_.clear();
  std::size_t total = 0;
  for (std::size_t i : list_)
    for (const Element& e : flows_[i].elements) {
      Constraint& c = constraints_[e.constraint];
      if (!c.listed) {
        c.listed = true;
        cnsts_.push_back(e.constraint);
      }
      ++c.uses_end;  // a count for now
      ++total;
    }
  std::sort(cnsts_.begin(), cnsts_.end());
  std::size_t offset = 0;
  for (std::size_t ci : cnsts_) {
    Constraint& c = constraints_[ci];
    c.remaining = c.capacity;
    c.usage = 0;
    c.uses_begin = offset;
    offset += c.uses_end;
    c.uses_end = c.uses_begin;
  }
  uses_.resize(total);
  for (std::size_t i : list_)
    for (const Element& e : flows_[i].elements) {
      Constraint& c = constraints_[e.constraint];
      uses_[c.uses_end++] = {i, e.weight};
    }

  while (!list_.empty()) {
    for (auto it = cnsts_.begin(); it != cnsts_.end();) {
      Constraint& c = constraints_[*it];
      int nb = 0;
      for (std::size_t u = c.uses_begin; u < c.uses_end; ++u)
        if (uses_[u].weight > 0 && !flows_[uses_[u].flow].fixed) ++nb;
      if (nb == 0) {
        c.remaining = 0;
        c.usage = 0;
        c.listed = false;
        it = cnsts_.erase(it);
      } else {
        c.usage = c.remaining / nb;
        ++it;
      }
    }
    for (auto it = list_.begin(); it != list_.end();) {
      Flow& f = flows_[*it];
      double min_inc = DBL_MAX;
      for (const Element& e : f.elements)
        if (e.weight > 0) min_inc = std::min(min_inc, constraints_[e.constraint].usage / e.weight);
      if (f.bound > 0) min_inc = std::min(min_inc, f.bound - f.value);
      f.mu = min_inc;
      f.value += f.mu;
      if (f.value == f.bound) {
        f.fixed = true;
        it = list_.erase(it);
      } else {
        ++it;
      }
    }
    for (auto it = cnsts_.begin(); it != cnsts_.end();) {
      Constraint& c = constraints_[*it];
      for (std::size_t u = c.uses_begin; u < c.uses_end; ++u)
        double_update(c.remaining, uses_[u].weight * flows_[uses_[u].flow].mu, kWorkPrecision);
      if (c.remaining <= 0.0) {
        for (std::size_t u = c.uses_begin; u < c.uses_end; ++u) {
          Flow& f = flows_[uses_[u].flow];
          if (uses_[u].weight > 0 && !f.fixed) {
            f.fixed = true;
            list_.erase(std::find(list_.begin(), list_.end(), uses_[u].flow));
          }
        }
        c.listed = false;
        it = cnsts_.erase(it);
      } else {
        ++it;
      }
    }
  }
}

double FluidSystem::next_delta_s() {
  solve();
  double min = std::numeric_limits<double>::infinity();
  for (const Flow& f : flows_) {
    if (!f.alive) continue;
    if (f.latency_s > 0) {
      min = std::min(min, f.latency_s);
      continue;
    }
    if (f.endless) continue;
    if (f.remains <= 0) {
      min = 0;
      continue;
    }
    if (f.value > 0) min = std::min(min, f.remains / f.value);
  }
  return min;
}

void FluidSystem::step(double dt, std::vector<std::size_t>& finished) {
  solve();
  for (std::size_t i = 0; i < flows_.size(); ++i) {
    Flow& f = flows_[i];
    if (!f.alive) continue;
    if (f.latency_s > 0) {
      if (f.latency_s > dt) double_update(f.latency_s, dt, kTimingPrecision);
      else f.latency_s = 0;
      if (f.latency_s <= 0) {
        update_bound(f);
        dirty_ = true;
      }
      continue;  // its rate was 0 over the step
    }
    if (f.endless) {
      f.done += f.value * dt;
      continue;
    }
    if (f.remains > 0) double_update(f.remains, f.value * dt, kRemainsPrecision);
    if (f.remains <= 0) finished.push_back(i);
  }
}

}  // namespace framesim::engine
