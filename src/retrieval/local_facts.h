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
// transpose of a sparse fact index; a flat index is read in place). The
// BM25 channel (retrieval/fact_bm25.h) scores the same candidates by their
// text. O(non-zeros + fact sources) to build.
//
// A sparse index's rows hold float16 values (vector/quantized.h
// FloatToHalf: relative error at most 2^-11 per value) and 16-bit
// dimensions, 4 bytes per non-zero: 2wiki's 10.6 M non-zeros take 43.8 MB
// in the snapshot segment instead of 65.0 MB as float (a warm-cache
// new-process `flowrag query --method qafd` peaks at 264 MiB RSS instead of
// 284 MiB). Issue 34 asks for the graph-text vectors compressed or replaced
// (seeding.h: BM25 in their place is not within 0.5 points everywhere), so
// these were measured (bench/retrieval_report.py
// --runs 1, every benchmark, offline and OpenIE graphs, the five graph
// methods) against float:
//   float16: R@2 and R@5 identical on all 40 rows but one (medical OpenIE
//            ppr R@2 88.1 -> 88.3);
//   int8 with a scale per row (quantized.h kInt8PerVector over the row's
//            non-zeros; 3 bytes per non-zero + 4 per row, 33.8 MB): R@5
//            musique-train semflow 66.8 -> 66.2, hotpotqa-train ppr and qafd
//            93.0 -> 92.5, musique-dev ppr 64.1 -> 63.6; R@2 musique-dev qafd
//            44.8 -> 44.0, semflow 44.8 -> 44.2: over the 0.5-point budget,
//            and no float copy to rescore from that reads a row cheaply (the
//            fact index is by dimension). A hashed vector's char n-gram
//            weights are small beside its word weights, and one scale per
//            row rounds them coarsely.
// So float16.
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
  // graph's fact index is a sparse one (a missing array: NotFound). From a
  // source that verifies lazily (a segment) the rows' dimensions and values
  // are borrowed unverified and each row is verified and checked when it is
  // scored (a row that fails scores 0 and its damage is recorded with the
  // source): O(offsets) instead of O(non-zeros) at adoption (at 10^6
  // passages 2.2 GB not read).
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
  // A lazily adopted row's bytes verified and its dimensions and values in
  // range (each time: a few hundred rows per query); false, and the damage
  // recorded, when not.
  bool RowReadable(uint32_t text, uint64_t first, uint64_t count) const;

  // The sparse fact index transposed: row t's non-zeros are
  // (dims_, halves_ as float16)[row_offsets_[t], row_offsets_[t + 1]);
  // empty without one.
  FlatArray<uint64_t> row_offsets_;
  FlatArray<uint16_t> dims_;
  FlatArray<uint16_t> halves_;
  size_t dimension_ = 0;  // the fact index's: every dims_ entry is below it
  const FlatIndex* flat_ = nullptr;  // or a flat one, read in place
  FlatArray<uint64_t> passage_offsets_;
  FlatArray<uint32_t> passage_texts_;  // fact texts stated by each passage
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_LOCAL_FACTS_H_
