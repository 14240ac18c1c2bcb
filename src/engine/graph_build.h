// Graph build steps of an index run that come after extraction: embedding
// the graph's texts and maintaining SYNONYM edges. Both are resumable: they
// do only what the store shows as missing.
#ifndef FLOWRAG_ENGINE_GRAPH_BUILD_H_
#define FLOWRAG_ENGINE_GRAPH_BUILD_H_

#include "embed/embedder.h"
#include "storage/store.h"

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
Status EmbedGraphTexts(Store& store, Embedder& embedder, size_t batch_size, bool progress,
                       size_t* embedded);

// Recomputes the SYNONYM edges of the entities created or renamed since the
// last call (Store::EntitiesNeedingSynonyms): only those are compared with
// the others, never all pairs again. Dense (model) vectors: exact kNN over
// all entity names. Lexical vectors: the entities sharing a word (above);
// equal scores are ordered by entity name and type, not id, so the top_k
// kept are the same whichever order (parallel) writers created them in.
Status UpdateSynonyms(Store& store, Embedder& embedder, const SynonymOptions& options,
                      size_t* entities_processed, size_t* edges);

}  // namespace flowrag

#endif  // FLOWRAG_ENGINE_GRAPH_BUILD_H_
