// Loaders for text-to-SQL benchmark data: Spider 1.0 (tables.json, dev.json)
// and the local (SQLite) part of Spider 2.0-lite (schema folders, tasks with
// public gold SQL). Each task carries the gold schema elements it uses
// (tables and "table.column"), for scoring schema linking.
//
// Formats (see /work/shared/data/SOURCES_SQL_MULTISOURCE.md):
//   Spider tables.json: a list of schemas {db_id, table_names,
//     table_names_original, column_names, column_names_original
//     ([table_idx, name]; index 0 is [-1, "*"]), column_types, primary_keys
//     (column indexes, or lists of them for composite keys), foreign_keys
//     ([col_idx, col_idx] pairs)}.
//   Spider dev.json: a list of {db_id, question, query, sql (process_sql.py's
//     parsed tree)}.
//   Spider 2.0-lite: spider2-lite.jsonl ({instance_id, db, question,
//     external_knowledge}), evaluation_suite/gold/sql/<id>.sql,
//     resource/databases/sqlite/<DB>/{DDL.csv, <table>.json},
//     resource/documents/<name>.
//
// Errors name the file and the place in it (schema index and db_id, question
// index, line) and what was expected. Thread-safety: pure functions of their
// inputs (and of the files they read); safe to call from several threads.
//
// Implemented in spider_data.cc (Spider 1.0) and spider2_data.cc (Spider
// 2.0-lite), on the file/JSON helpers of data_files.h.
#ifndef FLOWRAG_SQL_SPIDER_DATA_H_
#define FLOWRAG_SQL_SPIDER_DATA_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flowrag/status.h"

namespace flowrag {

class ReadOnlyDatabase;

// ---------------------------------------------------------------------------
// Spider 1.0

struct SpiderColumn {
  int table = -1;             // index into table_names; -1 for "*"
  std::string name_original;  // as in the database ("Song_Name")
  std::string name;           // natural-language name ("song name")
  std::string type;           // "text", "number", ...
};

struct SpiderSchema {
  std::string db_id;
  std::vector<std::string> table_names_original, table_names;  // natural-language names
  std::vector<SpiderColumn> columns;                           // index 0 is "*" (table -1)
  std::vector<int> primary_keys;                  // column indexes (composite keys flattened)
  std::vector<std::pair<int, int>> foreign_keys;  // (from column, to column)

  // "table.column" in the original spelling; REQUIRES: 0 < column < columns.size().
  std::string QualifiedColumn(int column) const;
};

// Reads tables.json. Every index is range-checked: a table index of a column
// must be -1 (only for column 0) or a table; key columns must exist. Errors:
// NotFound/IoError for the file, InvalidArgument "<path>: schema <i> (db_id
// \"x\"): <field>: expected ..." for bad content.
Result<std::vector<SpiderSchema>> LoadSpiderTables(const std::string& tables_json);

// Gold schema elements of a question: tables as "table" and columns as
// "table.column", both in the schema's original spelling.
struct LinkingGold {
  std::set<std::string> tables, columns;
};

struct SqlTask {
  std::string id, db_id, question, gold_sql;
  std::string evidence;  // external knowledge text; may be empty
  LinkingGold gold;
  // Set when the gold could not be derived (Spider 2.0-lite: the gold SQL
  // does not prepare against the schema); `gold` is then empty.
  std::string error;
};

// Gold from Spider's parsed SQL tree: every table unit in FROM (recursively
// in nested queries: intersect/union/except, subqueries in conditions and in
// FROM), every column unit in SELECT, WHERE, GROUP BY, HAVING, ORDER BY and
// join conditions (including column operands on the right of a condition).
// Column 0 ("*") is not a column (count(*)), but its query's tables still
// count. Errors: InvalidArgument naming the place in the tree
// ("sql.from.table_units[1]: table index 9 out of range (4 tables)").
// O(size of the tree).
Result<LinkingGold> SpiderGoldFromParsed(const nlohmann::json& sql, const SpiderSchema& schema);

// dev.json tasks (id "spider-dev-<index>", evidence empty) with gold from the
// parsed tree. Errors name the file and the question index: "<path>: question
// 17 (db_id \"x\"): ...", including a db_id that no schema has.
Result<std::vector<SqlTask>> LoadSpiderTasks(const std::string& dev_json,
                                             const std::vector<SpiderSchema>& schemas);

// ---------------------------------------------------------------------------
// Spider 2.0-lite (local SQLite databases; schema only, no data)

struct Spider2Table {
  std::string name, ddl;  // ddl: the CREATE TABLE text from DDL.csv, unchanged
  size_t ddl_line = 0;    // line of DDL.csv where its record starts; 0: no DDL row
  std::vector<std::string> columns, types, descriptions;  // aligned; descriptions may be ""
  std::vector<std::vector<std::string>> sample_rows;      // row-major, aligned with columns
};

struct Spider2Database {
  std::string name;    // the folder's base name ("DB_IMDB")
  std::string folder;  // the path given to LoadSpider2Database
  std::vector<Spider2Table> tables;
};

// Reads <folder>/DDL.csv (header "table_name,DDL") and every <folder>/*.json
// ({table_name, column_names, column_types, description, sample_rows}).
// Tables come in DDL.csv order; a table with a .json but no DDL row is
// appended (empty ddl), a DDL row without a .json has no columns. Sample
// cells are strings: JSON strings as they are, null as "NULL", other values
// in JSON form. The bare NaN / Infinity / -Infinity that Python's json writes
// (18 of the 432 files) are read as null, so they also give "NULL". Missing
// types/descriptions are padded with "".
Result<Spider2Database> LoadSpider2Database(const std::string& folder);

// The schema of a Spider 2.0-lite folder as a hardened in-memory database
// (ReadOnlyDatabase::FromDdl with tables_and_indexes_only: the DDL comes from
// outside and may be hostile). A DDL that SQLite rejects because pandas left
// column names bare is retried with QuoteBareColumnNames; one that still
// fails is skipped, or with `declare_failed` declared from the table's JSON
// columns and types. A DDL the policy refuses (ATTACH, VACUUM INTO, PRAGMA,
// a trigger, a function such as fts3_tokenizer, ...) fails the whole folder:
// InvalidArgument "<folder>/DDL.csv:<line>: table \"t\": refused: ATTACH is
// not allowed"; nothing of it runs, so it creates no file.
Result<std::unique_ptr<ReadOnlyDatabase>> Spider2SchemaDatabase(const Spider2Database& db,
                                                                bool declare_failed);

// The local tasks with public gold SQL (24), in spider2-lite.jsonl order:
// id = instance_id, db_id = the jsonl "db", evidence = the text of
// resource/documents/<external_knowledge> (empty when null), gold_sql = the
// .sql file. Gold tables/columns are what the gold SQL reads when prepared
// (not run) against an in-memory database built from the schema's DDL
// (Spider2SchemaDatabase without declare_failed, then Reads), in the
// declared spelling. DDL that SQLite rejects because pandas left column names
// bare (index, group, "qty_sold(kg)") is retried with QuoteBareColumnNames;
// DDL that still fails (sqlite_sequence) is skipped. A task whose gold SQL
// does not prepare, or whose schema has a refused DDL, keeps an empty gold
// and sets `error`. The db folder is matched
// case-insensitively with '-' read as '_' ("Db-IMDB" -> DB_IMDB).
// Errors: unreadable files, malformed jsonl lines ("<path>:<line>: ..."), a
// db without a folder, a missing knowledge document.
Result<std::vector<SqlTask>> LoadSpider2LiteTasks(const std::string& spider2_root);

// ---------------------------------------------------------------------------
// Helpers (exposed for tests)

// RFC 4180 records: fields separated by ',', records by "\n" or "\r\n";
// quoted fields may hold commas, newlines and doubled quotes (""). A
// trailing newline does not make an empty record. InvalidArgument
// "<path>:<line>: ..." for an unterminated quote or text after a closing
// quote. *record_lines (when given) gets the line each record starts on.
// O(size).
Result<std::vector<std::vector<std::string>>> ParseCsvRecords(
    std::string_view text, const std::string& path, std::vector<size_t>* record_lines = nullptr);

// Quotes the column names of a pandas-style CREATE TABLE, one "<name> <TYPE>"
// per line with TYPE a single word ("    qty_sold(kg) REAL," ->
// "    \"qty_sold(kg)\" REAL,"); names already quoted are kept. Returns the
// input unchanged when a line has any other shape (constraints, a parameterised
// type, several columns on a line). Quoting is harmless for valid names, but
// callers use it only on statements SQLite rejects.
std::string QuoteBareColumnNames(std::string_view create_table);

}  // namespace flowrag

#endif  // FLOWRAG_SQL_SPIDER_DATA_H_
