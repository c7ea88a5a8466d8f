#include "config/yaml.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include "config/yaml_plain.hpp"
#include "core/files.hpp"
#include "core/text.hpp"

namespace framesim::config {

using core::Diagnostics;
using core::SourceLocation;

core::SourceLocation location_of(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null()) return {file, 0, 0};
  return {file, mark.line + 1, mark.column + 1};
}

namespace {

/// Where a node is, as a chain to the root: its key path ("a.b[2].c") is written out only for a message.
struct PathLink {
  const PathLink* parent = nullptr;
  const std::string* key = nullptr;  // a mapping's key, or
  std::size_t index = 0;             // a sequence's index
};

std::string path_of(const PathLink* link) {
  if (link == nullptr) return "";
  std::string path = path_of(link->parent);
  if (link->key == nullptr) return path + "[" + std::to_string(link->index) + "]";
  return path.empty() ? *link->key : path + "." + *link->key;
}

/// Reports, anywhere in the tree: a key given twice in one mapping, a key that is not a plain name,
/// and an alias that makes a node contain itself (which would make every reader loop).
void check_structure(const YAML::Node& node, const std::string& file, const PathLink* path, Diagnostics& diagnostics,
                     std::vector<YAML::Node>& ancestors) {
  for (const auto& a : ancestors) {
    if (a.is(node)) {
      diagnostics.add(location_of(file, node.Mark()), path_of(path),
                      "a YAML alias refers to a node that contains it (a cycle)");
      return;
    }
  }
  if (!node.IsMap() && !node.IsSequence()) return;
  ancestors.push_back(node);
  if (node.IsMap()) {
    // The keys seen so far: looked through one by one in a small mapping, by a search tree past a few.
    constexpr std::size_t kFewKeys = 16;
    std::vector<std::pair<const std::string*, YAML::Mark>> few;
    std::map<std::string_view, YAML::Mark> many;
    for (const auto& entry : node) {  // each entry taken once (yaml-cpp builds the pair anew at every `it->`)
      const YAML::Node& key_node = entry.first;
      if (!key_node.IsScalar()) {
        diagnostics.add(location_of(file, key_node.Mark()), path_of(path),
                        fmt::format("a key must be a plain name, got {}", key_node.IsMap() ? "a mapping" : "a list"));
        continue;
      }
      const std::string& key = key_node.Scalar();
      const PathLink child{path, &key, 0};
      const YAML::Mark mark = key_node.Mark();
      const YAML::Mark* first = nullptr;
      if (many.empty()) {
        for (const auto& [k, m] : few)
          if (*k == key) {
            first = &m;
            break;
          }
        if (first == nullptr) {
          few.emplace_back(&key, mark);
          if (few.size() > kFewKeys) {
            for (const auto& [k, m] : few) many.emplace(*k, m);
            few.clear();
          }
        }
      } else {
        auto [pos, inserted] = many.emplace(key, mark);
        if (!inserted) first = &pos->second;
      }
      if (first != nullptr)
        diagnostics.add(location_of(file, mark), path_of(&child),
                        fmt::format("duplicate key \"{}\" (first given at line {})", key, first->line + 1));
      check_structure(entry.second, file, &child, diagnostics, ancestors);
    }
  } else {
    std::size_t i = 0;
    for (auto it = node.begin(); it != node.end(); ++it, ++i) {
      const PathLink child{path, nullptr, i};
      check_structure(*it, file, &child, diagnostics, ancestors);
    }
  }
  ancestors.pop_back();
}

/// The first line indented with a tab, as (line, column), 1-based; YAML indents with spaces only.
std::optional<std::pair<int, int>> tab_indentation(const std::string& text) {
  int line = 1;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t i = start;
    while (i < text.size() && text[i] == ' ') ++i;
    if (i < text.size() && text[i] == '\t') return std::pair{line, static_cast<int>(i - start + 1)};
    const std::size_t eol = text.find('\n', start);
    if (eol == std::string::npos) break;
    start = eol + 1;
    ++line;
  }
  return std::nullopt;
}

std::string display(const std::filesystem::path& p) { return p.lexically_normal().generic_string(); }

/// The text without a leading UTF-8 byte order mark (editors on Windows write one).
std::string_view strip_bom(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  return text;
}

/// Counts the nodes a YAML text stands for once its aliases are expanded (what every reader walks), and the
/// documents in it, without building anything: each anchor's expanded size is known when its alias comes.
class ExpansionCounter : public YAML::EventHandler {
 public:
  std::uint64_t total = 0;
  int documents = 0;
  YAML::Mark second_document;

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents == 2) second_document = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override { leaf(anchor, 1); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    const auto it = anchors_.find(anchor);
    add(it == anchors_.end() ? 1 : it->second);
  }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t anchor, const std::string&) override {
    leaf(anchor, 1);
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open(anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  static constexpr std::uint64_t kSaturated = std::uint64_t{1} << 62;
  static std::uint64_t sum(std::uint64_t a, std::uint64_t b) { return std::min(kSaturated, a + b); }
  void add(std::uint64_t n) {
    total = sum(total, n);
    if (!open_.empty()) open_.back().second = sum(open_.back().second, n);
  }
  void leaf(YAML::anchor_t anchor, std::uint64_t n) {
    add(n);
    if (anchor != YAML::NullAnchor) anchors_[anchor] = n;
  }
  void open(YAML::anchor_t anchor) {
    add(1);
    open_.emplace_back(anchor, 1);
  }
  void close() {
    if (open_.empty()) return;
    const auto [anchor, size] = open_.back();
    open_.pop_back();
    if (anchor != YAML::NullAnchor) anchors_[anchor] = size;
    // The node's size was added to every open ancestor as its parts came.
  }
  std::map<YAML::anchor_t, std::uint64_t> anchors_;
  std::vector<std::pair<YAML::anchor_t, std::uint64_t>> open_;
};

/// A YAML syntax error as a user error at its position.
[[noreturn]] void throw_syntax_error(std::string_view text, const std::string& display_path,
                                     const YAML::ParserException& e) {
  if (auto tab = tab_indentation(std::string(text))) {
    throw core::UserError(
        std::vector<core::Diagnostic>{{{display_path, tab->first, tab->second},
                                       {},
                                       "YAML syntax error: a tab is used for indentation (YAML indents with spaces)"}});
  }
  throw core::UserError(std::vector<core::Diagnostic>{
      {location_of(display_path, e.mark), {}, fmt::format("YAML syntax error: {}", e.msg)}});
}

/// Whether `text` can hold neither an alias nor a second document, and is too short to stand for more nodes than
/// kMaxYamlNodes without aliases (a node takes at least a byte or two of text).
bool may_skip_count(std::string_view text) {
  static_assert(kMaxYamlNodes >= std::size_t{4} * 1'000'000);
  if (text.size() >= 1'000'000 || text.find('*') != std::string_view::npos) return false;
  for (std::size_t at = 0; at < text.size();) {  // every line's start
    const std::string_view line = text.substr(at, 3);
    if (line == "---" || line == "...") return false;
    const std::size_t eol = text.find('\n', at);
    if (eol == std::string_view::npos) break;
    at = eol + 1;
  }
  return true;
}

}  // namespace

YAML::Node load_yaml(std::string_view text, const std::string& display_path, const std::string& key_path,
                     bool whole_file) {
  auto fail = [&](int line, int column, const std::string& message) -> YAML::Node {
    throw core::UserError(std::vector<core::Diagnostic>{{{display_path, line, column}, key_path, message}});
  };
  if (auto bad = core::invalid_utf8_offset(text)) {
    const auto [line, column] = whole_file ? core::line_column(text, *bad) : std::pair{0, 0};
    return fail(line, column,
                fmt::format("the text is not valid UTF-8 (byte 0x{:02X}{})", static_cast<unsigned char>(text[*bad]),
                            whole_file ? "" : fmt::format(" at byte {}", *bad + 1)));
  }
  // A line of megabytes (a 10 MB scalar) is no configuration: refused before the parser spends seconds on it.
  for (std::size_t start = 0, line = 1; start < text.size(); ++line) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    if (end - start > kMaxYamlLineBytes)
      return fail(
          whole_file ? static_cast<int>(line) : 0, whole_file ? 1 : 0,
          fmt::format("a line of {} MiB; framesim reads YAML lines of at most {} KiB",
                      core::format_number(static_cast<double>(end - start) / (1 << 20), 3), kMaxYamlLineBytes >> 10));
    start = end + 1;
  }
  // Without an alias (no '*') and a document marker at a line's start, a text stands for at most one node per
  // byte and holds one document: the counting pass below would find nothing, and it costs as much as the parse
  // (half of the refusal time of a file of 200 000 unknown keys).
  const bool may_expand = text.find('*') != std::string_view::npos || text.size() >= kMaxYamlNodes;
  const bool may_have_documents = text.find("\n---") != std::string_view::npos ||
                                  text.find("\n...") != std::string_view::npos || text.starts_with("...");
  // Plain YAML (yaml_plain.hpp) has no alias and no document marker, and stands for fewer nodes than it has bytes:
  // read straight into yaml-cpp's nodes when it is shorter than the node limit (a '*' in a comment is no alias).
  if (text.size() < kMaxYamlNodes)
    if (auto plain = load_plain_yaml(text)) return *plain;
  if (!may_expand && !may_have_documents) {
    try {
      return YAML::Load(std::string(text));
    } catch (const YAML::ParserException& e) {
      throw_syntax_error(text, display_path, e);
    }
  }
  // Count first: a few lines of aliases can stand for billions of nodes ("billion laughs"), and every
  // reader, even one skipping an unknown key, would walk them all. Text with no alias (no "*" anywhere) and no
  // second document (no line starting "---" or "...") stands for at most one node per byte or so: below the
  // limit when it is under a megabyte, so it is parsed once, straight into its nodes (the count would find
  // nothing: a 1,000-layer network is read in half the time).
  if (may_skip_count(text)) {
    try {
      return YAML::Load(std::string(text));
    } catch (const YAML::ParserException& e) {
      throw_syntax_error(text, display_path, e);
    }
  }
  ExpansionCounter counter;
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(counter)) {
      if (counter.documents > 1) break;
    }
  } catch (const YAML::ParserException& e) {
    throw_syntax_error(text, display_path, e);
  }
  if (counter.documents > 1) {
    const auto where = location_of(display_path, counter.second_document);
    return fail(whole_file ? where.line : 0, whole_file ? where.column : 0,
                "a second YAML document (after \"---\"): framesim reads one document per file");
  }
  if (counter.total > kMaxYamlNodes)
    return fail(whole_file ? 1 : 0, whole_file ? 1 : 0,
                fmt::format("the YAML stands for {} nodes once its aliases (*name) are expanded; framesim reads at "
                            "most {} (a YAML alias bomb?)",
                            counter.total >= (std::uint64_t{1} << 62) ? std::string("more than 4e18")
                                                                      : std::to_string(counter.total),
                            kMaxYamlNodes));
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    throw_syntax_error(text, display_path, e);
  }
}

std::string Document::display_of(const std::filesystem::path& path) { return display(path); }

std::shared_ptr<Document> Document::load(const std::filesystem::path& path, Diagnostics& diagnostics) {
  if (path == "-") {
    // Standard input, read once (a second reader in the same process sees the same text): its relative paths
    // are resolved against the working directory, its messages name "<stdin>".
    auto doc = parse(core::read_file("-"), "<stdin>", diagnostics);
    doc->folder_ = ".";
    return doc;
  }
  return load(path, core::read_file(path), diagnostics);  // a folder, a missing file or one too large: a UserError
}

std::shared_ptr<Document> Document::load(const std::filesystem::path& path, const std::string& text,
                                         Diagnostics& diagnostics) {
  if (auto kept = take_kept(path, text, diagnostics)) return kept;  // parsed ahead (preload.cpp)
  auto doc = parse(text, display(path), diagnostics);
  doc->folder_ = path.parent_path();
  return doc;
}

std::shared_ptr<Document> Document::parse(const std::string& text, const std::string& display_path,
                                          Diagnostics& diagnostics) {
  auto doc = std::make_shared<Document>();
  doc->display_path_ = display_path;
  doc->folder_ = std::filesystem::path(display_path).parent_path();
  doc->diagnostics_ = &diagnostics;
  const std::string_view body = strip_bom(text);
  // A byte order mark anywhere but at the very start (two files joined, a BOM after comment lines) is invisible in
  // an editor and would become part of a key ("\ufeffname"): say where it is.
  if (const auto bom = body.find("\xEF\xBB\xBF"); bom != std::string_view::npos) {
    const auto [line, column] = core::line_column(text, bom + (text.size() - body.size()));
    throw core::UserError(std::vector<core::Diagnostic>{
        {{display_path, line, column},
         {},
         "a byte order mark (U+FEFF, invisible in most editors) inside the file: only its very first bytes may be "
         "one; delete it"}});
  }
  doc->root_ = load_yaml(body, display_path, {}, true);
  if (!doc->root_.IsDefined() || doc->root_.IsNull())
    throw core::UserError(std::vector<core::Diagnostic>{{{display_path, 1, 1}, {}, "the file is empty"}});
  std::vector<YAML::Node> ancestors;
  core::Diagnostics structure;
  check_structure(doc->root_, display_path, nullptr, structure, ancestors);
  for (const auto& d : structure.items()) {
    // A cycle cannot be read at all: stop here rather than report what reading it would find.
    if (d.message.find("(a cycle)") != std::string::npos) throw core::UserError(structure.items());
    diagnostics.add(d);
  }
  keep_to_exit(doc, text.size(), false);
  return doc;
}

void Document::keep_to_exit(const std::shared_ptr<const Document>& doc, std::size_t text_bytes, bool always) {
  // Freeing yaml-cpp's nodes costs a tenth of the time of `budget` on a 1,000-layer network (a set of shared
  // pointers, node by node). A process's first documents, up to 256 KiB of text in all (about 10 MB of nodes), are
  // kept until it exits, whose end frees them at once; any further ones are freed when their readers are done.
  static auto* const kept_to_exit = new std::vector<std::shared_ptr<const Document>>();  // never destroyed
  static std::size_t kept_bytes = 0;
  if (always || kept_bytes + text_bytes <= (std::size_t{256} << 10)) {
    if (!always) kept_bytes += text_bytes;
    kept_to_exit->push_back(doc);
  }
}

std::filesystem::path resolve_path(const Document& doc, const std::string& written) {
  std::filesystem::path p(written);
  if (p.is_absolute()) return p.lexically_normal();
  return (doc.folder() / p).lexically_normal();
}

Node::Node(std::shared_ptr<const Document> doc, const YAML::Node& node, std::string path)
    : doc_(std::move(doc)), node_(node), path_(std::move(path)) {}

SourceLocation Node::location() const {
  if (auto origin = doc_->override_origin(node_)) return *origin;
  return location_of(doc_->display_path(), node_.Mark());
}

std::optional<SourceLocation> Document::override_origin(const YAML::Node& node) const {
  for (const auto& [n, origin] : overridden_)
    if (n.is(node)) return origin;
  return std::nullopt;
}

namespace {

/// "a.b[2].c" -> {"a", "b", "[2]", "c"}.
std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::string current;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const char c = path[i];
    if (c == '.') {
      if (!current.empty()) out.push_back(current);
      current.clear();
    } else if (c == '[') {
      if (!current.empty()) out.push_back(current);
      current = "[";
    } else if (c == ']') {
      out.push_back(current + "]");
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

}  // namespace

bool Document::apply_override(const std::string& path, const std::string& value_yaml, const SourceLocation& origin) {
  const auto parts = split_path(path);
  auto fail = [&](const std::string& message) {
    diagnostics_->add(origin, path, message);
    return false;
  };
  if (parts.empty()) return fail("an empty key path");
  YAML::Node value;
  try {
    value = load_yaml(value_yaml, origin.file, path, false);
  } catch (const core::UserError& e) {
    return fail(fmt::format("the value \"{}\" is not valid here: {}", core::quote_capped(value_yaml),
                            e.diagnostics().front().message));
  }
  YAML::Node node = root_;
  std::string walked;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();
    if (node.IsSequence()) {
      std::optional<std::size_t> index;
      if (part.front() == '[') {
        try {
          index = std::stoul(part.substr(1, part.size() - 2));
        } catch (const std::exception&) {
          return fail(fmt::format("\"{}\" is not an index", part));
        }
        if (*index >= node.size()) return fail(fmt::format("{} has {} items, no {}", walked, node.size(), part));
      } else {
        const YAML::Node& items = node;
        for (std::size_t k = 0; k < items.size(); ++k)
          if (items[k].IsMap() && items[k]["name"].IsDefined() && items[k]["name"].IsScalar() &&
              items[k]["name"].Scalar() == part)
            index = k;
        if (!index) return fail(fmt::format("{} has no item named \"{}\"", walked.empty() ? "the file" : walked, part));
      }
      if (last) {
        node[*index] = value;
        overridden_.emplace_back(node[*index], origin);
        return true;
      }
      node.reset(node[*index]);
    } else if (node.IsMap()) {
      if (part.front() == '[')
        return fail(fmt::format("{} is a mapping, not a list", walked.empty() ? "the file" : walked));
      if (last) {
        node[part] = value;
        overridden_.emplace_back(node[part], origin);
        return true;
      }
      const YAML::Node child = static_cast<const YAML::Node&>(node)[part];  // const: looking must not add the key
      if (!child.IsDefined()) {
        // A missing block is created (thermal.ambient on a scenario without a thermal block), unless the key
        // looks like a misspelling of one that is there.
        std::vector<std::string> keys;
        for (auto it = node.begin(); it != node.end(); ++it)
          if (it->first.IsScalar()) keys.push_back(it->first.Scalar());
        if (auto near = core::closest_match(part, keys))
          return fail(fmt::format("{} has no key \"{}\" (did you mean \"{}\"?)",
                                  walked.empty() ? display_path_ : walked, part, *near));
        // A mapping of named objects (stages, sensors, units): a new name would be a new, incomplete object.
        const bool named_objects = !keys.empty() && std::all_of(node.begin(), node.end(),
                                                                [](const auto& entry) { return entry.second.IsMap(); });
        if (named_objects)
          return fail(fmt::format("{} has no \"{}\"; it has {}", walked.empty() ? display_path_ : walked,
                                  core::quote_capped(part), core::join_list(keys, ", ", true)));
        YAML::Node block(YAML::NodeType::Map);
        node[part] = block;  // the entry and `block` are now one node
        overridden_.emplace_back(block, origin);
        node.reset(block);
      } else {
        node.reset(child);
      }
    } else {
      return fail(fmt::format("{} is a value, not a mapping or a list: it has no \"{}\"", walked, part));
    }
    walked += (walked.empty() || part.front() == '[' ? "" : ".") + part;
  }
  return true;
}

void Node::error(const std::string& message) const { doc_->diagnostics().add(location(), path_, message); }

std::string Node::describe_kind() const {
  if (node_.IsMap()) return "a mapping";
  if (node_.IsSequence()) return "a list";
  if (node_.IsNull()) return "nothing";
  return fmt::format("\"{}\"", core::quote_capped(node_.Scalar()));
}

Node Node::child(const std::string& key, const YAML::Node& value) const {
  return Node(doc_, value, path_.empty() ? key : path_ + "." + key);
}

Node Node::item(std::size_t index, const YAML::Node& value) const {
  return Node(doc_, value, fmt::format("{}[{}]", path_, index));
}

std::optional<std::string> Node::text() const {
  if (!node_.IsScalar()) {
    error(fmt::format("expected a string, got {}", describe_kind()));
    return std::nullopt;
  }
  return node_.Scalar();
}

std::optional<std::int64_t> Node::integer(std::int64_t min, std::int64_t max) const {
  if (!node_.IsScalar()) {
    error(fmt::format("expected an integer, got {}", describe_kind()));
    return std::nullopt;
  }
  const std::string& s = node_.Scalar();
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    error(fmt::format("expected an integer, got \"{}\"", core::quote_capped(s)));
    return std::nullopt;
  }
  if (v < min) {
    error(fmt::format("must be at least {}, got {}", min, v));
    return std::nullopt;
  }
  if (v > max) {
    error(fmt::format("must be at most {}, got {}", max, v));
    return std::nullopt;
  }
  return v;
}

namespace {
std::optional<std::string> range_problem(double v, Range range) {
  switch (range) {
    case Range::any: return std::nullopt;
    case Range::positive:
      if (v <= 0) return "must be positive";
      return std::nullopt;
    case Range::non_negative:
      if (v < 0) return "must not be negative";
      return std::nullopt;
    case Range::unit_interval:
      if (v <= 0 || v > 1) return "must be in (0, 1]";
      return std::nullopt;
    case Range::fraction:
      if (v < 0 || v > 1) return "must be in [0, 1]";
      return std::nullopt;
  }
  return std::nullopt;
}
}  // namespace

std::optional<double> Node::number(Range range) const {
  if (!node_.IsScalar()) {
    error(fmt::format("expected a number, got {}", describe_kind()));
    return std::nullopt;
  }
  const std::string& s = node_.Scalar();
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) {
    error(fmt::format("expected a number, got \"{}\"", core::quote_capped(s)));
    return std::nullopt;
  }
  if (auto problem = range_problem(v, range)) {
    error(fmt::format("{}, got {}", *problem, core::quote_capped(s)));
    return std::nullopt;
  }
  // A plain number (a ratio, a count of operations) has the limits of a ratio (README "Limits").
  if (auto problem = core::quantity_range_problem(v, core::Dimension::Ratio)) {
    error(fmt::format("{} is out of range ({})", core::quote_capped(s), *problem));
    return std::nullopt;
  }
  return v;
}

std::optional<bool> Node::boolean() const {
  if (node_.IsScalar()) {
    const std::string& s = node_.Scalar();
    if (s == "true") return true;
    if (s == "false") return false;
  }
  error(fmt::format("expected true or false, got {}", describe_kind()));
  return std::nullopt;
}

std::optional<double> Node::quantity(core::Dimension dim, Range range) const {
  if (!node_.IsScalar()) {
    error(fmt::format("expected {} like \"{}\", got {}", core::with_article(core::dimension_name(dim)),
                      core::dimension_example(dim), describe_kind()));
    return std::nullopt;
  }
  auto parsed = core::parse_quantity(node_.Scalar(), dim);
  if (!parsed.value) {
    error(parsed.error);
    return std::nullopt;
  }
  if (auto problem = range_problem(*parsed.value, range)) {
    error(fmt::format("{}, got \"{}\"", *problem, core::quote_capped(node_.Scalar())));
    return std::nullopt;
  }
  return parsed.value;
}

std::optional<std::string> Node::choice(const std::vector<std::string>& allowed) const {
  auto s = text();
  if (!s) return std::nullopt;
  for (const auto& a : allowed)
    if (a == *s) return s;
  std::string message =
      fmt::format("\"{}\" is not one of {}", core::quote_capped(*s), core::join_list(allowed, ", ", true));
  if (auto near = core::closest_match(*s, allowed)) message += fmt::format(" (did you mean \"{}\"?)", *near);
  error(message);
  return std::nullopt;
}

std::vector<Node> Node::items() const {
  std::vector<Node> out;
  if (!node_.IsSequence()) {
    error(fmt::format("expected a list, got {}", describe_kind()));
    return out;
  }
  for (std::size_t i = 0; i < node_.size(); ++i) out.push_back(item(i, node_[i]));
  return out;
}

std::vector<std::pair<std::string, Node>> Node::entries() const {
  std::vector<std::pair<std::string, Node>> out;
  if (!node_.IsMap()) {
    error(fmt::format("expected a mapping, got {}", describe_kind()));
    return out;
  }
  for (const auto& entry : node_) {
    if (!entry.first.IsScalar()) continue;  // reported when the file was loaded
    const std::string& key = entry.first.Scalar();
    // A key given twice was reported when the file was loaded; only its first value is read.
    if (std::any_of(out.begin(), out.end(), [&](const auto& e) { return e.first == key; })) continue;
    out.emplace_back(key, child(key, entry.second));
  }
  return out;
}

std::optional<std::vector<std::string>> Node::text_list() const {
  if (!node_.IsSequence()) {
    error(fmt::format("expected a list, got {}", describe_kind()));
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool ok = true;
  for (const auto& i : items()) {
    if (auto s = i.text()) out.push_back(*s);
    else ok = false;
  }
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace framesim::config
