// GraphQueryIndex: the query-time data the graph methods derive from a
// snapshot's graph (the entity-name matcher, the entity-name vectors), built
// once per snapshot and shared.
//
// Thread-safety: For() is thread-safe; the index is immutable once returned.
#ifndef FLOWRAG_RETRIEVAL_QUERY_INDEX_H_
#define FLOWRAG_RETRIEVAL_QUERY_INDEX_H_

#include <memory>

#include "graph/knowledge_graph.h"
#include "graph/snapshot.h"
#include "retrieval/keywords.h"

namespace flowrag {

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

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_QUERY_INDEX_H_
