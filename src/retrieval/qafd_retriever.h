// QAFD-RAG retrieval ("qafd", QAFD-RAG §2.2–3): sources on the graph →
// query-aware flow diffusion (Eq. 4–8, Algorithm 2, graph_algo/flow_diffusion.h)
// on the passages and entities of the snapshot's WalkGraph → passages ranked
// by what the diffusion pushed through them, optionally per sub-query with a
// union of the results (Eq. 9–10).
//
// Sources (qafd.seeds):
//   facts  (default; the authors' multi-hop QA code, which seeds the
//          diffusion HippoRAG 2 style): the ppr retriever's reset vector
//          (seeding.h BuildFactReset: entities from the facts most
//          similar to the query, the entities it names, the `prior_top` best
//          passages of the hybrid prior with share φ). Entity weights are
//          raised to `seed_power` and rescaled to their share. Source mass is
//          shared by weight: Δ_v = α·(Σ_{s∈S} T_s)·w_v / Σ w
//          (flow_diffusion.h SourceMass::kShared); ε is relative to Σ Δ.
//   names  (the paper's Algorithm 1, Eq. 1–3): the N entities whose names are
//          most similar to the query keywords, Δ_v = α·T_v·(score_v/score_max).
//
// Edge weights (Eq. 5): w'(u, v) = combine(s_uv, s_uq, s_vq), where s_·q is
// the node's similarity with the (sub-)query (entities: name embedding;
// passages: the dense passage score) and s_uv is, with qafd.structure =
//   graph       (default; the authors' code) the WalkGraph's structural
//               weight (graph/walk_graph.h);
//   similarity  (the paper's text) the similarity of the two nodes' embeddings.
// combine: mean (s_uv + s_uq + s_vq)/3, product s_uv·s_uq·s_vq, hybrid
// s_uv·(a + b·(s_uq + s_vq)); plus the paper's 10^-10 stabiliser (A2.2.1).
// Cosines become similarities by qafd.similarity: cosine (1 + cos)/2, relu
// max(0, cos), rbf exp(−2γ(1 − cos)). Weights are computed only for rows of
// nodes that push (on-demand, §3).
//
// Sinks (qafd.capacity): uniform T_v = 1, or degree T_v = deg(v) (the
// authors' code). Passages are ranked (qafd.passage_scoring) by throughput
// x_v·Σ_u w_uv (the excess the node pushed on), by x (node), or by Σ x of
// the entities they mention (entities); passages that received mass without
// filling their sink follow by that mass, and fewer than top_k are filled
// from the dense ranking at score 0.
//
// Paper text vs authors' code, measured offline (Recall@5, built-in hashed
// embedder, bench/retrieval_report.py stores; tuned on 2wiki-train /
// musique-train; the other benchmarks were only checked):
//                                               2wiki-train  musique-train
//   defaults below                                  93.5         70.7
//   seeds = names (Algorithm 1), α = 50 (paper)     83.1         57.8
//   seeds = names, α = 5                            69.3         48.9
//   structure = similarity (paper Eq. 5 s_uv)       86.1         66.6
//   capacity = degree (authors' code)               92.2         69.3
//   passage_scoring = node (rank by x)              93.6         68.5
//   subqueries (Eq. 9–10, offline decomposition)    90.3         61.5
//   b = 0 (no query factor)                         93.4         69.8
// Algorithm 1 takes its sources from entity names, so a multi-hop
// question's bridge entity is never one; the facts channel starts where the
// question's facts are. The structural weight carries the offline graph's
// title links, which node-name similarity cannot. With the lexical embedder
// the query factor moves recall by under a point (cosines of names and
// passages with the query are weak); it stays, as the paper has it.
// seed_power 0.5 balances comparison questions' two entities (hotpotqa-train
// 92.5 → 93.0; 2wiki-train 93.6 → 93.5, musique-train 70.9 → 70.7).
//
// Per-query options (RetrievalRequest::params):
//   qafd.seeds            facts | names (facts)
//   fact_search           how fact texts are scored: vector | bm25 (vector; seeding.h,
//                         one key for every fact-seeded method)
//   qafd.facts            fact texts scored for seeds (5; HippoRAG 2 linking_top_k)
//   qafd.fact_seeds       entity seeds kept from facts (5)
//   qafd.fact_passages    local fact channel: facts of the N best prior passages (20)
//   qafd.name_seeds       entities the query names are sources too (true)
//   qafd.fact_filter      LLM fact filter with a chat model (true)
//   qafd.passage_share    φ, passages' share of the sources when the query names an entity (0.03)
//   qafd.unnamed_passage_share  φ otherwise (0.5; ppr_retriever.h)
//   qafd.prior / prior_top passage prior source and the passages kept (hybrid, 10)
//   qafd.seed_power       entity source weight exponent (0.5)
//   qafd.keyword_seeds    names mode: N seeds (40; §4 "select 40 seed nodes")
//   qafd.seed_ratio       names mode: drop seeds below ratio × best (0.9)
//   qafd.seed_specificity names mode: scale scores by entity specificity (true)
//   qafd.seed_weighting   names mode: Δ_v ∝ score_v/score_max (true)
//   qafd.max_keywords     names mode: keyword cap (24)
//   qafd.alpha            source strength α (5: fills ~750 nodes on 2wiki-train;
//                         2 → 89.5 at 320 nodes, 10 → 93.3, 20 → 93.2 at 2,500)
//   qafd.a, qafd.b        hybrid weights (1, 0.25; §4 setup)
//   qafd.weights          mean | product | hybrid (hybrid)
//   qafd.similarity       cosine | relu | rbf (cosine)
//   qafd.rbf_gamma        γ of the RBF kernel (3)
//   qafd.structure        graph | similarity (graph)
//   qafd.capacity         uniform | degree (uniform)
//   qafd.epsilon          total-excess threshold, relative to Σ Δ (0.01)
//   qafd.max_pushes       push cap (10^6; A2.2.1)
//   qafd.support          x threshold for the reported subgraph (0.01)
//   qafd.passage_scoring  throughput | node | entities (throughput)
//   qafd.subqueries       decompose the query and union the diffusions (false)
//   qafd.synonyms         traverse SYNONYM edges (true)
//   qafd.llm              with a chat model: fact filter, A4.3 keywords, decomposition (true)
//
// Diagnostics: iterations = pushes, edges_touched = the solver's edge
// visits, and in extra the time of each step summed over the runs
// (score_ms: embedding, dense and BM25 scores; seeding_ms and prior_ms: the
// sources, last run; diffusion_ms: the solver) with weights_computed,
// injected, scaled_sources and converged.
//
// Thread-safety: Retrieve() is const and reentrant.
#ifndef FLOWRAG_RETRIEVAL_QAFD_RETRIEVER_H_
#define FLOWRAG_RETRIEVAL_QAFD_RETRIEVER_H_

#include <string>
#include <vector>

#include "graph_algo/flow_diffusion.h"
#include "retrieval/options_retriever.h"
#include "retrieval/params.h"
#include "retrieval/query_scores.h"
#include "retrieval/retriever.h"
#include "retrieval/seeding.h"

namespace flowrag {

enum class EdgeWeighting { kMean, kProduct, kHybrid };
enum class SimilarityKind { kCosine, kRbf, kRelu };
enum class PassageScoring { kNode, kEntities, kThroughput };
enum class QafdSeeds { kFacts, kNames };
enum class EdgeStructure { kGraph, kSimilarity };

struct QafdOptions {
  QafdSeeds seeds = QafdSeeds::kFacts;
  // facts
  FactSearch fact_search = FactSearch::kVector;
  size_t facts = 5;
  size_t fact_seeds = 5;
  bool name_seeds = true;
  bool fact_filter = true;
  double passage_share = 0.03;
  double unnamed_passage_share = 0.5;
  size_t fact_passages = 20;
  double seed_power = 0.5;
  PriorOptions prior{"hybrid", 10};
  // names (Algorithm 1)
  size_t keyword_seeds = 40;
  double seed_ratio = 0.9;
  bool seed_specificity = true;
  bool seed_weighting = true;
  size_t max_keywords = 24;
  // diffusion
  double alpha = 5.0;
  double a = 1.0;
  double b = 0.25;
  EdgeWeighting weights = EdgeWeighting::kHybrid;
  SimilarityKind similarity = SimilarityKind::kCosine;
  double rbf_gamma = 3.0;
  EdgeStructure structure = EdgeStructure::kGraph;
  CapacityKind capacity = CapacityKind::kUniform;
  double epsilon = 0.01;
  size_t max_pushes = 1000000;
  double support = 0.01;
  PassageScoring passage_scoring = PassageScoring::kThroughput;
  bool subqueries = false;
  bool synonyms = true;
  bool llm = true;
  // Output size limit (not a method parameter).
  size_t max_subgraph_edges = 400;

  // Reads the qafd.* keys; InvalidArgument naming the key for a bad value.
  Status Override(ParamReader& r);
  // The facts mode's seeding options (seeding.h BuildFactReset).
  FactResetOptions Reset() const;
};

// The query-aware edge weight of Eq. 5 from the structural term s_uv and
// the two query similarities.
double QueryAwareWeight(EdgeWeighting kind, double s_uv, double s_uq, double s_vq, double a,
                        double b);
// Similarity in [0,1] from a cosine of unit vectors (see the file comment).
double SimilarityFromCosine(SimilarityKind kind, double cosine, double rbf_gamma);

class QafdRetriever final : public OptionsRetriever<QafdOptions> {
 public:
  std::string_view Name() const override { return "qafd"; }
  Result<RetrievalOutput> Retrieve(const Snapshot& s, const RetrievalRequest& r) const override;
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_QAFD_RETRIEVER_H_
