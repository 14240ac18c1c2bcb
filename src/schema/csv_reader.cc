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

// One pass over the decoded text: fields (quoted or bare) into a record,
// records into the header and then the rows. One use.
class CsvParser {
 public:
  CsvParser(std::string_view text, const std::string& path) : text_(text), path_(path) {
    table_.path = path;
    table_.delimiter = SniffDelimiter(text);
  }

  Result<CsvTable> Run() {
    const char delim = table_.delimiter;
    const size_t n = text_.size();
    while (i_ < n) {
      // At the start of a field.
      if (text_[i_] == '"') FLOWRAG_RETURN_IF_ERROR(ReadQuoted());
      ReadBare();
      if (i_ >= n) {
        FinishField();
        FLOWRAG_RETURN_IF_ERROR(FinishRecord());
        break;
      }
      if (text_[i_] == delim) {
        FinishField();
        ++i_;
        if (i_ >= n) {  // trailing delimiter: one more empty field
          FinishField();
          FLOWRAG_RETURN_IF_ERROR(FinishRecord());
        }
        continue;
      }
      // End of record: \r\n, \n or a lone \r.
      if (text_[i_] == '\r') ++i_;
      if (i_ < n && text_[i_] == '\n') ++i_;
      FinishField();
      FLOWRAG_RETURN_IF_ERROR(FinishRecord());
      ++line_;
      record_line_ = line_;
    }
    if (!header_done_) {
      return Status::InvalidArgument(path_ + ": empty file (expected a header row)");
    }
    return std::move(table_);
  }

 private:
  // A quoted field up to its closing quote ("" is one quote; newlines
  // inside count as lines).
  Status ReadQuoted() {
    const size_t n = text_.size();
    const int64_t open_line = line_;
    ++i_;
    while (true) {
      if (i_ >= n) {
        return Status::InvalidArgument(Where(path_, open_line) +
                                       ": quoted field never closed (opened here)");
      }
      const char c = text_[i_];
      if (c == '"') {
        if (i_ + 1 < n && text_[i_ + 1] == '"') {
          field_ += '"';
          i_ += 2;
          continue;
        }
        ++i_;
        return Status::Ok();
      }
      if (c == '\n') ++line_;
      field_ += c;
      ++i_;
    }
  }

  // Text up to the delimiter or the end of the line (after a closing quote
  // too: kept, leniently).
  void ReadBare() {
    const size_t n = text_.size();
    while (i_ < n && text_[i_] != table_.delimiter && text_[i_] != '\n' && text_[i_] != '\r') {
      field_ += text_[i_++];
    }
  }

  void FinishField() {
    record_.push_back(Utf8OrWindows1252(field_, &table_.transcoded_fields));
    field_.clear();
  }

  // A blank line is skipped; the first record is the header; every other
  // one must have the header's width.
  Status FinishRecord() {
    const bool blank = record_.size() == 1 && record_[0].empty();
    if (blank) {
      record_.clear();
      return Status::Ok();
    }
    if (!header_done_) {
      FLOWRAG_RETURN_IF_ERROR(ReadHeader());
      header_done_ = true;
    } else if (record_.size() != table_.columns.size()) {
      const bool more = record_.size() > table_.columns.size();
      return Status::InvalidArgument(
          Where(path_, record_line_) + ": " + std::to_string(record_.size()) +
          " fields, the header has " + std::to_string(table_.columns.size()) +
          (more ? " (extra field after \"" + EscapeForMessage(table_.columns.back()) + "\")"
                : " (missing \"" + EscapeForMessage(table_.columns[record_.size()]) +
                      "\" and after)"));
    } else {
      table_.rows.push_back(std::move(record_));
      table_.row_lines.push_back(record_line_);
    }
    record_.clear();
    return Status::Ok();
  }

  // The column names: trimmed, non-empty and distinct.
  Status ReadHeader() {
    std::unordered_set<std::string> seen;
    for (size_t i = 0; i < record_.size(); ++i) {
      std::string name = record_[i];
      while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
      while (!name.empty() && (name.front() == ' ' || name.front() == '\t')) name.erase(0, 1);
      if (name.empty()) {
        return Status::InvalidArgument(Where(path_, record_line_) + ": header field " +
                                       std::to_string(i + 1) + " has no name");
      }
      if (!seen.insert(name).second) {
        return Status::InvalidArgument(Where(path_, record_line_) + ": column \"" +
                                       EscapeForMessage(name) + "\" appears twice in the header");
      }
      table_.columns.push_back(std::move(name));
    }
    return Status::Ok();
  }

  const std::string_view text_;
  const std::string& path_;
  CsvTable table_;
  std::vector<std::string> record_;
  std::string field_;
  size_t i_ = 0;             // the next byte of text_
  int64_t line_ = 1;         // the line of byte i_
  int64_t record_line_ = 1;  // the line the current record starts on
  bool header_done_ = false;
};

}  // namespace

Result<CsvTable> ParseCsv(std::string_view bytes, const std::string& path) {
  const DecodedText decoded = DecodeUnicodeText(bytes);  // BOMs, UTF-16, UTF-32
  return CsvParser(decoded.text, path).Run();
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
