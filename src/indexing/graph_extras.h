// Graph extras, the phase of an index run after extraction
// (index_context.h): embedding the graph's texts and maintaining SYNONYM
// edges. Both are resumable: they do only what the store shows as missing.
#ifndef FLOWRAG_INDEXING_GRAPH_EXTRAS_H_
#define FLOWRAG_INDEXING_GRAPH_EXTRAS_H_

#include "embed/embedder.h"
#include "indexing/index_context.h"

namespace flowrag {

// HippoRAG 2 links entities whose embeddings have cosine ≥ 0.8 (its
// synonymy_edge_sim_threshold); we keep up to top_k such neighbours each.
struct SynonymOptions {
  size_t top_k = 100;
  double threshold = 0.8;
  // Lexical (built-in) vectors: candidates share a word naming at most this
  // many entities (see UpdateSynonyms).
  size_t max_word_entities = 2000;
};

// Embeds every graph text (entity names, descriptions, fact texts, relation
// texts; graph/graph_texts.h) without a cached vector for the embedder's
// model, in batches committed one by one. *embedded = texts embedded.
// A local embedder's (the built-in one's) are computed when snapshots are
// built instead: nothing to do.
Status EmbedGraphTexts(GraphSource& graph, EmbeddingCache& cache, Embedder& embedder,
                       size_t batch_size, const ProgressCallback& progress, size_t* embedded);

// Recomputes the SYNONYM edges of the entities created or renamed since the
// last call (Store::EntitiesNeedingSynonyms): only those are compared with
// the others, never all pairs again. Dense (model) vectors: exact kNN over
// all entity names. Lexical vectors: the entities sharing a word (above);
// equal scores are ordered by entity name and type, not id, so the top_k
// kept are the same whichever order (parallel) writers created them in.
Status UpdateSynonyms(const PhaseStores& stores, Embedder& embedder,
                      const SynonymOptions& options, size_t* entities_processed, size_t* edges);

// Both, as an index run ends: graph-text vectors in batches of 512, then the
// synonyms of new entities with the default SynonymOptions.
Status BuildGraphExtras(const PhaseStores& stores, Embedder& embedder,
                        const ProgressCallback& progress,
                        size_t* texts_embedded, size_t* synonym_edges);

}  // namespace flowrag

#endif  // FLOWRAG_INDEXING_GRAPH_EXTRAS_H_
