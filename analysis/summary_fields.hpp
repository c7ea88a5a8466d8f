// One declaration of a summary.json object's keys, for writing it and for reading it back.
//
// A record type names its keys once, in a static member template beside its members:
//
//   struct Little {
//     double L_frames = 0, W_s = 0;
//     template <class Io, class Self> static void fields(Io& io, Self& s) { io("L_frames", s.L_frames); ... }
//   };
//
// write_fields() writes a record with FieldWriter (Self const), read_fields() reads one with FieldReader: the
// same call names the key both ways, so a key cannot be written under one name and read under another. A member
// that is a std::optional is left out when empty and may be absent; io.nullable() writes null when empty (the key
// is always there; io.maybe_null: an older summary may lack it). Writing merges into what the document already holds
// (objects key by key, arrays element by element): keys no record types stay as their module wrote them. Reading
// refuses a missing or mistyped key with the file and the key's path, as read_run_summary does.
//
// A record whose members sit at several depths (RunSummary) names the objects between with io.object (required)
// or io.object_if_present (absent or null: its optional members empty); io.each names a map whose values sit one
// key down ({name: {key: value}}); io.defaulted a member an older summary may lack (absent: its default; always
// written); io.nonempty one written only when not empty; io.derived a value written from others and checked
// against them when read; io.copy one written from another member and not read back; io.shown an optional one
// that the run's own summary always has (required when read back, through io.object: read_back).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "stat_block.hpp"

namespace framesim::analysis {

/// Refuses a record read from a file: "FILE: PATH: WHAT", and for a summary.json "(is it a summary.json written by
/// `framesim run`?)" after it.
[[noreturn]] void refuse_summary(const std::string& file, const std::string& path, const std::string& what);
/// The statistic block `j` (at `path` of `file`), read as read_run_summary reads every statistic.
StatBlock read_stat_block(const nlohmann::json& j, const std::string& path, const std::string& file);

class FieldWriter;
class FieldReader;

/// A record: a type that declares its keys (see above).
template <class T>
concept FieldRecord = requires(FieldWriter& w, const T& t) {
  T::fields(w, t);
};

template <class T>
void write_fields(nlohmann::json& out, const T& v);
template <class T>
void read_fields(const nlohmann::json& j, const std::string& path, const std::string& file, T& out);

class FieldWriter {
 public:
  explicit FieldWriter(nlohmann::json& into) : into_(into) {}
  template <class T>
  void operator()(const char* key, const T& v) {
    write_fields(into_[key], v);
  }
  template <class T>
  void operator()(const char* key, const std::optional<T>& v) {
    if (v) write_fields(into_[key], *v);
  }
  template <class T>
  void nullable(const char* key, const std::optional<T>& v) {
    if (v) write_fields(into_[key], *v);
    else into_[key] = nullptr;
  }
  template <class T>
  void maybe_null(const char* key, const std::optional<T>& v) {
    nullable(key, v);
  }
  template <class T>
  void shown(const char* key, const std::optional<T>& v) {
    (*this)(key, v);
  }
  template <class T>
  void defaulted(const char* key, const T& v) {
    (*this)(key, v);
  }
  template <class T>
  void nonempty(const char* key, const T& v) {
    if (!v.empty()) (*this)(key, v);
  }
  template <class T>
  void derived(const char* key, const T& v, const char* /*unless*/) {
    (*this)(key, v);
  }
  template <class T>
  void copy(const char* key, const T& v) {
    (*this)(key, v);
  }
  /// The object `key`, its members written by `f(FieldWriter&)`; not made when `f` writes nothing into it.
  template <class F>
  void object(const char* key, F&& f) {
    const bool had = into_.contains(key);
    nlohmann::json& o = into_[key];
    if (!o.is_object()) o = nlohmann::json::object();
    FieldWriter w(o);
    f(w);
    if (!had && o.empty()) into_.erase(key);
  }
  template <class F>
  void object_if_present(const char* key, F&& f) {
    object(key, std::forward<F>(f));
  }
  /// {name: {inner: value}} for each (name, value) of `m`.
  template <class M>
  void each(const char* key, const M& m, const char* inner, bool /*inner_required*/ = true) {
    for (const auto& [name, value] : m) write_fields(into_[key][name][inner], value);
  }

 private:
  nlohmann::json& into_;
};

class FieldReader {
 public:
  /// `read_back`: the run reads its own summary back (io.shown is required; see read_back).
  FieldReader(const nlohmann::json& from, std::string path, const std::string& file, bool read_back = false)
      : from_(from), path_(std::move(path)), file_(file), read_back_(read_back) {}
  template <class T>
  void operator()(const char* key, T& v) {
    if (!from_.contains(key)) refuse_summary(file_, at(key), "missing");
    read_fields(from_[key], at(key), file_, v);
  }
  /// Absent or null: empty.
  template <class T>
  void operator()(const char* key, std::optional<T>& v) {
    v.reset();
    if (!from_.contains(key) || from_[key].is_null()) return;
    read_fields(from_[key], at(key), file_, v.emplace());
  }
  /// Present; null: empty.
  template <class T>
  void nullable(const char* key, std::optional<T>& v) {
    if (!from_.contains(key)) refuse_summary(file_, at(key), "missing");
    (*this)(key, v);
  }
  /// Absent or null: empty (written null when empty).
  template <class T>
  void maybe_null(const char* key, std::optional<T>& v) {
    (*this)(key, v);
  }
  /// Optional in an older summary; required when the run reads its own back (its report shows it).
  template <class T>
  void shown(const char* key, std::optional<T>& v) {
    (*this)(key, v);
    if (read_back_ && !v) refuse_summary(file_, at(key), "missing");
  }
  /// Absent: left as it is (its default).
  template <class T>
  void defaulted(const char* key, T& v) {
    if (from_.contains(key)) (*this)(key, v);
  }
  template <class T>
  void nonempty(const char* key, T& v) {
    defaulted(key, v);
  }
  /// Refused as `unless` when it is not `v` (computed from what was read before it).
  template <class T>
  void derived(const char* key, const T& v, const char* unless) {
    T read{};
    (*this)(key, read);
    if (read != v) refuse_summary(file_, at(key), unless);
  }
  template <class T>
  void copy(const char* /*key*/, const T& /*v*/) {}
  template <class F>
  void object(const char* key, F&& f) {
    if (!from_.contains(key)) refuse_summary(file_, at(key), "missing");
    enter(from_[key], key, std::forward<F>(f));
  }
  /// Absent or null: `f` reads an empty object (its optional members empty, a required one missing).
  template <class F>
  void object_if_present(const char* key, F&& f) {
    static const nlohmann::json empty = nlohmann::json::object();
    enter(from_.contains(key) && !from_[key].is_null() ? from_[key] : empty, key, std::forward<F>(f));
  }
  /// Absent: empty; each value is an object with `inner` (skipped without it unless `inner_required`).
  template <class M>
  void each(const char* key, M& m, const char* inner, bool inner_required = true) {
    m.clear();
    if (!from_.contains(key)) return;
    object(key, [&](FieldReader& r) {
      for (const auto& item : r.from_.items()) {
        const std::string& name = item.key();
        if (!inner_required && item.value().is_object() && !item.value().contains(inner)) continue;
        r.object(name.c_str(), [&](FieldReader& e) { e(inner, m[name]); });
      }
    });
  }

 private:
  std::string at(const char* key) const { return path_ + "/" + key; }
  template <class F>
  void enter(const nlohmann::json& o, const char* key, F&& f) {
    if (!o.is_object())
      refuse_summary(file_, at(key),
                     std::string("expected an object, found ") + (o.is_null() ? "null" : o.type_name()));
    FieldReader r(o, at(key), file_, read_back_);
    f(r);
  }
  const nlohmann::json& from_;
  std::string path_;
  const std::string& file_;
  bool read_back_ = false;
};

template <class T>
void write_fields(nlohmann::json& out, const T& v) {
  if constexpr (std::is_same_v<T, nlohmann::json> || std::is_same_v<T, std::string> || std::is_arithmetic_v<T>) {
    out = v;  // a JSON value kept whole, a string, a number, a bool
  } else if constexpr (FieldRecord<T>) {
    if (!out.is_object()) out = nlohmann::json::object();
    FieldWriter w(out);
    T::fields(w, v);
  } else if constexpr (std::is_same_v<T, StatBlock>) {
    out = stat_json(v);
  } else if constexpr (std::is_same_v<T, StatBlock::Interval>) {
    const auto end = [](const std::optional<double>& e) { return e ? nlohmann::json(*e) : nlohmann::json(nullptr); };
    out = nlohmann::json::array({end(v.lo), end(v.hi)});
  } else if constexpr (requires { typename T::mapped_type; }) {
    if (!out.is_object()) out = nlohmann::json::object();
    for (const auto& [key, value] : v) write_fields(out[key], value);
  } else {
    static_assert(
        requires { typename T::value_type; }, "a summary value is a record, a map, a list or a scalar");
    if (!out.is_array() || out.size() != v.size()) out = nlohmann::json::array();
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (out.size() <= i) out.push_back(nullptr);
      write_fields(out[i], v[i]);
    }
  }
}

template <class T>
void read_fields(const nlohmann::json& j, const std::string& path, const std::string& file, T& out) {
  const auto wrong = [&](const char* expected) {
    refuse_summary(file, path,
                   std::string("expected ") + expected + ", found " + (j.is_null() ? "null" : j.type_name()));
  };
  if constexpr (std::is_same_v<T, nlohmann::json>) {
    out = j;  // kept whole
  } else if constexpr (FieldRecord<T>) {
    if (!j.is_object()) wrong("an object");
    FieldReader r(j, path, file);
    T::fields(r, out);
  } else if constexpr (std::is_same_v<T, StatBlock>) {
    out = read_stat_block(j, path, file);
  } else if constexpr (std::is_same_v<T, StatBlock::Interval>) {
    if (!j.is_array() || j.size() != 2) wrong("[low, high]");
    read_fields(j[0], path + "/0", file, out.lo);
    read_fields(j[1], path + "/1", file, out.hi);
  } else if constexpr (requires { typename T::mapped_type; }) {
    if (!j.is_object()) wrong("an object");
    out.clear();
    for (const auto& [key, value] : j.items()) read_fields(value, path + "/" + key, file, out[key]);
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) wrong("a string");
    out = j.get<std::string>();
  } else if constexpr (requires { typename T::value_type; }) {
    if constexpr (std::is_same_v<T, std::optional<typename T::value_type>>) {  // an end of an interval
      if (j.is_null()) out.reset();
      else read_fields(j, path, file, out.emplace());
    } else {
      if (!j.is_array()) wrong("an array");
      out.assign(j.size(), {});
      for (std::size_t i = 0; i < j.size(); ++i) read_fields(j[i], path + "/" + std::to_string(i), file, out[i]);
    }
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) wrong("true or false");
    out = j.get<bool>();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!j.is_number()) wrong("a number");
    out = j.get<T>();
  } else {
    static_assert(std::is_integral_v<T>, "a summary value is a record, a map, a list or a scalar");
    if (!j.is_number_integer() || (std::is_unsigned_v<T> && !j.is_number_unsigned() && j.get<std::int64_t>() < 0))
      wrong(std::is_unsigned_v<T> ? "a whole number, 0 or more" : "an integer");
    out = j.get<T>();
  }
}

}  // namespace framesim::analysis
