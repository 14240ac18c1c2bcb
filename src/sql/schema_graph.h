// Schema graphs for text-to-SQL (QAFD-RAG §4.2, A2.2): a database schema as
// a graph of Table and Column nodes.
//
// Nodes: tables 0..T−1, then columns T..T+C−1 (node id = T + column index).
// A column is named "table.column" exactly as the schema spells it. Edges
// (undirected, for the flow diffusion): HAS_COLUMN table–column and
// FOREIGN_KEY column–column (declared, or inferred from shared key names
// when a schema declares none for a pair of tables). Primary keys are marks
// on columns.
//
// Node text (what the embedder sees): the split names (camelCase and
// snake_case become words), the type, the description and a few sample
// values: "table singer | column name (text): name | values: Joe Sharp,
// Timbaland". Name text: the split table and column names only.
//
// Sources: a SQLite file (introspection: tables, columns, types, primary
// and foreign keys, row counts, distinct sample values), Spider tables.json, Spider 2.0-lite schema folders.
// Thread-safety: immutable after construction; O(T + C + FK) to build.
#ifndef FLOWRAG_SQL_SCHEMA_GRAPH_H_
#define FLOWRAG_SQL_SCHEMA_GRAPH_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"

namespace flowrag {

struct SpiderSchema;
struct Spider2Database;

struct SchemaColumn {
  uint32_t table = 0;  // index into SchemaGraph::tables
  std::string name, type, description;
  bool primary_key = false;
  std::vector<std::string> samples;  // distinct example values
};

struct SchemaTable {
  std::string name, description;
  int64_t rows = -1;              // -1: unknown
  std::vector<uint32_t> columns;  // indexes into SchemaGraph::columns
  // A virtual table of an introspected SQLite file: its rows come from its
  // module's code, so they are not counted or sampled. Not kept in ToJson.
  bool virtual_table = false;
};

struct SchemaForeignKey {
  uint32_t from = 0, to = 0;  // column indexes
  bool inferred = false;      // implied by a shared key-like name, not declared
};

enum class SchemaNodeKind { kTable, kColumn };

class SchemaGraph {
 public:
  std::string name;  // database name
  std::vector<SchemaTable> tables;
  std::vector<SchemaColumn> columns;
  std::vector<SchemaForeignKey> foreign_keys;

  // Adds a table / column (columns after their table); returns its index.
  uint32_t AddTable(std::string table_name, std::string description = {});
  uint32_t AddColumn(uint32_t table, std::string column_name, std::string type,
                     std::string description = {});
  // Resolves "table.column" or (table, column), case-insensitively; -1 if none.
  int64_t FindColumn(std::string_view table, std::string_view column) const;
  int64_t FindTable(std::string_view table) const;

  // Builds the adjacency; call after the last Add*/foreign key.
  void Finalize();

  size_t num_nodes() const { return tables.size() + columns.size(); }
  SchemaNodeKind Kind(uint32_t node) const {
    return node < tables.size() ? SchemaNodeKind::kTable : SchemaNodeKind::kColumn;
  }
  uint32_t ColumnNode(uint32_t column) const { return static_cast<uint32_t>(tables.size()) + column; }
  uint32_t ColumnOf(uint32_t node) const { return node - static_cast<uint32_t>(tables.size()); }
  // The table of a node (itself for a table node).
  uint32_t TableOf(uint32_t node) const;
  // "table" or "table.column".
  std::string NodeName(uint32_t node) const;
  std::string NodeText(uint32_t node) const;
  std::string NodeNameText(uint32_t node) const;

  // Adjacency (CSR, both directions; after Finalize).
  const std::vector<uint32_t>& adjacency_offsets() const { return offsets_; }
  const std::vector<uint32_t>& adjacency() const { return adjacent_; }
  size_t Degree(uint32_t node) const { return offsets_[node + 1] - offsets_[node]; }

  // Unweighted shortest path (BFS) from a to b, both ends included; empty
  // when b is unreachable. O(nodes + edges).
  std::vector<uint32_t> ShortestPath(uint32_t a, uint32_t b) const;

  // JSON form for the store and the CLI ({"name","tables":[{"name",
  // "description","rows","columns":[{"name","type","description","pk",
  // "samples"}]}],"foreign_keys":[["t.c","t.c",inferred]]}).
  std::string ToJson() const;
  static Result<SchemaGraph> FromJson(std::string_view json);

 private:
  std::vector<uint32_t> offsets_, adjacent_;
};

// "SalesQuota" → "sales quota", "customer_id" → "customer id",
// "HTTPServer2" → "http server 2".
std::string SplitIdentifier(std::string_view identifier);

struct IntrospectionOptions {
  size_t samples_per_column = 3;  // distinct non-null values kept as samples
  size_t max_sample_bytes = 40;   // longer values are skipped
  bool count_rows = true;
  // Row counts and samples stop here (the query under way gets the time
  // left as its limit): the tables and columns after it keep rows = -1 and
  // no samples, and a warning says so. The catalog (tables, columns, keys)
  // is always read whole.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// Introspects a SQLite file through hardened read-only connections
// (ReadOnlyDatabase::Open, the same policy and limits as model SQL: each
// catalog statement under 30 s and the result-byte budget) that run only
// the fixed catalog queries written here (PRAGMA table_info and
// foreign_key_list, COUNT(*), SELECT DISTINCT samples), never model SQL.
// Virtual tables are listed but not counted or sampled.
// NotFound / InvalidArgument ("not a SQLite database") as
// ReadOnlyDatabase::Open. A database without tables gives an empty graph.
// Warnings (the deadline was reached) are appended to `warnings` if given.
Result<SchemaGraph> SchemaFromSqlite(const std::string& path,
                                     const IntrospectionOptions& options = {},
                                     std::vector<std::string>* warnings = nullptr);
SchemaGraph SchemaFromSpider(const SpiderSchema& schema);
// Runs the DDL in a hardened in-memory database for types and keys
// (Spider2SchemaDatabase with declare_failed: a statement SQLite rejects is
// replaced by the JSON's column list; a refused one, such as ATTACH or
// VACUUM INTO, is an InvalidArgument naming DDL.csv and its line), then adds
// the JSON's column descriptions and sample rows.
Result<SchemaGraph> SchemaFromSpider2(const Spider2Database& database);
// Adds FOREIGN_KEY edges (inferred = true) between same-named key-like
// columns (primary keys, names whose last word is id/key/code/no/num; never
// a bare "id") of two tables
// that no declared foreign key joins, so schemas that declare no keys still
// connect their tables. Called by every builder above.
void AddImpliedJoins(SchemaGraph* graph);
// Fills samples and row counts of `graph` from the SQLite file (tables and
// columns matched by name, case-insensitively; unmatched ones are left alone).
Status AddSamplesFromSqlite(const std::string& path, const IntrospectionOptions& options,
                            SchemaGraph* graph, std::vector<std::string>* warnings = nullptr);

}  // namespace flowrag

#endif  // FLOWRAG_SQL_SCHEMA_GRAPH_H_
