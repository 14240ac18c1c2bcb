// Seed selection by maximum keyword similarity (QAFD-RAG §2.2, Algorithm 1,
// Eq. 1–3) and the per-graph query-time data the graph methods share.
//
// Eq. 1: score(v) = max_i H_sim(e_{q,i}, e_v) over the query keywords'
// embeddings e_{q,i} and the entity-name embeddings e_v (cosine: all vectors
// are L2-normalised). Eq. 2: the N highest-scoring entities, ties by entity
// index. Implemented as one exact top-N search of the entity index per
// keyword followed by a max over the union: a node in the global top N by
// max-score is in the top N of the keyword that attains its max, so the
// union contains the answer. Entities scoring <= 0 against every keyword
// (no shared feature) are never seeds. O(|K|·(|V|·d or postings) + |V| log N).
//
// Thread-safety: all functions are thread-safe; GraphQueryIndex is immutable
// once returned.
#ifndef FLOWRAG_RETRIEVAL_SEEDS_H_
#define FLOWRAG_RETRIEVAL_SEEDS_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "common/matrix.h"
#include "flowrag/status.h"
#include "graph/knowledge_graph.h"
#include "graph/snapshot.h"
#include "graph_algo/ppr.h"
#include "retrieval/keywords.h"

namespace flowrag {

struct Seed {
  uint32_t entity = 0;  // entity index (node id = graph.EntityNode(entity))
  float score = 0.0f;   // Eq. 1
  uint32_t keyword = 0; // index of the keyword attaining the max
};

// Eq. 1–2 over the graph's entity index. `keyword_vectors` rows are
// L2-normalised keyword embeddings of the entity index's dimension.
// FailedPrecondition when the graph has no entity vectors or the dimensions
// differ. Result: best first, at most n.
//
// Offline refinements (both off by default, i.e. the paper's Eq. 1–2):
//   specificity  score × ln(1 + P/df_v) / ln(1 + P), df_v = passages
//                mentioning v, P = passages: an entity every passage names
//                ("Film") is weak evidence even when a keyword equals it
//                seeds). Selection and ranking use the product.
//   min_ratio    seeds scoring below min_ratio × the best score are dropped
//                (the best stays).
//   named        entities the query names exactly (keywords.h
//                QueryKeywords::matched_entities): seeds with score 1 (the
//                largest cosine), whatever their specificity.
struct SeedSelection {
  size_t n = 40;
  double min_ratio = 0.0;
  bool specificity = false;
  std::span<const uint32_t> named;
};
Result<std::vector<Seed>> SelectSeeds(const KnowledgeGraph& graph,
                                      const FloatMatrix& keyword_vectors,
                                      const SeedSelection& selection);
inline Result<std::vector<Seed>> SelectSeeds(const KnowledgeGraph& graph,
                                             const FloatMatrix& keyword_vectors, size_t n) {
  return SelectSeeds(graph, keyword_vectors, SeedSelection{n, 0.0, false, {}});
}

// Query-time data derived from a snapshot's graph, built once per snapshot
// on first use (Snapshot::Derived) and shared by every query and retriever
// reading that snapshot; freed with it:
//   - the entity-name token trie (known names in queries, keywords.h);
//   - the entity-name vectors as sparse rows, so query-aware edge weights
//     can compare any two nodes (QAFD-RAG Eq. 4–5): the graph's own rows
//     (KnowledgeGraph::entity_vectors, persisted with the snapshot), present
//     when the built-in embedder made them; with a remote embedder they are
//     absent and the weights fall back to the structural-only form.
// The trie follows retrieval code that changes with the methods (title
// aliases, keywords.h), so it is derived, not persisted (2wiki: 45k names, 0.1 s); the
// trie is carried over to a snapshot that only adds passages.
// Lifetime: valid while the snapshot it came from lives.
class GraphQueryIndex {
 public:
  static std::shared_ptr<const GraphQueryIndex> For(const Snapshot& snapshot);

  const EntityNameMatcher& names() const { return *names_; }
  // Rows = entities; null when unavailable.
  const SparseRows* entity_vectors() const { return entity_vectors_; }
  double build_seconds() const { return build_seconds_; }

 private:
  void Build(const Snapshot& snapshot);

  const KnowledgeGraph* graph_ = nullptr;  // owned by the snapshot
  // Depends on the entities only: shared with snapshots that extend this
  // one by passages (Snapshot::DerivedFromEntities).
  std::shared_ptr<const EntityNameMatcher> names_ = std::make_shared<EntityNameMatcher>();
  const SparseRows* entity_vectors_ = nullptr;  // owned by the snapshot's graph
  double build_seconds_ = 0.0;
};

// Embeds texts with the snapshot's embedder (FailedPrecondition without one).
Result<FloatMatrix> EmbedTexts(const Snapshot& snapshot, const std::vector<std::string>& texts);

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_SEEDS_H_
