// JSON with positions, for the measured-time formats that are JSON (the PyTorch profiler's Chrome trace, trtexec's
// profile and layer information, ONNX Runtime's profile). A small recursive-descent reader: every value keeps its
// line and column so that a wrong field is reported where it is, and the events of a Chrome trace can be handed
// over one at a time so that a large trace is never held as a whole tree. Internal to trace/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace framesim::trace {

struct JsonMember;

/// One JSON value and where it starts (1-based line and column).
struct Json {
  enum class Type { null, boolean, number, string, array, object };
  Type type = Type::null;
  int line = 0, column = 0;
  bool flag = false;
  double number = 0;
  std::string text;
  std::vector<Json> items;
  std::vector<JsonMember> members;  // a struct: std::pair of the incomplete Json does not compile with clang

  /// The member named `key` of an object, or nullptr.
  const Json* find(std::string_view key) const;
};

/// A member of a JSON object: its name and value.
struct JsonMember {
  std::string key;
  Json value;
};

inline const Json* Json::find(std::string_view key) const {
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

/// "a number", "an object", ... for messages.
std::string_view json_type_name(Json::Type t);

/// Reads `text` from byte `start` (on line `start_line`: leading comment lines are skipped by the caller).
/// Every problem throws core::UserError with `path`, line, column and the key path of the value.
class JsonReader {
 public:
  JsonReader(const std::string& text, std::string path, std::size_t start, int start_line)
      : s_(text), path_(std::move(path)), pos_(start), line_(start_line), line_start_(start) {}

  /// Reads the top level: {"traceEvents": [...], ...} or a bare array of events. Calls `on_event` per event.
  void read_trace(const std::function<void(const Json&, const std::string&)>& on_event);
  /// Reads the whole document as one value (nothing but white space may follow it). `what` names what the file
  /// should be, for an empty file ("a trtexec profile").
  Json read_document(std::string_view what);

  /// Where the event array starts (for problems with the trace as a whole).
  int events_line() const { return events_line_; }
  int events_column() const { return events_column_; }

 private:
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return s_[pos_]; }
  int column() const { return static_cast<int>(pos_ - line_start_) + 1; }
  void ws();
  std::string describe_here() const;
  [[noreturn]] void fail_at(int line, int column, const std::string& key_path, const std::string& message) const;
  [[noreturn]] void fail(const std::string& key_path, const std::string& message) const;
  [[noreturn]] void truncated(const std::string& key_path, std::string_view inside) const;
  void expect(char c, const std::string& key_path, const std::string& message);
  void events(const std::string& key_path, const std::function<void(const Json&, const std::string&)>& on_event);
  Json value(const std::string& key_path, int depth);
  static void append_utf8(std::string& out, std::uint32_t cp);
  std::uint32_t hex4(const std::string& key_path);
  std::string string_value(const std::string& key_path);

  const std::string& s_;
  std::string path_;
  std::size_t pos_;
  int line_;
  std::size_t line_start_;
  bool found_events_ = false;
  int events_line_ = 1, events_column_ = 1;
};

}  // namespace framesim::trace
