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
// Encodings (common/encoding.h): the file is decoded first (a UTF-8 BOM is
// dropped; UTF-16 and UTF-32, by their mark or the zero bytes of an ASCII
// start, become UTF-8), then every line that is not UTF-8 is read as
// Windows-1252, as the CSV reader reads such fields, and counted.
//
// Errors name the file, the line (and column) and what was expected: invalid
// or truncated JSON, a line or element that is not an object, nesting deeper
// than max_depth (with the path where it happened). Input quoted in them is
// escaped (no raw NUL or invalid bytes).
// Pure; the file is read whole. O(size).
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

// `transcoded_lines` (may be null) is increased by the lines read as
// Windows-1252.
Result<std::vector<FlatRecord>> ReadJsonRecords(const std::string& path,
                                                const JsonReadOptions& options = {},
                                                size_t* transcoded_lines = nullptr);

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_JSON_RECORDS_H_
