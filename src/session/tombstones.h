// Tombstones: documents deleted from the store that the published snapshot
// still holds. The store's delete can take seconds at 10^6 passages (its
// transaction recomputes the names of the hub entities the document names:
// 2 s in a profile of stop 51, doc/scale.md), and its exact
// snapshot (Snapshot::Remove: the graph and indexes without the document)
// longer still. The engine publishes the old snapshot's session with the
// document tombstoned before either (EngineImpl::DeleteDocument), so a
// delete is visible to queries as soon as it is asked for; the exact
// snapshot then replaces that session, or, when the store's delete fails,
// the session from before the tombstone comes back.
//
// Hidden while tombstoned: the document's passages in every ranked list,
// node score, subgraph edge and explanation path of a query (the retriever
// is asked for as many more passages as are hidden, so a query still gets
// its top_k), and the document in listings and lookups. Not hidden: its
// share of the snapshot's statistics (BM25 document frequencies, the
// diffusion's flow through its passages) and the graph browser, until the
// exact snapshot lands, as Lucene's deleted documents count in its term
// statistics until a merge.
//
// Thread-safety: immutable once made; shared by sessions.
#ifndef FLOWRAG_SESSION_TOMBSTONES_H_
#define FLOWRAG_SESSION_TOMBSTONES_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "graph/snapshot.h"
#include "retrieval/retriever.h"

namespace flowrag {

struct Tombstones {
  std::vector<uint32_t> documents;  // snapshot document indexes, ascending
  std::vector<uint32_t> passages;   // snapshot passage indexes, ascending

  bool HidesDocument(uint32_t d) const;
  bool HidesPassage(uint32_t p) const;
};

// `base` (null: none) with the document whose external id is `document_id`
// added; null when `snapshot` has no such document. O(documents + passages).
std::shared_ptr<const Tombstones> AddTombstone(const Snapshot& snapshot, const Tombstones* base,
                                               std::string_view document_id);

// Drops every hidden passage (as a passage and as a graph node: passages are
// the graph's first nodes) from `out`, then keeps its best `top_k` ranked.
void HideTombstoned(const Tombstones& tombstones, size_t top_k, RetrievalOutput* out);

}  // namespace flowrag

#endif  // FLOWRAG_SESSION_TOMBSTONES_H_
