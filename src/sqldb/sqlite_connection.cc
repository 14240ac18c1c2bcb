#include "sqldb/sqlite_connection.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace flowrag {

Status SqliteError(sqlite3* db, int rc, std::string_view path, std::string_view what) {
  std::string msg(path);
  msg += ": ";
  msg += what;
  msg += ": ";
  msg += (db != nullptr) ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
      return Status::Corruption(msg + " (expected a flowrag SQLite store)");
    case SQLITE_CORRUPT:
      return Status::Corruption(msg + " (the file is damaged: restore it from a backup or index again)");
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_FULL:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return Status::IoError(msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable(msg);
    case SQLITE_CONSTRAINT:
      return Status::InvalidArgument(msg);
    default:
      return Status::Internal(msg);
  }
}

namespace {

std::string Excerpt(std::string_view sql) { return "\"" + std::string(sql.substr(0, 60)) + "\""; }

class SqliteStatement final : public StatementImpl {
 public:
  SqliteStatement(sqlite3_stmt* stmt, const std::string& path) : stmt_(stmt), path_(path) {}
  ~SqliteStatement() override { sqlite3_finalize(stmt_); }

  void BindInt(int i, int64_t v) override { sqlite3_bind_int64(stmt_, i, v); }
  void BindDouble(int i, double v) override { sqlite3_bind_double(stmt_, i, v); }
  void BindText(int i, std::string_view v) override {
    sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  }
  void BindBlob(int i, const void* data, size_t size) override {
    sqlite3_bind_blob64(stmt_, i, data, size, SQLITE_TRANSIENT);
  }
  void BindNull(int i) override { sqlite3_bind_null(stmt_, i); }

  Result<bool> Step() override {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    const char* sql = sqlite3_sql(stmt_);
    return SqliteError(sqlite3_db_handle(stmt_), rc, path_,
                       "step " + Excerpt(sql != nullptr ? sql : ""));
  }
  // SQLite runs in process: nothing to gain by waiting, so at once.
  Status Queue(int64_t* changes, int64_t* id) override {
    Status st = Status::Ok();
    for (bool first = true;; first = false) {
      Result<bool> row = Step();
      if (!row.ok()) {
        st = row.status();
        break;
      }
      if (!*row) break;
      if (first && id != nullptr) *id = Int(0);
    }
    if (st.ok() && changes != nullptr) *changes += sqlite3_changes64(sqlite3_db_handle(stmt_));
    Reset();
    return st;
  }

  void Reset() override {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  int64_t Int(int col) const override { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) const override { return sqlite3_column_double(stmt_, col); }
  std::string_view Text(int col) const override {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p ? std::string_view(p, sqlite3_column_bytes(stmt_, col)) : std::string_view();
  }
  std::string_view Blob(int col) const override {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
    return p ? std::string_view(p, sqlite3_column_bytes(stmt_, col)) : std::string_view();
  }
  bool IsNull(int col) const override { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  sqlite3_stmt* stmt_;
  const std::string& path_;  // owned by the connection
};

class SqliteConnection final : public SqlConnection {
 public:
  SqliteConnection(std::string path, sqlite3* db, int busy_timeout_ms)
      : path_(std::move(path)), db_(db), busy_timeout_ms_(busy_timeout_ms) {}
  ~SqliteConnection() override { sqlite3_close(db_); }

  SqlDialect dialect() const override { return SqlDialect::kSqlite; }
  const std::string& name() const override { return path_; }

  Result<Statement> Prepare(std::string_view sql) override {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(stmt);
      return SqliteError(db_, rc, path_, "prepare " + Excerpt(sql));
    }
    return Statement(std::make_unique<SqliteStatement>(stmt, path_));
  }

  Status Exec(std::string_view sql) override {
    const std::string text(sql);
    char* err = nullptr;
    int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
    sqlite3_free(err);
    if (rc != SQLITE_OK) return SqliteError(db_, rc, path_, "exec " + Excerpt(sql));
    return Status::Ok();
  }

  Status BeginWrite() override { return Exec("BEGIN IMMEDIATE"); }
  // Deferred: the WAL snapshot starts with the first read.
  Status BeginRead() override { return Exec("BEGIN DEFERRED"); }
  Status Commit() override { return Exec("COMMIT"); }
  Status Rollback() override { return Exec("ROLLBACK"); }
  // Queued statements ran at once.
  Status Flush() override { return Status::Ok(); }

  int64_t Changes() override { return sqlite3_changes64(db_); }
  int64_t TotalChanges() override { return sqlite3_total_changes64(db_); }

  Result<std::vector<std::string>> TableNames() override {
    FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                             Prepare("SELECT name FROM sqlite_master WHERE type='table'"));
    std::vector<std::string> names;
    while (true) {
      FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      names.emplace_back(s.Text(0));
    }
    return names;
  }

  // PRAGMA quick_check: O(file size), 1.2 s on the 200 MB 2wiki store.
  Status CheckIntegrity() override {
    FLOWRAG_ASSIGN_OR_RETURN(Statement check, Prepare("PRAGMA quick_check(1)"));
    FLOWRAG_ASSIGN_OR_RETURN(bool row, check.Step());
    const std::string verdict = row ? std::string(check.Text(0)) : "no answer";
    if (verdict == "ok") return Status::Ok();
    return Status::Corruption(path_ + ": the store's pages are damaged (" + verdict.substr(0, 120) +
                              "); nothing was written. Restore it from a backup or index again.");
  }

  // SQLite does not call the busy handler when a journal-mode change meets
  // another connection's lock (two processes creating one store at once),
  // so the switch is retried for as long as the busy timeout would wait.
  // journal_size_limit: the WAL is truncated after a checkpoint instead of
  // keeping the size of the largest transaction (a snapshot part rewrite).
  // cache_size: 64 MiB of page cache instead of SQLite's 2 MiB. An index
  // run's graph writes look up entities, keys and mentions all over their
  // indexes; on a store of gigabytes the default cache spilled dirty pages
  // mid-transaction and read every lookup's pages again (extraction of a
  // 10^6-passage corpus fell from 500 to 250 passages/s by 17%). Pages are
  // taken as used: a small store never fills it.
  // The page size stays SQLite's 4 KiB: 16 KiB pages held float16 vectors
  // more tightly, but an index run's graph writes then log whole 16 KiB
  // pages (10^6 passages, half the extraction: 108 GB written against 67
  // GB), and the sparse vectors fit 4 KiB pages (doc/storage.md "Stored
  // vectors").
  Status PrepareForWrites() override {
    constexpr char kPragmas[] =
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA journal_size_limit=67108864; "
        "PRAGMA cache_size=-65536;";
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms_);
    auto pause = std::chrono::milliseconds(1);
    while (true) {
      Status st = Exec(kPragmas);
      if (st.ok() || st.code() != StatusCode::kUnavailable ||
          std::chrono::steady_clock::now() >= deadline) {
        return st;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
  }

  Result<int64_t> StorageBytes() override {
    int64_t values[2] = {0, 0};
    const char* pragmas[2] = {"PRAGMA page_count", "PRAGMA page_size"};
    for (int i = 0; i < 2; ++i) {
      FLOWRAG_ASSIGN_OR_RETURN(Statement s, Prepare(pragmas[i]));
      FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
      if (row) values[i] = s.Int(0);
    }
    return values[0] * values[1];
  }

  Status AnnounceChange() override { return Status::Ok(); }
  Result<bool> WaitForChange(std::chrono::milliseconds timeout) override {
    std::this_thread::sleep_for(timeout);
    return false;
  }

  Status ReadBlobRange(std::string_view table, std::string_view column, int64_t rowid,
                       uint64_t offset, void* out, size_t n) override {
    const std::string t(table), c(column);
    const std::string what = t + "." + c + " row " + std::to_string(rowid);
    sqlite3_blob* blob = nullptr;
    int rc = sqlite3_blob_open(db_, "main", t.c_str(), c.c_str(), rowid, /*flags=*/0, &blob);
    if (rc != SQLITE_OK) {
      // A missing row is SQLITE_ERROR "no such rowid", not a code of its own.
      const bool missing = std::string_view(sqlite3_errmsg(db_)).starts_with("no such rowid");
      Status st = SqliteError(db_, rc, path_, "opening " + what);
      sqlite3_blob_close(blob);
      return missing ? Status::NotFound(st.message()) : st;
    }
    const uint64_t size = static_cast<uint64_t>(sqlite3_blob_bytes(blob));
    if (offset > size || n > size - offset) {
      sqlite3_blob_close(blob);
      return Status::Corruption(path_ + ": " + what + " holds " + std::to_string(size) +
                                " bytes, " + std::to_string(offset + n) + " wanted");
    }
    rc = n == 0 ? SQLITE_OK
                : sqlite3_blob_read(blob, out, static_cast<int>(n), static_cast<int>(offset));
    sqlite3_blob_close(blob);
    if (rc != SQLITE_OK) return SqliteError(db_, rc, path_, "reading " + what);
    return Status::Ok();
  }

 private:
  std::string path_;
  sqlite3* db_;
  int busy_timeout_ms_;
};

}  // namespace

Result<std::unique_ptr<SqlConnection>> OpenSqliteConnection(const std::string& path,
                                                            const SqlConnectionOptions& options) {
  int flags = options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (options.create_if_missing && !options.read_only) flags |= SQLITE_OPEN_CREATE;
  flags |= SQLITE_OPEN_FULLMUTEX;
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status st = SqliteError(db, rc, path, "open");
    sqlite3_close(db);
    if (rc == SQLITE_CANTOPEN) return Status::NotFound(st.message());
    return st;
  }
  sqlite3_busy_timeout(db, options.busy_timeout_ms);
  auto conn = std::make_unique<SqliteConnection>(path, db, options.busy_timeout_ms);
  // Changes nothing in the file: a per-connection setting.
  FLOWRAG_RETURN_IF_ERROR(conn->Exec("PRAGMA foreign_keys=ON;"));
  return std::unique_ptr<SqlConnection>(std::move(conn));
}

}  // namespace flowrag
