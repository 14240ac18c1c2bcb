// DocumentTexts: passage text sliced from its document's text, reading each
// document once however many passages it has. Selecting
// substr(d.text, begin, len) per passage made SQLite read the whole
// document per passage: indexing one 4 MiB document took 61 s and 8 MiB did
// not finish (issue 21). Queries list passages in id order, so a
// document's passages come together and one cached text serves them all.
//
// Offsets are bytes of the UTF-8 text, clamped to it as SQL substr() does.
// Thread-safety: one object per query, under the store's lock.
#ifndef FLOWRAG_STORAGE_DOCUMENT_TEXTS_H_
#define FLOWRAG_STORAGE_DOCUMENT_TEXTS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "flowrag/status.h"
#include "sqldb/connection.h"

namespace flowrag {

class DocumentTexts {
 public:
  static Result<DocumentTexts> Prepare(SqlConnection& conn);

  // Bytes [begin, end) of the text of document `document_rowid`.
  Result<std::string_view> Slice(int64_t document_rowid, int64_t begin, int64_t end);
  // Documents read from the store so far.
  size_t documents_read() const { return documents_read_; }

 private:
  DocumentTexts(Statement select, std::string path)
      : select_(std::move(select)), path_(std::move(path)) {}
  Statement select_;
  std::string path_;
  int64_t cached_ = -1;
  std::string text_;
  size_t documents_read_ = 0;
};

}  // namespace flowrag

#endif  // FLOWRAG_STORAGE_DOCUMENT_TEXTS_H_
