// The one declaration of every key of a hardware, network, scenario and sweep file: where it sits (a key-path
// pattern), what value it takes (kind, dimension, range, choices), its default, what it is for and an example.
// The readers take their allowed keys and their checks from here (MapReader), the writers check what they write
// against it, and `framesim keys`, `framesim schema`, `framesim init` and docs/schema/ are generated from it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.hpp"

namespace framesim::config {

/// Range a parsed number must fall in.
enum class Range { any, positive, non_negative, unit_interval /* (0, 1] */, fraction /* [0, 1] */ };

/// "must be positive", ... as the readers say it; empty for Range::any.
std::string_view range_text(Range range);

}  // namespace framesim::config

namespace framesim::config::schema {

/// What a key's value is. A scalar kind whose key also has children (or a fragment) may be written either way:
/// `efficiency: 0.6` or `efficiency: {fp16: 0.6}`.
enum class Kind {
  text,          // any string
  path,          // a file, relative to the file that names it
  boolean,       // true or false
  integer,       // within [min, max]
  number,        // a plain number within `range`
  quantity,      // a string with a unit of `dimension`, within `range`
  choice,        // one of `choices`
  distribution,  // a quantity of `dimension` (a constant), or a mapping (the distribution fragment)
  list,          // its items are declared by the key `<path>[]`
  map,           // its keys are declared by the keys `<path>.<key>` (or by its fragment)
  any,           // any YAML value (a sweep axis' values)
};
std::string_view kind_name(Kind kind);

struct Table;

/// One key. `path` is a pattern: literal keys, `<name>` for a key the user names (a unit, a stage; a
/// `<precision>` or `<op_class>` must be one of those), `[]` for the items of a list:
/// "units.<unit>.peak.<precision>", "memory.<level>.operating_points[].frequency".
struct Key {
  std::string path;
  Kind kind = Kind::map;
  core::Dimension dimension = core::Dimension::Ratio;  // quantity, distribution
  Range range = Range::any;                            // number, quantity, distribution (its constant or mean)
  std::int64_t min = INT64_MIN;                        // integer
  std::int64_t max = INT64_MAX;                        // integer
  std::vector<std::string> choices;                    // choice
  bool required = false;
  /// The value that applies when the key is absent, written as a user writes it ("100 ms", "2", "drop_oldest") and
  /// read with the key's own kind, dimension and range (fallback_value; MapReader's *_or_default): the one
  /// definition of that default. Empty: no fixed value (nothing applies, or `default_note` says what does).
  std::string fallback;
  /// A default derived from other values ("the hardware's", "the first sensor's period"), or a remark on the
  /// fallback ("the governor's period when there is one"); default_text() joins the two for the documentation.
  std::string default_note;
  const Table* fragment = nullptr;  // a map (or a scalar's mapping form) whose keys are that table's
  bool or_list = false;             // a mapping, or a list of such mappings (side_work)
  bool in_template = false;         // optional, yet written in `framesim init`'s template (one of a pair that
                                    // is required: duration or frames, a sensor's rate or trace)
  std::string example;              // a value in YAML (flow) text; for `init`, and the reference
  std::string description;

  /// The last component of the path: "frequency", "<precision>", "[]".
  std::string_view name() const;
  /// The pattern of the key that holds this one ("" at the top).
  std::string_view parent() const;
  /// True for a `<name>` component (a key the user names).
  bool named() const;
  /// The documented default: "100 ms (the governor's period when there is one)", "2", "the hardware's", "".
  std::string default_text() const;
};

/// The keys of one kind of file (hardware, network, scenario, sweep) or of a fragment several keys share
/// (scheduler, distribution, work, a network's repeat block). Fragment paths start at the fragment's root.
struct Table {
  std::string name;   // "hardware", "distribution"
  std::string title;  // one line: what such a file (or fragment) is
  std::vector<Key> keys;

  /// The key declared at `pattern`, or nullptr ("" is the root, never declared).
  const Key* find(std::string_view pattern) const;
  /// The keys directly under `pattern`, in declaration order.
  std::vector<const Key*> children(std::string_view pattern) const;
  /// The names of the literal keys directly under `pattern` (not the user-named ones, not a list's items), in
  /// declaration order: what a mapping there may hold. Worked out once per pattern (a network reads its layers'
  /// mappings a thousand times over).
  const std::vector<std::string>& literal_child_names(std::string_view pattern) const;
};

const Table& hardware_table();
const Table& network_table();
const Table& scenario_table();
const Table& sweep_table();
const Table& runtime_table();  // runtime profiles (model/runtime.hpp)
const Table& map_table();
const Table& scheduler_table();
const Table& distribution_table();
const Table& work_table();
const Table& repeat_table();

/// The kinds of file (hardware, network, scenario, sweep, runtime, map), in the order references list them.
std::vector<const Table*> file_tables();
/// The fragments the file tables refer to.
std::vector<const Table*> fragment_tables();
/// A file table by name ("hardware", "network", "scenario", "sweep"), or nullptr.
const Table* file_table(std::string_view name);

/// The names a `<placeholder>` must be one of ("<precision>" -> fp32, fp16, ...), or nothing when the user
/// chooses the names.
std::optional<std::vector<std::string>> placeholder_names(std::string_view placeholder);

/// A name to stand for a `<placeholder>` in examples and templates ("<level>" -> "dram").
std::string placeholder_example(std::string_view placeholder);

/// Where a concrete key path ("units.gpu.peak.fp32", "layers[3].op", "stages.det.work.time.mean") is declared:
/// the table (a fragment when the path goes through one) and the key. Nothing when it is not declared.
struct Match {
  const Table* table = nullptr;
  const Key* key = nullptr;
};
std::optional<Match> match(const Table& table, std::string_view concrete_path);

/// The fallback of a quantity, number, integer or boolean key as a number (SI units; a boolean as 1 or 0), read
/// as the key's value would be and within its range; nothing when the key has no fallback or it does not read (a
/// test reads every declared one).
std::optional<double> fallback_value(const Key& key);

/// What a key takes, in a few words: "bandwidth (\"68 GB/s\"), positive", "one of fifo, priority", "integer 1..64".
std::string value_summary(const Key& key);

/// Every key of `table` with its full pattern, fragments expanded in place (depth first, declaration order).
struct Flat {
  std::string path;
  const Key* key = nullptr;
};
std::vector<Flat> flatten(const Table& table);

}  // namespace framesim::config::schema
