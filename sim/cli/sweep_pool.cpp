#include "cli/sweep_pool.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <set>

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/console.hpp"
#include "config/preload.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "engine/module.hpp"

namespace framesim::cli {

namespace {

/// What main does with a command line that names `run`, minus the other commands.
int run_command_line(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int argc = static_cast<int>(args.size());
  CLI::App app{"framesim"};
  app.require_subcommand(1);
  set_command_line(argc, argv.data());
  const Command run = add_run_command(app);
  add_verbosity_flags(app);
  try {
    app.parse(argc, argv.data());
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  set_verbosity(parsed_verbosity());
  try {
    return run.run();
  } catch (const core::UserError& e) {
    for (const auto& d : e.diagnostics()) std::cerr << d.to_string() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "framesim: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

void prepare_point_children(const std::vector<std::string>& inputs) {
  engine::engine_module();  // dlopen once here rather than once per point
  provenance(inputs, {});   // every input file's digest, remembered for the children
  std::set<std::string> seen;
  for (const auto& file : inputs) {
    const auto ext = std::filesystem::path(file).extension();
    if ((ext != ".yaml" && ext != ".yml") || !seen.insert(file).second) continue;
    try {
      config::preload_yaml(file);
    } catch (const core::UserError&) {
      // The point that reads it says what is wrong, as it would have.
    }
  }
}

namespace {

/// In a point's child, before it allocates: what it allocates comes from fresh heap in 2 MiB pages, and nothing is
/// given back. A child writes a few MiB that are new to it (the simulation's tables, two 8 MiB actor stacks of which
/// it touches the top, its summary); in 4 KiB pages each is a page fault of several microseconds (more under
/// virtualisation), and a heap trimmed and grown again faults its pages in again. Where the C library or the
/// kernel does not allow it (another allocator, huge pages off), only the thresholds change.
void prepare_point_heap() {
#ifdef __GLIBC__
  constexpr std::size_t kLarge = std::size_t{32} << 20;      // the largest mmap threshold glibc takes
  constexpr std::size_t kReserve = std::size_t{24} << 20;    // below it: taken from the heap
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;  // a transparent huge page
  ::mallopt(M_MMAP_THRESHOLD, static_cast<int>(kLarge));     // actor stacks from the heap too
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);                      // a page given back would be faulted in again
  char* const brk0 = static_cast<char*>(::sbrk(0));
  const std::size_t keep = ::mallinfo2().keepcost;  // the free block at the heap's end, below brk0
  const std::uintptr_t misaligned = reinterpret_cast<std::uintptr_t>(brk0) % kHuge;
  char* const from = brk0 + (misaligned == 0 ? 0 : kHuge - misaligned);  // the next 2 MiB boundary
  // A block kept for the child's life fills the top up to the next 2 MiB boundary (only its header is written), so
  // that the reserve, grown from there and freed, is the new top: what the child allocates next starts on it.
  const std::size_t gap = static_cast<std::size_t>(from - brk0) + keep;
  if (gap > 64) {
    void* filler = std::malloc(gap - 32);
    asm volatile("" : : "r"(filler) : "memory");  // kept, not optimised away
  }
  void* reserve = std::malloc(kReserve);
  asm volatile("" : : "r"(reserve) : "memory");
  std::free(reserve);
  char* const end = static_cast<char*>(::sbrk(0));
  if (end > from) ::madvise(from, static_cast<std::size_t>(end - from), MADV_HUGEPAGE);
#endif
}

}  // namespace

void run_point_child(const std::vector<std::string>& args) {
  prepare_point_heap();
  const int code = run_command_line(args);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);  // the sweep process's own exit handlers are not this child's
}

namespace {
double cpu_s(const struct rusage& u) {
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}
double self_cpu_s() {
  struct rusage u {};
  ::getrusage(RUSAGE_SELF, &u);
  return cpu_s(u);
}
}  // namespace

PointCosts::PointCosts() : self_start_s_(self_cpu_s()) {}

void PointCosts::add(const struct rusage& child, double simulating_cpu_s) {
  child_s_ += cpu_s(child);
  simulating_s_ += simulating_cpu_s;
  ++points_;
}

PointCosts::PerPoint PointCosts::per_point() const {
  const double n = static_cast<double>(std::max<std::size_t>(1, points_));
  const double self = self_cpu_s() - self_start_s_;
  return {points_, (child_s_ + self) / n, simulating_s_ / n, (child_s_ + self - simulating_s_) / n, self / n};
}

std::string PointCosts::text() const {
  const PerPoint p = per_point();
  return fmt::format(
      "per point {} of CPU, {} of it simulating, {} of overhead (the point's process beyond its "
      "simulation, and {} of the sweep's own)",
      core::format_seconds(p.cpu_s), core::format_seconds(p.simulating_s), core::format_seconds(p.overhead_s),
      core::format_seconds(p.sweep_s));
}

}  // namespace framesim::cli
