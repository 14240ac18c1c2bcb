// "ppr": the HippoRAG 2 baseline (Gutiérrez et al. 2025, "From RAG to
// Memory", §3 and its reference implementation): Personalized PageRank over
// the undirected graph of entities and passages.
//
// Graph: the snapshot's WalkGraph (graph/walk_graph.h), which every walk
// reads. Its base weights are HippoRAG 2's (passage–entity 1 per pair,
// entity–entity 2 per fact, SYNONYM 2 × similarity), plus the offline
// graph's title-link, literal and hub rules. P(u, v) = w(u, v) / Σ_x w(u, x).
// The push runs on the walk graph's arrays in place (PushSolver::Solve(WalkGraph)).
//
// Reset vector: entity seeds from the top `facts` fact texts (seeding.h,
// scores normalised by the best fact, weight = score / passage count,
// averaged, top `seeds` entities) and the entities the query names, sharing
// 1 − φ of the reset by weight; the best `prior_top` passages of the hybrid
// prior share φ by prior (query_scores.h PassagePrior). φ = passage_share when
// the query names an entity with a capitalised word, unnamed_passage_share
// otherwise. Without any matching fact or name it falls back to the dense
// ranking (HippoRAG 2 does the same when its fact filter keeps nothing).
// Passages are ranked by their PPR score.
//
// Where this differs from HippoRAG 2 (all measured offline, Recall@5,
// bench/retrieval_report.py; tuned on 2wiki-train and musique-train):
//   - HippoRAG 2 scores every fact; here only those stated by the
//     `fact_passages` best prior passages or naming a query entity
//     (retrieval/local_facts.h): equal or better recall (2wiki-train 93.5 →
//     93.8, medical 96.3 → 97.0), 2wiki p50 7.3 → 1.1 ms.
//   - HippoRAG 2 gives every passage prior × 0.05; the sum of that grows with
//     the corpus (on 2wiki 67% of the reset mass sat on passages) and makes
//     the push touch the whole graph. A share φ over the top 50 passages keeps
//     the balance independent of corpus size: φ = 0.03 with a named entity
//     (2wiki-train 93.7, musique-train 68.9; 0.1 gives 91.0 / 68.1), 0.5
//     without one, where the seeds are only fact-similarity guesses (medical:
//     289 of 564 questions name no entity; 91.7 → 96.3).
//   - The prior is the mean of min-max normalised dense and BM25 scores: the
//     built-in hashed embedder ranks passages below BM25.
//
// Per-query overrides (RetrievalRequest::params):
//   fact_search               vector how fact texts are scored: vector | bm25 (seeding.h; one
//                                    key for every fact-seeded method)
//   ppr.damping               0.5    probability of following an edge (HippoRAG 2 `damping`)
//   ppr.facts                 5      fact texts used for seeds (HippoRAG 2 `linking_top_k`)
//   ppr.seeds                 5      entity seeds kept (HippoRAG 2 `linking_top_k`)
//   ppr.fact_passages         20     local fact channel: facts of the N best prior passages
//                                    and of named entities; 0 = every fact (HippoRAG 2)
//   ppr.name_seeds            true   entities named in the query are seeds too (seeding.h)
//   ppr.fact_filter           true   LLM fact filter when a chat model is configured (HippoRAG 2
//                                    recognition memory; seeding.h)
//   ppr.passage_share         0.03   φ, the passages' share of the reset (see above)
//   ppr.unnamed_passage_share 0.5    φ when the query names no entity
//   ppr.prior                 hybrid passage prior source: dense|bm25|hybrid (HippoRAG 2: dense)
//   ppr.prior_top             50     passages in the prior (0 = all)
//   ppr.synonyms              true   include SYNONYM edges (HippoRAG 2 synonymy edges)
//   ppr.solver                push   "push" or "power"
//   ppr.epsilon               3e-6   push threshold ρ_u ≥ ε·deg(u) (graph_algo/ppr.h): top-10
//                                    overlap 0.970 with python-igraph's exact PPR at a median
//                                    111× speed-up on 2wiki (bench/out/ppr_vs_igraph.md); 1e-5
//                                    gives the same Recall@5 at 0.940 overlap (212×)
//   ppr.tolerance             1e-10  power iteration ‖Δx‖₁ stop
//   ppr.max_nodes             150    nodes reported in node_scores / the subgraph
//
// Thread-safety: Retrieve() is const and reentrant (per-thread workspace).
#ifndef FLOWRAG_RETRIEVAL_PPR_RETRIEVER_H_
#define FLOWRAG_RETRIEVAL_PPR_RETRIEVER_H_

#include <string>

#include "graph_algo/ppr.h"
#include "retrieval/options_retriever.h"
#include "retrieval/params.h"
#include "retrieval/query_scores.h"
#include "retrieval/retriever.h"
#include "retrieval/seeding.h"

namespace flowrag {

struct PprOptions {
  FactSearch fact_search = FactSearch::kVector;  // seeding.h: vector | bm25
  double damping = 0.5;
  size_t facts = 5;
  size_t seeds = 5;
  bool name_seeds = true;
  bool fact_filter = true;
  double passage_share = 0.03;
  double unnamed_passage_share = 0.5;
  size_t fact_passages = 20;  // local fact channel (seeding.h NearFactHits); 0 = all facts
  bool synonyms = true;
  std::string solver = "push";
  double epsilon = 3e-6;
  double tolerance = 1e-10;
  size_t max_nodes = 150;
  PriorOptions prior{"hybrid", 50};  // passage prior source and support (query_scores.h)
  Status Override(ParamReader& r);
  // The seeding part of these options (seeding.h).
  FactResetOptions Reset() const;
};

// The ppr retriever's reset vector for one query (see the file comment):
// seeding.h BuildFactReset with these options.
inline Result<FactReset> BuildPprReset(const Snapshot& s, const std::string& query,
                                       const QueryScores& qs, const PprOptions& o, ChatModel* chat,
                                       RetrievalOutput* out) {
  return BuildFactReset(s, query, qs, o.Reset(), chat, out);
}

class PprRetriever final : public OptionsRetriever<PprOptions> {
 public:
  std::string_view Name() const override { return "ppr"; }
  Result<RetrievalOutput> Retrieve(const Snapshot& s, const RetrievalRequest& r) const override;
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_PPR_RETRIEVER_H_
