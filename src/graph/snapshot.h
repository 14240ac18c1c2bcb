// Snapshot: the immutable in-memory view that queries read (DESIGN.md). It
// is built from the store in one pass and never changes; the engine swaps in
// a new one after writes, so readers never block and never see half a change.
//
// Holds: documents and passages (ids, offsets, texts), the BM25 inverted
// index over "title\ntext" of each passage, the dense passage vectors in a
// VectorIndex, the knowledge graph, and the embedder that embeds queries
// into the same space.
//
// Opening fast: the BM25 postings, the passage vectors, the graph rows and
// the graph's vectors are read from persisted snapshot parts when the store
// holds valid ones for its current generation (graph/graph_io.h); whatever
// is missing, stale or damaged is derived from the rows instead, and a
// snapshot built with `persistable` can then write it back (PersistParts).
// Documents and passages are always read from their rows (2wiki: 20 ms).
// A snapshot from parts and one from rows are equal: same arrays, so every
// query answers bit-identically (tests/snapshot_persist_test.cc).
//
// Measured (2wiki, 6,119 passages, 45k entities, 204k facts, 2 cores,
// release build): see doc/storage.md "Snapshot parts".
//
// Passages are addressed by a dense index 0..num_passages()-1 in store id
// order. Thread-safety: immutable after Build (PersistParts and Derived
// synchronise internally); share via shared_ptr<const Snapshot>.
#ifndef FLOWRAG_GRAPH_SNAPSHOT_H_
#define FLOWRAG_GRAPH_SNAPSHOT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "embed/embedder.h"
#include "flowrag/status.h"
#include "graph/graph_io.h"
#include "graph/knowledge_graph.h"
#include "flowrag/types.h"
#include "text/bm25_index.h"
#include "vector/vector_index.h"

namespace flowrag {

class Store;
class Snapshot;

struct SnapshotDocument {
  int64_t id = 0;
  std::string external_id;
  std::string title;
  std::string text;
};

struct SnapshotPassage {
  int64_t id = 0;
  uint32_t document = 0;  // index into documents()
  int32_t ordinal = 0;
  uint32_t begin = 0;
  uint32_t end = 0;
};

struct SnapshotOptions {
  VectorIndexOptions vector;
  // Model id whose stored embeddings back the dense index ("" = no dense index).
  std::string dense_model;
  // Read persisted parts when valid (off: everything from rows).
  bool use_parts = true;
  // Keep what was rebuilt so that PersistParts can write it (the graph rows,
  // serialised before the graph is built from them: ~30 MB on 2wiki).
  bool persistable = false;
  // An earlier snapshot of the same store: the graph texts it holds vectors
  // for are not embedded again (an insert embeds only its new texts).
  std::shared_ptr<const Snapshot> previous;
};

struct SnapshotBuildStats {
  double seconds = 0.0;
  double graph_seconds = 0.0;
  size_t passages_without_vectors = 0;
  int64_t generation = 0;           // the store generation the snapshot shows
  size_t graph_texts_embedded = 0;  // graph texts embedded (not read or reused)
  // What became of each part (graph_io.h kBm25Part, ...), with the reason
  // when one could not be used.
  std::map<std::string, PartState> parts;
  std::vector<std::string> part_errors;
  // Wall seconds per phase: "documents", "bm25", "passage_vectors",
  // "graph_rows", "graph_vectors", "graph_build".
  std::map<std::string, double> phase_seconds;
};

class Snapshot {
 public:
  // Reads the store. `embedder` embeds queries for the dense index (may be
  // null when options.dense_model is empty).
  static Result<std::shared_ptr<const Snapshot>> Build(Store& store,
                                                       std::shared_ptr<Embedder> embedder,
                                                       const SnapshotOptions& options,
                                                       SnapshotBuildStats* stats = nullptr);

  size_t num_passages() const { return passages_.size(); }
  size_t num_documents() const { return documents_.size(); }
  const SnapshotPassage& passage(uint32_t i) const { return passages_[i]; }
  const SnapshotDocument& document_of(uint32_t passage) const {
    return documents_[passages_[passage].document];
  }
  std::string_view PassageText(uint32_t i) const;
  // Passage i as the public API reports it, with `score`.
  ScoredPassage Scored(uint32_t i, double score) const;
  const std::vector<SnapshotDocument>& documents() const { return documents_; }

  const Bm25Index& bm25() const { return bm25_; }
  // Null when the store has no embeddings for the dense model.
  const VectorIndex* dense() const { return dense_.get(); }
  Embedder* embedder() const { return embedder_.get(); }
  // The knowledge graph; null when nothing has been extracted yet.
  const KnowledgeGraph* graph() const { return graph_.get(); }
  const std::string& dense_model() const { return dense_model_; }

  // The store generation this snapshot was built from, and how it was built.
  int64_t generation() const { return stats_.generation; }
  const SnapshotBuildStats& build_stats() const { return stats_; }

  // Writes the parts this snapshot had to rebuild (built with `persistable`)
  // to `store`, if the store is still at this snapshot's generation; else
  // writes nothing (a later snapshot will). Afterwards the kept graph rows
  // are released. Returns the number of parts written. Safe to call from
  // any thread, at most one write at a time; repeat calls write nothing.
  Result<size_t> PersistParts(Store& store) const;

  // Data an upper layer derives from this snapshot once and shares between
  // queries (retrieval's GraphQueryIndex), keyed by `tag` (the address of
  // something unique to the caller): `make` runs on first use, concurrent
  // first uses wait for it, and the result lives as long as the snapshot.
  std::shared_ptr<const void> Derived(const void* tag,
                                      const std::function<std::shared_ptr<const void>()>& make) const;

 private:
  Status BuildAt(Store& store, const SnapshotOptions& options, bool use_parts);
  std::vector<SnapshotDocument> documents_;
  std::vector<SnapshotPassage> passages_;
  Bm25Index bm25_;
  std::unique_ptr<VectorIndex> dense_;
  std::shared_ptr<Embedder> embedder_;
  std::string dense_model_;
  std::shared_ptr<const KnowledgeGraph> graph_;
  SnapshotBuildStats stats_;

  // Parts to write back (PersistParts).
  mutable std::mutex persist_mu_;
  mutable bool persist_bm25_ = false, persist_passages_ = false, persist_vectors_ = false;
  mutable std::string pending_graph_rows_;  // serialised; empty: nothing to write

  struct DerivedEntry {
    std::once_flag once;
    std::shared_ptr<const void> value;
  };
  mutable std::mutex derived_mu_;
  mutable std::map<const void*, std::shared_ptr<DerivedEntry>> derived_;
};

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_SNAPSHOT_H_
