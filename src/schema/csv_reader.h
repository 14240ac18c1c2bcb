// CSV reading for schema induction (RFC 4180 plus what real files do).
//
// The first record is the header. Fields are separated by the delimiter
// sniffed from the header line (',' unless ';', '\t' or '|' is more common
// there); a field in double quotes may hold delimiters, doubled quotes and
// newlines; CRLF and LF both end records; blank lines are skipped. The text
// is decoded first (common/encoding.h): a UTF-8 byte-order mark is dropped,
// UTF-16 and UTF-32 (by their mark, or the zero bytes of an ASCII start)
// become UTF-8. Text that is not valid UTF-8 then is read as Windows-1252
// (Latin-1 for the bytes it leaves undefined), field by field, and counted in
// `transcoded_fields`, so a file of mixed encodings loads whole. Input quoted
// in errors is escaped (no raw NUL or invalid bytes).
//
// Errors name the file and the 1-based line: a record with more or fewer
// fields than the header (naming the header's last field or the first extra
// one), a quote left open at the end of the file (the line where it opened),
// a duplicate or empty column name, a file that cannot be read.
//
// Pure functions; the file is read whole. O(size).
#ifndef FLOWRAG_SCHEMA_CSV_READER_H_
#define FLOWRAG_SCHEMA_CSV_READER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/encoding.h"  // Windows1252ToUtf8, for callers
#include "flowrag/status.h"

namespace flowrag {

struct CsvTable {
  std::string path;
  char delimiter = ',';
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // each has columns.size() fields
  std::vector<int64_t> row_lines;              // 1-based line where each row starts
  size_t transcoded_fields = 0;                // fields read as Windows-1252
};

// `bytes` is the file content; `path` only names it in errors.
Result<CsvTable> ParseCsv(std::string_view bytes, const std::string& path);
Result<CsvTable> ReadCsvFile(const std::string& path);

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_CSV_READER_H_
