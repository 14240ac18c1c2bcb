// LocalFacts: scoring only the facts near a query instead of all of them.
//
// HippoRAG 2 scores every fact against the query; on 2wiki (122k fact texts,
// ~10 M non-zeros in the built-in embedder's sparse vectors) that scan is
// three quarters of a ppr query. The facts that seed a walk are, in
// practice, stated by the passages the query already matches or name an
// entity the query names, so the local fact channel scores only the fact
// texts stated in the best passages of the hybrid prior and those of the
// named entities (seeding.h FactSeedOptions::local_passages). Measured
// (ppr Recall@5, offline, 20 passages): 2wiki-train 93.5 → 93.8,
// musique-train 70.6 → 70.6, hotpotqa-train 93.0 → 93.0, medical 96.3 →
// 97.0, at a few hundred fact texts per query instead of 122k.
//
// Per snapshot, derived on first use (Snapshot::Derived): per passage, the
// fact texts it states (the candidates, whichever way they are scored) and,
// when the graph has a fact index, the fact-text vectors as rows (the
// transpose of a sparse fact index, 6 bytes per non-zero: 16-bit
// dimensions; 2wiki's 10 M non-zeros take 60 MB, and a cold `flowrag query`
// peaks under 300 MiB with them; a flat index is read in place). The BM25
// channel (retrieval/fact_bm25.h) scores the same candidates by their text.
// O(non-zeros + fact sources) to build.
//
// Persisted: the snapshot's segment keeps these arrays (ExportArrays, under
// "lf."; graph/snapshot_segment.h), so a store opened from its segment adopts
// them in place (AdoptArrays: O(arrays) checks, no transpose) instead of
// building them at the first query (2wiki: 21% of a cold `flowrag query`).
//
// Thread-safety: immutable once built; share through the snapshot.
#ifndef FLOWRAG_RETRIEVAL_LOCAL_FACTS_H_
#define FLOWRAG_RETRIEVAL_LOCAL_FACTS_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/array_io.h"
#include "common/flat_array.h"
#include "graph/snapshot.h"
#include "retrieval/seeding.h"
#include "vector/flat_index.h"

namespace flowrag {

class LocalFacts {
 public:
  // Null when the snapshot has no graph. has_vectors() is false when the
  // graph has no fact index, or one that is neither sparse (of at most
  // 65,536 dimensions) nor flat (an HNSW index: the vector channel then
  // searches it globally).
  static std::shared_ptr<const LocalFacts> For(const Snapshot& snapshot);

  // How the snapshot's segment keeps it (Snapshot::Derived adopts it from
  // there when present, else builds it). Bump `format` when Build changes.
  static const PersistentDerived& Persistence();

  // Writes the arrays under "lf.".
  Status ExportArrays(ArraySink& sink) const;
  // The arrays of ExportArrays for `snapshot`'s graph, borrowed: Corruption
  // naming the array when an offset or index is out of its range (fact
  // texts, passages, the fact index's dimension); the rows only when the
  // graph's fact index is a sparse one (a missing array: NotFound). O(arrays).
  static Result<std::shared_ptr<const LocalFacts>> AdoptArrays(const Snapshot& snapshot,
                                                               const ArraySource& source);

  // Fact texts stated in `passages` or by a fact of one of `entities`
  // (entity indexes), ascending, each once. O(their facts).
  std::vector<uint32_t> Candidates(const KnowledgeGraph& graph, std::span<const uint32_t> passages,
                                   std::span<const uint32_t> entities) const;

  // True when Best can score fact texts by their vectors.
  bool has_vectors() const { return flat_ != nullptr || row_offsets_.size() > 0; }

  // The best `k` of `candidates` by cosine with `query` (dimension of the
  // fact index), those scoring > 0 only; best first, ties by fact text id.
  // None without vectors. O(Σ non-zeros of the candidates + |candidates| log k).
  std::vector<FactHit> Best(std::span<const uint32_t> candidates, const float* query,
                            size_t k) const;

 private:
  // Null when the graph's fact index suits neither form (has_vectors above).
  static const VectorIndex* UsableIndex(const KnowledgeGraph* graph);
  void Build(const KnowledgeGraph& graph);
  double Dot(uint32_t text, const float* query) const;

  // The sparse fact index transposed: row t's non-zeros are
  // (dims_, values_)[row_offsets_[t], row_offsets_[t + 1]); empty without one.
  FlatArray<uint64_t> row_offsets_;
  FlatArray<uint16_t> dims_;
  FlatArray<float> values_;
  const FlatIndex* flat_ = nullptr;  // or a flat one, read in place
  FlatArray<uint64_t> passage_offsets_;
  FlatArray<uint32_t> passage_texts_;  // fact texts stated by each passage
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_LOCAL_FACTS_H_
