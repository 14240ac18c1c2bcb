// The PostgreSQL driver of SqlConnection (libpq): one schema of a database
// per store (the URL's `workspace`, default `public`; postgres_url.h).
//
// Opening: connects (connect_timeout=10 unless the URL sets one), creates
// the workspace's schema when missing (create_if_missing && !read_only;
// else NotFound), sets search_path to it, lock_timeout to the options'
// busy timeout and, for read_only, default_transaction_read_only. Errors
// name the URL with its password replaced by `***`: Unavailable when the
// server is refused, unreachable or shutting down, NotFound for a missing
// database, InvalidArgument for a bad URL or refused credentials.
//
// Statements: `?` / `?N` placeholders become `$N` (string literals, quoted
// identifiers and comments are left alone; `?` and `?N` in one statement
// are refused). Each distinct SQL text is prepared once per connection
// (server-side, named) and reused by every Statement of that text, so the
// server-side statements live as long as the connection. PostgreSQL infers
// each parameter's type from the statement; a bound value is sent in binary
// when it matches the inferred type (int64 as int8, double as float8, text
// or blob as bytea) and as text otherwise, which PostgreSQL parses as the
// inferred type (an int64 bound where text was inferred arrives as its
// decimal text). Text cannot hold NUL bytes: binding one fails the Step with
// InvalidArgument naming the parameter; invalid UTF-8 fails the same way
// (the server rejects it). Step() runs the statement on its first call and
// keeps the whole result in memory (binary format), then walks its rows.
// Columns decode by type, as loosely as SQLite: Int of a float truncates,
// Double of an integer converts, Text of a number is its decimal text (a
// boolean is "1" or "0"), Blob of text is its bytes, numeric (an aggregate
// over integers) reads as Int, Double or Text. NULL reads as 0 or "".
//
// Step errors map the SQLSTATE: 22 (data) and 23 (constraint) classes →
// InvalidArgument; serialization failure, deadlock, lock timeout, admin
// shutdown, class 08 (connection) and a lost connection → Unavailable;
// disk full → IoError; read-only transaction → IoError (as SQLite's
// READONLY); data corruption → Corruption; the rest → Internal. Unlike
// SQLite, a failed statement inside a transaction aborts the transaction:
// everything up to Rollback() then fails.
//
// Transactions: BeginWrite() is BEGIN plus a transaction-level advisory lock
// keyed by the workspace (WorkspaceLockKey), so writers of one workspace take
// turns and writers of different workspaces do not block each other;
// waiting longer than the busy timeout is Unavailable, with no transaction
// left open. Changes()/TotalChanges() count the rows of INSERT, UPDATE,
// DELETE and MERGE statements (including those run by Exec).
//
// Lost connections (a server restart, an administrator, the network): the
// call that meets the loss fails with Unavailable; the next call outside a
// write transaction reconnects (Unavailable while the server stays away),
// re-applies the session settings and prepares each cached statement again
// when it next runs. A loss inside a write transaction loses the
// transaction: calls fail until Commit() or Rollback(), which report it.
// Callers retry; the engine's store follower does (engine/store_follower.h).
// Statements are prepared once per session and again at their 100th, 400th,
// 1600th, ... execution, so that their plans follow the tables' growth.
// Queued statements (Statement::Queue): inside a transaction begun by
// BeginWrite()/BeginRead() a queued statement is sent in libpq's pipeline
// mode and its result is not waited for; the next wait (a Step() of any
// statement, which goes out in the same pipeline, Prepare() of a new text,
// Exec(), Flush(), Commit()) sends a sync and reads every queued result in
// order, so a run of queued statements and the read after it cost one round
// trip. At most 1000 are outstanding (then the queue is waited for: libpq
// reads results while it writes, so neither side blocks). The first failure
// is reported naming its statement; PostgreSQL then skips the rest of the
// pipeline and the transaction is failed (Commit() rolls it back and says
// so). A connection lost mid-pipeline is Unavailable and loses the
// transaction, as above. Outside a transaction Queue() runs the statement at
// once (each statement is its own transaction there). COPY stays refused.
// Change announcements: AnnounceChange() is NOTIFY flowrag with the
// workspace as payload; WaitForChange() LISTENs (again after a reconnect).
// Thread-safety: none (as SqlConnection).
#ifndef FLOWRAG_SQLDB_POSTGRES_CONNECTION_H_
#define FLOWRAG_SQLDB_POSTGRES_CONNECTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sqldb/connection.h"

namespace flowrag {

Result<std::unique_ptr<SqlConnection>> OpenPostgresConnection(const std::string& url,
                                                              const SqlConnectionOptions& options);

// A statement rewritten for PostgreSQL: `?` and `?N` replaced by `$N`.
struct PostgresSql {
  std::string text;
  // The highest parameter number; used[k] tells whether $k+1 occurs.
  int param_count = 0;
  std::vector<bool> used;
};

// Rewrites `sql`'s placeholders. `$N` already in the text counts as `?N`.
// InvalidArgument when sequential `?` and numbered `?N`/`$N` mix, or N is
// 0 or above 65535 (PostgreSQL's limit).
Result<PostgresSql> RewritePlaceholders(std::string_view sql);

// The advisory lock BeginWrite() takes for `workspace` (a 64-bit hash of
// its name), for code that must exclude the store's writers.
int64_t WorkspaceLockKey(std::string_view workspace);

}  // namespace flowrag

#endif  // FLOWRAG_SQLDB_POSTGRES_CONNECTION_H_
