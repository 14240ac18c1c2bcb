#include "schema/csv_reader.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "common/encoding.h"
#include "common/text.h"

namespace flowrag {
namespace {

char SniffDelimiter(std::string_view text) {
  const size_t eol = text.find('\n');
  std::string_view header = text.substr(0, eol == std::string_view::npos ? text.size() : eol);
  char best = ',';
  size_t best_count = static_cast<size_t>(std::count(header.begin(), header.end(), ','));
  for (char c : {';', '\t', '|'}) {
    const size_t n = static_cast<size_t>(std::count(header.begin(), header.end(), c));
    if (n > best_count) {
      best = c;
      best_count = n;
    }
  }
  return best;
}

std::string Where(const std::string& path, int64_t line) {
  return path + ":" + std::to_string(line);
}

}  // namespace

Result<CsvTable> ParseCsv(std::string_view bytes, const std::string& path) {
  const DecodedText decoded = DecodeUnicodeText(bytes);  // BOMs, UTF-16, UTF-32
  const std::string_view text = decoded.text;
  CsvTable table;
  table.path = path;
  table.delimiter = SniffDelimiter(text);
  const char delim = table.delimiter;

  std::vector<std::string> record;
  std::string field;
  int64_t line = 1;
  int64_t record_line = 1;
  bool header_done = false;

  auto finish_field = [&]() {
    record.push_back(Utf8OrWindows1252(field, &table.transcoded_fields));
    field.clear();
  };
  auto finish_record = [&]() -> Status {
    const bool blank = record.size() == 1 && record[0].empty();
    if (blank) {
      record.clear();
      return Status::Ok();
    }
    if (!header_done) {
      std::unordered_set<std::string> seen;
      for (size_t i = 0; i < record.size(); ++i) {
        std::string name = record[i];
        while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
        while (!name.empty() && (name.front() == ' ' || name.front() == '\t')) name.erase(0, 1);
        if (name.empty()) {
          return Status::InvalidArgument(Where(path, record_line) + ": header field " +
                                         std::to_string(i + 1) + " has no name");
        }
        if (!seen.insert(name).second) {
          return Status::InvalidArgument(Where(path, record_line) + ": column \"" +
                                         EscapeForMessage(name) + "\" appears twice in the header");
        }
        table.columns.push_back(std::move(name));
      }
      header_done = true;
    } else if (record.size() != table.columns.size()) {
      const bool more = record.size() > table.columns.size();
      return Status::InvalidArgument(
          Where(path, record_line) + ": " + std::to_string(record.size()) +
          " fields, the header has " + std::to_string(table.columns.size()) +
          (more ? " (extra field after \"" + EscapeForMessage(table.columns.back()) + "\")"
                : " (missing \"" + EscapeForMessage(table.columns[record.size()]) + "\" and after)"));
    } else {
      table.rows.push_back(std::move(record));
      table.row_lines.push_back(record_line);
    }
    record.clear();
    return Status::Ok();
  };

  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    // At the start of a field.
    if (text[i] == '"') {
      const int64_t open_line = line;
      ++i;
      while (true) {
        if (i >= n) {
          return Status::InvalidArgument(Where(path, open_line) +
                                         ": quoted field never closed (opened here)");
        }
        const char c = text[i];
        if (c == '"') {
          if (i + 1 < n && text[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        if (c == '\n') ++line;
        field += c;
        ++i;
      }
      // Text after the closing quote up to the delimiter is kept (lenient).
      while (i < n && text[i] != delim && text[i] != '\n' && text[i] != '\r') field += text[i++];
    } else {
      while (i < n && text[i] != delim && text[i] != '\n' && text[i] != '\r') field += text[i++];
    }
    if (i >= n) {
      finish_field();
      FLOWRAG_RETURN_IF_ERROR(finish_record());
      break;
    }
    if (text[i] == delim) {
      finish_field();
      ++i;
      if (i >= n) {  // trailing delimiter: one more empty field
        finish_field();
        FLOWRAG_RETURN_IF_ERROR(finish_record());
      }
      continue;
    }
    // End of record: \r\n, \n or a lone \r.
    if (text[i] == '\r') ++i;
    if (i < n && text[i] == '\n') ++i;
    finish_field();
    FLOWRAG_RETURN_IF_ERROR(finish_record());
    ++line;
    record_line = line;
  }
  if (!header_done) return Status::InvalidArgument(path + ": empty file (expected a header row)");
  return table;
}

Result<CsvTable> ReadCsvFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return Status::IoError(path + ": read failed");
  return ParseCsv(buf.str(), path);
}

}  // namespace flowrag
