// The read-only policy behind ReadOnlyDatabase (safe_exec.h): the SQLite
// authorizer with its per-mode action policy and function deny list, the
// recording of reads for Reads(), the leading-keyword checks for statements
// the authorizer never sees, and the refusal Status. Internal to sql/.
//
// Thread-safety: a SqlAuthorizerState belongs to one connection and is used
// by one thread at a time; the other functions are pure.
#ifndef FLOWRAG_SQL_SQL_POLICY_H_
#define FLOWRAG_SQL_SQL_POLICY_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"
#include "sql/safe_exec.h"

namespace flowrag {

// What the authorizer allows, and what it saw while a statement prepared.
struct SqlAuthorizerState {
  enum class Mode {
    kInternal,  // our own statements (savepoints, pragmas): everything
    kDdl,       // FromDdl's schema phase
    kQuery,     // the read-only policy
  };
  Mode mode = Mode::kQuery;
  // Denied actions of the statement being prepared, in order ("INSERT into t").
  // `schema_write` marks writes to sqlite_master, which SQLite checks before
  // the statement's own action (DROP TABLE asks DELETE on sqlite_master first).
  struct Denial {
    std::string what;
    bool schema_write = false;
  };
  std::vector<Denial> denials;
  SqlReadSet* recording = nullptr;  // set while Reads() prepares
};

// The sqlite3_set_authorizer callback; `arg` is the connection's
// SqlAuthorizerState. kInternal allows everything; kDdl refuses ATTACH,
// DETACH, PRAGMA, transactions, savepoints and the refused functions; kQuery
// allows only SELECT, reads, recursive CTEs and functions not refused
// (load_extension, readfile, writefile, edit, fts3_tokenizer, eval,
// sha3_query, icu_load_collation, sqlite_dbdata, sqlite_rename*/sqlite_drop*).
// A denial is appended to `denials`; while `recording` is set, each allowed
// read outside sqlite_master/sqlite_schema is added to it.
int Authorize(void* arg, int action, const char* a1, const char* a2, const char* db_name,
              const char* trigger_or_view);

// Skips whitespace, semicolons, `-- line` and `/* block */` comments from
// position `i`; returns the position of the next token (or s.size()).
size_t SkipTrivia(std::string_view s, size_t i);

// The statement's leading keywords, upper-cased: "VACUUM", "DROP TABLE",
// "CREATE UNIQUE INDEX". Empty when it does not start with a word.
std::string LeadingKeywords(std::string_view sql);

// True when `verb` (LeadingKeywords) starts a statement that writes or
// changes the connection's state.
bool IsWriteVerb(std::string_view verb);

// True when `verb` (LeadingKeywords) is one a read may start with: SELECT,
// WITH, VALUES or EXPLAIN.
bool IsReadVerb(std::string_view verb);

// The refusal for a statement whose prepare was denied (or that is not
// read-only), naming the most specific denied action: an InvalidArgument
// "refused: <action> is not allowed", with " (read-only)" under the query
// policy unless the action is a function. IsSqlRefusal() recognises it.
Status Refusal(const SqlAuthorizerState& state, std::string_view sql);

}  // namespace flowrag

#endif  // FLOWRAG_SQL_SQL_POLICY_H_
