// Text-to-SQL over SQLite databases (QAFD-RAG §4.2, A2.2, A5): a schema
// graph of tables and columns, schema linking by query-aware flow diffusion
// (and the baselines "all", "bm25", "dense"), safe read-only execution, and
// SQL written by a configured chat model from the linked schema, with
// bounded repairs.
//
//   auto db = SqlDatabase::Open("concert_singer.sqlite");
//   auto link = (*db)->Link("Which singers are from France?", "qafd");
//   // link->tables, link->columns, link->joins, link->schema_text
//   auto answer = (*db)->Ask("How many singers are from France?");  // needs a chat model
//
// Safety: model SQL runs on a read-only connection whose authorizer allows
// reads only (no INSERT/UPDATE/DELETE/DDL, ATTACH, PRAGMA, transactions,
// load_extension), one statement at a time, under a time limit and a row
// limit. Refusals are InvalidArgument errors whose message starts with
// "refused: "; a statement over time is DeadlineExceeded. The database file
// is never written.
//
// Chat model: any OpenAI-compatible endpoint configured by the environment
// (FLOWRAG_LLM_BASE_URL, FLOWRAG_LLM_MODEL, FLOWRAG_LLM_API_KEY). Without
// one, Link() runs offline and Ask() is FailedPrecondition.
//
// Thread-safety: a SqlDatabase is used by one thread at a time.
#ifndef FLOWRAG_SQL_H_
#define FLOWRAG_SQL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "flowrag/status.h"

namespace flowrag {

// Limits of one statement (ReadOnlyDatabase::Execute, SqlDatabase::Execute).
struct SqlLimits {
  // Wall-clock time from preparing to the last row materialised, > 0. A
  // progress handler and a watchdog thread (sqlite3_interrupt) stop the
  // statement; the result is then DeadlineExceeded.
  double time_limit_seconds = 10.0;
  size_t max_rows = 1000;  // more rows: the first max_rows and `truncated`
  // Bytes of the materialised result: text and blob bytes plus 8 per other
  // cell; a result that would be larger is an InvalidArgument (not a cut).
  size_t max_result_bytes = size_t{64} << 20;
  // Growth of SQLite's heap while the statement runs, checked every 100 VM
  // steps (sqlite3_memory_used: process-wide, so other connections' growth
  // in the same process counts too); over it: InvalidArgument.
  size_t max_memory_bytes = size_t{1} << 30;
};

// A cell: NULL, integer, real or text (BLOBs as text of their bytes).
using SqlValue = std::variant<std::monostate, int64_t, double, std::string>;
std::string SqlValueText(const SqlValue& v);  // "NULL", decimal, %.15g, text

struct SqlResultSet {
  std::vector<std::string> columns;
  std::vector<std::vector<SqlValue>> rows;
  bool truncated = false;  // more than max_rows rows existed
  double seconds = 0.0;
};

// Schema linking options; defaults from QAFD-RAG A2.2.1 where it gives them.
struct SchemaLinkOptions {
  double alpha = 10.0;     // source mass multiplier α
  double capacity = 1.0;   // uniform sink capacity T
  double epsilon = 0.05;   // total-excess threshold
  size_t max_pushes = 1000000;
  std::string weights = "hybrid";   // Eq. 5: mean | product | hybrid
  std::string similarity = "rbf";   // cosine | rbf (see retrieval/qafd_retriever.h)
  double rbf_gamma = 3.0;
  double a = 1.0, b = 0.25;         // Eq. 5c
  size_t seeds = 4;                 // candidates per sub-query
  double seed_ratio = 0.5;          // ... scoring at least this × the best
  double value_score = 0.9;         // candidate score of a value match (always a candidate)
  // Keyword scores (best of: cosine with the node's name text, word Jaccard
  // with its own name) below this are chance overlaps, not matches.
  double min_seed_score = 0.35;
  // Support (relevance = "support"): a candidate is linked when its x_v is
  // at least this fraction of the sub-query's largest x (relevance = "max":
  // any node whose relevance reaches it).
  double select = 0.2;
  // Sink capacities: uniform T_v = capacity (A2.2.1) | degree T_v =
  // capacity·deg(v) (the authors' code). See sql/schema_linker.h.
  std::string sinks = "uniform";
  // Source mass: score, Δ_v = α·T_v·score(v) at every candidate | path,
  // A2.2.1's m_s = α·Σ_{j∈P} T_j at the pair's source.
  std::string mass = "score";
  // support: the flow decides which column candidates are linked (x_v ≥
  // select·max x) and adds no other node | max: relevance = max(candidate
  // score, x_v/max x), any node may be added (the linker before issue 22).
  std::string relevance = "support";
  // Offline decomposition into sub-queries (retrieval/keywords.h), one
  // diffusion each. Off by default: cutting schema questions at "and" and
  // relative pronouns splits filters of one entity and adds false seeds
  // (Spider dev column F1 0.641 on, 0.660 off; Spider 2.0-lite 0.427 / 0.411,
  // 24 questions; bench/out/sql_linking.md). With a chat model, Prompt 5
  // always decomposes.
  bool subqueries = false;
  bool joins = true;                // add join paths between linked tables
  bool llm = true;                  // Prompt 5 seed selection with a chat model
  size_t top_k = 5;                 // baselines: nodes returned
  // Baselines: when > 0, nodes are taken in rank order until this many
  // columns are in (instead of top_k nodes); `flowrag sql eval` sets it per
  // question for "bm25-matched" (BM25 at QAFD's output size).
  size_t top_columns = 0;
};

struct LinkedItem {
  std::string name;  // "table" or "table.column", as the schema spells it
  double score = 0.0;
  std::string why;   // keyword | value | flow | join | llm | rank
};

struct JoinEdge {
  std::string from, to;  // "table.column" = "table.column"
  bool inferred = false; // same key name, not a declared foreign key
};

// A source of one sub-query's flow diffusion (qafd; QAFD-RAG §2.2, A2.2.1).
struct LinkSource {
  std::string name;       // "table.column" (or "table"), as the schema spells it
  size_t subquery = 0;    // index into SchemaLink::subqueries
  // The source's Δ before the feasibility guard: with SchemaLinkOptions::
  // mass = "score" (the default) α·T·score of the candidate; with "path" the
  // Σ over its [source, target, confidence] pairs of confidence · m_s, m_s =
  // α·Σ_{j∈P} T_j over the shortest path P from source to target (both ends
  // counted), or Σ_{i∈V} T_i when no path joins them.
  double mass = 0.0;
  // The mass injected after the solver's feasibility guard
  // (graph_algo/flow_diffusion.h: at most half the capacity of the source's
  // connected component when the component holds less than twice the total
  // mass). Equal to `mass` unless the guard scaled it.
  double injected = 0.0;
};

struct SchemaLink {
  std::string method;
  std::vector<LinkedItem> tables, columns;  // ranked
  std::vector<JoinEdge> joins;
  std::vector<LinkSource> sources;  // qafd: per sub-query, in node order
  size_t scaled_sources = 0;        // sources the feasibility guard scaled down
  std::vector<std::string> subqueries, value_matches;
  std::string schema_text;  // compact schema for a prompt
  size_t pushes = 0, nodes_touched = 0, llm_calls = 0;
  double time_ms = 0.0;
  std::vector<std::string> warnings;
};

struct SqlAskOptions {
  std::string method = "qafd";  // linking method
  SchemaLinkOptions link;
  bool full_tables = true;      // the prompt lists every column of a linked table
  int max_repairs = 2;          // failed executions fed back to the model
  SqlLimits limits;
  std::string evidence;         // external knowledge for the prompt (may be empty)
};

struct SqlAttempt {
  std::string sql;
  std::string error;  // empty: executed
};

struct SqlAnswer {
  std::string question, sql;  // the last SQL tried
  bool executed = false;
  SqlResultSet result;
  std::vector<SqlAttempt> attempts;
  SchemaLink link;
  size_t llm_calls = 0;
  double time_ms = 0.0;
};

struct SqlDatabaseOptions {
  size_t samples_per_column = 3;  // example values in node texts
  bool value_index = true;        // index literal values (a scan of text columns)
  // Open() reads the whole catalog (tables, columns, keys) whatever the
  // time, then counts rows, samples values and builds the value index until
  // this many seconds after the call; what is left is skipped with a
  // warning (warnings()): the schema stays complete, with fewer samples and
  // values. Such a partial schema is not cached in the store. <= 0: no limit.
  double open_time_limit_seconds = 30.0;
  // A flowrag store file: the schema graph and value index are kept there
  // (table sql_schemas, keyed by the database's absolute path; a schema
  // without data under "<path>#<db_id>") and reused while the database file
  // is unchanged; the LLM response cache and remote node vectors too.
  std::string store;
  // "hash": the built-in embedder fitted on the node texts; "openai": the
  // OpenAI-compatible embeddings endpoint (FLOWRAG_EMBED_* environment),
  // whose node vectors are cached in the store when one is given. Empty:
  // the store's embedder (meta "embedder"), else "hash".
  std::string embedder;
};

class SqlDatabase {
 public:
  virtual ~SqlDatabase() = default;

  // Opens a SQLite file read-only and builds its schema graph. NotFound,
  // InvalidArgument "<path>: not a SQLite database", InvalidArgument for a
  // database without tables.
  static Result<std::unique_ptr<SqlDatabase>> Open(const std::string& path,
                                                   const SqlDatabaseOptions& options = {});

  // A schema without data, for linking only: a Spider-style tables.json
  // (`db_id` names the schema) or a Spider 2.0-lite database folder
  // (DDL.csv and one JSON per table with descriptions and sample rows).
  // Ask() and Execute() are FailedPrecondition on it. NotFound for an
  // unknown db_id or a missing file.
  static Result<std::unique_ptr<SqlDatabase>> OpenSchema(const std::string& path,
                                                         const std::string& db_id = {},
                                                         const SqlDatabaseOptions& options = {});

  // Ranked tables, columns and joins for a question. method: qafd | all |
  // bm25 | dense. A question that matches nothing gives an empty link with a
  // warning, not an error.
  virtual Result<SchemaLink> Link(std::string_view question, std::string_view method = "qafd",
                                  const SchemaLinkOptions& options = {}) const = 0;

  // Links, asks the chat model for SQL, runs it safely, and feeds errors back
  // up to max_repairs times. FailedPrecondition without a chat model.
  virtual Result<SqlAnswer> Ask(std::string_view question, const SqlAskOptions& options = {}) = 0;

  // Runs one read-only statement under the limits.
  virtual Result<SqlResultSet> Execute(std::string_view sql, const SqlLimits& limits = {}) = 0;

  // What Open() had to leave out (the open time limit was reached), or empty.
  virtual const std::vector<std::string>& warnings() const = 0;

  // The schema graph as JSON (tables, columns, keys, samples, foreign keys).
  virtual std::string SchemaJson() const = 0;
  virtual size_t num_tables() const = 0;
  virtual size_t num_columns() const = 0;
};

// Schema-linking and execution evaluation on Spider dev and Spider 2.0-lite.
struct SqlEvalOptions {
  std::string spider;   // folder with dev.json, tables.json, database/
  std::string spider2;  // spider2_lite folder (24 local tasks with gold SQL)
  // BIRD-format folder: dev.json ({question, db_id, SQL, evidence}),
  // tables.json or dev_tables.json (Spider's format) and, optionally,
  // dev_databases/<db>/<db>.sqlite (sql/bird_data.h).
  std::string bird;
  // qafd | bm25 | dense | all | bm25-matched (BM25 returning, per question,
  // as many columns as QAFD with the same options does).
  std::vector<std::string> methods = {"qafd", "bm25", "bm25-matched", "dense", "all"};
  SchemaLinkOptions link;
  size_t limit = 0;     // first N questions per dataset (0: all)
  // Generate SQL with the chat model and score execution: the predicted and
  // the gold results are the same answer when a permutation of the
  // predicted columns makes the rows equal (as multisets, or in order when
  // the gold SQL has an ORDER BY); see sql/sql_eval.h. Questions whose
  // database has no .sqlite file are not executed (counted in `no_data`,
  // warned about on stderr); a question whose gold SQL fails is left out
  // of the accuracy (`gold_errors`); a chat error is that question's
  // failure (`exec_errors`, the message in the records), not the run's.
  bool execute = false;
  // Rows fetched per result when executing (gold and predicted; replaces
  // ask.limits.max_rows). A result with more rows is truncated and counts
  // as a mismatch (`truncated`).
  size_t max_rows = 100000;
  SqlAskOptions ask;
  std::string records;  // JSONL per question and method
};

struct SqlEvalRow {
  std::string dataset, method;
  size_t questions = 0;
  // Macro averages: table scores over the questions with gold tables, column
  // scores over the questions with gold columns. A question whose gold SQL
  // reads no column (SELECT count(*) FROM t) has nothing to find: it is left
  // out of the column averages and counted in gold_less instead.
  double table_p = 0, table_r = 0, table_f1 = 0;
  double column_p = 0, column_r = 0, column_f1 = 0;
  double avg_tables = 0, avg_columns = 0;  // returned per question (all questions)
  size_t gold_less = 0;             // questions without gold columns
  double gold_less_columns = 0;     // columns returned per such question
  double p50_ms = 0, p99_ms = 0;
  // Execution (SqlEvalOptions::execute): exec_accuracy = exec_correct /
  // exec_attempted, -1 when nothing was attempted.
  double exec_accuracy = -1;
  size_t exec_attempted = 0;  // questions scored: data present and the gold SQL ran
  size_t exec_correct = 0;
  size_t executed = 0;        // ... whose predicted SQL ran (after repairs)
  size_t exec_errors = 0;     // ... where the chat model failed (counted wrong)
  size_t truncated = 0;       // ... where a result exceeded max_rows (counted wrong)
  size_t gold_errors = 0;     // questions left out: the gold SQL failed
  size_t no_data = 0;         // questions left out: the database has no .sqlite file
};

// Progress lines go to stderr unless quiet.
Result<std::vector<SqlEvalRow>> EvaluateSql(const SqlEvalOptions& options, bool quiet = false);

}  // namespace flowrag

#endif  // FLOWRAG_SQL_H_
