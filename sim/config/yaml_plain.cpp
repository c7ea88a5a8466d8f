// load_plain_yaml: framesim's plain YAML read straight into yaml-cpp's nodes (yaml_plain.hpp).
#include "config/yaml_plain.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace framesim::config::plain_yaml {
/// Names the specialisation below.
struct Root {};
}  // namespace framesim::config::plain_yaml

namespace YAML {
/// A Node over nodes built outside yaml-cpp's parser: yaml-cpp keeps that constructor for its own builder and
/// for its `as_if` specialisations (Node befriends every `as_if`); this is one, for framesim's reader only.
template <>
struct as_if<framesim::config::plain_yaml::Root, void> {
  static Node wrap(detail::node& root, const detail::shared_memory_holder& memory) { return Node(root, memory); }
};
}  // namespace YAML

namespace framesim::config {
namespace {

/// Thrown where the text leaves the plain subset; the caller parses it with yaml-cpp instead.
struct Outside {};

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/// A character plain scalars may hold past their first; `flow`: inside a flow mapping or sequence.
bool plain_char(char c, bool flow) {
  if (static_cast<unsigned char>(c) >= 0x80) return true;  // UTF-8 (validated before): yaml-cpp takes it as is
  if (alnum(c)) return true;
  if (c == ',') return !flow;
  return c != '\0' && std::string_view(" _.-+/()$=~%^'<>").find(c) != std::string_view::npos;
}

/// A character a plain scalar may start with (`next` the one after it): none of YAML's indicators.
bool plain_first(char c, char next) {
  if (alnum(c)) return true;
  if (c == '-') return alnum(next) || next == '.';  // "-1", "-.5", "-x"; not "- " (an entry)
  return c != '\0' && std::string_view("_/+($=~^.").find(c) != std::string_view::npos;
}

/// yaml-cpp's null strings: a plain scalar spelling one is a null node.
bool null_string(std::string_view s) { return s == "~" || s == "null" || s == "Null" || s == "NULL"; }

class PlainReader {
 public:
  explicit PlainReader(std::string_view text) : text_(text), memory_(std::make_shared<YAML::detail::memory_holder>()) {}

  std::optional<YAML::Node> read() {
    try {
      next_content_line();
      if (indent_ != 0) return std::nullopt;  // empty, or an indented first line
      YAML::detail::node* root = nullptr;
      if (dash_entry()) {
        root = &block_sequence(0);
      } else if (starts_map_key()) {
        root = &block_map(0);
      } else {
        root = &inline_value(0);
        end_of_line();
        next_content_line();
      }
      if (indent_ != -1) return std::nullopt;
      return YAML::as_if<plain_yaml::Root, void>::wrap(*root, memory_);
    } catch (const Outside&) {
      return std::nullopt;
    }
  }

 private:
  struct Token {
    YAML::Mark mark;
    std::string_view value;
    bool quoted = false;
  };

  bool at_end() const { return pos_ >= text_.size(); }
  char peek(std::size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\n'; }
  YAML::Mark mark() const {
    YAML::Mark m;
    m.pos = static_cast<int>(pos_);
    m.line = line_;
    m.column = static_cast<int>(pos_ - line_start_);
    return m;
  }
  void skip_spaces() {
    while (!at_end() && text_[pos_] == ' ') ++pos_;
  }
  /// Inside a flow collection: spaces, comments after a space and line breaks, the lines after a break indented more
  /// than the block the collection is in (block_indent_).
  void skip_flow_space() {
    for (;;) {
      skip_spaces();
      if (at_end()) return;
      if (text_[pos_] == '#' && text_[pos_ - 1] == ' ') {
        while (!at_end() && text_[pos_] != '\n') {
          if (text_[pos_] == '\r') throw Outside{};
          ++pos_;
        }
        if (at_end()) return;
      }
      if (text_[pos_] != '\n') return;
      ++pos_;
      ++line_;
      line_start_ = pos_;
      skip_spaces();
      if (at_end()) return;
      if (text_[pos_] == '\t' || text_[pos_] == '\r' ||
          (text_[pos_] != '\n' && static_cast<int>(pos_ - line_start_) <= block_indent_))
        throw Outside{};
    }
  }
  /// A block sequence entry ("- " or a lone "-") at the cursor.
  bool dash_entry() const { return peek() == '-' && (peek(1) == ' ' || peek(1) == '\n'); }

  YAML::detail::node& create(const YAML::Mark& m) {
    YAML::detail::node& n = memory_->create_node();
    n.set_mark(m);
    return n;
  }
  YAML::detail::node& scalar(const Token& t) {
    YAML::detail::node& n = create(t.mark);
    if (!t.quoted && null_string(t.value)) {
      n.set_null();
      return n;
    }
    n.set_scalar(std::string(t.value));
    n.set_tag(t.quoted ? "!" : "?");
    return n;
  }
  YAML::detail::node& collection(const YAML::Mark& m, YAML::NodeType::value type, YAML::EmitterStyle::value style) {
    YAML::detail::node& n = create(m);
    n.set_type(type);
    n.set_tag("?");
    n.set_style(style);
    return n;
  }

  /// From a line's start to the first character of the next line with content (blank and comment lines skipped):
  /// indent_ is its indentation, or -1 at the end of the text.
  void next_content_line() {
    for (;;) {
      std::size_t i = pos_;
      while (i < text_.size() && text_[i] == ' ') ++i;
      if (i >= text_.size()) {
        pos_ = i;
        indent_ = -1;
        return;
      }
      const char c = text_[i];
      if (c == '\t' || c == '\r') throw Outside{};
      if (c == '#') {
        while (i < text_.size() && text_[i] != '\n') {
          if (text_[i] == '\r') throw Outside{};
          ++i;
        }
      }
      if (i < text_.size() && text_[i] == '\n') {
        pos_ = i + 1;
        ++line_;
        line_start_ = pos_;
        continue;
      }
      if (i >= text_.size()) {
        pos_ = i;
        indent_ = -1;
        return;
      }
      pos_ = i;
      indent_ = static_cast<int>(i - line_start_);
      // A document marker ("---", "...") at a line's start.
      if (indent_ == 0 && (text_.substr(i, 3) == "---" || text_.substr(i, 3) == "...") &&
          (peek(3) == ' ' || peek(3) == '\n'))
        throw Outside{};
      return;
    }
  }

  /// After a line's content: spaces, a comment after a space, then the line break (or the end).
  void end_of_line() {
    skip_spaces();
    if (!at_end() && text_[pos_] == '#') {
      if (pos_ > line_start_ && text_[pos_ - 1] != ' ') throw Outside{};  // "x#y" is no comment
      while (!at_end() && text_[pos_] != '\n') {
        if (text_[pos_] == '\r') throw Outside{};
        ++pos_;
      }
    }
    if (at_end()) return;
    if (text_[pos_] != '\n') throw Outside{};
    ++pos_;
    ++line_;
    line_start_ = pos_;
  }

  /// A one-line scalar at the cursor: quoted without escapes, or plain (ending before ": ", " #", the line's end
  /// and, in flow, before ",[]{}"), its trailing spaces left out.
  Token scalar_token(bool flow) {
    Token t{mark(), {}, false};
    const char q = peek();
    if (!at_end() && (q == '"' || q == '\'')) {
      std::size_t i = pos_ + 1;
      while (i < text_.size() && text_[i] != q) {
        const auto u = static_cast<unsigned char>(text_[i]);
        if (u < 0x20 || u == 0x7f || (q == '"' && text_[i] == '\\')) throw Outside{};
        ++i;
      }
      if (i >= text_.size() || (q == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'')) throw Outside{};
      t.value = text_.substr(pos_ + 1, i - pos_ - 1);
      t.quoted = true;
      pos_ = i + 1;
      return t;
    }
    if (at_end() || !plain_first(q, peek(1))) throw Outside{};
    std::size_t i = pos_;
    std::size_t last = pos_;  // one past the last character that is not a space
    while (i < text_.size()) {
      const char c = text_[i];
      if (c == '\n') break;
      if (c == '#') {
        if (text_[i - 1] == ' ') break;
        throw Outside{};
      }
      if (c == ':') {
        const char next = i + 1 < text_.size() ? text_[i + 1] : '\n';
        if (next == ' ' || next == '\n') break;
        if (flow) throw Outside{};
        last = ++i;
        continue;
      }
      if (flow && (c == ',' || c == ']' || c == '}')) break;
      if (!plain_char(c, flow)) throw Outside{};
      ++i;
      if (c != ' ') last = i;
    }
    t.value = text_.substr(pos_, last - pos_);
    pos_ = last;
    return t;
  }

  /// Whether a mapping key (a scalar, then ':' and a space or the line's end) is at the cursor.
  bool starts_map_key() {
    if (peek() == '{' || peek() == '[') return false;  // a flow collection (a key that is one is left to yaml-cpp)
    const std::size_t pos = pos_;
    bool key = false;
    try {
      scalar_token(false);
      key = peek() == ':' && (peek(1) == ' ' || peek(1) == '\n');
    } catch (const Outside&) {
      key = false;
    }
    pos_ = pos;
    return key;
  }

  /// A value on the line of its key or dash: a flow mapping or sequence, or a scalar.
  YAML::detail::node& inline_value(int n) {
    block_indent_ = n;
    if (peek() == '{') return flow_map();
    if (peek() == '[') return flow_sequence();
    return scalar(scalar_token(false));
  }

  YAML::detail::node& flow_value() {
    if (peek() == '{') return flow_map();
    if (peek() == '[') return flow_sequence();
    return scalar(scalar_token(true));
  }

  /// After ',' or the opening bracket's item: the next item, or the closing bracket `close` (true when closed).
  bool flow_next(char close) {
    skip_flow_space();
    if (peek() == close) {
      ++pos_;
      return true;
    }
    if (peek() != ',') throw Outside{};
    ++pos_;
    skip_flow_space();
    if (peek() == close || peek() == ',') throw Outside{};  // a trailing comma, an empty entry
    return false;
  }

  YAML::detail::node& flow_map() {
    YAML::detail::node& map = collection(mark(), YAML::NodeType::Map, YAML::EmitterStyle::Flow);
    ++pos_;
    skip_flow_space();
    if (peek() == '}') {
      ++pos_;
      return map;
    }
    for (;;) {
      YAML::detail::node& key = scalar(scalar_token(true));
      if (peek() != ':' || peek(1) != ' ') throw Outside{};
      pos_ += 2;
      skip_spaces();
      YAML::detail::node& value = flow_value();
      map.insert(key, value, memory_);
      if (flow_next('}')) return map;
    }
  }

  YAML::detail::node& flow_sequence() {
    YAML::detail::node& seq = collection(mark(), YAML::NodeType::Sequence, YAML::EmitterStyle::Flow);
    ++pos_;
    skip_flow_space();
    if (peek() == ']') {
      ++pos_;
      return seq;
    }
    for (;;) {
      YAML::detail::node& item = flow_value();
      seq.push_back(item, memory_);
      if (flow_next(']')) return seq;
    }
  }

  /// The value of a key whose line ends after the ':': a block collection on the lines below (a sequence may
  /// start at the key's own indentation `n`). An empty value is left to yaml-cpp (its mark is the next token's).
  YAML::detail::node& block_value_below(int n) {
    end_of_line();
    next_content_line();
    if (indent_ > n) return dash_entry() ? block_sequence(indent_) : block_map(indent_);
    if (indent_ == n && dash_entry()) return block_sequence(n);
    throw Outside{};
  }

  /// A block mapping whose keys start at column `n`, the cursor on its first key. Returns on the first line with
  /// content indented less (or at `n` but a sequence entry of an enclosing sequence).
  YAML::detail::node& block_map(int n) {
    YAML::detail::node& map = collection(mark(), YAML::NodeType::Map, YAML::EmitterStyle::Block);
    for (;;) {
      YAML::detail::node& key = scalar(scalar_token(false));
      if (peek() != ':') throw Outside{};
      ++pos_;
      skip_spaces();
      YAML::detail::node* value = nullptr;
      if (at_end() || peek() == '\n' || peek() == '#') {
        value = &block_value_below(n);
      } else {
        value = &inline_value(n);
        end_of_line();
        next_content_line();
      }
      map.insert(key, *value, memory_);
      if (indent_ < n) return map;
      if (indent_ > n || dash_entry()) throw Outside{};
    }
  }

  /// A block sequence whose dashes are at column `n`, the cursor on its first dash.
  YAML::detail::node& block_sequence(int n) {
    YAML::detail::node& seq = collection(mark(), YAML::NodeType::Sequence, YAML::EmitterStyle::Block);
    for (;;) {
      ++pos_;  // the dash
      skip_spaces();
      YAML::detail::node* item = nullptr;
      if (at_end() || peek() == '\n' || peek() == '#') {
        end_of_line();
        next_content_line();
        if (indent_ <= n) throw Outside{};
        item = dash_entry() ? &block_sequence(indent_) : &block_map(indent_);
      } else if (dash_entry()) {
        throw Outside{};  // "- - a": a sequence in a sequence on one line
      } else if (starts_map_key()) {
        item = &block_map(static_cast<int>(pos_ - line_start_));
      } else {
        item = &inline_value(n);
        end_of_line();
        next_content_line();
      }
      seq.push_back(*item, memory_);
      if (indent_ == n && dash_entry()) continue;
      if (indent_ > n) throw Outside{};
      return seq;
    }
  }

  std::string_view text_;
  YAML::detail::shared_memory_holder memory_;
  std::size_t pos_ = 0;
  std::size_t line_start_ = 0;
  int line_ = 0;
  int indent_ = -1;
  int block_indent_ = 0;  // the indentation of the block collection a flow collection is in
};

}  // namespace

std::optional<YAML::Node> load_plain_yaml(std::string_view text) { return PlainReader(text).read(); }

}  // namespace framesim::config
