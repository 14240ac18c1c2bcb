// Loads the store's graph tables into a KnowledgeGraph for a snapshot.
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
  // embeds graph texts here; others' vectors come from the store's cache.
  Embedder* embedder = nullptr;
  VectorIndexOptions vector;
};

// Vectors of `texts` under `embedder`: computed when it is local, else read
// from the cache (zero rows where nothing is cached).
Result<FloatMatrix> GraphTextVectors(Store& store, Embedder& embedder,
                                     const std::vector<std::string>& texts);

// `passage_index` maps store passage ids to snapshot passage indexes;
// `passage_vectors` (rows = snapshot passages, may be empty) feed abstractness.
// Returns null when the store has no entities.
Result<std::shared_ptr<const KnowledgeGraph>> LoadKnowledgeGraph(
    Store& store, const std::unordered_map<int64_t, uint32_t>& passage_index,
    const FloatMatrix& passage_vectors, const GraphLoadOptions& options);

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_GRAPH_LOADER_H_
