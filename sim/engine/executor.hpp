// How the dispatcher's kernels consume time: in framesim's fluid system (FluidExecutor: SimGrid's L07 sharing
// computed by framesim, no activity per kernel) or as SimGrid activities (ExactExecutor, --exact). Both run a
// kernel as one parallel task — its cycles over the job's cores, its bytes through the unit's ports and the
// levels' buses — and book its energy and bytes by progress. The dispatcher decides when kernels start and stop.
#pragma once

#include <limits>
#include <memory>
#include <vector>

#include "engine/dispatcher.hpp"
#include "engine/fluid.hpp"
#include "engine/instant.hpp"

namespace framesim::engine {

class Executor : public PlatformListener {
 public:
  ~Executor() override = default;
  /// Starts the rest of kernel `j.next` of `j` (the fraction 1 - j.kernel_done of its work) now, after what is
  /// left of its launch (`j.launch_left_s`, then 0) when the executor runs launches.
  virtual void start(RunJob& j) = 0;
  /// Stops `j`'s kernel in flight now, booked up to its progress; returns the fraction of what was started that
  /// was done.
  virtual double stop(RunJob& j) = 0;
  /// Lets time pass until `until_s` or the first kernel end before it (several if they end together, and those
  /// less than kInstant_s after it): appends the jobs whose kernel ended, their kernel booked in full, and
  /// returns the time reached.
  virtual double wait(double until_s, std::vector<RunJob*>& ended) = 0;
  /// The time of the next kernel end when it is known without waiting (fluid), else infinity.
  virtual double peek_s() = 0;
  /// Books every kernel and stream in flight up to now.
  virtual void book_in_flight() = 0;
  /// A background master's rate from now on (fluid only: on SimGrid its own actor steps its port).
  virtual void set_background_rate(std::size_t background, double rate_Bps) = 0;
  /// Whether a kernel's launch on `unit` passes in the executor (start() with `j.launch_left_s` > 0: the unit
  /// held and idle that long, then the work), with no launch timer: the fluid executor on a unit where nothing
  /// can interrupt a launch (`fifo`, `priority`: cores are contested only at kernel boundaries).
  virtual bool runs_launches(std::size_t unit) const = 0;

  void unit_speed_changed(std::size_t) override {}
  void level_bandwidth_changed(std::size_t) override {}
  void port_bandwidth_changed(std::size_t, std::size_t, double) override {}
};

/// SimGrid path: background stream `b`'s master streams chunks of 10 ms (cut at its profile's steps) through its
/// port link capped at its rate, booked by the ledger, until `stopping` (run as its own daemon actor).
void stream_background_on_simgrid(const model::ScenarioSpec& spec, std::size_t b, Platform& platform, Ledger& ledger,
                                  RunTotals& totals, const bool& stopping);

/// `dispatcher`: asked at a kernel end alone in its instant whether the job goes straight on (Dispatcher::go_on).
std::unique_ptr<Executor> make_fluid_executor(const model::ScenarioSpec& spec, Platform& platform, Ledger& ledger,
                                              RunTotals& totals, Dispatcher& dispatcher);
std::unique_ptr<Executor> make_exact_executor(const model::ScenarioSpec& spec, Platform& platform, Ledger& ledger,
                                              RunTotals& totals);

}  // namespace framesim::engine
