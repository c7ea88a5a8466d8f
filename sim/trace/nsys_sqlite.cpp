// Nsight Systems' SQLite export (`nsys export --type sqlite`): the tables nsys_trace.cpp's header names, read
// from the file's bytes through an in-memory database, every cell checked; grouped by nsys::group_activities.
#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "core/text.hpp"
#include "core/units.hpp"
#include "trace/measured_formats.hpp"
#include "trace/nsys_trace.hpp"

namespace framesim::trace {

namespace {

using nsys::GpuActivity;
using nsys::Launch;
using nsys::NvtxRange;

/// A read-only connection to a database held in memory (the file's bytes).
class Database {
 public:
  Database(const std::string& bytes, std::string path) : path_(std::move(path)) {
    if (sqlite3_open_v2(":memory:", &db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) fail("cannot open", "");
    // READONLY: SQLite never writes to the buffer, which the caller keeps alive.
    auto* data = reinterpret_cast<unsigned char*>(const_cast<char*>(bytes.data()));
    const auto size = static_cast<sqlite3_int64>(bytes.size());
    if (sqlite3_deserialize(db_, "main", data, size, size, SQLITE_DESERIALIZE_READONLY) != SQLITE_OK)
      fail("not a readable SQLite database", sqlite3_errmsg(db_));
  }
  ~Database() { sqlite3_close(db_); }
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  /// Runs `sql`, calling `row` per result row.
  void query(const std::string& sql, const std::function<void(sqlite3_stmt*)>& row) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
      fail("not a readable Nsight Systems export", sqlite3_errmsg(db_));
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) row(stmt);
    const std::string message = rc == SQLITE_DONE ? "" : sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) fail("not a readable SQLite database", message);
  }
  std::set<std::string> tables() {
    std::set<std::string> out;
    query("SELECT name FROM sqlite_master WHERE type = 'table'", [&](sqlite3_stmt* s) { out.insert(text(s, 0)); });
    return out;
  }
  std::set<std::string> columns(const std::string& table) {
    std::set<std::string> out;
    query("PRAGMA table_info(" + table + ")", [&](sqlite3_stmt* s) { out.insert(text(s, 1)); });
    return out;
  }
  static std::string text(sqlite3_stmt* s, int column) {
    const unsigned char* t = sqlite3_column_text(s, column);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  [[noreturn]] void fail(const std::string& what, const std::string& detail) const {
    throw core::UserError(
        {core::Diagnostic{{path_, 0, 0},
                          "",
                          detail.empty() ? what : fmt::format("{} ({}): a truncated or damaged file?", what, detail)}});
  }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

std::string copy_name(int kind, bool memset) {
  if (memset) return "[CUDA memset]";
  switch (kind) {  // CUpti_ActivityMemcpyKind
    case 1: return "[CUDA memcpy HtoD]";
    case 2: return "[CUDA memcpy DtoH]";
    case 8: return "[CUDA memcpy DtoD]";
    default: return "[CUDA memcpy]";
  }
}

/// A cell of an integer column (a time in ns, an id): nothing for NULL; a problem naming the table, the row and the
/// column for a value stored as text or a real (SQLite keeps any type in any column: an edited or damaged export),
/// and for a time outside the limits of a timestamp.
class IntegerCells {
 public:
  explicit IntegerCells(Problems& problems) : p_(problems) {}
  std::optional<std::int64_t> read(sqlite3_stmt* s, int column, const std::string& table, const char* name,
                                   bool is_time_ns) {
    const int type = sqlite3_column_type(s, column);
    if (type == SQLITE_NULL) return std::nullopt;
    const std::int64_t rowid = sqlite3_column_int64(s, sqlite3_column_count(s) - 1);  // every query ends in rowid
    const std::string where = fmt::format("{}[rowid {}].{}", table, rowid, name);
    if (type != SQLITE_INTEGER) {
      const std::string shown = Database::text(s, column);
      p_.add(0, 0, where,
             fmt::format("expected an integer{}, got {} \"{}\"", is_time_ns ? " (nanoseconds)" : "",
                         type == SQLITE_TEXT    ? "the text"
                         : type == SQLITE_FLOAT ? "the real"
                                                : "the blob",
                         core::quote_capped(shown, 40)));
      return std::nullopt;
    }
    const std::int64_t v = sqlite3_column_int64(s, column);
    if (is_time_ns) {
      if (auto problem = timestamp_problem(static_cast<double>(v), 1e-9)) {
        p_.add(0, 0, where, *problem);
        return std::nullopt;
      }
    }
    return v;
  }

 private:
  Problems& p_;
};

}  // namespace

MeasuredTrace parse_nsys_sqlite(const std::string& bytes, const std::string& path) {
  Database db(bytes, path);
  const std::set<std::string> tables = db.tables();
  auto user_error = [&](const std::string& key, const std::string& message) {
    throw core::UserError({core::Diagnostic{{path, 0, 0}, key, message}});
  };
  const std::string kernels = "CUPTI_ACTIVITY_KIND_KERNEL";
  if (!tables.count(kernels)) {
    if (!tables.count("StringIds"))
      user_error("", "a SQLite database, but not an Nsight Systems export (no StringIds or " + kernels + " table)");
    user_error(kernels, "no CUDA kernels in this export: profile with `nsys profile --trace=cuda,nvtx`");
  }
  if (!tables.count("StringIds")) user_error("StringIds", "missing: kernel names cannot be read");
  auto require = [&](const std::string& table, std::initializer_list<const char*> needed) {
    auto have = db.columns(table);
    for (const char* c : needed)
      if (!have.count(c))
        user_error(table, fmt::format("no column \"{}\" (it has {}): an export of an nsys version framesim does not "
                                      "read (it reads the schema of nsys 2021 and later)",
                                      c, core::join_list({have.begin(), have.end()})));
    return have;
  };
  const auto kernel_columns = require(kernels, {"start", "end", "streamId", "correlationId"});
  const char* name_column = kernel_columns.count("demangledName") ? "demangledName"
                            : kernel_columns.count("shortName")   ? "shortName"
                                                                  : nullptr;
  if (!name_column) require(kernels, {"demangledName"});

  std::vector<GpuActivity> acts;
  std::size_t bad = 0;
  Problems problems(path);
  IntegerCells cells(problems);
  auto read_activity = [&](sqlite3_stmt* s, const std::string& table, std::string name, bool copy) {
    GpuActivity a;
    const auto start = cells.read(s, 0, table, "start", true);
    const auto end = cells.read(s, 1, table, "end", true);
    const auto stream = cells.read(s, 2, table, "streamId", false);
    a.correlation = cells.read(s, 3, table, "correlationId", false);
    a.stream = fmt::format("{}", stream.value_or(0));
    a.name = std::move(name);
    a.copy = copy;
    const bool null_time = sqlite3_column_type(s, 0) == SQLITE_NULL || sqlite3_column_type(s, 1) == SQLITE_NULL;
    if (null_time || (start && end && *end < *start)) {
      ++bad;
      return;
    }
    if (!start || !end) return;  // mistyped: a problem already
    a.start_ns = static_cast<double>(*start);
    a.end_ns = static_cast<double>(*end);
    acts.push_back(std::move(a));
  };
  db.query(fmt::format("SELECT k.start, k.\"end\", k.streamId, k.correlationId, s.value, k.rowid FROM {} AS k LEFT "
                       "JOIN StringIds AS s ON s.id = k.{}",
                       kernels, name_column),
           [&](sqlite3_stmt* s) {
             std::string name = Database::text(s, 4);
             read_activity(s, kernels, name.empty() ? "(unnamed kernel)" : name, false);
           });
  for (const auto& [table, memset] : {std::pair{std::string("CUPTI_ACTIVITY_KIND_MEMCPY"), false},
                                      std::pair{std::string("CUPTI_ACTIVITY_KIND_MEMSET"), true}}) {
    if (!tables.count(table)) continue;
    const auto have = require(table, {"start", "end", "streamId", "correlationId"});
    const std::string kind = have.count("copyKind") ? "copyKind" : "0";
    const bool is_memset = memset;  // clang 14 cannot capture a structured binding
    const std::string& name = table;
    db.query(fmt::format("SELECT start, \"end\", streamId, correlationId, {}, rowid FROM {}", kind, table),
             [&](sqlite3_stmt* s) { read_activity(s, name, copy_name(sqlite3_column_int(s, 4), is_memset), true); });
  }
  problems.throw_if_any();
  if (bad > 0)
    user_error(kernels, fmt::format("{} activities without a start or with their end before their start: a damaged "
                                    "export?",
                                    bad));
  if (acts.empty()) user_error(kernels, "the table is empty: no kernel ran while nsys was recording");

  std::vector<NvtxRange> ranges;
  if (tables.count("NVTX_EVENTS")) {
    const auto have = require("NVTX_EVENTS", {"start", "end", "eventType", "text", "globalTid"});
    const std::string text = have.count("textId") ? "COALESCE(n.text, s.value)" : "n.text";
    const std::string join = have.count("textId") ? "LEFT JOIN StringIds AS s ON s.id = n.textId" : "";
    // eventType 59: push/pop range, 60: start/end range (NvtxEventType in the export schema).
    db.query(fmt::format("SELECT n.start, n.\"end\", {}, n.globalTid, n.rowid FROM NVTX_EVENTS AS n {} WHERE "
                         "n.eventType IN (59, 60) AND n.\"end\" IS NOT NULL",
                         text, join),
             [&](sqlite3_stmt* s) {
               NvtxRange r;
               const auto start = cells.read(s, 0, "NVTX_EVENTS", "start", true);
               const auto end = cells.read(s, 1, "NVTX_EVENTS", "end", true);
               const auto thread = cells.read(s, 3, "NVTX_EVENTS", "globalTid", false);
               if (!start || !end) return;
               r.start_ns = static_cast<double>(*start);
               r.end_ns = static_cast<double>(*end);
               r.text = Database::text(s, 2);
               r.thread = fmt::format("{}", thread.value_or(0));
               if (r.end_ns >= r.start_ns && !r.text.empty()) ranges.push_back(std::move(r));
             });
  }
  std::unordered_map<std::int64_t, Launch> launches;
  if (tables.count("CUPTI_ACTIVITY_KIND_RUNTIME") && !ranges.empty()) {
    require("CUPTI_ACTIVITY_KIND_RUNTIME", {"start", "correlationId", "globalTid"});
    const std::string runtime = "CUPTI_ACTIVITY_KIND_RUNTIME";
    db.query("SELECT correlationId, start, globalTid, rowid FROM CUPTI_ACTIVITY_KIND_RUNTIME", [&](sqlite3_stmt* s) {
      const auto correlation = cells.read(s, 0, runtime, "correlationId", false);
      const auto start = cells.read(s, 1, runtime, "start", true);
      const auto thread = cells.read(s, 2, runtime, "globalTid", false);
      if (correlation && start)
        launches[*correlation] = {static_cast<double>(*start), fmt::format("{}", thread.value_or(0))};
    });
  }
  problems.throw_if_any();
  return nsys::group_activities(std::move(acts), std::move(ranges), launches, MeasuredFormat::nsys_sqlite, path);
}

}  // namespace framesim::trace
