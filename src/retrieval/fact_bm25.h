// FactBm25: Okapi BM25 over the knowledge graph's distinct fact texts, the
// text channel of fact seeding (seeding.h FactSearch::kBm25): a fact text is
// scored by the words it shares with the query instead of by the cosine of
// its embedding (GraphVectors::fact_index), so no fact vector is needed.
//
// Document t of the index is fact text t (KnowledgeGraph::FactTextOf); the
// tokeniser is the snapshot's passage BM25's (Snapshot::bm25(): the store's
// stemming language), for the fact texts and the queries alike; k1 and b are
// Bm25Params' defaults.
//
// Per snapshot, derived on first use (Snapshot::Derived) and kept in the
// snapshot's segment under "fb." (Persistence(): the Bm25Index arrays,
// text/bm25_index.h ExportArrays, each name prefixed), so an open adopts it
// in place. O(tokens of the fact texts) to build.
//
// Thread-safety: immutable once built; share through the snapshot.
#ifndef FLOWRAG_RETRIEVAL_FACT_BM25_H_
#define FLOWRAG_RETRIEVAL_FACT_BM25_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "common/array_io.h"
#include "graph/snapshot.h"
#include "retrieval/seeding.h"
#include "text/bm25_index.h"

namespace flowrag {

class FactBm25 {
 public:
  // The index of `graph`'s fact texts, tokenised with `tokenizer`.
  // O(tokens of the fact texts).
  static FactBm25 Build(const KnowledgeGraph& graph, const TokenizerOptions& tokenizer);

  // The snapshot's (derived once, or adopted from its segment); null when
  // it has no graph.
  static std::shared_ptr<const FactBm25> For(const Snapshot& snapshot);

  // How the snapshot's segment keeps it ("fb.*"). Bump `format` when Build
  // changes.
  static const PersistentDerived& Persistence();

  // Writes the index's arrays, each Bm25Index name prefixed with "fb.".
  Status ExportArrays(ArraySink& sink) const;
  // The arrays of ExportArrays, borrowed in place, for `snapshot`'s graph
  // (one document per fact text) and tokeniser: Bm25Index::AdoptArrays'
  // checks, Corruption naming the array. O(postings + fact texts).
  static Result<std::shared_ptr<const FactBm25>> AdoptArrays(const Snapshot& snapshot,
                                                             const ArraySource& source);

  const Bm25Index& index() const { return index_; }

  // The best `k` fact texts of the whole graph by BM25 with `query`, those
  // scoring > 0 only; best first, ties by fact text id (Bm25Index::Search).
  // *candidates_scored (when set) counts the fact texts sharing a term.
  // O(postings of the query's terms + matches · log k).
  std::vector<FactHit> Search(std::string_view query, size_t k,
                              size_t* candidates_scored = nullptr) const;

  // The best `k` of `candidates` (fact text ids, ascending, distinct) by
  // BM25 with `query`: the scores Search gives them, bit for bit; those
  // scoring > 0 only; best first, ties by fact text id. Each query term's
  // postings are searched for the candidates (both ascending), so the cost
  // does not grow with the corpus: O(terms · |candidates| · log df +
  // |candidates| log k).
  std::vector<FactHit> Best(std::span<const uint32_t> candidates, std::string_view query,
                            size_t k) const;

 private:
  Bm25Index index_;
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_FACT_BM25_H_
