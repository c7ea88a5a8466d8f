#include "engine/fluid.hpp"

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <stdexcept>

namespace framesim::engine {

namespace {
/// SimGrid's "maxmin/precision": what is left of a constraint below this is nothing.
constexpr double kWorkPrecision = 1e-5;
/// maxmin/precision x surf/precision (framesim sets the latter to 1e-12): a flow with less work left is done.
constexpr double kRemainsPrecision = 1e-5 * 1e-12;
/// surf/precision: a latency below this has elapsed.
constexpr double kTimingPrecision = 1e-12;

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

double from_bits(std::uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

void double_update(double& variable, double value, double precision) {
  variable -= value;
  if (variable < precision) variable = 0.0;
}
}  // namespace

std::size_t FluidSystem::add_constraint(double capacity, double speed, int cores) {
  if (constraints_.size() >= (std::size_t{1} << 32)) throw std::length_error("FluidSystem: 2^32 constraints");
  Constraint c;
  c.capacity = capacity;
  c.speed = speed;
  c.cores = cores;
  constraints_.push_back(c);
  return constraints_.size() - 1;
}

void FluidSystem::set_capacity(std::size_t constraint, double capacity) {
  constraints_[constraint].capacity = capacity;
  touch(constraint);
}

void FluidSystem::set_speed(std::size_t constraint, double speed) {
  Constraint& c = constraints_[constraint];
  c.speed = speed;
  c.capacity = speed * c.cores;
  touch(constraint);
  for (std::size_t i : alive_) {
    Flow& f = flows_[i];
    if (f.speed_of != constraint) continue;
    update_bound(f);
    if (f.latency_s <= 0 && f.consumes) touch(f);
  }
}

void FluidSystem::update_bound(Flow& f) const {
  // As L07Action::update_bound: only once the latency is paid; no compute, no bound.
  if (f.latency_s > 0 || f.cycles_per_entry <= 0) return;
  f.bound = constraints_[f.speed_of].speed / f.cycles_per_entry;
}

void FluidSystem::activate(Flow& f) {
  update_bound(f);
  if (f.consumes) touch(f);
  else f.value = 1.0;  // takes nothing from anyone: progresses at once
}

std::size_t FluidSystem::start(const Element* elements, std::size_t count, const FlowSpec& spec, std::uint64_t owner) {
  std::size_t id;
  if (free_.empty()) {
    id = flows_.size();
    flows_.emplace_back();
  } else {
    id = free_.back();
    free_.pop_back();
  }
  next_known_ = false;
  Flow& f = flows_[id];
  runs_.clear();
  for (const Element* e = elements; e != elements + count; ++e) {
    if (e->times == 0) continue;
    if (!runs_.empty() && runs_.back().constraint == e->constraint && bits(runs_.back().weight) == bits(e->weight))
      runs_.back().times += e->times;
    else runs_.push_back({e->constraint, e->weight, e->times});
  }
  const auto n = static_cast<std::uint32_t>(runs_.size());
  Flow fresh;
  if (n <= f.capacity) {  // the slot's elements are reused
    fresh.first = f.first;
    fresh.capacity = f.capacity;
  } else {
    fresh.first = static_cast<std::uint32_t>(elements_.size());
    fresh.capacity = n;
    elements_.resize(elements_.size() + n);
  }
  f = fresh;
  f.count = n;
  std::copy(runs_.begin(), runs_.end(), elements_.begin() + f.first);
  f.speed_of = spec.speed_of;
  f.cycles_per_entry = spec.cycles_per_entry;
  f.latency_s = spec.latency_s;
  f.alive = true;
  f.endless = spec.endless;
  f.owner = owner;
  // A ptask with nothing to compute or move is done at once (its latency still passes first).
  bool any = false;
  for (const Run& r : runs_) {
    any = any || r.weight > 0;
    f.consumes = f.consumes || r.weight != 0;
  }
  if (!any && !f.endless) f.remains = 0;
  // Its shape, hashed once: what of a solve's key it alone decides (its runs; its bound is hashed with the rest).
  f.shape = n;
  for (const Run& r : runs_) {
    f.shape = (f.shape ^ run_word(r)) * 0xff51afd7ed558ccdULL;
    f.shape = (f.shape ^ bits(r.weight)) * 0xc4ceb9fe1a85ec53ULL;
  }
  alive_.insert(std::upper_bound(alive_.begin(), alive_.end(), id), id);
  if (f.latency_s <= 0) activate(f);  // else disabled (penalty 0) while its latency lasts: no rate changes
  return id;
}

void FluidSystem::retire(std::size_t flow) {
  next_known_ = false;
  Flow& f = flows_[flow];
  f.alive = false;
  alive_.erase(std::lower_bound(alive_.begin(), alive_.end(), flow));
  free_.push_back(flow);
  if (f.latency_s <= 0 && f.consumes) touch(f);  // what it took goes to the others
}

void FluidSystem::stop(std::size_t flow) { retire(flow); }

void FluidSystem::solve() {
  if (changed_.empty()) return;
  // The flows to solve again: those connected to a changed constraint through constraints they share.
  ++mark_;
  for (std::size_t c : changed_) {
    constraints_[c].mark = mark_;
    constraints_[c].changed = false;
  }
  changed_.clear();
  // Again only if a flow brought in a constraint that a flow left out in this pass may share.
  for (bool again = true; again;) {
    bool grew = false, left_out = false;
    for (std::size_t i : alive_) {
      Flow& f = flows_[i];
      if (f.mark == mark_ || f.latency_s > 0 || !f.consumes) continue;
      bool hit = false;
      for (std::uint32_t e = f.first; e < f.first + f.count && !hit; ++e)
        hit = constraints_[elements_[e].constraint].mark == mark_;
      if (!hit) {
        left_out = true;
        continue;
      }
      f.mark = mark_;
      for (std::uint32_t e = f.first; e < f.first + f.count; ++e) {
        Constraint& c = constraints_[elements_[e].constraint];
        grew = grew || c.mark != mark_;
        c.mark = mark_;
      }
    }
    again = grew && left_out;
  }
  list_.clear();
  std::size_t words = 0;  // the key's (key_words): per flow 2, per run 3
  for (std::size_t i : alive_) {
    if (flows_[i].mark != mark_) continue;
    list_.push_back(i);
    words += 2 + 3 * std::size_t{flows_[i].count};
  }
  if (list_.empty()) return;
  // The same flows (elements, bounds, in the same order) over the same capacities were solved before: the same
  // rates, without solving. The key is not built to be looked up: its hash comes from each flow's shape (hashed
  // when it started), bound and capacities, and a candidate entry is compared word for word with the flows.
  std::uint64_t h = words;
  for (std::size_t i : list_) {
    const Flow& f = flows_[i];
    h = (h ^ f.shape) * 0x9e3779b97f4a7c15ULL;
    h = (h ^ bits(f.bound)) * 0xff51afd7ed558ccdULL;
    for (std::uint32_t e = f.first; e < f.first + f.count; ++e)
      h = (h ^ bits(constraints_[elements_[e].constraint].capacity)) * 0xc4ceb9fe1a85ec53ULL;
  }
  h ^= h >> 33;  // the low bits pick the slot: mix the high ones in
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  Cache& cache = *cache_;
  if (cache.slots.empty()) {
    cache.slots.resize(Cache::kSlots);
    cache.words = std::make_unique_for_overwrite<std::uint64_t[]>(Cache::kSlots * Cache::kSlotWords);
    cache.large.resize(Cache::kSlots);
  }
  const std::size_t at = h & (Cache::kSlots - 1);
  const std::size_t entry_words = words + list_.size();
  if (cache.slots[at].hash == h && cache.slots[at].words == entry_words && key_matches(cache.entry(at))) {
    const std::uint64_t* rates = cache.entry(at) + words;
    for (std::size_t f = 0; f < list_.size(); ++f) flows_[list_[f]].value = from_bits(rates[f]);
    return;
  }
  ++solves_;
  flows_solved_ += list_.size();
  solve_list();
  cache.slots[at] = {h, static_cast<std::uint32_t>(entry_words)};
  std::uint64_t* entry = cache.words.get() + at * Cache::kSlotWords;
  if (entry_words > Cache::kSlotWords) {
    cache.large[at].resize(entry_words);
    entry = cache.large[at].data();
  }
  key_words(list_, [&](std::uint64_t word) {
    *entry++ = word;
    return true;
  });
  for (std::size_t i : list_) *entry++ = bits(flows_[i].value);
}

template <class Word>
bool FluidSystem::key_words(const std::vector<std::size_t>& flows, Word&& word) const {
  for (std::size_t i : flows) {
    const Flow& f = flows_[i];
    if (!word(f.count) || !word(bits(f.bound))) return false;
    for (std::uint32_t e = f.first; e < f.first + f.count; ++e) {
      const Run& r = elements_[e];
      if (!word(run_word(r)) || !word(bits(r.weight)) || !word(bits(constraints_[r.constraint].capacity))) return false;
    }
  }
  return true;
}

bool FluidSystem::key_matches(const std::uint64_t* entry) const {
  return key_words(list_, [&](std::uint64_t word) { return *entry++ == word; });
}

namespace {
/// `v` at least `n` long (grown, never shrunk: a solve's scratch is sized once for the largest), as a pointer.
template <class T>
T* at_least(std::vector<T>& v, std::size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}
}  // namespace

void FluidSystem::solve_list() {
  // The listed flows and the constraints they use, numbered locally (flows in list_ order, constraints as first
  // met), in small flat arrays the rounds below read through plain pointers.
  const std::size_t nf = list_.size();
  std::size_t runs = 0;
  for (std::size_t i : list_) runs += flows_[i].count;
  SolveFlow* const sf = at_least(sflows_, nf);
  SolveConstraint* const sc = at_least(scnsts_, runs);  // at most one per run
  SolveElement* const se = at_least(selems_, runs);
  std::uint32_t* const live = at_least(live_, runs);
  std::uint32_t* const open = at_least(open_, nf);
  const Run* const runs_of = elements_.data();
  Constraint* const cs = constraints_.data();
  std::uint32_t nc = 0, ne = 0;
  for (std::size_t k = 0; k < nf; ++k) {
    const Flow& f = flows_[list_[k]];
    sf[k] = {0, f.bound, 0, ne, ne + f.count, false};
    for (const Run* r = runs_of + f.first; r != runs_of + f.first + f.count; ++r) {
      Constraint& c = cs[r->constraint];
      if (!c.listed) {
        c.listed = true;
        c.local = nc;
        live[nc] = nc;
        sc[nc++] = {c.capacity, 0, 0};
      }
      if (r->weight > 0) sc[c.local].open += r->times;
      se[ne++] = {c.local, r->weight, r->times};
    }
  }
  for (std::size_t i : list_)
    for (const Run* r = runs_of + flows_[i].first; r != runs_of + flows_[i].first + flows_[i].count; ++r)
      cs[r->constraint].listed = false;

  // The rounds of the fair bottleneck (fluid.hpp), each in four passes. Neither the order in which constraints make
  // their offers nor the order in which flows take theirs changes a value (each pass reads only what the pass
  // before it wrote), so the live constraints and the open flows are kept in any order, a removed one replaced by
  // the last. What does depend on order is a constraint's remaining capacity, charged element by element: the
  // charges go flow by flow in list order, each flow's elements in order, which charges every constraint in the
  // order of its flows, as SimGrid does. A constraint counts the elements of positive weight of its open flows
  // (`open`), kept as flows are fixed: one with none left offers nothing, fixes nobody and is dropped from the
  // offers (what is left of it, still charged, is read by no one).
  std::size_t nlive = nc, nopen = nf;
  for (std::uint32_t k = 0; k < nf; ++k) open[k] = k;
  auto fix = [&](std::uint32_t k) {
    sf[k].fixed = true;
    for (std::uint32_t e = sf[k].elems_begin; e < sf[k].elems_end; ++e)
      if (se[e].weight > 0) sc[se[e].constraint].open -= se[e].times;
  };
  while (nopen > 0) {
    // Every live constraint offers an equal share of what it has left to each of its open elements.
    for (std::size_t at = 0; at < nlive;) {
      SolveConstraint& c = sc[live[at]];
      if (c.open == 0) {
        live[at] = live[--nlive];
        continue;
      }
      c.usage = c.remaining / static_cast<int>(c.open);
      ++at;
    }
    // Every open flow takes the least offer (over its weight) and what its bound leaves; at its bound it is fixed.
    for (std::size_t at = 0; at < nopen;) {
      SolveFlow& f = sf[open[at]];
      double min_inc = DBL_MAX;
      for (std::uint32_t e = f.elems_begin; e < f.elems_end; ++e)  // equal elements offer the same: one is any
        if (se[e].weight > 0) min_inc = std::min(min_inc, sc[se[e].constraint].usage / se[e].weight);
      if (f.bound > 0) min_inc = std::min(min_inc, f.bound - f.value);
      f.mu = min_inc;
      f.value += f.mu;
      if (f.value == f.bound) {
        fix(open[at]);
        open[at] = open[--nopen];
      } else {
        ++at;
      }
    }
    // Every flow, fixed ones included (as SimGrid), is charged its weight times its last increment, per element.
    for (std::uint32_t k = 0; k < nf; ++k) {
      const double mu = sf[k].mu;
      for (std::uint32_t e = sf[k].elems_begin; e < sf[k].elems_end; ++e) {
        const double charge = se[e].weight * mu;
        double& remaining = sc[se[e].constraint].remaining;
        for (std::uint32_t t = 0; t < se[e].times; ++t) double_update(remaining, charge, kWorkPrecision);
      }
    }
    // A constraint with nothing left fixes its open flows of positive weight.
    for (std::size_t at = 0; at < nopen;) {
      const SolveFlow& f = sf[open[at]];
      bool saturated = false;
      for (std::uint32_t e = f.elems_begin; e < f.elems_end && !saturated; ++e)
        saturated = se[e].weight > 0 && sc[se[e].constraint].remaining <= 0.0;
      if (saturated) {
        fix(open[at]);
        open[at] = open[--nopen];
      } else {
        ++at;
      }
    }
  }
  for (std::size_t k = 0; k < nf; ++k) flows_[list_[k]].value = sf[k].value;
}

FluidSystem::Next FluidSystem::next_finish() {
  if (next_known_) return next_;  // asked again with nothing changed (a wait, then the advance it starts)
  solve();
  Next next;
  for (std::size_t i : alive_) {
    const Flow& f = flows_[i];
    double delta;
    bool finishes = true;
    if (f.latency_s > 0) {
      delta = f.latency_s;
      finishes = false;
    } else if (!f.endless && f.remains <= 0) {
      delta = 0;
    } else if (!f.endless && f.value > 0) {
      delta = f.remains / f.value;
    } else {
      continue;  // endless, or stalled at rate 0
    }
    if (delta < next.delta_s) next = {delta, i, finishes};
  }
  next_ = next;
  next_known_ = true;
  return next;
}

void FluidSystem::step(double dt, std::vector<std::size_t>& finished) {
  solve();
  next_known_ = false;
  for (std::size_t i : alive_) {
    Flow& f = flows_[i];
    if (f.latency_s > 0) {
      if (f.latency_s > dt) double_update(f.latency_s, dt, kTimingPrecision);
      else f.latency_s = 0;
      if (f.latency_s <= 0) activate(f);
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
