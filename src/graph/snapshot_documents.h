// A snapshot's documents and passages as segment arrays, so that a store
// opened from its snapshot segment borrows them in place instead of reading
// every document from the store (at 10^6 passages 3.7 s and 770 MiB of
// private memory, doc/scale.md). The segment holds them for the store
// generation it was written at, so they are the store's documents then.
//
//   doc.id          int64, one per document, ascending (store ids)
//   doc.ext.*       the external ids (a string arena, common/array_io.h)
//   doc.title.*     the titles
//   doc.text.*      the texts
//   doc.brk.o       uint64 offsets (documents + 1) into doc.brk
//   doc.brk         uint32 page breaks of each document (PageBreaks)
//   psg.id          int64, one per passage, ascending (store ids)
//   psg.doc         uint32, the passage's document (an index into doc.id)
//   psg.ord         int32, its ordinal in its document
//   psg.beg, psg.end  uint32, its bytes [beg, end) of the document's text
//
// Thread-safety: pure functions.
#ifndef FLOWRAG_GRAPH_SNAPSHOT_DOCUMENTS_H_
#define FLOWRAG_GRAPH_SNAPSHOT_DOCUMENTS_H_

#include <string>
#include <vector>

#include "common/array_io.h"
#include "flowrag/status.h"
#include "graph/snapshot.h"

namespace flowrag {

// Writes the arrays above. O(documents + passages + text bytes).
Status ExportSnapshotDocuments(const SnapshotText& text, ArraySink& sink);
// True when `source` holds them (segments written before they were kept
// do not: their opens read the documents from the store).
bool HasSnapshotDocuments(const ArraySource& source);
// Sets `text`'s documents and passages (empty before) to those arrays,
// read in place: each element is made from them at its read
// (SnapshotDocuments is a BasedArray), its views borrowing the source's
// bytes (its keep()), so nothing is copied. Checks what a damaged or
// crafted file could make unsafe or inconsistent, Corruption naming the
// array: equal counts, ids ascending, a passage's document in range and
// its bytes inside that document's text, page break offsets. O(documents +
// passages) reads, no allocation per element; the texts are neither read
// nor verified here: their bytes are borrowed lazily
// (text->document_bytes), each range verified when it is read
// (CheckedText).
Status AdoptSnapshotDocuments(const ArraySource& source, SnapshotText* text);
// The arrays AdoptSnapshotDocuments borrows lazily: the texts' bytes.
std::vector<std::string> LazySnapshotDocumentArrays();

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_SNAPSHOT_DOCUMENTS_H_
