// QAFD-RAG retrieval (QAFD-RAG §2.2–3): keywords → seeds (Algorithm 1) →
// query-aware flow diffusion on the typed graph (Eq. 4–8, Algorithm 2) →
// passages ranked by the diffusion's node importance x, optionally per
// sub-query with a union of the results (Eq. 9–10).
//
// The graph the diffusion runs on: entities with RELATED_TO (one edge per
// fact, so parallel facts add conductance) and SYNONYM edges; with
// passage_scoring = node also passages, through MENTIONS edges, so passages
// are diffusion nodes and their own x ranks them. With passage_scoring =
// entities the diffusion stays on entities and a passage scores
// Σ_{e mentioned} x_e (LightRAG-style chunk retrieval through entities).
//
// Query-aware weights (Eq. 5a–c) with h(entity) = its name embedding,
// h(passage) = its dense passage embedding and h(q) = the (sub-)query
// embedding:
//   mean:    (s_uv + s_uq + s_vq) / 3
//   product: s_uv · s_uq · s_vq
//   hybrid:  s_uv · (a + b·(s_uq + s_vq))
// plus the paper's 10^-10 stabiliser (A2.2.1). Similarities must be
// non-negative conductances; the paper does not say how negative cosines
// are handled, so cosine is mapped affinely to [0,1], s = (1 + cos)/2 (keeps
// the order; two unrelated names, cos = 0, get ½ instead of disconnecting
// their edge — with the built-in hashed embedder most related entities share
// no name feature); RBF is exp(−γ‖e − e'‖²) = exp(−2γ(1 − cos)) for unit
// vectors, γ = qafd.rbf_gamma. Weights are computed only for edges whose
// endpoint pushes mass.
//
// Per-query options (RetrievalRequest::params), defaults from the paper:
//   qafd.seeds            N seeds (40; QAFD-RAG §4 setup "select 40 seed nodes")
//   qafd.alpha            source strength α (50; §4 setup, A2.1.2; A2.2.1 uses 10 for schemas)
//   qafd.a, qafd.b        hybrid weights (1, 0.25; §4 setup)
//   qafd.weights          mean | product | hybrid (hybrid; §2.2 "slightly better")
//   qafd.similarity       cosine | rbf (rbf; see below)
//   qafd.rbf_gamma        γ of the RBF kernel (3; see below)
//   qafd.capacity         uniform | degree (uniform T = 1; A2.2.1)
//   qafd.epsilon          total-excess threshold ε (0.05; A2.2.1)
//   qafd.max_pushes       push cap (10^6; A2.2.1)
//   qafd.support          support threshold ε̲ on x for the subgraph (0.01; A2.1.5 "minimum flow threshold")
//   qafd.passage_scoring  node | entities (node; see above)
//   qafd.subqueries       decompose the query and union the diffusions (false)
//   qafd.synonyms         traverse SYNONYM edges (true)
//   qafd.seed_weighting   Δ_v = α·T_v·score_v/score_max instead of α·T_v (true; the
//                         paper injects equal mass, but with offline embeddings the
//                         40th seed often scores 0.05 — weak seeds get weak sources)
//   qafd.max_keywords     keyword cap (24)
//   qafd.seed_ratio       drop seeds scoring below ratio × the best seed's Eq. 1 score
//                         (0.9; see below; 0 keeps the paper's N best)
//   qafd.llm              with a chat model: keywords by the A4.3 prompt and, with
//                         subqueries, LLM decomposition (true; query_llm.h)
//   qafd.seed_specificity scale Eq. 1 scores by entity specificity; entities the
//                         query names exactly stay seeds at score 1 (true; seeds.h)
//
// Offline defaults (built-in hashed embedder), measured on the train splits
// (Recall@5, bench/retrieval_report.py): the paper's 40 seeds by name
// similarity bring in entities that share only character n-grams with a
// keyword ("Neuve" for "born"), and a low-degree false seed concentrates its
// source mass on its few neighbours, which then outrank everything:
// 2wiki-train 53.9 at seed_ratio 0.8 → 66.0 at 0.9 (≈ exact name matches
// and close variants; 0 gives 30.9 on 2wiki). The cosine map s = (1+cos)/2
// leaves the hybrid weights within a factor 1.5 of each other, so the query
// barely steers the flow; RBF with γ = 3 (exp(−6(1−cos))) spreads them:
// 2wiki-train 66.0 → 72.7, hotpotqa-train 65.5 → 71.0. Specificity with
// the query's exact names kept: 2wiki-train 72.7 → 78.8, 2wiki 65.3 → 71.5,
// musique-dev 41.7 → 46.1, hotpotqa-train 71.0 → 74.0 (specificity alone,
// without keeping the names, lost 21 points on hotpotqa-train). With a
// neural embedder set seed_ratio=0, seed_specificity=false and
// similarity=cosine for the paper's setting.
//
// Thread-safety: Retrieve() is const and reentrant.
#ifndef FLOWRAG_RETRIEVAL_QAFD_RETRIEVER_H_
#define FLOWRAG_RETRIEVAL_QAFD_RETRIEVER_H_

#include <string>
#include <vector>

#include "retrieval/flow_diffusion.h"
#include "retrieval/params.h"
#include "retrieval/retriever.h"

namespace flowrag {

enum class EdgeWeighting { kMean, kProduct, kHybrid };
enum class SimilarityKind { kCosine, kRbf };
enum class PassageScoring { kNode, kEntities };

struct QafdOptions {
  size_t seeds = 40;
  double alpha = 50.0;
  double a = 1.0;
  double b = 0.25;
  EdgeWeighting weights = EdgeWeighting::kHybrid;
  SimilarityKind similarity = SimilarityKind::kRbf;
  double rbf_gamma = 3.0;
  CapacityKind capacity = CapacityKind::kUniform;
  double epsilon = 0.05;
  size_t max_pushes = 1000000;
  double support = 0.01;
  PassageScoring passage_scoring = PassageScoring::kNode;
  bool subqueries = false;
  bool synonyms = true;
  bool seed_weighting = true;
  size_t max_keywords = 24;
  double seed_ratio = 0.9;
  bool seed_specificity = true;
  bool llm = true;
  // Output size limits (not method parameters).
  size_t max_subgraph_edges = 400;

  // Reads the qafd.* keys; InvalidArgument naming the key for a bad value.
  Status Override(ParamReader& r);
};

// The query-aware edge weight of Eq. 5 from three similarities in [0,1].
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
