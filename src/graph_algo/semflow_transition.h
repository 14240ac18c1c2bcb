// The SemFlow transition: SemFlowRAG's abstractness-guided directed walk
// (§3.3, A.2) as the authors' code builds it (github.com/KnowledgeXLab/
// SemFlowRAG, SemFlowRAG.py `build_directed_edge_weights`), as a
// TransitionSource (graph_algo/ppr.h) over the passages and entities of a
// KnowledgeGraph. The retriever (retrieval/semflow_retriever.h) chooses the
// options, the relevance Rel(v|q) and the reset vector, and solves the walk
// with PushSolver::SolveMemoized or PowerIteration.
//
// Rows, one transition per distinct neighbour:
//   - Passage–entity edges are bidirectional: weight 1 each (`walk_weights`
//     false), or the graph's walk-graph weight (graph/walk_graph.h). A
//     passage moves to its entities in proportion.
//   - An entity u gives each of its passages its edge weight and its entity
//     neighbours (RELATED_TO, plus SYNONYM with `synonyms`) together the
//     weight of an average passage edge (`one_share`), or one average
//     passage edge each (`one_share` false).
//   - Within the entity share, `down_share` goes to down-edges
//     (abstractness d_v ≤ d_u, KnowledgeGraph::Abstractness, §3.2 Eq. 1)
//     and the rest to up-edges (d_v > d_u). Without up-edges the down-edges
//     take all of it; without down-edges the up-edges keep 1 − down_share
//     and a self-loop holds down_share (`self_loop`, the authors' "A+"
//     rule), or without self_loop the up-edges take all of it. Without
//     `direction` all entity edges form one group and there is no self-loop.
//   - Within a group, edge u → v weighs max(s(u, v), floor) (`linear`) or
//     exp(s(u, v)) (softmax), normalised within the group, with
//     s(u, v) = Rel(v|q) − λ·|d_v − d_u| (Eq. 3); `query_similarity` false
//     drops Rel, `abstractness_penalty` false drops the λ term.
// Every non-empty row sums to 1 (up to rounding); an isolated node is
// dangling. Transition tags are EdgeKind values; the self-loop is tagged
// kRelatedTo.
//
// Complexity: Row(u) is O(degree(u)) plus one relevance call per entity
// neighbour; Degree(u) is O(1). Memory: O(1) beyond the graph.
// Thread-safety: immutable; Row() is as thread-safe as the relevance
// function.
#ifndef FLOWRAG_GRAPH_ALGO_SEMFLOW_TRANSITION_H_
#define FLOWRAG_GRAPH_ALGO_SEMFLOW_TRANSITION_H_

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "flowrag/status.h"
#include "graph/knowledge_graph.h"
#include "graph_algo/ppr.h"

namespace flowrag {

struct SemFlowTransitionOptions {
  double lambda = 1.0;               // λ of Eq. 3 (§3.3)
  double down_share = 0.9;           // share of the entity edges' mass on down-edges (A.2)
  bool direction = true;             // direction control (Table 4)
  bool query_similarity = true;      // Rel(v|q) in s(u, v) (Table 4)
  bool abstractness_penalty = true;  // λ|Δ| in s(u, v) (Table 4)
  bool linear = true;                // max(s, floor) (the authors' code); false: exp(s)
  bool one_share = true;             // the entity edges share one passage edge's weight
  bool walk_weights = true;          // passage edges carry the walk graph's weights
  bool self_loop = true;             // the A+ self-loop at abstractness minima
  double floor = 1e-6;               // linear weight floor (the authors' ε)
  bool synonyms = false;             // SYNONYM edges among the entity edges

  // InvalidArgument naming the option: λ ≥ 0, 0 ≤ down_share ≤ 1 and
  // floor > 0, each finite.
  Status Validate() const;
};

// Rel(v|q) of Eq. 2 for every entity, as the authors' code normalises it:
// max cosine of the entity's passages with the query (0 for an entity
// without passages), then clipped to the 1st–99th percentile over entities
// and min-max scaled (all 0.5 when that range is empty). O(MENTIONS +
// E log E).
std::vector<double> EntityRelevance(const KnowledgeGraph& graph,
                                    const std::vector<float>& passage_scores);

// Per-entity relevance in [0, 1] by entity index.
using RelevanceFn = std::function<double(uint32_t entity)>;

// The walk described above over the first num_passages + num_entities node
// ids. `abstractness` has one value per entity (empty: the graph's);
// `relevance` gives Rel(v|q) (empty function: Rel ≡ 0). Both, like `graph`,
// must outlive this object.
class SemFlowTransitions final : public TransitionSource {
 public:
  // InvalidArgument when the options are out of range (Validate) or
  // `abstractness` is neither empty nor one value per entity.
  static Result<SemFlowTransitions> Make(const KnowledgeGraph& graph,
                                         std::span<const float> abstractness, RelevanceFn relevance,
                                         const SemFlowTransitionOptions& options);
  // REQUIRES: what Make checks.
  SemFlowTransitions(const KnowledgeGraph& graph, std::span<const float> abstractness,
                     RelevanceFn relevance, const SemFlowTransitionOptions& options);
  // Convenience for tests: Rel from a vector indexed by entity.
  SemFlowTransitions(const KnowledgeGraph& graph, std::span<const float> abstractness,
                     std::span<const double> relevance, const SemFlowTransitionOptions& options);

  size_t num_nodes() const override { return g_.num_passages() + g_.num_entities(); }
  void Row(uint32_t u, std::vector<Transition>* out) const override;
  // An upper bound of Row(u).size() from the CSR degrees. O(1).
  size_t Degree(uint32_t u) const override;

 private:
  double AbstractnessOf(uint32_t entity) const {
    return abstractness_.empty() ? g_.Abstractness(entity) : abstractness_[entity];
  }
  // Appends u's passage–entity edges with their weights in `prob`; returns
  // their total weight.
  double AppendPassageEdges(uint32_t u, std::vector<Transition>* out) const;
  // Appends entity u's distinct entity neighbours (probabilities unset).
  void AppendEntityNeighbours(uint32_t u, std::vector<Transition>* out) const;
  // Turns the row of entity u (passage edges [0, first_entity_edge) holding
  // their weights, entity edges after) into probabilities.
  void WeighEntityRow(uint32_t u, size_t first_entity_edge, double passage_weight,
                      std::vector<Transition>* out) const;

  const KnowledgeGraph& g_;
  std::span<const float> abstractness_;
  RelevanceFn relevance_;
  SemFlowTransitionOptions o_;
};

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_ALGO_SEMFLOW_TRANSITION_H_
