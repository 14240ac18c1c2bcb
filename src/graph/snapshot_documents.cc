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

// The adopted documents, read in place: each element built from the
// arrays at its read (O(1)), its views into the source (kept by `keep`).
class AdoptedDocuments final : public SnapshotDocuments::Base {
 public:
  FlatArray<int64_t> ids;
  StringArena external, titles, texts;  // texts lazy: only their sizes read here
  FlatArray<uint64_t> break_offsets;
  FlatArray<uint32_t> breaks;
  std::shared_ptr<const void> keep;

  size_t size() const override { return ids.size(); }
  SnapshotDocument At(size_t d) const override {
    const FlatArray<uint64_t>& offsets = texts.offsets();
    SnapshotDocument doc;
    doc.id = ids[d];
    doc.external_id = external[d];
    doc.title = titles[d];
    doc.text = std::string_view(texts.bytes().data() + offsets[d], offsets[d + 1] - offsets[d]);
    doc.page_breaks =
        breaks.span().subspan(break_offsets[d], break_offsets[d + 1] - break_offsets[d]);
    doc.keep = keep;
    return doc;
  }
};

class AdoptedPassages final : public SnapshotPassages::Base {
 public:
  FlatArray<int64_t> ids;
  FlatArray<uint32_t> document, begin, end;
  FlatArray<int32_t> ordinal;

  size_t size() const override { return ids.size(); }
  SnapshotPassage At(size_t i) const override {
    return {ids[i], document[i], ordinal[i], begin[i], end[i]};
  }
};

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
  auto docs = std::make_shared<AdoptedDocuments>();
  FLOWRAG_ASSIGN_OR_RETURN(docs->ids, c::Get<int64_t>(source, "doc.id"));
  FLOWRAG_ASSIGN_OR_RETURN(docs->external, c::GetStrings(source, "doc.ext"));
  FLOWRAG_ASSIGN_OR_RETURN(docs->titles, c::GetStrings(source, "doc.title"));
  FLOWRAG_ASSIGN_OR_RETURN(docs->texts, c::GetLazyStrings(source, "doc.text"));
  FLOWRAG_ASSIGN_OR_RETURN(docs->break_offsets, c::Get<uint64_t>(source, "doc.brk.o"));
  FLOWRAG_ASSIGN_OR_RETURN(docs->breaks, c::Get<uint32_t>(source, "doc.brk"));
  const size_t D = docs->ids.size();
  if (docs->external.size() != D || docs->titles.size() != D || docs->texts.size() != D) {
    return Status::Corruption("doc.ext, doc.title, doc.text: not one string per document of doc.id");
  }
  FLOWRAG_RETURN_IF_ERROR(CheckAscending("doc.id", docs->ids));
  FLOWRAG_RETURN_IF_ERROR(
      c::CheckOffsets("doc.brk.o", docs->break_offsets, D, docs->breaks.size()));

  auto passages = std::make_shared<AdoptedPassages>();
  FLOWRAG_ASSIGN_OR_RETURN(passages->ids, c::Get<int64_t>(source, "psg.id"));
  FLOWRAG_ASSIGN_OR_RETURN(passages->document, c::Get<uint32_t>(source, "psg.doc"));
  FLOWRAG_ASSIGN_OR_RETURN(passages->ordinal, c::Get<int32_t>(source, "psg.ord"));
  FLOWRAG_ASSIGN_OR_RETURN(passages->begin, c::Get<uint32_t>(source, "psg.beg"));
  FLOWRAG_ASSIGN_OR_RETURN(passages->end, c::Get<uint32_t>(source, "psg.end"));
  const size_t P = passages->ids.size();
  FLOWRAG_RETURN_IF_ERROR(c::CheckSize<uint32_t>("psg.doc", passages->document, P));
  FLOWRAG_RETURN_IF_ERROR(c::CheckSize<int32_t>("psg.ord", passages->ordinal, P));
  FLOWRAG_RETURN_IF_ERROR(c::CheckSize<uint32_t>("psg.beg", passages->begin, P));
  FLOWRAG_RETURN_IF_ERROR(c::CheckSize<uint32_t>("psg.end", passages->end, P));
  FLOWRAG_RETURN_IF_ERROR(CheckAscending("psg.id", passages->ids));
  FLOWRAG_RETURN_IF_ERROR(c::CheckBelow("psg.doc", passages->document, D, "documents"));
  const FlatArray<uint64_t>& text_offsets = docs->texts.offsets();
  for (size_t i = 0; i < P; ++i) {
    const uint32_t d = passages->document[i];
    if (passages->begin[i] > passages->end[i] ||
        passages->end[i] > text_offsets[d + 1] - text_offsets[d]) {
      return Bad("psg.end", i, "bytes outside the passage's document");
    }
  }

  docs->keep = source.keep();
  text->document_bytes = docs->texts.bytes();
  text->documents = SnapshotDocuments(std::move(docs));
  text->passages = SnapshotPassages(std::move(passages));
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
