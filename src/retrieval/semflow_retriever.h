// "semflow": SemFlowRAG's abstractness-guided directed PPR (§3.3, A.2), as
// the authors' code (github.com/KnowledgeXLab/SemFlowRAG, SemFlowRAG.py
// `build_directed_edge_weights`, `graph_search_with_fact_entities`) runs it.
//
// Reset vector (§3.3 "Seed Retrieval and Initialization", A.2 "PPR reset
// distribution"): entity seeds from the top `facts` fact texts by
// query–fact cosine (seeding.h; weight = score / entity passage
// frequency, averaged over the facts naming the entity; best `seeds` kept;
// the scores divided by the best fact's, as the authors' code min-max
// normalises fact scores), plus the passage prior (query_scores.h
// PassagePrior) × `passage_prior` (A.2: 0.08) on the best `prior_top`
// passages only; normalised to sum 1. No matching fact → the dense ranking
// (the paper falls back to DPR when no fact survives its filter). With a
// chat model the LLM fact filter of A.5.2 runs first (seeding.h).
//
// Walk: the SemFlow transition (graph_algo/semflow_transition.h) over the
// passages and entities: passage–entity edges with the snapshot's walk-graph
// weights (`passage_edges=walk`, graph/walk_graph.h: 1 for a plain mention,
// the title link, literal and hub rules every walk reads) or weight 1 each
// (`unit`, the paper's unweighted edges, §3.3); an entity's neighbours share
// one average passage edge's weight (`entity_share=one`, the authors' code)
// or get one each (`edges`); `down_share` of that on down-edges (d_v ≤ d_u,
// abstractness §3.2 Eq. 1), the rest on up-edges, the A+ self-loop at a
// local minimum (`self_loop`); within a group max(s, floor) (`linear`) or
// exp(s) (`softmax`), s(u, v) = Rel(v|q) − λ·|d_v − d_u| (Eq. 3), and
// Rel(v|q) = max over passages p mentioning v of cos(q, p) (Eq. 2),
// normalised to [0, 1]:
//   local   (default) clip(raw / best passage cosine of the query, 0, 1):
//           computed only for entities the walk reaches
//   global  1st–99th percentile min-max over all entities (the authors'
//           code, graph_algo/semflow_transition.h EntityRelevance): one pass
//           over every MENTIONS edge
// Ablations (Table 4): `direction` off → one group, no split, no self-loop;
// `query_similarity` off → s = −λ|Δ|; `abstractness_penalty` off → s = Rel.
// Passages are ranked by their stationary score (reset probability 0.5),
// solved by local push over rows built once per query
// (graph_algo/ppr.h PushSolver::SolveMemoized) with ε relative to the
// largest reset entry (the work depends on the seeds' mass, not on how it is
// split), or power iteration.
//
// Paper text vs authors' code, both measured (Recall@5 on 2wiki-train /
// musique-train offline, see "Defaults" below): the paper leaves open how
// s(u, v) becomes a probability and how passage and entity edges share a
// row; the authors' code answers both (linear, one shared weight for the
// entity edges, the A+ self-loop).
//
// Per-query overrides (RetrievalRequest::params):
//   semflow.reset                 0.5     reset probability (A.2)
//   semflow.lambda                1.0     λ of Eq. 3 (§3.3)
//   semflow.down_share            0.9     share of entity–entity mass on down-edges (A.2)
//   semflow.direction             true    direction control (Table 4)
//   semflow.query_similarity      true    Rel(v|q) in s(u, v) (Table 4)
//   semflow.abstractness_penalty  true    λ|Δ| in s(u, v) (Table 4)
//   semflow.weights               linear  linear | softmax (see above)
//   semflow.entity_share          one     one | edges (see above)
//   semflow.passage_edges         walk    walk | unit (see above)
//   semflow.self_loop             true    A+ self-loop at abstractness minima
//   semflow.floor                 1e-6    linear weight floor (authors' ε)
//   semflow.relevance             local   local | global (see above)
//   fact_search                   vector  how fact texts are scored: vector | bm25 (seeding.h;
//                                         one key for every fact-seeded method)
//   semflow.facts                 5       candidate facts (authors' code; A.2 says 12)
//   semflow.seeds                 10      entity seeds (A.2 says 20, the code 5)
//   semflow.fact_passages         20      facts scored: those of the best N prior passages and
//                                         of the named entities (retrieval/local_facts.h); 0 = all
//   semflow.normalize_facts       true    fact scores / best fact's (authors' min-max)
//   semflow.name_seeds            true    entities named in the query are seeds too (seeding.h)
//   semflow.fact_filter           true    LLM fact filter (A.5.2) when a chat model is configured
//   semflow.passage_prior         0.08    passage reset weight (A.2)
//   semflow.prior_mode            weight  weight | share (see Defaults)
//   semflow.passage_share         0.03    share mode: passages' share when the query names an
//   entity semflow.unnamed_passage_share 0.5     share mode: otherwise semflow.prior hybrid passage
//   prior source: dense|bm25|hybrid semflow.prior_top             100     passages in the prior (0
//   = all, as the paper) semflow.synonyms              false   SYNONYM edges among the entity edges
//   semflow.solver                push    "push" or "power"
//   semflow.epsilon               1e-3    push threshold, relative to the largest reset entry
//   semflow.tolerance             1e-10   power iteration stop
//   semflow.max_nodes             150     nodes reported in node_scores / the subgraph
//
// Defaults, measured offline (built-in embedder, heuristic graph with its
// walk weights; Recall@5 on 2wiki-train / musique-train / musique-train
// OpenIE unless noted, then checked on 2wiki, musique-dev, hotpotqa-train
// and medical). With them: 81.2 / 66.1 / 68.0; 2wiki 76.0, musique-dev
// 59.1, hotpotqa-train 89.0, medical 96.5 (OpenIE 96.8). The rows below were
// measured before the local fact channel (fact_passages = 0), which moved
// the defaults' numbers by under 2 points and 2wiki p50 from 7.5 to 0.9 ms.
//   transition   the authors' code. entity_share=edges (one slot per edge,
//                the previous version) 74.2 / 62.6 / 60.8; softmax 80.3 /
//                65.7 / 66.7 and self_loop=false 81.2 / 65.9 / 66.4 (the
//                paper leaves both open; the code's choice kept);
//                relevance=global (the authors' percentile normalisation, a
//                pass over every MENTIONS edge) 80.9 / 65.7 / 66.7.
//   passage edges the walk graph's: unit edges 78.6 / 65.7 / 66.4,
//                hotpotqa-train 85.0, 2wiki 72.5.
//   facts/seeds  5 / 10: the paper's 12 / 20 rely on its LLM fact filter;
//                unfiltered 87.4 / 62.6 / 53.5 (an OpenIE fact text is one
//                triple: 12 of them name 20 entities, mostly noise); 5 / 5
//                (the authors' code) 80.8 / 63.3 / 62.5.
//   prior        0.08 (A.2) × the hybrid prior (query_scores.h) of the best
//                100 passages. The paper's dense prior: 79.2 / 63.9 / 65.4
//                and medical 94.3, below the hybrid baseline's 95.6. The
//                prior on every passage (the paper) 82.4 / 66.2 / 66.3 but
//                the push touches 14.9k nodes instead of 0.9k. A smaller
//                weight helps multi-hop and hurts medical, where the
//                passages carry the evidence: 0.02 gives 83.5 / 67.1 / 64.2
//                and medical 92.6 / 92.9; prior_mode=share (the baseline's
//                fixed passage share: 0.03 of the reset when the query
//                names an entity, else 0.5; at ε 1e-4) 91.7 / 68.7 / 65.7,
//                2wiki 89.4, medical 94.9 / 94.0. normalize_facts=false
//                (raw cosines) 79.8 / 63.9 / 60.8.
//   epsilon      1e-3 of the largest reset entry: 1e-4 81.8 / 65.2 / 66.3
//                touching 1.9× the nodes, 1e-5 82.0 / 66.2 / 66.3 at 6.5×.
//
// Outputs: ranked, seeds, node_scores always; paths and subgraph only with
// RetrievalRequest::explain. Diagnostics: iterations = pushes, nodes_touched
// = nodes that received mass, edges_touched = transitions the solver
// followed; extra: rows built, entity relevances computed, MENTIONS entries
// read for them, reset masses.
//
// Complexity (push): O(pushes · row length) for the solver plus, per
// distinct node whose row is built, O(degree) and O(Σ mentions of its entity
// neighbours) for Rel (memoised per query); nothing proportional to the
// graph except `relevance=global`.
// Thread-safety: Retrieve() is const and reentrant (per-thread workspace).
#ifndef FLOWRAG_RETRIEVAL_SEMFLOW_RETRIEVER_H_
#define FLOWRAG_RETRIEVAL_SEMFLOW_RETRIEVER_H_

#include <string>

#include "graph_algo/semflow_transition.h"
#include "retrieval/options_retriever.h"
#include "retrieval/params.h"
#include "retrieval/query_scores.h"
#include "retrieval/retriever.h"
#include "retrieval/seeding.h"

namespace flowrag {

struct SemFlowOptions {
  double reset = 0.5;
  double lambda = 1.0;
  double down_share = 0.9;
  bool direction = true;
  bool query_similarity = true;
  bool abstractness_penalty = true;
  std::string weights = "linear";
  std::string entity_share = "one";
  std::string passage_edges = "walk";
  bool self_loop = true;
  double floor = 1e-6;
  std::string relevance = "local";
  FactSearch fact_search = FactSearch::kVector;  // seeding.h: vector | bm25
  size_t facts = 5;
  size_t seeds = 10;
  size_t fact_passages = 20;  // local fact channel (seeding.h NearFactHits); 0 = all facts
  bool normalize_facts = true;
  bool name_seeds = true;
  bool fact_filter = true;
  double passage_prior = 0.08;
  std::string prior_mode = "weight";
  double passage_share = 0.03;
  double unnamed_passage_share = 0.5;
  bool synonyms = false;
  std::string solver = "push";
  double epsilon = 1e-3;
  double tolerance = 1e-10;
  size_t max_nodes = 150;
  PriorOptions prior{"hybrid", 100};  // passage prior source and support (query_scores.h)
  Status Override(ParamReader& r);
  // The walk's part of these options (graph_algo/semflow_transition.h).
  SemFlowTransitionOptions Transition() const;
};

class SemFlowRetriever final : public OptionsRetriever<SemFlowOptions> {
 public:
  std::string_view Name() const override { return "semflow"; }
  Result<RetrievalOutput> Retrieve(const Snapshot& s, const RetrievalRequest& r) const override;
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_SEMFLOW_RETRIEVER_H_
