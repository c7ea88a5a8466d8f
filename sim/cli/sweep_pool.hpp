// How `framesim sweep` runs its points: each in a fresh child forked from the sweep process, which has loaded the
// sweep, checked every point and loaded the engine (framesim-engine.so, with SimGrid) before the first fork, so a
// point pays no exec, no dynamic linking, no engine loading and no parsing of the YAML it shares with the other points
// (the sweep parsed each file once): only its own `framesim run`, done in the child
// exactly as the command line `framesim run ARGS...` would do it (same options, same code, same files written, the
// same summary printed on its standard output). One SimGrid engine per process still holds: the sweep process
// never simulates, every point is a process of its own, and what one point does cannot reach another.
#pragma once

#include <string>
#include <vector>

#include <sys/resource.h>

namespace framesim::cli {

/// In the sweep process, before the first point: loads what every point needs, the engine module, and parses every
/// YAML file among `inputs` (the files the points read), each parse then taken by a child's first load of that file
/// if its text is still the same (config::Document::prepare).
void prepare_point_children(const std::vector<std::string>& inputs);

/// In a child just forked for a point: runs `args` (as for `framesim`, args[0] the executable, args[1] "run") in
/// this process and ends it with the exit code the command line would have had (0, 1 or 2). Never returns.
[[noreturn]] void run_point_child(const std::vector<std::string>& args);

/// What the points cost in CPU time: each point's process (from the kernel's accounting of it) against the CPU time
/// of its simulation (its summary's run.cpu_s), and this process's own share; the rest is the per-point overhead.
class PointCosts {
 public:
  PointCosts();  // this process's CPU time so far is not the points'
  void add(const struct rusage& child, double simulating_cpu_s);
  /// The same per point, in seconds of CPU: the whole, the simulations' part, the overhead (the rest), and the
  /// sweep process's own share of the overhead.
  struct PerPoint {
    std::size_t points = 0;
    double cpu_s = 0, simulating_s = 0, overhead_s = 0, sweep_s = 0;
  };
  PerPoint per_point() const;
  /// "per point X of CPU, Y of it simulating, Z of overhead (...)", over the points added.
  std::string text() const;

 private:
  double self_start_s_ = 0, child_s_ = 0, simulating_s_ = 0;
  std::size_t points_ = 0;
};

}  // namespace framesim::cli
