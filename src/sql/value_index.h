// ValueIndex: literal values of a database mapped to the columns holding
// them, so "singers from France" links to singer.country (issue 7: "a value
// index maps literal values in questions to the columns that contain them").
//
// Indexed: distinct non-null values of each column, at most
// `max_values_per_column` per column and `max_value_bytes` long, keyed by
// EntityKey (lower-case, punctuation runs collapsed). Numbers are indexed
// only from text-typed columns (a "3" in an integer id column would match
// every count in a question). Lookup: every run of 1..max_ngram question
// tokens (and every quoted string) is looked up; a single-token run must be
// at least 3 characters and neither a stopword nor a question word.
// Thread-safety: immutable after construction. Memory: O(distinct values).
#ifndef FLOWRAG_SQL_VALUE_INDEX_H_
#define FLOWRAG_SQL_VALUE_INDEX_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flowrag/status.h"
#include "sql/schema_graph.h"

namespace flowrag {

struct ValueIndexOptions {
  size_t max_values_per_column = 5000;
  size_t max_value_bytes = 64;
  size_t max_ngram = 4;
};

struct ColumnValueMatch {
  std::string text;      // the question's words that matched
  uint32_t column = 0;   // column index in the graph
  size_t columns = 0;    // how many columns hold this value (ambiguity)
};

class ValueIndex {
 public:
  ValueIndex() = default;
  // Reads the values from a SQLite file (fixed catalog queries, read-only),
  // each column's query under a 10 s limit and all of them before
  // `deadline`: at the deadline indexing stops, the columns read so far stay
  // indexed, and a warning is appended to `warnings` (if given).
  static Result<ValueIndex> FromSqlite(
      const std::string& path, const SchemaGraph& graph, const ValueIndexOptions& options = {},
      std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max(),
      std::vector<std::string>* warnings = nullptr);
  // Uses only the graph's sample values (schemas without data).
  static ValueIndex FromSamples(const SchemaGraph& graph, const ValueIndexOptions& options = {});

  // Matches in the question, longest runs first; a column appears once per value.
  std::vector<ColumnValueMatch> Find(std::string_view question) const;

  size_t size() const { return values_.size(); }
  // {"options": [max_values, max_bytes, max_ngram], "values": {key: [column, ...]}}
  std::string ToJson() const;
  static Result<ValueIndex> FromJson(std::string_view json, size_t num_columns);
  void Add(std::string_view value, uint32_t column, bool numeric_ok);

 private:
  ValueIndexOptions options_;
  std::unordered_map<std::string, std::vector<uint32_t>> values_;
};

// True for declared types with TEXT affinity (CHAR, CLOB, TEXT, or none).
bool IsTextType(std::string_view declared_type);

}  // namespace flowrag

#endif  // FLOWRAG_SQL_VALUE_INDEX_H_
