// The one way framesim reads YAML: every value knows its file, line, column and key path, every
// mapping declares its keys (unknown ones are reported with a did-you-mean), duplicate keys are
// rejected, and problems are collected so a whole file is checked before anything is reported.
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/override.hpp"
#include "config/schema.hpp"
#include "core/enum_table.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace framesim::config {

/// Most nodes a YAML text may stand for once its aliases are expanded (README "Limits"): a network of 100000
/// layers is about a million; a "billion laughs" alias bomb is refused before anything walks it.
inline constexpr std::uint64_t kMaxYamlNodes = 4'000'000;
/// The longest line a YAML file may have (README "Limits"): a line of megabytes is no configuration, and the parser
/// would spend seconds on it before any message.
inline constexpr std::size_t kMaxYamlLineBytes = 1u << 20;

/// Parses one YAML document from `text` (no byte order mark): refuses text that is not UTF-8, a second document,
/// an alias expansion beyond kMaxYamlNodes and syntax errors, each as a UserError at `display_path` (with line and
/// column when `whole_file`, else at `key_path`: a value written on a command line or in a sweep).
YAML::Node load_yaml(std::string_view text, const std::string& display_path, const std::string& key_path,
                     bool whole_file);

/// A loaded YAML file and the sink its problems go to.
class Document {
 public:
  /// Reads and parses `path`. A missing file or a YAML syntax error throws UserError at once;
  /// duplicate keys are added to `diagnostics`.
  static std::shared_ptr<Document> load(const std::filesystem::path& path, core::Diagnostics& diagnostics);
  /// The same for a file whose text the caller has just read (`text`): parsed as that text, whatever the file holds
  /// now.
  static std::shared_ptr<Document> load(const std::filesystem::path& path, const std::string& text,
                                        core::Diagnostics& diagnostics);
  /// Reads and parses `path` to look at it (which kind of input it is), throwing as load does, and keeps it for the
  /// next load of the same path: that load takes it, with its problems, instead of parsing again, if the file's
  /// text is still the same. A few files are kept at most, each taken once.
  static std::shared_ptr<const Document> peek(const std::filesystem::path& path);
  /// Parses `path` and keeps it, as peek does but with no limit on how many are kept: a process that will fork
  /// children each loading the same files (a sweep's points) parses them once, before forking. Throws as load does.
  static void prepare(const std::filesystem::path& path);
  /// How a path is shown in messages (and so in a document's display_path).
  static std::string display_of(const std::filesystem::path& path);
  /// Parses `text` as if it were the file `display_path` (for tests and generated configs).
  static std::shared_ptr<Document> parse(const std::string& text, const std::string& display_path,
                                         core::Diagnostics& diagnostics);

  const std::string& display_path() const { return display_path_; }
  /// Folder that relative paths inside this file are resolved against.
  const std::filesystem::path& folder() const { return folder_; }
  core::Diagnostics& diagnostics() const { return *diagnostics_; }
  const YAML::Node& root() const { return root_; }

  /// Replaces (or adds) the value at `path` ("memory.dram.bandwidth", "layers.conv1.kernel", "layers[3].kernel")
  /// with `value_yaml`, parsed as YAML. Every component but the last must exist; a sequence component is an
  /// index `[i]` or the `name` of one of its mappings. Problems are reported at `origin` (where the override was
  /// written), and so is anything a reader later finds wrong with the new value. Returns false on a problem.
  bool apply_override(const std::string& path, const std::string& value_yaml, const core::SourceLocation& origin);
  /// Where a node came from when an override put it there.
  std::optional<core::SourceLocation> override_origin(const YAML::Node& node) const;

 private:
  /// The document peek or prepare kept for `path`, if its text is `text`: taken (and its problems added to
  /// `diagnostics`), or null.
  static std::shared_ptr<Document> take_kept(const std::filesystem::path& path, const std::string& text,
                                             core::Diagnostics& diagnostics);
  /// Parses `path` to keep it for take_kept; `prepared`: kept with no limit on how many.
  static std::shared_ptr<Document> keep(const std::filesystem::path& path, bool prepared);
  /// Keeps `doc` alive until the process exits (whose end frees it at once, rather than node by node): while the
  /// documents so kept hold at most 256 KiB of text, or always when `always` (a document parsed ahead by the process
  /// this one was forked from: freeing it here would first copy every page it touches).
  static void keep_to_exit(const std::shared_ptr<const Document>& doc, std::size_t text_bytes, bool always);

  std::string display_path_;
  std::filesystem::path folder_;
  YAML::Node root_;
  core::Diagnostics* diagnostics_ = nullptr;
  std::vector<std::pair<YAML::Node, core::SourceLocation>> overridden_;
};

/// A value inside a document with its key path ("units.gpu.peak.fp32").
class Node {
 public:
  Node(std::shared_ptr<const Document> doc, const YAML::Node& node, std::string path);

  const std::string& path() const { return path_; }
  core::SourceLocation location() const;
  const Document& document() const { return *doc_; }
  const YAML::Node& yaml() const { return node_; }

  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_null() const { return node_.IsNull(); }

  /// Reports a problem at this node.
  void error(const std::string& message) const;

  // Typed reads; each reports its own problem and returns nothing on failure.
  std::optional<std::string> text() const;
  std::optional<std::int64_t> integer(std::int64_t min = INT64_MIN, std::int64_t max = INT64_MAX) const;
  std::optional<double> number(Range range = Range::any) const;
  std::optional<bool> boolean() const;
  std::optional<double> quantity(core::Dimension dim, Range range = Range::any) const;
  /// The same reads with the checks of a declaration (for keys a reader walks itself: `<precision>` entries).
  std::optional<double> number(const schema::Key& key) const { return number(key.range); }
  std::optional<double> quantity(const schema::Key& key) const { return quantity(key.dimension, key.range); }
  std::optional<std::int64_t> integer(const schema::Key& key) const { return integer(key.min, key.max); }
  /// One of `allowed`; otherwise reports the allowed values (and a did-you-mean).
  std::optional<std::string> choice(const std::vector<std::string>& allowed) const;
  /// One of the names of `table`, as its value; otherwise reports the allowed names (and a did-you-mean).
  template <class E, std::size_t N>
  std::optional<E> choice(const core::EnumTable<E, N>& table) const {
    auto name = choice(table.names());
    return name ? table.value(*name) : std::nullopt;
  }
  /// Sequence items (a scalar is reported, not wrapped).
  std::vector<Node> items() const;
  /// Mapping entries in file order (keys as written).
  std::vector<std::pair<std::string, Node>> entries() const;
  /// Items of a sequence of scalars as strings.
  std::optional<std::vector<std::string>> text_list() const;

  Node child(const std::string& key, const YAML::Node& value) const;
  Node item(std::size_t index, const YAML::Node& value) const;

 private:
  std::string describe_kind() const;
  std::shared_ptr<const Document> doc_;
  YAML::Node node_;
  std::string path_;
};

/// Reads a mapping whose keys are declared in a schema table (config/schema.hpp): its allowed keys, and each
/// key's kind, dimension, range, bounds, choices and whether it is required, are the declaration's. Construction
/// reports a non-mapping and unknown keys; reading a key that is not declared is a framesim bug.
class MapReader {
 public:
  /// The mapping at `node`, declared at `pattern` in `table` ("" for the file's top level; a key with a fragment
  /// reads that fragment's keys). `extra`: keys declared elsewhere (an op's parameters, model/network.hpp).
  MapReader(const Node& node, const schema::Table& table, std::string_view pattern,
            const std::vector<std::string>& extra = {});

  /// Whether a read insists on the key: as declared, or always (a key required only with another: a sensor's
  /// rate without a trace).
  enum class Need { declared, required };

  bool ok() const { return ok_; }
  const Node& node() const { return node_; }
  bool has(std::string_view key) const;
  std::optional<Node> get(std::string_view key) const;
  /// Reports "missing required key" when absent.
  std::optional<Node> required(std::string_view key) const;
  /// The declaration of `key` (a framesim bug when it has none).
  const schema::Key& declaration(std::string_view key) const;
  /// The keys the mapping may hold: those declared under the pattern, then `extra`.
  const std::vector<std::string>& allowed() const { return extra_.empty() ? *declared_ : combined_; }

  // Typed reads with the declaration's checks; each reports its own problem and returns nothing on failure.
  std::optional<std::string> text(std::string_view key, Need need = Need::declared) const;
  std::optional<std::int64_t> integer(std::string_view key, Need need = Need::declared) const;
  std::optional<double> number(std::string_view key, Need need = Need::declared) const;
  std::optional<bool> boolean(std::string_view key) const;
  std::optional<double> quantity(std::string_view key, Need need = Need::declared) const;
  std::optional<std::string> choice(std::string_view key, Need need = Need::declared) const;
  /// A choice as the value `table` names it (config/schema.hpp: the key's declared choices are the table's names,
  /// so a name is never taken for another value).
  template <class E, std::size_t N>
  std::optional<E> choice(std::string_view key, const core::EnumTable<E, N>& table, Need need = Need::declared) const {
    auto name = choice(key, need);
    if (!name) return std::nullopt;
    auto value = table.value(*name);
    FRAMESIM_ASSERT(value.has_value(),
                    "MapReader: " + *name + ", a choice of " + std::string(key) + ", is not in the table of its enum");
    return value;
  }

  // The same reads of a key declared with a fallback (config/schema.hpp): its value, or the fallback when it is
  // absent (or refused, and reported). A key declared without one is a framesim bug.
  double quantity_or_default(std::string_view key) const;
  double number_or_default(std::string_view key) const;
  std::int64_t integer_or_default(std::string_view key) const;
  template <class E, std::size_t N>
  E choice_or_default(std::string_view key, const core::EnumTable<E, N>& table) const {
    if (auto value = choice(key, table)) return *value;
    auto fallback = table.value(declaration(key).fallback);
    FRAMESIM_ASSERT(fallback.has_value(), "MapReader: " + std::string(key) + " has no fallback among its choices");
    return *fallback;
  }

 private:
  /// The declared fallback of `key` as a number (asserting it has one that reads).
  double fallback_of(std::string_view key) const;
  /// The node at `key` when present; reports it missing when the declaration (or `need`) requires it.
  std::optional<Node> fetch(std::string_view key, schema::Kind kind, Need need) const;
  Node node_;
  const schema::Table* table_ = nullptr;
  std::string pattern_;
  const std::vector<std::string>* declared_ = nullptr;  // the table's own list (Table::literal_child_names)
  std::vector<std::string> combined_;                   // declared, then extra (when there is extra)
  std::vector<std::string> extra_;
  std::vector<std::string> suggested_;  // declared keys an unknown key was taken for: not reported missing again
  std::vector<std::pair<std::string, YAML::Node>> entries_;  // the mapping's scalar keys and their values, in order
  bool ok_ = true;
};

/// A path written in `doc`, resolved against the folder of `doc` (never the working directory),
/// in a form fit for messages (lexically normal, relative when the input was).
std::filesystem::path resolve_path(const Document& doc, const std::string& written);

/// Where `mark` is in `file`, 1-based (0:0 for a node yaml-cpp has no position for).
core::SourceLocation location_of(const std::string& file, const YAML::Mark& mark);

}  // namespace framesim::config
