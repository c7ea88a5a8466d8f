// Pieces the readers of measured times share (declared in measured_formats.hpp).
#include "trace/measured_formats.hpp"

namespace framesim::trace {

std::optional<double> JsonFields::number(const char* key, bool required, const char* what) const {
  const Json* v = o_.find(key);
  if (!v) {
    if (required) p_.add(o_.line, o_.column, here_, fmt::format("missing \"{}\" ({})", key, what));
    return std::nullopt;
  }
  if (v->type != Json::Type::number) {
    p_.add(v->line, v->column, fmt::format("{}.{}", here_, key),
           fmt::format("expected a number ({}), got {}", what, json_type_name(v->type)));
    return std::nullopt;
  }
  return v->number;
}

std::optional<std::string> JsonFields::text(const char* key, bool required) const {
  const Json* v = o_.find(key);
  if (!v) {
    if (required) p_.add(o_.line, o_.column, here_, fmt::format("missing \"{}\"", key));
    return std::nullopt;
  }
  if (v->type != Json::Type::string) {
    p_.add(v->line, v->column, fmt::format("{}.{}", here_, key),
           fmt::format("expected a string, got {}", json_type_name(v->type)));
    return std::nullopt;
  }
  return v->text;
}

const Json* JsonFields::object(const char* key) const {
  const Json* v = o_.find(key);
  if (v && v->type != Json::Type::object) {
    p_.add(v->line, v->column, fmt::format("{}.{}", here_, key),
           fmt::format("expected an object, got {}", json_type_name(v->type)));
    return nullptr;
  }
  return v;
}

std::size_t repetition_period(const std::vector<std::string>& names) {
  const std::size_t n = names.size();
  for (std::size_t p = 1; p < n; ++p) {
    if (n % p != 0) continue;
    bool repeats = true;
    for (std::size_t i = p; i < n && repeats; ++i) repeats = names[i] == names[i % p];
    if (repeats) return p;
  }
  return n;
}

}  // namespace framesim::trace
