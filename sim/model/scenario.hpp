// A scenario: the SoC, the networks, the sensors, the stage DAG, periodic tasks and background
// traffic, and how long to simulate. Plain immutable data produced by config/ and validated there;
// the engine runs it. Times in seconds, rates in hertz, traffic in bytes per second.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/enum_table.hpp"
#include "core/error.hpp"

#include "model/budget.hpp"
#include "model/hardware.hpp"
#include "model/network.hpp"
#include "model/plan.hpp"

namespace framesim::model {

/// A random quantity in SI units. `constant` ignores the rng.
struct Distribution {
  enum class Kind { constant, normal, uniform, lognormal, exponential };
  Kind kind = Kind::constant;
  double a = 0;  // constant: value; normal: mean; uniform: min; lognormal: mean; exponential: mean
  double b = 0;  // normal: stddev; uniform: max; lognormal: sigma of the underlying normal

  static Distribution fixed(double v) { return {Kind::constant, v, 0}; }
  double mean() const;
  /// One sample. Normal samples are not truncated here; callers clamp where a sign matters.
  double sample(std::mt19937_64& rng) const;
};
/// The names of distribution kinds (`distribution` of a jitter, a work time, a variability).
inline constexpr auto kDistributionKinds =
    core::enum_table<Distribution::Kind>({{Distribution::Kind::constant, "constant"},
                                          {Distribution::Kind::normal, "normal"},
                                          {Distribution::Kind::uniform, "uniform"},
                                          {Distribution::Kind::lognormal, "lognormal"},
                                          {Distribution::Kind::exponential, "exponential"}});
std::string_view distribution_kind_name(Distribution::Kind k);

struct SensorSpec {
  std::string name;
  double rate_Hz = 30;
  double phase_s = 0;
  Distribution jitter_s;             // added to each nominal capture time (zero-mean)
  std::vector<double> timestamps_s;  // replayed instead of rate + jitter when not empty
  std::optional<double> deadline_s;  // end to end for its paths to every sink; default: the scenario's
};

enum class InputPolicy { all, latest };
enum class Overflow { drop_oldest, drop_newest };
/// The names of input policies (`stages.<stage>.policy`) and queue overflows (`stages.<stage>.queue.overflow`).
inline constexpr auto kInputPolicies =
    core::enum_table<InputPolicy>({{InputPolicy::all, "all"}, {InputPolicy::latest, "latest"}});
inline constexpr auto kOverflows =
    core::enum_table<Overflow>({{Overflow::drop_oldest, "drop_oldest"}, {Overflow::drop_newest, "drop_newest"}});
std::string_view input_policy_name(InputPolicy p);
std::string_view overflow_name(Overflow o);

/// What a stage (or periodic task) does once per item.
struct WorkSpec {
  enum class Kind { none, network, time, ops };
  Kind kind = Kind::none;
  int network = -1;     // index into ScenarioSpec::networks (kind == network)
  Distribution time_s;  // compute time at the nominal clock (kind == time); scales with DVFS
  double ops = 0;       // kind == ops
  Precision precision = Precision::fp32;
  std::vector<double> bytes_per_level;  // kind == ops: bytes at each memory level (index as HardwareSpec::memory)
  Distribution scale = Distribution::fixed(1.0);  // per-item multiplier on all work (service-time variability)
};

/// An input edge of a stage: a sensor or another stage.
struct InputRef {
  bool sensor = false;
  std::size_t index = 0;
};

/// Work a stage places on another unit for every item it processes — format conversions and copies around an
/// accelerator, the host-side launch a DLA or NPU engine needs — so that a pipeline on accelerators still loads
/// the GPU or CPU. It runs as a job on that unit's scheduler (with the stage's priority) before or after the
/// stage's own kernels, and the stage waits for it.
struct SideWorkSpec {
  std::size_t unit = 0;
  WorkSpec work;
  bool after = false;    // false: before the stage's kernels (e.g. an input reformat); true: after them
  bool derived = false;  // true: derived from its unit's `handoff` (model/handoff.hpp), not written in the file
};
/// The names of SideWorkSpec::after (`stages.<stage>.side_work.when`).
inline constexpr auto kSideWorkWhen = core::enum_table<bool>({{false, "before"}, {true, "after"}});

/// A cut of a stage's network: layers from `first_layer` on (up to the next cut) run on `unit`.
struct SplitSpec {
  std::size_t first_layer = 0;
  std::size_t unit = 0;
};

struct StageSpec {
  std::string name;
  std::size_t declared = 0;  // its place in the file (stages are stored in data-flow order): scheduling ties
  std::size_t unit = 0;
  int cores = 0;            // 0: all of the unit's cores (or of `pinned`)
  std::vector<int> pinned;  // the unit's cores it may run on (partitioned scheduling); empty: any
  std::vector<InputRef> inputs;
  std::vector<std::string> input_names;
  InputPolicy policy = InputPolicy::all;
  int queue_depth = 0;  // config sets it: `stages.<stage>.queue.depth` (its declared default when absent)
  Overflow overflow = Overflow::drop_oldest;
  int priority = 0;  // higher runs first on a shared unit
  WorkSpec work;
  std::vector<SideWorkSpec> side_work;  // on other units, for every item
  std::optional<double> slice_s;        // the stage's share of the frame budget
  std::optional<double> deadline_s;     // a sink's: end to end for the paths ending here; default: the scenario's
  /// Cuts of its network across units, ascending (model/placement.hpp compiles them, and the fallbacks of units
  /// with capabilities, into chained stages before the engine sees the scenario).
  std::vector<SplitSpec> split;
  /// When this stage is a part of a split stage: the stage's name as the file wrote it (else empty).
  std::string part_of;
  /// Measured layer times replayed instead of the roofline (network work): each matched kernel runs alone in
  /// its measured time at the nominal clock, still moving its bytes (so contention stays modelled).
  std::vector<Measurement> measured;
  std::string measured_file;
  /// The measured file's own frames (Nsight Systems, ONNX Runtime record every inference): each one's pieces
  /// (kernels or nodes) with their start from the frame's start, to compare with the simulated frames.
  struct MeasuredSpan {
    std::string name;
    double start_s = 0, duration_s = 0;
    std::string stream;
  };
  struct MeasuredFrame {
    double duration_s = 0;
    std::vector<MeasuredSpan> spans;
  };
  std::vector<MeasuredFrame> measured_frames;
};

/// A periodic task: the control loop (reads a stage's newest result -> staleness) or background work.
struct TaskSpec {
  std::string name;
  double rate_Hz = 100;
  double phase_s = 0;
  std::optional<std::size_t> unit;
  int cores = 0;
  std::vector<int> pinned;  // as StageSpec::pinned
  int priority = 0;
  std::optional<double> deadline_s;  // for its response time; default: its period
  WorkSpec work;
  std::optional<std::size_t> reads_stage;  // staleness of this stage's newest result at every tick
};

/// Memory traffic from a master outside the modelled stages (display, DMA, another process).
struct BackgroundSpec {
  std::string name;
  std::size_t level = 0;
  double rate_Bps = 0;
  std::vector<std::pair<double, double>> profile;  // (time_s, rate_Bps) steps, replayed instead of rate
};

/// A cause-effect chain: a sensor, a path of stages each fed by the one before, and optionally the periodic task
/// that reads the last stage (the actuation). Reported: data age (actuation - capture of the sensor sample behind
/// it along the path) and reaction time (capture -> the first actuation that reflects that sample or a newer one).
struct ChainSpec {
  std::string name;
  std::size_t sensor = 0;
  std::vector<std::size_t> stages;       // in path order; stages[0] reads the sensor
  std::vector<std::size_t> input_edges;  // per stage: its input edge from the previous element
  std::optional<std::size_t> task;       // reads stages.back()
};

struct NamedNetwork {
  std::string name;
  NetworkSpec network;
};

struct ScenarioSpec {
  std::string name;
  std::string description;
  std::string source_file;
  HardwareSpec hardware;
  std::vector<NamedNetwork> networks;
  std::vector<SensorSpec> sensors;
  std::vector<StageSpec> stages;  // topological order
  std::vector<TaskSpec> tasks;
  std::vector<BackgroundSpec> background;
  std::vector<ChainSpec> chains;

  double duration_s = 10;         // sensors capture in [0, duration)
  double warmup_s = 0;            // frames captured before this are simulated but not counted
  double cold_window_s = 0;       // 0: automatic (a quarter of the counted time, at most 60 s)
  double sustained_window_s = 0;  // likewise, at the end
  std::uint64_t seed = 1;
  double deadline_s = 0.0333;                                // end to end, capture -> last stage
  std::optional<double> ambient_C;                           // overrides the hardware's thermal ambient
  std::vector<std::pair<double, double>> ambient_profile_C;  // (time_s, ambient) steps, replayed when not empty
  std::optional<double> initial_temperature_C;               // default: ambient (a cold start)
  std::optional<double> speed_mps;                           // for staleness in distance
  // The periods below are resolved by config/ (every default applied there): the engine takes them as they are.
  double sample_period_s = 0;  // `sample_period`: timeseries and thermal step when the hardware has no governor
  double tick_period_s = 0;    // the engine's tick: the governor's period when there is one, else sample_period_s
  /// How often the engine reloads each unit's memory ports from the others' traffic (contention below
  /// saturation, model/contention.hpp), when that is finer than the tick: `contention_period`, or its declared
  /// default when a level has a contention curve; 0: at every tick.
  double contention_period_s = 0;
  double kernel_trace_s = 0;       // `trace.kernels`: per-kernel slices in trace.json for the first this many seconds
  std::vector<std::string> notes;  // what loading did that a reader should know (e.g. ops an import could not map)
  std::vector<std::string>
      input_files;  // every file loading read, in reading order: scenario, hardware, networks, traces
  /// Doubts about the input that are not errors (a measured trace that matches part of its network); printed on
  /// stderr, and errors under --strict.
  std::vector<core::Diagnostic> warnings;

  /// The floor of one execution of stage `s` alone on an idle SoC at the nominal clocks (or the capped ones): the sum
  /// of its kernels' roofline times at `roofs` (the budget's estimate, or its bound at peak roofs), or the mean work
  /// time. What contention and throttling add shows as the difference from the simulated service time.
  /// At another `operating_point` of the stage's unit (index into its operating points), the same floor with
  /// the compute roof at that clock (work given as a time scales with the clock); unset: the unit's fastest
  /// allowed point (its clock cap, ComputeUnitSpec::fastest_point; without one the nominal point).
  double stage_floor_s(std::size_t s, Roofs roofs = Roofs::effective,
                       std::optional<std::size_t> operating_point = std::nullopt) const;
  /// The dynamic energy of one execution of stage `s` at `operating_point` of its unit (unset: its fastest allowed
  /// point), as the engine books it: its arithmetic at the unit's energy per op scaled by (V / V_nominal)^2, and
  /// its bytes at each memory level's energy per byte; work given as a time, its time at the unit's top rate in
  /// its first precision with an energy figure. Side work and hand-overs are not in it.
  double stage_dynamic_energy_J(std::size_t s, std::optional<std::size_t> operating_point = std::nullopt) const;
  /// stage_floor_s of every stage, in stage order (each stage's network planned once).
  std::vector<double> stage_floors_s(Roofs roofs = Roofs::effective) const;
  /// The end-to-end floor: the longest path from a sensor to a sink through the stages' floors alone
  /// (`floors_s`, as stage_floors_s() returns them).
  double floor_end_to_end_s(const std::vector<double>& floors_s) const;
};

/// The floors of ScenarioSpec::stage_floor_s and the energies of stage_dynamic_energy_J with each stage's network
/// planned once, when they are asked for at several roofs or operating points (a run's analysis asks for the floors
/// per stage and clock, a map search for both at every clock of a unit).
class StageFloors {
 public:
  explicit StageFloors(const ScenarioSpec& spec);  // `spec` outlives this
  double floor_s(std::size_t s, Roofs roofs = Roofs::effective,
                 std::optional<std::size_t> operating_point = std::nullopt) const;
  /// floor_s of every stage, in stage order.
  std::vector<double> floors_s(Roofs roofs = Roofs::effective) const;
  double dynamic_energy_J(std::size_t s, std::optional<std::size_t> operating_point = std::nullopt) const;

 private:
  const ScenarioSpec& spec_;
  std::vector<std::vector<Kernel>> kernels_;  // per stage: its network's kernels on its unit (none if not a network)
};

}  // namespace framesim::model
