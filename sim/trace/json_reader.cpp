#include "trace/json_reader.hpp"

#include <fmt/format.h>

#include <cctype>
#include <tuple>

#include "core/error.hpp"
#include "trace/csv_table.hpp"

namespace framesim::trace {

std::string_view json_type_name(Json::Type t) {
  switch (t) {
    case Json::Type::null: return "null";
    case Json::Type::boolean: return "a boolean";
    case Json::Type::number: return "a number";
    case Json::Type::string: return "a string";
    case Json::Type::array: return "an array";
    case Json::Type::object: return "an object";
  }
  return "?";
}

Json JsonReader::read_document(std::string_view what) {
  ws();
  if (at_end()) fail("", fmt::format("the file is empty after its comments: expected {}", what));
  Json v = value("", 0);
  ws();
  if (!at_end()) fail("", fmt::format("unexpected {} after the end of the JSON", describe_here()));
  return v;
}

void JsonReader::read_trace(const std::function<void(const Json&, const std::string&)>& on_event) {
  ws();
  if (at_end()) fail("", "the file is empty after its comments: expected a Chrome trace {\"traceEvents\": [...]}");
  const int top_line = line_, top_column = column();
  if (peek() == '[') {
    events("", on_event);
    found_events_ = true;
  } else if (peek() == '{') {
    ++pos_;
    ws();
    bool first = true;
    while (true) {
      if (at_end()) fail("", "the file ends inside the top-level object: the trace is truncated");
      if (peek() == '}') {
        ++pos_;
        break;
      }
      if (!first) {
        expect(',', "", "expected ',' or '}' after a member of the top-level object");
        ws();
      }
      first = false;
      if (at_end()) fail("", "the file ends inside the top-level object: the trace is truncated");
      if (peek() != '"') fail("", fmt::format("expected a member name in quotes, got {}", describe_here()));
      const int key_line = line_, key_column = column();
      std::string key = string_value("");
      ws();
      expect(':', key, "expected ':' after the member name");
      ws();
      if (key == "traceEvents") {
        if (found_events_) fail_at(key_line, key_column, "traceEvents", "given twice");
        if (at_end()) fail(key, "the file ends before the event array: the trace is truncated");
        if (peek() != '[') {
          const Json v = value(key, 0);
          fail_at(v.line, v.column, key, fmt::format("expected an array of events, got {}", json_type_name(v.type)));
        }
        events("traceEvents", on_event);
        found_events_ = true;
      } else {
        value(key, 0);
      }
      ws();
    }
  } else {
    fail("",
         fmt::format("expected a Chrome trace (a JSON object {{\"traceEvents\": [...]}}), got {}", describe_here()));
  }
  ws();
  if (!at_end()) fail("", fmt::format("unexpected {} after the end of the JSON", describe_here()));
  if (!found_events_)
    fail_at(top_line, top_column, "",
            "no \"traceEvents\" array: not a Chrome trace (expected {\"traceEvents\": [...]})");
}

void JsonReader::ws() {
  while (pos_ < s_.size()) {
    const char c = s_[pos_];
    if (c == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    } else if (c != ' ' && c != '\t' && c != '\r') {
      break;
    }
    ++pos_;
  }
}

std::string JsonReader::describe_here() const {
  if (at_end()) return "the end of the file";
  const char c = peek();
  if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
    return fmt::format("byte 0x{:02x}", static_cast<unsigned char>(c));
  return fmt::format("'{}'", c);
}

void JsonReader::fail_at(int line, int column, const std::string& key_path, const std::string& message) const {
  throw core::UserError({core::Diagnostic{{path_, line, column}, key_path, message}});
}

void JsonReader::fail(const std::string& key_path, const std::string& message) const {
  fail_at(line_, column(), key_path, message);
}

void JsonReader::truncated(const std::string& key_path, std::string_view inside) const {
  fail(key_path, fmt::format("the file ends inside {}: the trace is truncated", inside));
}

void JsonReader::expect(char c, const std::string& key_path, const std::string& message) {
  if (at_end()) truncated(key_path, key_path.empty() ? "the top-level object" : "this value");
  if (peek() != c) fail(key_path, fmt::format("{}, got {}", message, describe_here()));
  ++pos_;
}

void JsonReader::events(const std::string& key_path,
                        const std::function<void(const Json&, const std::string&)>& on_event) {
  events_line_ = line_;
  events_column_ = column();
  ++pos_;  // '['
  ws();
  std::size_t index = 0;
  bool first = true;
  while (true) {
    if (at_end()) truncated(key_path, fmt::format("the event array (after {} events)", index));
    if (peek() == ']') {
      ++pos_;
      return;
    }
    if (!first) {
      const std::string here = fmt::format("{}[{}]", key_path, index);
      if (peek() != ',') fail(here, fmt::format("expected ',' or ']' after an event, got {}", describe_here()));
      ++pos_;
      ws();
      if (at_end()) truncated(key_path, fmt::format("the event array (after {} events)", index));
    }
    first = false;
    const std::string here = fmt::format("{}[{}]", key_path, index);
    const Json event = value(here, 1);
    on_event(event, here);
    ++index;
    ws();
  }
}

Json JsonReader::value(const std::string& key_path, int depth) {
  if (depth > 200) fail(key_path, "nested too deeply (more than 200 levels)");
  if (at_end()) fail(key_path, "the file ends where this value should be: the trace is truncated");
  Json v;
  v.line = line_;
  v.column = column();
  const char c = peek();
  if (c == '{') {
    v.type = Json::Type::object;
    ++pos_;
    ws();
    bool first = true;
    while (true) {
      if (at_end()) truncated(key_path, "this object");
      if (peek() == '}') {
        ++pos_;
        return v;
      }
      if (!first) {
        if (peek() != ',') fail(key_path, fmt::format("expected ',' or '}}' in this object, got {}", describe_here()));
        ++pos_;
        ws();
        if (at_end()) truncated(key_path, "this object");
      }
      first = false;
      if (peek() != '"') fail(key_path, fmt::format("expected a member name in quotes, got {}", describe_here()));
      std::string key = string_value(key_path);
      const std::string child = key_path.empty() ? key : key_path + "." + key;
      ws();
      if (at_end()) truncated(child, "this object");
      if (peek() != ':') fail(child, fmt::format("expected ':' after the member name, got {}", describe_here()));
      ++pos_;
      ws();
      Json member = value(child, depth + 1);
      for (const auto& [k, unused] : v.members)
        if (k == key) fail_at(member.line, member.column, child, "given twice");
      v.members.push_back({std::move(key), std::move(member)});
      ws();
    }
  }
  if (c == '[') {
    v.type = Json::Type::array;
    ++pos_;
    ws();
    bool first = true;
    while (true) {
      if (at_end()) truncated(key_path, "this array");
      if (peek() == ']') {
        ++pos_;
        return v;
      }
      if (!first) {
        if (peek() != ',') fail(key_path, fmt::format("expected ',' or ']' in this array, got {}", describe_here()));
        ++pos_;
        ws();
      }
      first = false;
      v.items.push_back(value(fmt::format("{}[{}]", key_path, v.items.size()), depth + 1));
      ws();
    }
  }
  if (c == '"') {
    v.type = Json::Type::string;
    v.text = string_value(key_path);
    return v;
  }
  if (c == '-' || (c >= '0' && c <= '9')) {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '-' ||
                                s_[pos_] == '+' || s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E'))
      ++pos_;
    const std::string_view token(s_.data() + start, pos_ - start);
    const auto n = whole_number(token);
    if (!n) fail_at(v.line, v.column, key_path, fmt::format("\"{}\" is not a number", std::string(token)));
    v.type = Json::Type::number;
    v.number = *n;
    return v;
  }
  for (const auto& [word, type, flag] : {std::tuple{std::string_view("true"), Json::Type::boolean, true},
                                         std::tuple{std::string_view("false"), Json::Type::boolean, false},
                                         std::tuple{std::string_view("null"), Json::Type::null, false}}) {
    if (std::string_view(s_).substr(pos_, word.size()) == word) {
      pos_ += word.size();
      v.type = type;
      v.flag = flag;
      return v;
    }
  }
  if (std::string_view(s_).substr(pos_, 3) == "NaN" || std::string_view(s_).substr(pos_, 8) == "Infinity")
    fail(key_path, "NaN and Infinity are not JSON numbers");
  fail(key_path, fmt::format("expected a value, got {}", describe_here()));
}

void JsonReader::append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::uint32_t JsonReader::hex4(const std::string& key_path) {
  if (pos_ + 4 > s_.size()) truncated(key_path, "a string");
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    const char c = s_[pos_++];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= static_cast<std::uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f') v |= static_cast<std::uint32_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= static_cast<std::uint32_t>(c - 'A' + 10);
    else fail(key_path, "\\u must be followed by four hex digits");
  }
  return v;
}

std::string JsonReader::string_value(const std::string& key_path) {
  ++pos_;  // '"'
  std::string out;
  while (true) {
    if (at_end()) truncated(key_path, "a string");
    const char c = s_[pos_];
    if (c == '"') {
      ++pos_;
      return out;
    }
    if (static_cast<unsigned char>(c) < 0x20) {
      if (c == '\n') fail(key_path, "a line break inside a string (an unterminated string?)");
      fail(key_path, fmt::format("control character 0x{:02x} inside a string", static_cast<unsigned char>(c)));
    }
    if (c != '\\') {
      out += c;
      ++pos_;
      continue;
    }
    ++pos_;
    if (at_end()) truncated(key_path, "a string");
    const char e = s_[pos_++];
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        std::uint32_t cp = hex4(key_path);
        if (cp >= 0xD800 && cp < 0xDC00 && std::string_view(s_).substr(pos_, 2) == "\\u") {
          pos_ += 2;
          const std::uint32_t low = hex4(key_path);
          if (low >= 0xDC00 && low < 0xE000) cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        append_utf8(out, cp);
        break;
      }
      default: fail(key_path, fmt::format("unknown escape \\{} in a string", e));
    }
  }
}

}  // namespace framesim::trace
