// The genetic search of `framesim map` (map_search.hpp). Its draws are its own (a 64-bit linear congruential
// generator, Knuth's MMIX constants, the high bits used): the same seed gives the same search on every platform.
#include <algorithm>

#include "cli/map_search.hpp"

namespace framesim::cli {

namespace {

class Draws {
 public:
  explicit Draws(std::uint64_t seed) : state_(seed * 2 + 1) {}
  /// A draw in [0, n), n > 0.
  std::size_t below(std::size_t n) {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::size_t>((state_ >> 33) % n);
  }

 private:
  std::uint64_t state_;
};

}  // namespace

void genetic_search(const MapSearch& search, const std::vector<Mapping>& ranked, std::size_t population,
                    std::uint64_t seed, const GeneticHooks& hooks) {
  if (ranked.empty() || population == 0) return;
  Draws draws(seed);
  const auto& axes = search.axes();
  // The first generation: the statically best mappings.
  std::vector<Mapping> alive(ranked.begin(),
                             ranked.begin() + static_cast<std::ptrdiff_t>(std::min(population, ranked.size())));
  hooks.evaluate(alive);
  auto ordered = [&](std::vector<Mapping>& v) {
    v.erase(std::remove_if(v.begin(), v.end(), [&](const Mapping& m) { return !hooks.known(m); }), v.end());
    std::stable_sort(v.begin(), v.end(), [&](const Mapping& x, const Mapping& y) { return hooks.better(x, y); });
  };
  ordered(alive);
  // A child is drawn at most this many times before the generation gives up on it.
  const std::size_t attempts = 50;
  while (hooks.left() > 0 && !alive.empty()) {
    auto parent = [&]() -> const Mapping& {
      const Mapping& x = alive[draws.below(alive.size())];
      const Mapping& y = alive[draws.below(alive.size())];
      return hooks.better(y, x) ? y : x;
    };
    std::vector<Mapping> children;
    const std::size_t wanted = std::min(population, hooks.left());
    for (std::size_t c = 0; c < wanted; ++c) {
      for (std::size_t tries = 0; tries < attempts; ++tries) {
        const Mapping& mother = parent();
        const Mapping& father = parent();
        Mapping child(axes.size());
        for (std::size_t a = 0; a < axes.size(); ++a) child[a] = draws.below(2) == 0 ? mother[a] : father[a];
        const std::size_t a = draws.below(axes.size());
        if (axes[a].options.size() > 1) {
          // Another option than the child's: one of the others, each as likely.
          const std::size_t k = draws.below(axes[a].options.size() - 1);
          child[a] = k >= child[a] ? k + 1 : k;
        }
        if (hooks.known(child) || std::find(children.begin(), children.end(), child) != children.end() ||
            !search.judge(child).fits)
          continue;
        children.push_back(child);
        break;
      }
    }
    if (children.empty()) break;  // no new mapping found: the population has converged
    hooks.evaluate(children);
    alive.insert(alive.end(), children.begin(), children.end());
    ordered(alive);
    if (alive.size() > population) alive.resize(population);
  }
}

}  // namespace framesim::cli
