// ReadOnlyDatabase (safe_exec.h): opening a file or building a schema from
// DDL, hardening the connection, preparing and running one read-only
// statement under the limits, and Reads(). The policy it enforces (the
// authorizer and the keyword checks) is in sql_policy.cc.
#include "sql/safe_exec.h"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include "sql/bounded_functions.h"
#include "sql/sql_policy.h"

namespace flowrag {

using Clock = std::chrono::steady_clock;

// Why a statement was stopped.
enum class StopReason { kNone, kDeadline, kMemory };

// Records the first reason a statement was stopped.
static void SetReason(std::atomic<StopReason>* reason, StopReason r) {
  StopReason none = StopReason::kNone;
  reason->compare_exchange_strong(none, r);
}

// One thread per connection that interrupts the statement under way when it
// passes its deadline, also inside one long VM step or while preparing, which
// the progress handler does not reach. Arm()/Disarm() bracket a statement;
// once Disarm() returns no interrupt for it can come (the thread interrupts
// under the mutex). The destructor stops and joins the thread; the
// connection must stay open until then. Thread-safe.
class StatementWatchdog {
 public:
  explicit StatementWatchdog(sqlite3* db) : db_(db), thread_([this] { Run(); }) {}
  ~StatementWatchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  StatementWatchdog(const StatementWatchdog&) = delete;
  StatementWatchdog& operator=(const StatementWatchdog&) = delete;

  // At `deadline`: *reason becomes kDeadline (unless already set) and the
  // connection is interrupted.
  void Arm(Clock::time_point deadline, std::atomic<StopReason>* reason) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      deadline_ = deadline;
      reason_ = reason;
    }
    cv_.notify_one();
  }
  void Disarm() {
    std::lock_guard<std::mutex> lock(mu_);
    reason_ = nullptr;
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!quit_) {
      if (reason_ == nullptr) {
        cv_.wait(lock);
      } else if (Clock::now() < deadline_) {
        cv_.wait_until(lock, deadline_);
      } else {
        SetReason(reason_, StopReason::kDeadline);
        sqlite3_interrupt(db_);
        reason_ = nullptr;
      }
    }
  }

  sqlite3* const db_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool quit_ = false;                          // guarded by mu_
  Clock::time_point deadline_;                 // guarded by mu_
  std::atomic<StopReason>* reason_ = nullptr;  // guarded by mu_; null: disarmed
  std::thread thread_;                         // last: starts after the rest
};

namespace {

using Mode = SqlAuthorizerState::Mode;

constexpr int kProgressSteps = 100;                  // VM steps between deadline and memory checks
constexpr double kMaxTimeLimit = 1e6;                // seconds; keeps the deadline in range
constexpr double kDdlTimeLimit = 5.0;                // seconds per FromDdl element
constexpr size_t kDdlMemoryBytes = size_t{1} << 30;  // heap growth per FromDdl element
constexpr int kMaxValueBytes = 64 << 20;             // SQLITE_LIMIT_LENGTH: caps zeroblob() etc.
constexpr int kMaxSqlBytes = 1 << 20;                // SQLITE_LIMIT_SQL_LENGTH
constexpr int kMaxLikePatternBytes = 1000;           // SQLITE_LIMIT_LIKE_PATTERN_LENGTH
constexpr size_t kCellOverheadBytes = 8;             // result budget per cell besides its bytes
constexpr int kBusyTimeoutMs = 1000;

struct StmtCloser {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using StmtPtr = std::unique_ptr<sqlite3_stmt, StmtCloser>;

std::string Quoted(std::string_view s, size_t max_chars = 60) {
  std::string out = "\"";
  out.append(s.substr(0, max_chars));
  if (s.size() > max_chars) out += "...";
  out += '"';
  return out;
}

// Maps a SQLite error to a Status with SQLite's message.
Status SqliteStatus(sqlite3* db, int rc, std::string_view context) {
  std::string m(context);
  m += ": ";
  m += sqlite3_errmsg(db);
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::Corruption(std::move(m));
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_FULL:
    case SQLITE_PERM:
    case SQLITE_READONLY:
      return Status::IoError(std::move(m));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable(std::move(m));
    case SQLITE_NOMEM:
    case SQLITE_INTERNAL:
    case SQLITE_MISUSE:
      return Status::Internal(std::move(m));
    default:
      return Status::InvalidArgument(std::move(m));
  }
}

// Bounds one statement for its lifetime: a progress handler (every
// kProgressSteps VM steps) checks the deadline and the growth of SQLite's
// heap, and the connection's watchdog calls sqlite3_interrupt() at the
// deadline, which also stops preparing. The destructor disarms both, so no
// interrupt outlives the guard.
class StatementGuard {
 public:
  StatementGuard(sqlite3* db, StatementWatchdog& watchdog, double seconds, size_t max_memory_bytes)
      : db_(db),
        watchdog_(watchdog),
        memory_start_(sqlite3_memory_used()),
        max_memory_(static_cast<int64_t>(std::min<size_t>(max_memory_bytes, INT64_MAX))) {
    auto budget = std::chrono::duration<double>(std::min(seconds, kMaxTimeLimit));
    deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(budget);
    sqlite3_progress_handler(db_, kProgressSteps, &StatementGuard::OnProgress, this);
    watchdog_.Arm(deadline_, &reason_);
  }
  ~StatementGuard() {
    watchdog_.Disarm();
    sqlite3_progress_handler(db_, 0, nullptr, nullptr);
  }
  StatementGuard(const StatementGuard&) = delete;
  StatementGuard& operator=(const StatementGuard&) = delete;

  // Why the statement was stopped; kDeadline also once the deadline passed
  // between steps (materialising rows).
  StopReason stopped() const {
    StopReason r = reason_.load();
    if (r == StopReason::kNone && Clock::now() >= deadline_) r = StopReason::kDeadline;
    return r;
  }

 private:
  static int OnProgress(void* arg) {
    auto* self = static_cast<StatementGuard*>(arg);
    if (Clock::now() >= self->deadline_) {
      SetReason(&self->reason_, StopReason::kDeadline);
      return 1;  // interrupts the statement with SQLITE_INTERRUPT
    }
    if (sqlite3_memory_used() - self->memory_start_ > self->max_memory_) {
      SetReason(&self->reason_, StopReason::kMemory);
      return 1;
    }
    return 0;
  }

  sqlite3* db_;
  StatementWatchdog& watchdog_;
  Clock::time_point deadline_;
  const int64_t memory_start_;
  const int64_t max_memory_;
  std::atomic<StopReason> reason_{StopReason::kNone};
};

std::string SecondsText(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", s);
  return buf;
}

// The Status of a statement its guard stopped.
Status Stopped(StopReason why, double seconds, size_t max_memory_bytes) {
  if (why == StopReason::kMemory) {
    return Status::InvalidArgument("sql: stopped after SQLite's memory grew by more than " +
                                   std::to_string(max_memory_bytes) +
                                   " bytes (limits.max_memory_bytes)");
  }
  return Status::DeadlineExceeded("sql: stopped after the time limit of " + SecondsText(seconds) +
                                  " s");
}

// Sets the connection options shared by Open() and FromDdl(): the hardening
// of the file comment of safe_exec.h.
Status Harden(sqlite3* db, std::string_view path) {
  static constexpr std::pair<int, int> kConfig[] = {
      {SQLITE_DBCONFIG_DEFENSIVE, 1},              // no writes to the schema, no dbpage
      {SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0},  // no load_extension()
      {SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0},         // the file's views: innocuous functions only
      {SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0},  // no two-argument fts3_tokenizer()
      {SQLITE_DBCONFIG_ENABLE_TRIGGER, 0},         // the file's triggers never fire
  };
  for (auto [option, value] : kConfig) {
    const int rc = sqlite3_db_config(db, option, value, nullptr);
    if (rc != SQLITE_OK) return SqliteStatus(db, rc, std::string(path) + ": configure");
  }
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kMaxValueBytes);
  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, kMaxSqlBytes);
  sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, kMaxLikePatternBytes);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  return InstallBoundedFunctions(db, kMaxValueBytes);
}

// Prepares the one statement of `sql` under the authorizer's current mode.
// `*rest` is set to the SQL after it. A null statement means `sql` held only
// whitespace and comments.
Status PrepareFirst(sqlite3* db, SqlAuthorizerState* auth, std::string_view sql, StmtPtr* stmt,
                    std::string_view* rest) {
  if (sql.size() >= static_cast<size_t>(INT_MAX)) {
    return Status::InvalidArgument("sql: statement too long");
  }
  stmt->reset();
  *rest = {};
  if (sql.empty()) return Status::Ok();
  auth->denials.clear();
  auth->allowed_pragma = false;
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &raw, &tail);
  stmt->reset(raw);
  if (rc == SQLITE_AUTH || (rc != SQLITE_OK && !auth->denials.empty())) {
    stmt->reset();
    return Refusal(*auth, sql);
  }
  if (rc != SQLITE_OK) return SqliteStatus(db, rc, "sql");
  if (tail != nullptr && tail >= sql.data() && tail <= sql.data() + sql.size()) {
    *rest = sql.substr(static_cast<size_t>(tail - sql.data()));
  }
  return Status::Ok();
}

// Prepares `sql` as a single read-only statement under the query policy,
// recording its reads into `record` when non-null.
Result<StmtPtr> PrepareRead(sqlite3* db, SqlAuthorizerState* auth, std::string_view sql,
                            SqlReadSet* record) {
  StmtPtr stmt;
  std::string_view rest;
  auth->recording = record;
  Status st = PrepareFirst(db, auth, sql, &stmt, &rest);
  auth->recording = nullptr;
  if (!st.ok() && !IsSqlRefusal(st) && IsWriteVerb(LeadingKeywords(sql))) {
    // "DELETE FROM nosuch", "UPDATE sqlite_master ...": a write whatever
    // else is wrong with it.
    auth->denials.clear();
    return Refusal(*auth, sql);
  }
  FLOWRAG_RETURN_IF_ERROR(st);
  if (stmt == nullptr) return Status::InvalidArgument("sql: no statement (empty or only comments)");
  if (SkipTrivia(rest, 0) != rest.size()) {
    std::string_view extra = rest.substr(SkipTrivia(rest, 0));
    return Status::InvalidArgument("sql: only one statement is allowed; found more after it: " +
                                   Quoted(extra));
  }
  // Statements the authorizer never sees (VACUUM, REINDEX, a DROP of a
  // missing table) are caught by their first keyword or by SQLite's own
  // verdict on whether they write. A PRAGMA got here only when the
  // authorizer allowed it (an introspection pragma).
  const std::string verb = LeadingKeywords(sql);
  const bool read_verb = IsReadVerb(verb) || (verb == "PRAGMA" && auth->allowed_pragma);
  if (!read_verb || !sqlite3_stmt_readonly(stmt.get())) {
    auth->denials.clear();
    return Refusal(*auth, sql);
  }
  return stmt;
}

SqlValue ColumnValue(sqlite3_stmt* stmt, int i) {
  switch (sqlite3_column_type(stmt, i)) {
    case SQLITE_INTEGER:
      return static_cast<int64_t>(sqlite3_column_int64(stmt, i));
    case SQLITE_FLOAT:
      return sqlite3_column_double(stmt, i);
    case SQLITE_TEXT: {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
      int n = sqlite3_column_bytes(stmt, i);
      return text == nullptr ? std::string() : std::string(text, static_cast<size_t>(n));
    }
    case SQLITE_BLOB: {
      const auto* blob = static_cast<const char*>(sqlite3_column_blob(stmt, i));
      int n = sqlite3_column_bytes(stmt, i);
      return blob == nullptr ? std::string() : std::string(blob, static_cast<size_t>(n));
    }
    default:
      return std::monostate{};
  }
}

// What a row adds to the result budget: its text and blob bytes, and
// kCellOverheadBytes per cell.
size_t RowBytes(sqlite3_stmt* stmt, int ncols) {
  size_t bytes = 0;
  for (int c = 0; c < ncols; ++c) {
    const int type = sqlite3_column_type(stmt, c);
    if (type == SQLITE_TEXT || type == SQLITE_BLOB) {
      bytes += static_cast<size_t>(sqlite3_column_bytes(stmt, c));
    }
    bytes += kCellOverheadBytes;
  }
  return bytes;
}

// Runs our own statement (savepoints, pragmas) with the authorizer open.
Status ExecInternal(sqlite3* db, SqlAuthorizerState* auth, const char* sql) {
  Mode saved = auth->mode;
  auth->mode = Mode::kInternal;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  auth->mode = saved;
  if (rc != SQLITE_OK) return SqliteStatus(db, rc, sql);
  return Status::Ok();
}

// Runs every statement of one FromDdl element under the DDL policy.
Status RunDdlElement(sqlite3* db, SqlAuthorizerState* auth, StatementWatchdog& watchdog,
                     std::string_view sql) {
  StatementGuard guard(db, watchdog, kDdlTimeLimit, kDdlMemoryBytes);
  std::string_view rest = sql;
  while (SkipTrivia(rest, 0) < rest.size()) {
    StmtPtr stmt;
    std::string_view current = rest.substr(SkipTrivia(rest, 0));
    Status prepared = PrepareFirst(db, auth, current, &stmt, &rest);
    if (!prepared.ok() && guard.stopped() != StopReason::kNone) {
      return Stopped(guard.stopped(), kDdlTimeLimit, kDdlMemoryBytes);
    }
    FLOWRAG_RETURN_IF_ERROR(prepared);
    if (stmt == nullptr) break;
    // VACUUM never reaches the authorizer, and VACUUM INTO writes a file.
    if (LeadingKeywords(current) == "VACUUM") {
      auth->denials.clear();
      return Refusal(*auth, current);
    }
    int rc;
    while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    }
    if (rc == SQLITE_INTERRUPT && guard.stopped() != StopReason::kNone) {
      return Stopped(guard.stopped(), kDdlTimeLimit, kDdlMemoryBytes);
    }
    if (rc == SQLITE_AUTH) return Refusal(*auth, current);
    if (rc != SQLITE_DONE) return SqliteStatus(db, rc, "sql");
  }
  return Status::Ok();
}

// "file:" URI for `path` with every byte but unreserved ones and '/'
// percent-encoded, so '?', '#' and '%' in names stay part of the path.
std::string ReadOnlyUri(const std::string& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  if (!path.empty() && path[0] == '/') uri += "//";  // empty authority, absolute path
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  uri += "?mode=ro";
  return uri;
}

}  // namespace

std::string SqlValueText(const SqlValue& v) {
  if (std::holds_alternative<std::monostate>(v)) return "NULL";
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.15g", *d);
    return buf;
  }
  return std::get<std::string>(v);
}

ReadOnlyDatabase::ReadOnlyDatabase(sqlite3* db, std::string path)
    : db_(db), path_(std::move(path)), auth_(std::make_unique<SqlAuthorizerState>()) {
  if (db_ != nullptr) watchdog_ = std::make_unique<StatementWatchdog>(db_);
}

ReadOnlyDatabase::~ReadOnlyDatabase() {
  watchdog_.reset();  // joins its thread while the connection is still open
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Result<std::unique_ptr<ReadOnlyDatabase>> ReadOnlyDatabase::Open(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::file_status fst = fs::status(path, ec);
  if (fst.type() == fs::file_type::not_found) return Status::NotFound(path + ": no such file");
  if (ec) return Status::IoError(path + ": " + ec.message());
  if (fst.type() == fs::file_type::directory) {
    return Status::InvalidArgument(path + ": not a SQLite database (a directory)");
  }
  if (fst.type() == fs::file_type::regular && fs::file_size(path, ec) == 0 && !ec) {
    return Status::InvalidArgument(path + ": not a SQLite database (empty file)");
  }

  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(ReadOnlyUri(path).c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                           nullptr);
  // The object owns the handle from here on, also when opening failed.
  std::unique_ptr<ReadOnlyDatabase> db(new ReadOnlyDatabase(raw, path));
  if (raw == nullptr) return Status::Internal(path + ": sqlite3_open_v2: out of memory");
  if (rc != SQLITE_OK) return SqliteStatus(raw, rc, path);
  FLOWRAG_RETURN_IF_ERROR(Harden(raw, path));

  // The first read of the file: text, random bytes, encrypted or truncated
  // files fail here with SQLITE_NOTADB or SQLITE_CORRUPT.
  sqlite3_stmt* check = nullptr;
  rc = sqlite3_prepare_v2(raw, "SELECT count(*) FROM sqlite_master", -1, &check, nullptr);
  StmtPtr check_owner(check);
  if (rc == SQLITE_OK) rc = sqlite3_step(check);
  if (rc != SQLITE_ROW) {
    int primary = rc & 0xff;
    if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT) {
      return Status::InvalidArgument(path + ": not a SQLite database (" + sqlite3_errmsg(raw) +
                                     ")");
    }
    return SqliteStatus(raw, rc, path);
  }
  check_owner.reset();

  FLOWRAG_RETURN_IF_ERROR(ExecInternal(raw, db->auth_.get(), "PRAGMA query_only=1"));
  db->auth_->mode = Mode::kQuery;
  sqlite3_set_authorizer(raw, &Authorize, db->auth_.get());
  return db;
}

Result<std::unique_ptr<ReadOnlyDatabase>> ReadOnlyDatabase::FromDdl(
    const std::vector<std::string>& ddl, bool skip_bad, size_t* skipped) {
  DdlOptions options;
  options.skip_bad = skip_bad;
  std::vector<Status> statuses;
  auto db = FromDdl(ddl, options, &statuses);
  if (skipped != nullptr) {
    *skipped = static_cast<size_t>(
        std::count_if(statuses.begin(), statuses.end(), [](const Status& s) { return !s.ok(); }));
  }
  return db;
}

Result<std::unique_ptr<ReadOnlyDatabase>> ReadOnlyDatabase::FromDdl(
    const std::vector<std::string>& ddl, const DdlOptions& options, std::vector<Status>* statuses) {
  if (statuses != nullptr) statuses->clear();
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<ReadOnlyDatabase> db(new ReadOnlyDatabase(raw, ":memory:"));
  if (raw == nullptr) return Status::Internal(":memory:: sqlite3_open_v2: out of memory");
  if (rc != SQLITE_OK) return SqliteStatus(raw, rc, ":memory:");
  FLOWRAG_RETURN_IF_ERROR(Harden(raw, ":memory:"));
  SqlAuthorizerState* auth = db->auth_.get();
  auth->mode = options.tables_and_indexes_only ? Mode::kSchemaDdl : Mode::kDdl;
  sqlite3_set_authorizer(raw, &Authorize, auth);

  for (size_t i = 0; i < ddl.size(); ++i) {
    // A savepoint per element, so a failing one leaves nothing behind.
    FLOWRAG_RETURN_IF_ERROR(ExecInternal(raw, auth, "SAVEPOINT flowrag_ddl"));
    Status st = RunDdlElement(raw, auth, *db->watchdog_, ddl[i]);
    if (!st.ok()) {
      FLOWRAG_RETURN_IF_ERROR(ExecInternal(raw, auth, "ROLLBACK TO flowrag_ddl"));
    }
    FLOWRAG_RETURN_IF_ERROR(ExecInternal(raw, auth, "RELEASE flowrag_ddl"));
    if (!st.ok() && !options.skip_bad) {
      return Status::InvalidArgument("ddl[" + std::to_string(i) + "] " + Quoted(ddl[i]) + ": " +
                                     st.message());
    }
    if (statuses != nullptr) statuses->push_back(std::move(st));
  }

  FLOWRAG_RETURN_IF_ERROR(ExecInternal(raw, auth, "PRAGMA query_only=1"));
  auth->mode = Mode::kQuery;
  return db;
}

Result<SqlResultSet> ReadOnlyDatabase::Execute(std::string_view sql, const SqlLimits& limits) {
  if (!(limits.time_limit_seconds > 0)) {
    return Status::InvalidArgument("limits.time_limit_seconds: expected a positive number, got " +
                                   SecondsText(limits.time_limit_seconds));
  }
  const Clock::time_point start = Clock::now();
  StatementGuard guard(db_, *watchdog_, limits.time_limit_seconds, limits.max_memory_bytes);
  auto stopped = [&] {
    return Stopped(guard.stopped(), limits.time_limit_seconds, limits.max_memory_bytes);
  };
  Result<StmtPtr> prepared = PrepareRead(db_, auth_.get(), sql, nullptr);
  if (!prepared.ok() && guard.stopped() != StopReason::kNone) return stopped();
  FLOWRAG_ASSIGN_OR_RETURN(StmtPtr stmt, std::move(prepared));
  sqlite3_stmt* s = stmt.get();

  SqlResultSet out;
  const int ncols = sqlite3_column_count(s);
  out.columns.reserve(static_cast<size_t>(ncols));
  for (int c = 0; c < ncols; ++c) {
    const char* name = sqlite3_column_name(s, c);
    out.columns.push_back(name == nullptr ? std::string() : std::string(name));
  }

  size_t bytes = 0;  // of the rows materialised so far
  while (true) {
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
      if (out.rows.size() >= limits.max_rows) {
        out.truncated = true;
        break;
      }
      bytes += RowBytes(s, ncols);
      if (bytes > limits.max_result_bytes) {
        return Status::InvalidArgument(
            "sql: the result is larger than " + std::to_string(limits.max_result_bytes) +
            " bytes (limits.max_result_bytes) after " + std::to_string(out.rows.size()) +
            " rows; select fewer rows or columns");
      }
      std::vector<SqlValue> row;
      row.reserve(static_cast<size_t>(ncols));
      for (int c = 0; c < ncols; ++c) row.push_back(ColumnValue(s, c));
      out.rows.push_back(std::move(row));
      // Materialising counts too; with max_rows reached the next step
      // decides (truncated or done).
      if (guard.stopped() != StopReason::kNone && out.rows.size() < limits.max_rows) {
        return stopped();
      }
      continue;
    }
    if (rc == SQLITE_DONE) break;
    if (rc == SQLITE_INTERRUPT && guard.stopped() != StopReason::kNone) {
      if (guard.stopped() == StopReason::kDeadline && limits.max_rows > 0 &&
          out.rows.size() >= limits.max_rows) {
        out.truncated = true;  // ran out of time looking for one more row
        break;
      }
      return stopped();
    }
    if (rc == SQLITE_AUTH) return Refusal(*auth_, sql);  // re-prepared after a schema change
    return SqliteStatus(db_, rc, "sql");
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

Result<SqlReadSet> ReadOnlyDatabase::Reads(std::string_view sql) {
  SqlReadSet raw;
  { FLOWRAG_ASSIGN_OR_RETURN(StmtPtr stmt, PrepareRead(db_, auth_.get(), sql, &raw)); }
  // Keep only names the schema declares: CTEs and table-valued functions
  // (json_each) are reported as reads too.
  FLOWRAG_ASSIGN_OR_RETURN(
      StmtPtr names,
      PrepareRead(db_, auth_.get(),
                  "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view')", nullptr));
  std::set<std::string> declared;
  int rc;
  while ((rc = sqlite3_step(names.get())) == SQLITE_ROW) {
    const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(names.get(), 0));
    if (name != nullptr) declared.insert(name);
  }
  if (rc != SQLITE_DONE) return SqliteStatus(db_, rc, "sql: reading the schema");

  SqlReadSet out;
  for (const std::string& t : raw.tables) {
    if (declared.count(t) > 0) out.tables.insert(t);
  }
  for (const std::string& c : raw.columns) {
    for (const std::string& t : out.tables) {  // table names may contain '.'
      if (c.size() > t.size() && c.compare(0, t.size(), t) == 0 && c[t.size()] == '.') {
        out.columns.insert(c);
        break;
      }
    }
  }
  return out;
}

}  // namespace flowrag
