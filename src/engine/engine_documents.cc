// Engine::ListDocuments and Engine::GetDocument: the snapshot's documents.
#include <algorithm>
#include <charconv>

#include "common/encoding.h"
#include "engine/engine_impl.h"

namespace flowrag {
namespace {

StoredDocument Describe(const SnapshotDocument& d, bool with_text) {
  StoredDocument out;
  out.id = d.external_id;
  out.title = d.title;
  out.bytes = d.text.size();
  if (with_text) out.text = d.text;
  return out;
}

// A cursor is the decimal store id of the last document of a page.
Result<int64_t> ParseCursor(std::string_view cursor) {
  if (cursor.empty()) return int64_t{0};
  int64_t after = 0;
  const auto [end, ec] = std::from_chars(cursor.data(), cursor.data() + cursor.size(), after);
  if (ec != std::errc() || end != cursor.data() + cursor.size() || after < 0) {
    return Status::InvalidArgument("cursor \"" + EscapeForMessage(cursor, 40) +
                                   "\": not a cursor of this store's document list");
  }
  return after;
}

}  // namespace

Result<DocumentPage> EngineImpl::ListDocuments(std::string_view cursor, size_t limit) const {
  FLOWRAG_ASSIGN_OR_RETURN(const int64_t after, ParseCursor(cursor));
  if (limit == 0) return Status::InvalidArgument("limit: expected at least 1");
  const std::shared_ptr<const Snapshot> snap = snapshot();
  const std::vector<SnapshotDocument>& docs = snap->documents();  // in store id order
  auto it = std::upper_bound(docs.begin(), docs.end(), after,
                             [](int64_t id, const SnapshotDocument& d) { return id < d.id; });
  DocumentPage page;
  for (; it != docs.end() && page.documents.size() < limit; ++it) {
    page.documents.push_back(Describe(*it, /*with_text=*/false));
  }
  if (it != docs.end()) page.next_cursor = std::to_string(std::prev(it)->id);
  return page;
}

Result<StoredDocument> EngineImpl::GetDocument(std::string_view id) const {
  const std::shared_ptr<const Snapshot> snap = snapshot();
  for (const SnapshotDocument& d : snap->documents()) {
    if (d.external_id == id) return Describe(d, /*with_text=*/true);
  }
  return Status::NotFound("document \"" + EscapeForMessage(id, 80) + "\": no such document");
}

}  // namespace flowrag
