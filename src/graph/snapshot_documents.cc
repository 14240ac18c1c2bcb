#include "graph/snapshot_documents.h"

#include <string>
#include <vector>

#include "graph/array_checks.h"

namespace flowrag {

namespace {

using array_checks::Bad;

// Strictly ascending ids.
Status CheckAscending(std::string_view name, std::span<const int64_t> ids) {
  for (size_t i = 1; i < ids.size(); ++i) {
    if (ids[i] <= ids[i - 1]) return Bad(name, i, "ids not ascending");
  }
  return Status::Ok();
}

}  // namespace

Status ExportSnapshotDocuments(const SnapshotText& text, ArraySink& sink) {
  FLOWRAG_RETURN_IF_ERROR(text.document_bytes.VerifyAll());  // damage is not copied
  const size_t D = text.documents.size(), P = text.passages.size();
  std::vector<int64_t> ids;
  StringArena external, titles, texts;
  std::vector<uint64_t> break_offsets{0};
  std::vector<uint32_t> breaks;
  ids.reserve(D);
  break_offsets.reserve(D + 1);
  for (const SnapshotDocument& d : text.documents) {
    ids.push_back(d.id);
    external.Append(d.external_id);
    titles.Append(d.title);
    texts.Append(d.text);
    breaks.insert(breaks.end(), d.page_breaks.begin(), d.page_breaks.end());
    break_offsets.push_back(breaks.size());
  }
  FLOWRAG_RETURN_IF_ERROR(sink.Put<int64_t>("doc.id", ids));
  FLOWRAG_RETURN_IF_ERROR(sink.PutStrings("doc.ext", external));
  FLOWRAG_RETURN_IF_ERROR(sink.PutStrings("doc.title", titles));
  FLOWRAG_RETURN_IF_ERROR(sink.PutStrings("doc.text", texts, /*random=*/true));  // by passage
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint64_t>("doc.brk.o", break_offsets, /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>("doc.brk", breaks, /*random=*/true));
  std::vector<int64_t> passage_ids(P);
  std::vector<uint32_t> document(P), begin(P), end(P);
  std::vector<int32_t> ordinal(P);
  for (size_t i = 0; i < P; ++i) {
    const SnapshotPassage& p = text.passages[i];
    passage_ids[i] = p.id;
    document[i] = p.document;
    ordinal[i] = p.ordinal;
    begin[i] = p.begin;
    end[i] = p.end;
  }
  FLOWRAG_RETURN_IF_ERROR(sink.Put<int64_t>("psg.id", passage_ids));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>("psg.doc", document));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<int32_t>("psg.ord", ordinal));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>("psg.beg", begin));
  return sink.Put<uint32_t>("psg.end", end);
}

bool HasSnapshotDocuments(const ArraySource& source) { return source.Has("psg.id"); }

Status AdoptSnapshotDocuments(const ArraySource& source, SnapshotText* text) {
  namespace c = array_checks;
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<int64_t> ids, c::Get<int64_t>(source, "doc.id"));
  FLOWRAG_ASSIGN_OR_RETURN(StringArena external, c::GetStrings(source, "doc.ext"));
  FLOWRAG_ASSIGN_OR_RETURN(StringArena titles, c::GetStrings(source, "doc.title"));
  FLOWRAG_ASSIGN_OR_RETURN(StringArena texts, c::GetLazyStrings(source, "doc.text"));
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<uint64_t> break_offsets, c::Get<uint64_t>(source, "doc.brk.o"));
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<uint32_t> breaks, c::Get<uint32_t>(source, "doc.brk"));
  const size_t D = ids.size();
  if (external.size() != D || titles.size() != D || texts.size() != D) {
    return Status::Corruption("doc.ext, doc.title, doc.text: not one string per document of doc.id");
  }
  FLOWRAG_RETURN_IF_ERROR(CheckAscending("doc.id", ids));
  FLOWRAG_RETURN_IF_ERROR(c::CheckOffsets("doc.brk.o", break_offsets, D, breaks.size()));

  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<int64_t> passage_ids, c::Get<int64_t>(source, "psg.id"));
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<uint32_t> document, c::Get<uint32_t>(source, "psg.doc"));
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<int32_t> ordinal, c::Get<int32_t>(source, "psg.ord"));
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<uint32_t> begin, c::Get<uint32_t>(source, "psg.beg"));
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<uint32_t> end, c::Get<uint32_t>(source, "psg.end"));
  const size_t P = passage_ids.size();
  FLOWRAG_RETURN_IF_ERROR(c::CheckSize<uint32_t>("psg.doc", document, P));
  FLOWRAG_RETURN_IF_ERROR(c::CheckSize<int32_t>("psg.ord", ordinal, P));
  FLOWRAG_RETURN_IF_ERROR(c::CheckSize<uint32_t>("psg.beg", begin, P));
  FLOWRAG_RETURN_IF_ERROR(c::CheckSize<uint32_t>("psg.end", end, P));
  FLOWRAG_RETURN_IF_ERROR(CheckAscending("psg.id", passage_ids));
  FLOWRAG_RETURN_IF_ERROR(c::CheckBelow("psg.doc", document, D, "documents"));
  const FlatArray<uint64_t>& text_offsets = texts.offsets();
  auto text_bytes = [&](size_t d) { return text_offsets[d + 1] - text_offsets[d]; };
  for (size_t i = 0; i < P; ++i) {
    if (begin[i] > end[i] || end[i] > text_bytes(document[i])) {
      return Bad("psg.end", i, "bytes outside the passage's document");
    }
  }

  const std::shared_ptr<const void> keep = source.keep();
  for (size_t d = 0; d < D; ++d) {
    SnapshotDocument doc;
    doc.id = ids[d];
    doc.external_id = external[d];
    doc.title = titles[d];
    doc.text = std::string_view(texts.bytes().data() + text_offsets[d], text_bytes(d));  // lazy
    doc.page_breaks =
        breaks.span().subspan(break_offsets[d], break_offsets[d + 1] - break_offsets[d]);
    doc.keep = keep;
    text->documents.push_back(std::move(doc));
  }
  for (size_t i = 0; i < P; ++i) {
    text->passages.push_back({passage_ids[i], document[i], ordinal[i], begin[i], end[i]});
  }
  text->document_bytes = texts.bytes();
  return Status::Ok();
}

std::vector<std::string> LazySnapshotDocumentArrays() { return {"doc.text.b"}; }

std::string_view CheckedText(const SnapshotText& text, std::string_view view) {
  const FlatArray<char>& arena = text.document_bytes;
  if (!arena.lazy() || view.empty()) return view;
  const char* base = arena.data();
  if (view.data() < base || view.data() + view.size() > base + arena.size()) return view;
  if (!arena.Verify(static_cast<size_t>(view.data() - base), view.size()).ok()) return {};
  return view;
}

}  // namespace flowrag
