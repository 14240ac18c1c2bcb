// "ppr": the HippoRAG 2 baseline (Gutiérrez et al. 2025, "From RAG to
// Memory", §3 and its reference implementation): Personalized PageRank over
// the undirected graph of entities and passages.
//
// Graph (HippoRagGraph): nodes = passages and entities of the snapshot's
// KnowledgeGraph (node ids unchanged; descriptions and facts are not part of
// it). Edge weights as HippoRAG 2 builds them:
//   passage – entity   1 per (passage, entity) pair (MENTIONS)
//   entity – entity    2 × number of facts joining the pair (RELATED_TO;
//                      HippoRAG 2 inserts each fact edge once per direction
//                      into an undirected igraph, so both count)
//   entity – entity    2 × embedding similarity (SYNONYM, same reason)
// P(u, v) = w(u, v) / Σ_x w(u, x).
//
// Reset vector: entity seeds from the top `facts` fact texts (fact_seeds.h,
// scores normalised by the best fact, weight = score / passage count,
// averaged, top `seeds` entities) plus every passage's prior (fact_seeds.h
// PassagePrior; HippoRAG 2: min-max normalised dense score) × `passage_weight`;
// normalised to sum 1. Without any matching
// fact it falls back to the dense ranking (HippoRAG 2 does the same when its
// fact filter keeps nothing). Passages are ranked by their PPR score.
//
// Per-query overrides (RetrievalRequest::params):
//   ppr.damping         0.5    probability of following an edge (HippoRAG 2 `damping`)
//   ppr.facts           5      fact texts used for seeds (HippoRAG 2 `linking_top_k`)
//   ppr.seeds           5      entity seeds kept (HippoRAG 2 `linking_top_k`)
//   ppr.name_seeds      true   entities named in the query are seeds too (fact_seeds.h)
//   ppr.fact_filter     true   LLM fact filter when a chat model is configured (HippoRAG 2
//                              recognition memory; fact_seeds.h)
//   ppr.passage_weight  0.01   passage reset weight (HippoRAG 2 `passage_node_weight` 0.05)
//   ppr.prior           hybrid passage prior source: dense|bm25|hybrid (HippoRAG 2: dense)
//   ppr.prior_top       0      keep only the best N passages in the prior (0 = all)
//   ppr.synonyms        true   include SYNONYM edges (HippoRAG 2 synonymy edges)
//   ppr.solver          push   "push" or "power"
//   ppr.epsilon         1e-6   push threshold ρ_u ≥ ε·deg(u) (retrieval/ppr.h); 1e-6
//                              keeps 2wiki Recall@5 of 1e-7 at a quarter of the work
//   ppr.tolerance       1e-10  power iteration ‖Δx‖₁ stop
//   ppr.max_nodes       150    nodes reported in node_scores / the subgraph
//
// Offline defaults differ from HippoRAG 2 for the reasons given in
// semflow_retriever.h (same prior, same measurements): 2wiki-train Recall@5
// 70.7 (dense, 0.05) → 74.9 (hybrid) → 79.3 (hybrid, 0.01).
//
// Thread-safety: Retrieve() is const and reentrant (per-thread workspace).
#ifndef FLOWRAG_RETRIEVAL_PPR_RETRIEVER_H_
#define FLOWRAG_RETRIEVAL_PPR_RETRIEVER_H_

#include <string>
#include <vector>

#include "retrieval/fact_seeds.h"
#include "retrieval/params.h"
#include "retrieval/ppr.h"
#include "retrieval/retriever.h"

namespace flowrag {

struct PprOptions {
  double damping = 0.5;
  size_t facts = 5;
  size_t seeds = 5;
  bool name_seeds = true;
  bool fact_filter = true;
  double passage_share = 0.03;
  double unnamed_passage_share = 0.5;
  size_t fact_passages = 20;  // local fact channel (fact_seeds.h local_passages); 0 = all facts
  bool synonyms = true;
  std::string solver = "push";
  double epsilon = 3e-6;
  double tolerance = 1e-10;
  size_t max_nodes = 150;
  PriorOptions prior{"hybrid", 50};  // passage prior source and support (fact_seeds.h)
  Status Override(ParamReader& r);
};

// The HippoRAG 2 graph as a TransitionSource over the first
// num_passages + num_entities node ids. Transition tags are EdgeKind values.
// Rows computed on demand in O(degree); holds a reference to `graph`.
class HippoRagGraph final : public TransitionSource {
 public:
  HippoRagGraph(const KnowledgeGraph& graph, bool synonyms) : g_(graph), synonyms_(synonyms) {}
  size_t num_nodes() const override { return g_.num_passages() + g_.num_entities(); }
  void Row(uint32_t u, std::vector<Transition>* out) const override;
  size_t Degree(uint32_t u) const override;

 private:
  const KnowledgeGraph& g_;
  bool synonyms_;
};

// Shared by the graph retrievers: given the fixed point, fills ranked
// passages (top_k by score, ties by passage index), node_scores (best
// `max_nodes`) and, with `explain`, the subgraph (every transition between reported nodes, with
// weight = P(u, v) and flow = d·x_u·P(u, v)) and a predecessor path
// (retrieval/ppr.h PredecessorPath) for each returned passage.
// `score(node)` and `reset(node)` read the solution and the normalised reset.
void FillGraphOutput(const Snapshot& snapshot, const TransitionSource& graph,
                     const std::vector<uint32_t>& scored_nodes,
                     const std::function<double(uint32_t)>& score,
                     const std::function<double(uint32_t)>& reset, double damping, size_t top_k,
                     size_t max_nodes, RetrievalOutput* out, bool explain = true);

// The ppr retriever's reset vector for one query (see the file comment):
// entity seeds (fact seeds plus entities named in the query) and the
// passage prior × passage_weight, unnormalised. `seeds` empty means no fact
// or name matched (the retriever then falls back to dense ranking).
// `chat` (may be null) runs the LLM fact filter; `out` receives the
// keywords and seeding diagnostics.
struct PprReset {
  FactSeeds seeds;
  std::vector<NodeWeight> entries;  // unnormalised, seeds first
  double total = 0.0;               // Σ entries
};
Result<PprReset> BuildPprReset(const Snapshot& s, const std::string& query, const QueryScores& qs,
                               const PprOptions& o, ChatModel* chat, RetrievalOutput* out);

class PprRetriever final : public Retriever {
 public:
  std::string_view Name() const override { return "ppr"; }
  Result<RetrievalOutput> Retrieve(const Snapshot& s, const RetrievalRequest& r) const override;
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_PPR_RETRIEVER_H_
