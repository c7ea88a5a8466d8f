// Pieces the readers of measured times share (declared in measured_formats.hpp).
#include "trace/measured_formats.hpp"

#include <cmath>

#include "core/units.hpp"

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

std::optional<std::string> duration_problem(double value, double to_s) {
  if (!std::isfinite(value)) return fmt::format("expected a finite number, got {}", value);
  if (value < 0) return fmt::format("must not be negative, got {}", value);
  if (auto problem = core::quantity_range_problem(value * to_s, core::Dimension::Seconds))
    return fmt::format("{} is out of range for a time ({})", value, *problem);
  return std::nullopt;
}

std::optional<std::string> timestamp_problem(double value, double to_s) {
  if (!std::isfinite(value)) return fmt::format("expected a finite number, got {}", value);
  if (std::fabs(value * to_s) > kMaxTimestamp_s)
    return fmt::format("{} is out of range for a timestamp (at most {:.0e} s from the clock's origin)", value,
                       kMaxTimestamp_s);
  return std::nullopt;
}

std::optional<std::string> count_problem(double value) {
  if (!std::isfinite(value) || value < 0 || value != std::floor(value))
    return fmt::format("expected a whole number, got {}", value);
  if (value > kMaxTraceCount) return fmt::format("{} is out of range (at most {:.0e})", value, kMaxTraceCount);
  return std::nullopt;
}

std::optional<std::string> id_problem(double value) {
  constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53: every integer up to it is a double
  if (!std::isfinite(value) || value != std::floor(value)) return fmt::format("expected a whole number, got {}", value);
  if (std::fabs(value) > kMaxExactInteger)
    return fmt::format("{} is out of range for an id (at most 2^53 = {:.0f} either side of 0)", value,
                       kMaxExactInteger);
  return std::nullopt;
}

namespace {
/// `v` (the number member `key` of `o`, read already) when `problem` says nothing of it; else nothing, with the
/// problem added at the member.
std::optional<double> checked(std::optional<double> v, const Json& o, const std::string& here, const char* key,
                              Problems& p, const std::optional<std::string>& problem) {
  if (!v || !problem) return v;
  const Json* member = o.find(key);
  p.add(member->line, member->column, fmt::format("{}.{}", here, key), *problem);
  return std::nullopt;
}
}  // namespace

std::optional<double> JsonFields::duration(const char* key, double to_s, bool required, const char* what) const {
  const auto v = number(key, required, what);
  const auto ok = checked(v, o_, here_, key, p_, v ? duration_problem(*v, to_s) : std::nullopt);
  if (!ok) return std::nullopt;
  return *ok * to_s;
}

std::optional<double> JsonFields::timestamp(const char* key, double to_s, bool required, const char* what) const {
  const auto v = number(key, required, what);
  return checked(v, o_, here_, key, p_, v ? timestamp_problem(*v, to_s) : std::nullopt);
}

std::optional<double> JsonFields::count(const char* key, bool required, const char* what) const {
  const auto v = number(key, required, what);
  return checked(v, o_, here_, key, p_, v ? count_problem(*v) : std::nullopt);
}

std::optional<std::int64_t> JsonFields::id(const char* key, bool required, const char* what) const {
  const auto v = number(key, required, what);
  const auto ok = checked(v, o_, here_, key, p_, v ? id_problem(*v) : std::nullopt);
  if (!ok) return std::nullopt;
  return static_cast<std::int64_t>(*ok);
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
