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
// fact texts it states (the candidates, whichever way they are scored). The
// vectors are the graph's fact index, read row by row in place: a
// HalfRowsIndex (vector/half_rows_index.h, the built-in embedder's and any
// sparse vectors': 16-bit dimensions and float16 values, 4 bytes per
// non-zero) or a FlatIndex (dense vectors). The BM25 channel
// (retrieval/fact_bm25.h) scores the same candidates by their text. O(fact
// sources) to build.
//
// Float16 against float values was measured (bench/retrieval_report.py
// --runs 1, every benchmark, offline and OpenIE graphs, the five graph
// methods): R@2 and R@5 identical on all 40 rows but one (medical OpenIE
// ppr R@2 88.1 -> 88.3). Int8 with a scale per row (quantized.h
// kInt8PerVector over the row's non-zeros; 3 bytes per non-zero + 4 per
// row): R@5 musique-train semflow 66.8 -> 66.2, hotpotqa-train ppr and qafd
// 93.0 -> 92.5, musique-dev ppr 64.1 -> 63.6; R@2 musique-dev qafd 44.8 ->
// 44.0, semflow 44.8 -> 44.2: over the 0.5-point budget of issue 34 (a
// hashed vector's char n-gram weights are small beside its word weights,
// and one scale per row rounds them coarsely). So float16.
//
// Until stop 50 these rows were LocalFacts' own copy ("lf.dims",
// "lf.halves"), transposed from a SparseIndex of float values that the graph
// kept for a global search: 2.4 GB and 3.5 GB of the snapshot segment at
// 10^6 passages. The rows are now the graph's only copy, bit-equal to the
// old ones (the halves of the same floats, dimensions ascending).
//
// Persisted: the snapshot's segment keeps the passage lists (ExportArrays,
// under "lf."; graph/snapshot_segment.h), so a store opened from its segment
// adopts them in place (AdoptArrays: O(arrays) checks) instead of building
// them at the first query (2wiki: 21% of a cold `flowrag query`).
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
#include "vector/half_rows_index.h"

namespace flowrag {

class LocalFacts {
 public:
  // Null when the snapshot has no graph. has_vectors() is false when the
  // graph has no fact index, or one that is neither half rows nor flat (an
  // HNSW index, or a SparseIndex of more than 65,536 dimensions: the vector
  // channel then searches it globally).
  static std::shared_ptr<const LocalFacts> For(const Snapshot& snapshot);

  // How the snapshot's segment keeps it (Snapshot::Derived adopts it from
  // there when present, else builds it). Bump `format` when Build changes.
  static const PersistentDerived& Persistence();

  // Writes the arrays under "lf.".
  Status ExportArrays(ArraySink& sink) const;
  // The arrays of ExportArrays for `snapshot`'s graph, borrowed: Corruption
  // naming the array when an offset or index is out of its range (fact
  // texts, passages). O(passages + their fact texts).
  static Result<std::shared_ptr<const LocalFacts>> AdoptArrays(const Snapshot& snapshot,
                                                               const ArraySource& source);

  // Fact texts stated in `passages` or by a fact of one of `entities`
  // (entity indexes), ascending, each once. O(their facts).
  std::vector<uint32_t> Candidates(const KnowledgeGraph& graph, std::span<const uint32_t> passages,
                                   std::span<const uint32_t> entities) const;

  // True when Best can score fact texts by their vectors: the graph's fact
  // index is a HalfRowsIndex or a FlatIndex (not an HNSW one).
  bool has_vectors() const { return half_ != nullptr || flat_ != nullptr; }

  // The best `k` of `candidates` by cosine with `query` (dimension of the
  // fact index), those scoring > 0 only; best first, ties by fact text id.
  // None without vectors. A row a segment holds damaged scores 0 (its
  // damage recorded: HalfRowsIndex::Row). O(Σ non-zeros of the candidates +
  // |candidates| log k).
  std::vector<FactHit> Best(std::span<const uint32_t> candidates, const float* query,
                            size_t k) const;

 private:
  // Points half_ or flat_ at the graph's fact index when it is of that kind.
  void UseIndexOf(const KnowledgeGraph* graph);
  void Build(const KnowledgeGraph& graph);
  double Dot(uint32_t text, const float* query) const;

  // The graph's fact index (the snapshot holding this also holds the graph).
  const HalfRowsIndex* half_ = nullptr;
  const FlatIndex* flat_ = nullptr;
  FlatArray<uint64_t> passage_offsets_;
  FlatArray<uint32_t> passage_texts_;  // fact texts stated by each passage
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_LOCAL_FACTS_H_
