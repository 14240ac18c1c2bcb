// Loader for BIRD-format text-to-SQL data (Li et al. 2023, "Can LLM Already
// Serve as A Database Interface?"), for `flowrag sql eval --bird DIR`: schema
// linking measured on another benchmark's schemas.
//
// Format of DIR:
//   dev.json     a list of {question, db_id, SQL, evidence} (question_id and
//                difficulty, when present, are not used; evidence may be
//                missing or null: empty).
//   tables.json  Spider's tables.json format (LoadSpiderTables); BIRD ships
//                it as dev_tables.json, read when tables.json is absent.
//   dev_databases/<db_id>/<db_id>.sqlite   optional: samples, the value
//                index and gold reads come from it when present.
//
// BIRD has no parsed SQL tree: the gold tables and columns of a question are
// what its SQL reads when prepared (never run) against the database, through
// ReadOnlyDatabase::Reads: the .sqlite file when present, otherwise an
// in-memory database built from the schema's tables.json (one CREATE TABLE
// per table with its columns, types and primary key). Names are in the
// schema's spelling. A question whose SQL does not prepare keeps an empty
// gold and sets SqlTask::error (left out of the scores, as for Spider 2.0).
//
// Errors name the file and the place in it: "<dir>/dev.json: question 3
// (db_id \"x\"): SQL: expected a string", a db_id that no schema has, an
// invalid tables file (LoadSpiderTables's messages). Thread-safety: a pure
// function of the files it reads.
#ifndef FLOWRAG_SQL_BIRD_DATA_H_
#define FLOWRAG_SQL_BIRD_DATA_H_

#include <string>
#include <vector>

#include "flowrag/status.h"
#include "sql/spider_data.h"

namespace flowrag {

struct BirdData {
  std::vector<SpiderSchema> schemas;
  std::vector<SqlTask> tasks;  // id "bird-dev-<index>", evidence from the entry
  // Per db_id with a database file: its path.
  std::vector<std::pair<std::string, std::string>> files;
};

// The tables file of a BIRD folder: tables.json, else dev_tables.json
// (NotFound naming both when neither exists).
Result<std::string> BirdTablesPath(const std::string& dir);

// Reads a BIRD-format folder (see above). O(questions · prepare time).
Result<BirdData> LoadBird(const std::string& dir);

}  // namespace flowrag

#endif  // FLOWRAG_SQL_BIRD_DATA_H_
