// The read-only policy behind ReadOnlyDatabase (safe_exec.h): the SQLite
// authorizer with its per-mode action policy and its function and pragma
// allow lists, the
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
    kInternal,   // our own statements (savepoints, pragmas): everything
    kSchemaDdl,  // FromDdl of an untrusted schema: CREATE TABLE / CREATE INDEX only
    kDdl,        // FromDdl's schema phase: also CREATE VIEW and INSERT of rows
    kQuery,      // the read-only policy
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
  // Set when the statement being prepared is an allowed introspection
  // PRAGMA (cleared with `denials`).
  bool allowed_pragma = false;
};

// The sqlite3_set_authorizer callback; `arg` is the connection's
// SqlAuthorizerState. Every mode but kInternal is an allow list:
//  - functions: only the allowed ones below, in every mode;
//  - kSchemaDdl: CREATE TABLE, CREATE INDEX, the column reads and index
//    fill (REINDEX) of CREATE INDEX and the schema-table writes they make (sqlite_master,
//    sqlite_sequence);
//  - kDdl: that, plus CREATE VIEW, INSERT, SELECT and recursive CTEs;
//  - kQuery: SELECT, reads, recursive CTEs and the read-only introspection
//    pragmas (IsAllowedPragma), as statements or pragma_* functions.
// Everything else (ATTACH, DETACH, any other PRAGMA, triggers, virtual
// tables, DROP, ALTER, transactions, savepoints, ...) is denied.
//
// The allowed functions are SQLite's core scalar functions without side
// effects (abs, char, coalesce, concat, concat_ws, format/printf, glob, hex,
// ifnull, iif, instr, length, like, likelihood, likely, lower, ltrim, max,
// min, nullif, octet_length, quote, random, randomblob, replace, round,
// rtrim, sign, substr/substring, trim, typeof, unhex, unicode, unlikely,
// upper, zeroblob), the aggregates (avg, count, group_concat, string_agg,
// max, min, sum, total, json_group_array, json_group_object), the window
// functions (row_number, rank, dense_rank, percent_rank, cume_dist, ntile,
// lag, lead, first_value, last_value, nth_value), date and time (date, time,
// datetime, julianday, unixepoch, strftime, timediff, current_date,
// current_time, current_timestamp), the math functions (acos ... trunc, pi,
// pow/power, mod, ln, log, log2, log10, sqrt, exp, ceil/ceiling, floor,
// degrees, radians) and the JSON functions (json, json_array,
// json_array_length, json_extract, json_insert, json_object, json_patch,
// json_quote, json_remove, json_replace, json_set, json_type, json_valid,
// -> and ->>; json_each and json_tree are tables, not functions). Not
// allowed, among others: load_extension, fts3_tokenizer (returns a heap
// pointer), readfile, writefile, edit, eval, sqlite_dbdata, changes,
// last_insert_rowid, sqlite_version, SQLite's internal sqlite_rename_* /
// sqlite_drop_* helpers, and whatever a newer SQLite adds.
//
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

// True for the read-only introspection pragmas a query may run, by name
// (case-insensitive): table_info, table_xinfo, index_list, index_info,
// foreign_key_list.
bool IsAllowedPragma(const char* name);

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
