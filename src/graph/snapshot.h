// Snapshot: the immutable in-memory view that queries read (DESIGN.md). It
// is built from the store in one pass and never changes; the engine swaps in
// a new one after writes, so readers never block and never see half a change.
//
// Holds: documents and passages (ids, offsets, texts), the BM25 inverted
// index over "title\ntext" of each passage, the dense passage vectors in a
// VectorIndex, and the embedder that embeds queries into the same space.
//
// Passages are addressed by a dense index 0..num_passages()-1 in store id
// order. Thread-safety: immutable; share via shared_ptr<const Snapshot>.
#ifndef FLOWRAG_GRAPH_SNAPSHOT_H_
#define FLOWRAG_GRAPH_SNAPSHOT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "embed/embedder.h"
#include "graph/knowledge_graph.h"
#include "flowrag/status.h"
#include "flowrag/types.h"
#include "text/bm25_index.h"
#include "vector/vector_index.h"

namespace flowrag {

class Store;

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
};

struct SnapshotBuildStats {
  double seconds = 0.0;
  double graph_seconds = 0.0;
  size_t passages_without_vectors = 0;
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

 private:
  std::vector<SnapshotDocument> documents_;
  std::vector<SnapshotPassage> passages_;
  Bm25Index bm25_;
  std::unique_ptr<VectorIndex> dense_;
  std::shared_ptr<Embedder> embedder_;
  std::string dense_model_;
  std::shared_ptr<const KnowledgeGraph> graph_;
};

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_SNAPSHOT_H_
