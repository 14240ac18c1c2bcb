// JSON and JSONL record sources for schema induction (schema-contracts
// paper A.3, A.7.3): each record is flattened to (path, value) pairs.
//
// Paths: object members join with '.' ("address.city"); array elements add
// "[*]" ("tags[*]", "items[*].price"). Scalars become text (numbers as
// written by the parser, booleans "true"/"false"); JSON null becomes an empty
// value (a null). Records: a .jsonl/.ndjson file has one object per line
// (blank lines skipped); a .json file holds an array of objects, or one
// object, which is one record.
//
// Errors name the file, the line (and column) and what was expected: invalid
// or truncated JSON, a line or element that is not an object, nesting deeper
// than max_depth (with the path where it happened).
// Pure; the file is read whole (.json) or line by line (.jsonl).
#ifndef FLOWRAG_SCHEMA_JSON_RECORDS_H_
#define FLOWRAG_SCHEMA_JSON_RECORDS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "flowrag/status.h"

namespace flowrag {

struct FlatRecord {
  int64_t line = 0;  // 1-based line where the record starts (.jsonl, .json)
  std::string file;  // relative to the folder (set by LoadSourceRecords)
  int64_t index = 0;  // 1-based position in its file (set by LoadSourceRecords)
  std::vector<std::pair<std::string, std::string>> values;  // (path, value), document order
};

struct JsonReadOptions {
  size_t max_depth = 32;
};

Result<std::vector<FlatRecord>> ReadJsonRecords(const std::string& path,
                                                const JsonReadOptions& options = {});

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_JSON_RECORDS_H_
