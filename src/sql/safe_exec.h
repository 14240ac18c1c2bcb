// Safe, read-only execution of model-written SQL against a SQLite database,
// and the read set of a statement (which tables and columns it reads).
//
// Safety (issues 7, 12, 13), in layers, so that one mistake does not open
// the file. Every connection to a user's file or to untrusted DDL is made by
// Open() or FromDdl() and hardened the same way:
//  - a file is opened with SQLITE_OPEN_READONLY through a `file:` URI with
//    `mode=ro` (not `immutable=1`, which would skip locking and could read a
//    file mid-write), and `PRAGMA query_only=1`; its journal mode is never
//    changed;
//  - SQLITE_DBCONFIG_DEFENSIVE on, extension loading off, untrusted schema
//    (SQLITE_DBCONFIG_TRUSTED_SCHEMA off: the file's views, generated
//    columns and virtual tables may use only innocuous functions), the
//    two-argument fts3_tokenizer() off, triggers off, no ATTACH slots
//    (SQLITE_LIMIT_ATTACHED 0);
//  - limits: strings and blobs at most 64 MiB (SQLITE_LIMIT_LENGTH, so
//    zeroblob()/randomblob() cannot exhaust memory), SQL text at most
//    1 MiB, LIKE/GLOB patterns at most 1,000 bytes;
//  - printf()/format() are replaced by a bounded version whose widths and
//    precisions may not exceed the 64 MiB value limit, and instr()/replace()
//    by linear-time ones (bounded_functions.h), since SQLite spends time on
//    them that nothing can interrupt;
//  - an authorizer (sql_policy.h) allows only SELECT, reads of tables and
//    columns, recursive CTEs, the read-only introspection pragmas
//    (table_info, table_xinfo, index_list, index_info, foreign_key_list;
//    also as pragma_* table-valued functions) and an allow list of
//    functions (SQLite's core, aggregate, window, date/time, math and JSON
//    functions; not load_extension, fts3_tokenizer, readfile, ...).
//    Everything else — INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, ATTACH,
//    DETACH, every other PRAGMA, REINDEX, ANALYZE, SAVEPOINT, BEGIN/COMMIT/
//    ROLLBACK — is refused at prepare time (the pragma_* table-valued
//    functions when they run, as that is when they ask for their PRAGMA);
//  - a prepared statement must also start with SELECT, WITH, VALUES or
//    EXPLAIN (or be an allowed PRAGMA) and be sqlite3_stmt_readonly(), which
//    catches statements the authorizer never sees (VACUUM, a bare REINDEX,
//    DROP TABLE IF EXISTS of a missing table). A statement starting with a
//    writing keyword (INSERT, DROP, PRAGMA, ...) is a refusal even when it
//    would not prepare anyway ("DELETE FROM nosuch").
// A refusal is an InvalidArgument whose message starts with "refused: " and
// names the action, e.g. "refused: ATTACH is not allowed (read-only)";
// IsSqlRefusal() tells it from other errors. (flowrag's StatusCode has no
// PermissionDenied; InvalidArgument is the nearest: the caller's SQL is not
// acceptable, and the server maps it to HTTP 400.)
//
// Exactly one statement is run: anything but whitespace, semicolons and
// comments after the first statement is an InvalidArgument. The limits
// (SqlLimits, flowrag/sql.h) hold from preparing to the last row
// materialised: a progress handler every 100 VM steps and the connection's
// watchdog thread, which calls sqlite3_interrupt() at the deadline, stop a
// statement that runs longer than the time limit (DeadlineExceeded); the
// progress handler also stops one whose SQLite heap grows by more than
// max_memory_bytes (between two checks it can grow by up to 100 values of
// 64 MiB); at most `max_rows` rows are returned
// (`truncated` says more existed) and their bytes may not exceed
// max_result_bytes (InvalidArgument). No process-wide SQLite setting
// (sqlite3_hard_heap_limit64) is changed: it would also bind the flowrag
// store's connections. The database file is never written: not by these
// checks, and not by SQLite (read-only open, no journal; a WAL-mode file
// may get its -wal/-shm side files created by SQLite, as for any reader).
//
// Cost: a connection owns one idle thread; a statement pays about 20 us for
// arming it (measured on 2 loaded cores).
//
// Thread-safety: a ReadOnlyDatabase is used by one thread at a time.
#ifndef FLOWRAG_SQL_SAFE_EXEC_H_
#define FLOWRAG_SQL_SAFE_EXEC_H_

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "flowrag/sql.h"
#include "flowrag/status.h"

struct sqlite3;

namespace flowrag {

// SqlLimits, SqlValue, SqlValueText and SqlResultSet: flowrag/sql.h.

// Tables and columns a statement reads, as the authorizer reports them
// (SQLITE_READ): table names as declared in the schema, columns as
// "table.column". A table read with no column (SELECT count(*) FROM t)
// appears in `tables` only. Names keep the schema's spelling. Aliases and
// subqueries are resolved to their base tables; a view appears together with
// the base tables and columns it reads; CTE names, table-valued functions
// (json_each) and sqlite_master/sqlite_schema are left out.
struct SqlReadSet {
  std::set<std::string> tables;
  std::set<std::string> columns;
};

// True for the Status of a statement refused by the read-only policy.
bool IsSqlRefusal(const Status& status);

struct SqlAuthorizerState;  // defined in sql_policy.h
class StatementWatchdog;    // defined in safe_exec.cc

class ReadOnlyDatabase {
 public:
  ~ReadOnlyDatabase();
  ReadOnlyDatabase(const ReadOnlyDatabase&) = delete;
  ReadOnlyDatabase& operator=(const ReadOnlyDatabase&) = delete;

  // Opens an existing SQLite file read-only. NotFound when the file does not
  // exist, InvalidArgument "<path>: not a SQLite database" when it is not one
  // (an empty file, or reading sqlite_master fails, which also catches text,
  // random bytes, encrypted or truncated files), IoError when it cannot be
  // read, Unavailable when a writer holds it locked for more than 1 s.
  static Result<std::unique_ptr<ReadOnlyDatabase>> Open(const std::string& path);

  struct DdlOptions {
    // Skip an element that fails instead of failing FromDdl.
    bool skip_bad = false;
    // Only CREATE TABLE and CREATE INDEX (with the schema-table writes they
    // make): for DDL from outside, such as a Spider 2.0-lite DDL.csv. When
    // false, CREATE VIEW and INSERT of sample rows are allowed too.
    bool tables_and_indexes_only = false;
  };

  // An in-memory database holding the schema, on a connection hardened as
  // Open()'s: each element of `ddl` (CREATE TABLE / CREATE INDEX, and unless
  // `tables_and_indexes_only` CREATE VIEW and INSERTs of sample rows) is run
  // in turn, all of its statements or none. Every other statement (ATTACH,
  // DETACH, PRAGMA, VACUUM, triggers, virtual tables, transactions, ...) and
  // every function outside the allow list is refused, and each element runs
  // under a 5 s time limit. A failing element is an InvalidArgument
  // "ddl[<index>] \"<text>\": <message>" unless `skip_bad`; *statuses (when
  // given) gets one Status per element, Ok or why it was skipped. Afterwards
  // the connection is switched to the same read-only policy as Open()'s.
  static Result<std::unique_ptr<ReadOnlyDatabase>> FromDdl(const std::vector<std::string>& ddl,
                                                           const DdlOptions& options,
                                                           std::vector<Status>* statuses);
  // The same with views and sample rows allowed; *skipped counts the
  // skipped elements.
  static Result<std::unique_ptr<ReadOnlyDatabase>> FromDdl(const std::vector<std::string>& ddl,
                                                           bool skip_bad = false,
                                                           size_t* skipped = nullptr);

  // Runs one read-only statement under the limits (see the file comment).
  // Other errors: InvalidArgument for SQL that does not prepare or fails at
  // run time (also a value over 64 MiB, a printf() width over it, a result
  // over max_result_bytes, SQLite's heap growing by more than
  // max_memory_bytes), Corruption / IoError / Unavailable for the file's
  // problems.
  Result<SqlResultSet> Execute(std::string_view sql, const SqlLimits& limits);

  // Prepares (does not run) `sql` and returns what it reads. Errors as
  // Execute's for statements that are not reads or do not prepare.
  Result<SqlReadSet> Reads(std::string_view sql);

  const std::string& path() const { return path_; }  // ":memory:" for FromDdl
  // The raw connection, for diagnostics. Callers must not change its
  // authorizer, progress handler or pragmas.
  sqlite3* handle() { return db_; }

 private:
  ReadOnlyDatabase(sqlite3* db, std::string path);
  sqlite3* db_ = nullptr;
  std::string path_;
  std::unique_ptr<SqlAuthorizerState> auth_;  // outlives db_ (closed first)
  // Its thread interrupts db_ at a statement's deadline; stopped and joined
  // before db_ is closed.
  std::unique_ptr<StatementWatchdog> watchdog_;
};

}  // namespace flowrag

#endif  // FLOWRAG_SQL_SAFE_EXEC_H_
