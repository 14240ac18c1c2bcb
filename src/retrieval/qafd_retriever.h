// QAFD-RAG retrieval ("qafd", QAFD-RAG §2.2–3): sources on the graph →
// query-aware flow diffusion (Eq. 4–8, Algorithm 2, retrieval/flow_diffusion.h)
// on the passages and entities of the snapshot's WalkGraph → passages ranked
// by the diffusion's node importance x, optionally per sub-query with a
// union of the results (Eq. 9–10).
//
// Sources (qafd.seeds):
//   facts  (default; the authors' multi-hop QA code, which seeds the
//          diffusion HippoRAG 2 style): entities from the facts most similar
//          to the query (retrieval/fact_seeds.h; weight = fact score /
//          passages naming the entity, averaged), the entities the query
//          names, and the best `prior_top` passages by the hybrid prior ×
//          `passage_weight` — the same reset vector as the ppr retriever
//          (ppr_retriever.h BuildPprReset). Source mass is shared by weight:
//          Δ_v = α·(Σ_{s∈S} T_s)·w_v / Σ w (flow_diffusion.h SourceMass::kShared).
//   names  (the paper's Algorithm 1, Eq. 1–3): the N entities whose names are
//          most similar to the query keywords, Δ_v = α·T_v·(score_v/score_max).
// Measured (Recall@5, offline): Algorithm 1 takes median 4 seeds from entity
// names, so the bridge entity of a multi-hop question is never a source;
// 2wiki 71.5 (names) → see the table in bench/out/retrieval.md (facts).
//
// Edge weights (Eq. 5): w'(u, v) = combine(s_uv, s_uq, s_vq), where s_·q is
// the node's similarity with the (sub-)query (entities: name embedding;
// passages: the dense passage score) and s_uv is, with qafd.structure =
//   graph       (default; the authors' code) the WalkGraph's structural
//               weight (graph/walk_graph.h: mentions, facts, synonyms, title
//               links, literal and hub rules);
//   similarity  (the paper's text) the similarity of the two nodes' embeddings.
// combine: mean (s_uv + s_uq + s_vq)/3, product s_uv·s_uq·s_vq, hybrid
// s_uv·(a + b·(s_uq + s_vq)); plus the paper's 10^-10 stabiliser (A2.2.1).
// Cosines become similarities by qafd.similarity: cosine (1 + cos)/2, relu
// max(0, cos), rbf exp(−2γ(1 − cos)). Weights are computed only for edges
// whose endpoint pushes mass (on-demand, §3).
//
// Sinks (qafd.capacity): uniform T_v = 1, or degree T_v = deg(v) (the
// authors' code). Passages are ranked by x (their own diffusion node), or
// with passage_scoring = entities by Σ x of the entities they mention.
//
// Per-query options (RetrievalRequest::params), defaults measured offline on
// the train splits (see bench/out/retrieval.md):
//   qafd.seeds            facts | names (facts)
//   qafd.facts            fact texts scored for seeds (5; HippoRAG 2 linking_top_k)
//   qafd.fact_seeds       entity seeds kept from facts (5)
//   qafd.name_seeds       entities the query names are sources too (true)
//   qafd.fact_filter      LLM fact filter with a chat model (true)
//   qafd.passage_weight   passage source weight relative to the entity seeds (0.01)
//   qafd.prior / prior_top passage prior source and the passages kept (hybrid, 20)
//   qafd.keyword_seeds    names mode: N seeds (40; §4 "select 40 seed nodes")
//   qafd.seed_ratio       names mode: drop seeds below ratio × best (0.9)
//   qafd.seed_specificity names mode: scale scores by entity specificity (true)
//   qafd.seed_weighting   names mode: Δ_v ∝ score_v/score_max (true)
//   qafd.max_keywords     names mode: keyword cap (24)
//   qafd.alpha            source strength α (see QafdOptions)
//   qafd.a, qafd.b        hybrid weights (1, 0.25; §4 setup)
//   qafd.weights          mean | product | hybrid
//   qafd.similarity       cosine | relu | rbf
//   qafd.rbf_gamma        γ of the RBF kernel (3)
//   qafd.structure        graph | similarity
//   qafd.capacity         uniform | degree
//   qafd.epsilon          total-excess threshold ε, relative to the injected mass
//   qafd.max_pushes       push cap
//   qafd.support          x threshold for the reported subgraph (0.01)
//   qafd.passage_scoring  node | entities (node)
//   qafd.subqueries       decompose the query and union the diffusions (false)
//   qafd.synonyms         traverse SYNONYM edges (true)
//   qafd.llm              with a chat model: A4.3 keywords / decomposition (true)
//
// Thread-safety: Retrieve() is const and reentrant.
#ifndef FLOWRAG_RETRIEVAL_QAFD_RETRIEVER_H_
#define FLOWRAG_RETRIEVAL_QAFD_RETRIEVER_H_

#include <string>
#include <vector>

#include "retrieval/fact_seeds.h"
#include "retrieval/flow_diffusion.h"
#include "retrieval/params.h"
#include "retrieval/retriever.h"

namespace flowrag {

enum class EdgeWeighting { kMean, kProduct, kHybrid };
enum class SimilarityKind { kCosine, kRbf, kRelu };
enum class PassageScoring { kNode, kEntities, kThroughput };
enum class QafdSeeds { kFacts, kNames };
enum class EdgeStructure { kGraph, kSimilarity };

struct QafdOptions {
  QafdSeeds seeds = QafdSeeds::kFacts;
  // facts
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
};

// The query-aware edge weight of Eq. 5 from the structural term s_uv and
// the two query similarities.
double QueryAwareWeight(EdgeWeighting kind, double s_uv, double s_uq, double s_vq, double a,
                        double b);
// Similarity in [0,1] from a cosine of unit vectors (see the file comment).
double SimilarityFromCosine(SimilarityKind kind, double cosine, double rbf_gamma);

class QafdRetriever final : public Retriever {
 public:
  std::string_view Name() const override { return "qafd"; }
  Result<RetrievalOutput> Retrieve(const Snapshot& s, const RetrievalRequest& r) const override;
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_QAFD_RETRIEVER_H_
