// SqlConnection: one connection to the SQL database a store lives in, as
// the storage module sees it: prepared statements, write transactions and
// the few things the two databases do differently. Two drivers implement it:
// SQLite (a file; sqlite_connection.h) and PostgreSQL (one schema of a
// database, the store's workspace; postgres_connection.h). The storage
// module writes its SQL once, in the subset both understand:
//
//   - placeholders `?` and `?N` (N 1-based); the PostgreSQL driver rewrites
//     them to `$N`;
//   - `INSERT ... ON CONFLICT (...) DO NOTHING | DO UPDATE SET ...` instead of
//     SQLite's `INSERT OR IGNORE/REPLACE`, `RETURNING id` instead of
//     last_insert_rowid();
//   - 64-bit integers, doubles, text and blobs (BLOB / BYTEA) only; an
//     aggregate that PostgreSQL widens to numeric is cast back with
//     CAST(... AS BIGINT).
//
// DDL differs per dialect (storage/schema.h).
//
// Errors name the connection (`name()`: the file path, or the URL without
// its password) and the statement. Thread-safety: none; the owner (Store)
// serialises access. A Statement must not outlive its connection.
#ifndef FLOWRAG_SQLDB_CONNECTION_H_
#define FLOWRAG_SQLDB_CONNECTION_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"

namespace flowrag {

enum class SqlDialect { kSqlite, kPostgres };

// One prepared statement of a driver. Column accessors are valid after a
// Step() that returned true, until the next Step() or Reset().
class StatementImpl {
 public:
  virtual ~StatementImpl() = default;
  virtual void BindInt(int i, int64_t v) = 0;
  virtual void BindDouble(int i, double v) = 0;
  virtual void BindText(int i, std::string_view v) = 0;
  virtual void BindBlob(int i, const void* data, size_t size) = 0;
  virtual void BindNull(int i) = 0;
  // The first call runs the statement; true while a row is available.
  virtual Result<bool> Step() = 0;
  // Statement::Queue(): runs the statement with its current bindings,
  // ignoring rows, now or by the connection's next wait (see there), then
  // resets it. `changes` and `id` as for Statement::Queue() and
  // QueueReturningId() (either may be null).
  virtual Status Queue(int64_t* changes, int64_t* id) = 0;
  // Back to before the first Step(), bindings cleared.
  virtual void Reset() = 0;
  virtual int64_t Int(int col) const = 0;
  virtual double Double(int col) const = 0;
  virtual std::string_view Text(int col) const = 0;
  virtual std::string_view Blob(int col) const = 0;
  virtual bool IsNull(int col) const = 0;
};

// A prepared statement (movable value). Bind indexes are 1-based.
class Statement {
 public:
  Statement() = default;
  explicit Statement(std::unique_ptr<StatementImpl> impl) : impl_(std::move(impl)) {}

  Statement& Bind(int i, int64_t v) {
    impl_->BindInt(i, v);
    return *this;
  }
  Statement& BindDouble(int i, double v) {
    impl_->BindDouble(i, v);
    return *this;
  }
  Statement& Bind(int i, std::string_view v) {
    impl_->BindText(i, v);
    return *this;
  }
  Statement& BindBlob(int i, const void* data, size_t size) {
    impl_->BindBlob(i, data, size);
    return *this;
  }
  Statement& BindNull(int i) {
    impl_->BindNull(i);
    return *this;
  }

  Result<bool> Step() { return impl_->Step(); }
  // Runs to completion, ignoring rows, then resets.
  Status Run();
  // Runs an INSERT ... RETURNING id: the first column of its one row, then
  // resets. Internal when the statement returned no row.
  Result<int64_t> RunReturningId();
  // Like Run(), but the driver may send the statement without waiting for
  // its result, so that a run of queued statements costs one round trip
  // (PostgreSQL inside a write transaction: libpq's pipeline mode; SQLite
  // and PostgreSQL outside a transaction run it at once). Queued statements
  // run in order, before any later statement of the connection, so later
  // statements see their effects. An error is returned by Queue() itself
  // or by the connection's next wait: the next Step()/Run() of any
  // statement, Prepare() of a text not prepared before, Exec(), Flush() or
  // Commit(); its message names the queued
  // statement, and on PostgreSQL it fails the transaction (the statements
  // queued after it do not run; Commit() reports it and rolls back). When
  // `changes` is not null, the rows the statement inserted, updated or
  // deleted are added to *changes once it has run (at the latest by the
  // next wait; the pointer must stay valid until then). The statement is
  // reset at once: bind it again right away. Changes() and TotalChanges()
  // count a queued statement once it has run.
  Status Queue(int64_t* changes = nullptr) { return impl_->Queue(changes, nullptr); }
  // Queue() for an INSERT ... RETURNING id: once run, the first column of
  // its first row is stored into *id (left alone when it returned no row).
  // Waiting for a run of them (Flush()) costs one round trip.
  Status QueueReturningId(int64_t* id) { return impl_->Queue(nullptr, id); }
  void Reset() { impl_->Reset(); }

  int64_t Int(int col) const { return impl_->Int(col); }
  double Double(int col) const { return impl_->Double(col); }
  std::string_view Text(int col) const { return impl_->Text(col); }
  std::string_view Blob(int col) const { return impl_->Blob(col); }
  bool IsNull(int col) const { return impl_->IsNull(col); }

 private:
  std::unique_ptr<StatementImpl> impl_;
};

struct SqlConnectionOptions {
  bool read_only = false;
  // SQLite: create the file when missing. PostgreSQL: create the
  // workspace's schema when missing (the database itself must exist).
  bool create_if_missing = true;
  // How long a statement waits for another writer's lock.
  int busy_timeout_ms = 10000;
};

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;

  virtual SqlDialect dialect() const = 0;
  // For messages: the file path, or the URL without its password.
  virtual const std::string& name() const = 0;

  virtual Result<Statement> Prepare(std::string_view sql) = 0;
  // One or more statements without results.
  virtual Status Exec(std::string_view sql) = 0;

  // A write transaction. Writers of one store take turns: SQLite's
  // BEGIN IMMEDIATE, PostgreSQL's transaction-level advisory lock on the
  // workspace. Reads outside a transaction see committed data only.
  virtual Status BeginWrite() = 0;
  // A read transaction: every read until Commit()/Rollback() sees one
  // committed state, whatever other connections commit meanwhile (SQLite's
  // WAL snapshot, taken at the first read; PostgreSQL's REPEATABLE READ
  // READ ONLY). Callers do not write inside it.
  virtual Status BeginRead() = 0;
  virtual Status Commit() = 0;
  virtual Status Rollback() = 0;
  // Waits for the statements queued by Statement::Queue() to run: the first
  // error among them (naming its statement), else OK. Rollback() discards
  // queued statements whose results nobody read (their errors included).
  virtual Status Flush() = 0;

  // Rows inserted, updated or deleted by the last statement, and in all
  // since the connection opened.
  virtual int64_t Changes() = 0;
  virtual int64_t TotalChanges() = 0;

  // The store's tables (empty for a new file or workspace). The first read
  // of a connection: a file that is not SQLite fails here.
  virtual Result<std::vector<std::string>> TableNames() = 0;
  // A cheap integrity check before the first write (SQLite quick_check;
  // PostgreSQL checks its own pages). Corruption names the store.
  virtual Status CheckIntegrity() = 0;
  // Switches to the settings writers need (SQLite: WAL). Called only once
  // the database is known to be a store or empty: another application's
  // file keeps its bytes.
  virtual Status PrepareForWrites() = 0;
  // Bytes the store occupies (file size; sum of the schema's relations).
  virtual Result<int64_t> StorageBytes() = 0;

  // Change announcements, for processes that follow a store (replicas).
  // AnnounceChange() tells the followers of this store that it changed; in a
  // write transaction the announcement goes out at commit (PostgreSQL:
  // NOTIFY on channel "flowrag" with the workspace as payload). SQLite has
  // no announcements: a no-op. WaitForChange() blocks until an announcement
  // for this store arrives (true) or `timeout` passes (false; SQLite always
  // sleeps the timeout: its followers poll). Use a connection of its own for
  // waiting; Unavailable when the connection is lost.
  virtual Status AnnounceChange() = 0;
  virtual Result<bool> WaitForChange(std::chrono::milliseconds timeout) = 0;

  // Copies `n` bytes at `offset` of blob column `column` of row `rowid` of
  // `table` into `out` without materialising the whole value where the
  // database allows it. NotFound when the row is missing, Corruption when
  // the value is shorter than offset + n. Rows read this way must never be
  // updated in place (replace them by new rows): a driver may keep the last
  // value read.
  virtual Status ReadBlobRange(std::string_view table, std::string_view column, int64_t rowid,
                               uint64_t offset, void* out, size_t n) = 0;
};

// Opens `location`: a `postgresql://` or `postgres://` URL (optional
// `?workspace=name`, one schema per workspace; default `public`), else a
// SQLite file path (":memory:" for a private in-memory database).
// Errors: NotFound (missing file, read-only or !create_if_missing),
// Unavailable (server refused or unreachable), InvalidArgument (bad URL),
// IoError, Corruption (not a SQLite file).
Result<std::unique_ptr<SqlConnection>> OpenSqlConnection(const std::string& location,
                                                         const SqlConnectionOptions& options);

// True when `location` names a PostgreSQL database rather than a file.
bool IsPostgresLocation(std::string_view location);

// Stores a 64-bit unsigned hash in a signed 64-bit column, bit for bit.
inline int64_t HashToSql(uint64_t h) { return static_cast<int64_t>(h); }
inline uint64_t HashFromSql(int64_t v) { return static_cast<uint64_t>(v); }

}  // namespace flowrag

#endif  // FLOWRAG_SQLDB_CONNECTION_H_
