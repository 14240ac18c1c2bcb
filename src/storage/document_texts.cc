#include "storage/document_texts.h"

#include <algorithm>

namespace flowrag {

Result<DocumentTexts> DocumentTexts::Prepare(SqlConnection& conn) {
  FLOWRAG_ASSIGN_OR_RETURN(Statement s, conn.Prepare("SELECT text FROM documents WHERE id = ?"));
  return DocumentTexts(std::move(s), conn.name());
}

Result<std::string_view> DocumentTexts::Slice(int64_t document_rowid, int64_t begin, int64_t end) {
  if (document_rowid != cached_) {
    select_.Reset();
    select_.Bind(1, document_rowid);
    FLOWRAG_ASSIGN_OR_RETURN(bool row, select_.Step());
    if (!row) {
      return Status::Corruption(path_ + ": passage of a missing document (rowid " +
                                std::to_string(document_rowid) + ")");
    }
    text_.assign(select_.Text(0));
    cached_ = document_rowid;
    ++documents_read_;
  }
  const auto size = static_cast<int64_t>(text_.size());
  const int64_t from = std::clamp<int64_t>(begin, 0, size);
  const int64_t to = std::clamp<int64_t>(end, from, size);
  return std::string_view(text_).substr(static_cast<size_t>(from), static_cast<size_t>(to - from));
}

}  // namespace flowrag
