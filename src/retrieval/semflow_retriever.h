// "semflow": SemFlowRAG's abstractness-guided directed PPR (§3.3, A.2).
//
// Reset vector (§3.3 "Seed Retrieval and Initialization", A.2 "PPR reset
// distribution"): entity seeds from the top `facts` fact texts by
// query–fact cosine (fact_seeds.h; weight = cosine / entity passage
// frequency, averaged over the facts naming the entity; best `seeds` kept),
// plus every passage's prior (fact_seeds.h PassagePrior: min-max normalised
// dense score in the paper, dense+BM25 by default here) × `passage_prior`;
// normalised to sum 1. No matching fact → the dense ranking (the paper falls
// back to DPR when no fact survives its filter). The optional LLM fact
// filter of A.2 is not applied: retrievers have no chat model.
//
// Walk (SemFlowTransitions), over passages and entities:
//   - A passage moves to each entity it mentions with equal probability
//     (passage–entity edges are bidirectional and unweighted, §3.3).
//   - An entity u with n_p passages and n_e distinct entity neighbours
//     (RELATED_TO, plus SYNONYM with `synonyms`) gives each passage 1/(n_p+n_e)
//     and its entity neighbours together n_e/(n_p+n_e) — every edge one slot,
//     as the passage edges are unweighted. That entity share is split by
//     direction (A.2): `down_share` (0.9) to down-edges, abstractness
//     d_v ≤ d_u (KnowledgeGraph::Abstractness, §3.2 Eq. 1; equal
//     abstractness counts as not climbing), and 1 − down_share to up-edges,
//     d_v > d_u. When u has only down-edges or only up-edges, that group takes
//     the whole entity share, so every non-dangling row sums to 1 and no mass
//     leaks back to the reset.
//   - Within a group, edge u → v gets softmax weight exp(s(u, v)) with
//     s(u, v) = Rel(v|q) − λ·|d_v − d_u| (Eq. 3), Rel(v|q) = max over passages
//     p mentioning v of cos(q, p), min-max normalised over all entities (Eq. 2).
//     The paper does not say how scores become probabilities; s ∈ [−λ, 1], so
//     the softmax keeps every edge (weights within a factor e^{1+λ}) and needs
//     no clipping.
// Ablations (Table 4): `direction` off → one group, no split;
// `query_similarity` off → s = −λ|Δ|; `abstractness_penalty` off → s = Rel
// (λ = 0); both off → uniform over entity neighbours.
// Passages are ranked by their stationary score (reset probability 0.5,
// i.e. damping 0.5), solved by local push (retrieval/ppr.h): the directed
// walk is a substochastic matrix like any other for the push invariant.
//
// Per-query overrides (RetrievalRequest::params):
//   semflow.reset                 0.5    reset probability (A.2)
//   semflow.lambda                1.0    λ of Eq. 3 (§3.3)
//   semflow.down_share            0.9    share of entity–entity mass on down-edges (A.2)
//   semflow.direction             true   direction control (Table 4)
//   semflow.query_similarity      true   Rel(v|q) in s(u, v) (Table 4)
//   semflow.abstractness_penalty  true   λ|Δ| in s(u, v) (Table 4)
//   semflow.facts                 12     candidate facts (A.2)
//   semflow.seeds                 20     entity seeds (A.2)
//   semflow.name_seeds            true   entities named in the query are seeds too (fact_seeds.h)
//   semflow.fact_filter           true   LLM fact filter (A.5.2) when a chat model is configured
//   semflow.passage_prior         0.01   passage reset weight (A.2 uses 0.08; see below)
//   semflow.prior                 hybrid passage prior source: dense|bm25|hybrid
//   semflow.prior_top             0      keep only the best N passages in the prior (0 = all)
//
// Offline defaults (measured on 2wiki-train and musique-train, bench
// graph_methods_report): the built-in hashed embedder ranks passages below
// BM25, so the prior is the mean of the min-max normalised dense and BM25
// scores (2wiki-train Recall@5 74.2 → 77.3 at 0.08); and since nearly every
// passage gets a non-zero prior, at 0.08 the passages take ~95% of the
// reset mass and drown the fact seeds: 0.01 gives 83.8 (0.005–0.02 within
// 0.5 points). With a real embedding model set prior=dense and 0.08 for the
// paper's configuration.
//   semflow.synonyms              false  SYNONYM edges (§3.2 builds the graph from triples only)
//   semflow.solver                push   "push" or "power"
//   semflow.epsilon               1e-6   push threshold (as ppr.epsilon)
//   semflow.tolerance             1e-10  power iteration stop
//   semflow.max_nodes             150    nodes reported in node_scores / the subgraph
//
// Thread-safety: Retrieve() is const and reentrant.
#ifndef FLOWRAG_RETRIEVAL_SEMFLOW_RETRIEVER_H_
#define FLOWRAG_RETRIEVAL_SEMFLOW_RETRIEVER_H_

#include <span>
#include <string>
#include <vector>

#include "retrieval/fact_seeds.h"
#include "retrieval/params.h"
#include "retrieval/ppr.h"
#include "retrieval/retriever.h"

namespace flowrag {

struct SemFlowOptions {
  double reset = 0.5;
  double lambda = 1.0;
  double down_share = 0.9;
  bool direction = true;
  bool query_similarity = true;
  bool abstractness_penalty = true;
  size_t facts = 12;
  size_t seeds = 20;
  bool name_seeds = true;
  bool fact_filter = true;
  double passage_prior = 0.01;
  bool synonyms = false;
  std::string solver = "push";
  double epsilon = 1e-6;
  double tolerance = 1e-10;
  size_t max_nodes = 150;
  PriorOptions prior;  // passage prior source and support (fact_seeds.h)
  Status Override(ParamReader& r);
};

// Rel(v|q) of Eq. 2 for every entity: max cosine of the entity's passages
// with the query, min-max normalised over entities (0 for an entity without
// passages before normalisation). O(MENTIONS).
std::vector<double> EntityRelevance(const KnowledgeGraph& graph,
                                    const std::vector<float>& passage_scores);

// The directed, query-weighted walk described above. `abstractness` and
// `relevance` have one value per entity (an empty `abstractness` reads the
// graph's, an empty `relevance` means Rel ≡ 0) and, like `graph`, must
// outlive this object. Transition tags are EdgeKind values. Row() is O(degree).
class SemFlowTransitions final : public TransitionSource {
 public:
  SemFlowTransitions(const KnowledgeGraph& graph, std::span<const float> abstractness,
                     std::span<const double> relevance, const SemFlowOptions& options)
      : g_(graph), abstractness_(abstractness), relevance_(relevance), o_(options) {}
  size_t num_nodes() const override { return g_.num_passages() + g_.num_entities(); }
  void Row(uint32_t u, std::vector<Transition>* out) const override;
  size_t Degree(uint32_t u) const override;

 private:
  static std::vector<uint8_t>& group_scratch();  // per-thread
  const KnowledgeGraph& g_;
  std::span<const float> abstractness_;
  std::span<const double> relevance_;
  SemFlowOptions o_;
};

class SemFlowRetriever final : public Retriever {
 public:
  std::string_view Name() const override { return "semflow"; }
  Result<RetrievalOutput> Retrieve(const Snapshot& s, const RetrievalRequest& r) const override;
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_SEMFLOW_RETRIEVER_H_
