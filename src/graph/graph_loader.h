// Loads the store's graph tables into a KnowledgeGraph for a snapshot: the
// path a snapshot takes when its persisted parts (graph/graph_io.h) are
// missing or stale. Reads the store through SnapshotSource (storage/store.h).
#ifndef FLOWRAG_GRAPH_GRAPH_LOADER_H_
#define FLOWRAG_GRAPH_GRAPH_LOADER_H_

#include <memory>
#include <string>
#include <unordered_map>

#include "embed/embedder.h"
#include "graph/knowledge_graph.h"
#include "storage/store.h"

namespace flowrag {

struct GraphLoadOptions {
  // The embedder of the dense model (null = no vectors). A local embedder
  // embeds graph texts here (into sparse rows, a batch at a time); others'
  // vectors come from the store's cache (dense).
  Embedder* embedder = nullptr;
  VectorIndexOptions vector;
  // An earlier graph whose vectors were made by model `previous_model`: a
  // text it holds is not embedded again when that is the embedder's model.
  const KnowledgeGraph* previous = nullptr;
  std::string previous_model;
};

// Vectors of `texts` under `embedder`: computed when it is local, else read
// from the cache (zero rows where nothing is cached). For index runs
// (indexing/graph_extras.h); a snapshot's loader reads the same vectors
// through its SnapshotSource.
Result<FloatMatrix> GraphTextVectors(EmbeddingCache& store, Embedder& embedder,
                                     const std::vector<std::string>& texts);

// The graph tables as builder input, mapped to kind-local indexes
// (`passage_index`: store passage id → snapshot passage index); no vectors.
// Corruption when a row refers to a missing passage, entity or relation.
// Entity names empty when the store has no entities. O(rows).
Result<KnowledgeGraph::Input> LoadGraphRows(
    SnapshotSource& store, const std::unordered_map<int64_t, uint32_t>& passage_index);

// Fact texts (graph/graph_texts.h FactText) of every fact from its
// entities' names and relation, deduplicated in fact order: sets
// rows->fact_text and rows->fact_texts. O(facts · text length).
void AssignFactTexts(KnowledgeGraph::Input* rows);

// The vectors of `rows`' texts (empty without an embedder). *embedded counts
// the texts a local embedder embedded (the others were reused).
Result<GraphVectors> LoadGraphVectors(SnapshotSource& store, const KnowledgeGraph::Input& rows,
                                      const GraphLoadOptions& options, size_t* embedded);

// LoadGraphRows + LoadGraphVectors + KnowledgeGraph::Build.
// `passage_index` maps store passage ids to snapshot passage indexes;
// `passage_vectors` (rows = snapshot passages, may be empty) feed abstractness.
// Returns null when the store has no entities.
Result<std::shared_ptr<const KnowledgeGraph>> LoadKnowledgeGraph(
    SnapshotSource& store, const std::unordered_map<int64_t, uint32_t>& passage_index,
    const FloatMatrix& passage_vectors, const GraphLoadOptions& options);

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_GRAPH_LOADER_H_
