// SA-RAG retrieval ("sa"): spreading activation over the query's entity
// graph (Pavlović et al., SA-RAG §5.4–5.5, Algorithm 1), with passages
// ranked by the activation of the entities they are about.
//
// Per query:
//  1. Seeds (§5.4). Entities the query names exactly (keywords.h;
//     sa.name_seeds) first, then the entities of the top-k entity
//     descriptions by cosine with the query (description vector index),
//     deduplicated. A graph without descriptions (an imported OpenIE graph)
//     takes the top-k entity names instead (diagnostics.extra["seeds_by_name"]).
//     With a neural embedder the best descriptions are those of the entities
//     the question is about; with the lexical one they are mostly other
//     entities sharing its words, and every seed's passage ranks first
//     (step 4), hence k = 1 (Recall@5 below).
//  2. Link weights (§5.5). A RELATED_TO link (one per fact) weighs the
//     cosine of its relation text with the query, rescaled
//     w' = max(0, (w − c)/(1 − c)) (the clip at 0 is the authors' code).
//     Offline two adaptations, each measured:
//       - relation query (sa.relation_query=unnamed): the query with the
//         names of the entities it names blanked out. They are the seeds
//         already; what is left ("the director of film …") says which
//         links to follow, and a relation text that repeats the seed's name
//         no longer outscores the one that answers the question;
//       - relative scale (sa.scale, see below): cosines divided by the best
//         relation cosine among the seeds' own links.
//  3. Activation (Algorithm 1; graph_algo/spreading_activation.h SpreadActivationLocal).
//     Seeds start at 1; a[t] ← min(1, a[t] + w'·a[u]) along every positive
//     link of an expanding node, BFS per seed. The n-hop subgraph of §5.4 is
//     not fetched up front (3 hops from 10 seeds reached 33.8k of 2wiki's
//     45.4k entities): entities and their links are read when activation
//     reaches them, with the bounds of classic spreading-activation models:
//       - distance: a node expands only within `hops` BFS levels of the
//         pass's seed (the paper's n);
//       - firing threshold: a node other than the seed expands only when its
//         activation is at least `fire` (= τa: activated entities spread);
//       - fan-out: a node linked by more than `fan_out` facts spreads
//         fan_out/degree of its activation, so a hub ("American", 1,113
//         passages) does not activate its whole neighbourhood.
//     Activated entities: activation > τa.
//  4. Passages (§5.5), ranked by activation before similarity. A passage
//     gets the highest activation among the activated entities it is about
//     (their descriptions' passages and title mentions, the "describes"
//     links of SA-RAG's graph), or `mention_weight` × that activation for
//     one merely naming them. Those with similarity below τd are dropped;
//     the rest score
//         score(p) = 1 + a(p) + β·sim(q, p)       (β = 0.1)
//     so activation orders them and similarity breaks its ties (activation
//     saturates at 1 for every entity reached over a strong link). At most
//     `per_entity` passages per activating entity (a seed whose document is
//     split into many passages would fill top_k alone) and at most
//     min(top_k, max_passages) in all. sim = cosine, or with the relative
//     scale the mean of the cosine and the BM25 score, each divided by the
//     corpus's best for the query (the walks' hybrid prior).
//  5. Fill (sa.dense_fill). When activation yields fewer than top_k
//     passages, the rest come from the `fill_depth` best passages by cosine
//     and by BM25, ordered by sim (score ≤ 1, below every activation
//     passage). diagnostics.extra["dense_fill"] counts them.
//  6. Relation context (§5.5). The relation texts of links between two
//     activated entities whose w' exceeds τr (the authors' code compares the
//     rescaled weight), distinct, by w' descending, go to
//     RetrievalOutput::context (at most max_relations; 0 = all).
//
// Defaults (SaOptions). τa and τr are the paper's (§5.5), hops its 2Wiki
// setting. The others were measured offline (built-in embedder, heuristic
// graph; Recall@5 on the train splits 2wiki-train / musique-train /
// musique-train OpenIE, then checked on 2wiki, musique-dev, hotpotqa-train
// and medical). With them: 86.7 / 59.4 / 62.7.
//   k             1: k = 3 78.0 / 55.7 / 62.8; k = 10 (the paper's 2Wiki
//                 setting) 67.5 / 54.3 / 58.5
//   c             0.2: the paper's 0.4 85.4 / 58.9 / 62.7 (the relative scale
//                 already puts the best link at 1)
//   τd            0 (paper 0.45): a bridge passage shares few words with the
//                 question; τd = 0.1 gives 81.6 / 58.6 / 62.0 and 0.45
//                 70.0 / 55.9 / 57.1. The per-entity cap and the fill prune.
//   fan_out       20: without it 81.0 / 58.4 / 63.0 (a hub reached at 1.0
//                 activates hundreds of entities at 1.0)
//   relation query unnamed: the full query 82.2 / 58.2 / 62.2
//   per_entity    2: no cap 85.0 / 55.8 / 61.7, and medical (documents split
//                 into passages) 96.1 → 87.6
//   mention_weight 0.5: 1 (about = names) 81.0 / 57.7 / 62.7
//   fire          0.5 (= τa): 0 (every reached node expands, as Algorithm 1)
//                 86.9 / 58.2 / 62.7 with 1.7× the entities read
//   β             0.1: 1 gives 85.0 / 59.4 / 62.5 at c = 0.4
//
// Outputs besides `ranked`: seeds (entity nodes, score 1), node_scores
// (entities by activation, then the activation passages by score − 1; at
// most max_nodes entities), context (relation texts), diagnostics
// (iterations = BFS pops, nodes_touched = entities read or reached plus
// candidate passages, edges_touched = link relaxations plus MENTIONS /
// DESCRIBES entries read; extra counters and per-step times). With
// RetrievalRequest::explain also the subgraph (RELATED_TO links that carried
// activation, weight = the weight used, flow = activation added; a MENTIONS
// edge from the entity to each activation passage) and paths (seed → the
// links that first activated each entity → passage).
//
// Per-query overrides:
//   sa.k               description seeds after the named ones          (1)
//   sa.hops            BFS levels a node may be from its pass's seed   (3)
//   sa.c               weight rescaling constant c, in [0, 1)          (0.2)
//   sa.tau_a           activation threshold τa                         (0.5)
//   sa.tau_d           passage similarity threshold τd                 (0)
//   sa.tau_r           relation weight threshold τr (on w')            (0.5)
//   sa.fire            firing threshold                                (0.5)
//   sa.fan_out         fan-out constraint in facts; 0 = off            (20)
//   sa.mention_weight  activation share of a passage naming an entity (0.5)
//   sa.beta            similarity's weight after activation            (0.1)
//   sa.relation_query  unnamed | query (see step 2)                    (unnamed)
//   sa.per_entity      passages per activating entity; 0 = no cap      (2)
//   sa.max_passages    cap on activation passages; 0 = top_k           (0)
//   sa.max_relations   cap on context relation texts; 0 = all          (0)
//   sa.max_entities    entities discovered at most (hub guard)         (50000)
//   sa.max_nodes       entities reported in node_scores                (500)
//   sa.dense_fill      fill top_k by similarity                        (true)
//   sa.fill_depth      passages by cosine and by BM25 the fill draws on (50)
//   sa.name_seeds      entities the query names are seeds, first       (true)
//   sa.scale           absolute | relative | auto: how c and τd read   (auto)
//                      cosines. absolute: as published (neural
//                      embeddings). relative: see steps 2 and 4. auto:
//                      relative with the built-in lexical embedder, whose
//                      cosines of related texts sit far below a neural
//                      model's (on 2wiki the median query had one passage
//                      above τd = 0.45 and no link above c = 0.4), absolute
//                      with a model endpoint.
//
// Errors: FailedPrecondition when the snapshot has no knowledge graph, no
// description or entity vectors or no dense passage index; InvalidArgument
// for bad overrides.
// Complexity: O(k·search) seeds + O(arcs of the activated entities ·
// nnz of their relation vectors) + O(mentions of the activated entities);
// nothing proportional to the graph. Per query also one scan of the passage
// vectors (query_scores.h ScoreQuery: the candidates' cosines and the fill)
// and one BM25 search (its best 300). Thread-safety: Retrieve() is const
// and reentrant (per-thread scratch).
#ifndef FLOWRAG_RETRIEVAL_SA_RETRIEVER_H_
#define FLOWRAG_RETRIEVAL_SA_RETRIEVER_H_

#include <string>

#include "retrieval/options_retriever.h"
#include "retrieval/params.h"
#include "retrieval/retriever.h"

namespace flowrag {

struct SaOptions {
  size_t k = 1;
  size_t hops = 3;     // SA-RAG §5.4 (2Wiki setting; MuSiQue used 4)
  double c = 0.2;      // SA-RAG §5.5 uses 0.4; see the file comment
  double tau_a = 0.5;  // SA-RAG §5.5
  double tau_d = 0.0;  // SA-RAG §5.5 uses 0.45; see the file comment
  double tau_r = 0.5;  // SA-RAG §5.5
  double fire = 0.5;
  size_t fan_out = 20;
  double mention_weight = 0.5;
  double beta = 0.1;
  std::string relation_query = "unnamed";
  size_t per_entity = 2;
  size_t max_passages = 0;   // 0 = top_k
  size_t max_relations = 0;  // 0 = all
  size_t max_entities = 50000;
  size_t max_nodes = 500;
  bool dense_fill = true;
  size_t fill_depth = 50;
  std::string scale = "auto";
  bool name_seeds = true;

  // Reads the sa.* keys; InvalidArgument naming the key for out-of-range values.
  Status Override(ParamReader& r);
};

class SaRetriever final : public OptionsRetriever<SaOptions> {
 public:
  std::string_view Name() const override { return "sa"; }
  Result<RetrievalOutput> Retrieve(const Snapshot& s, const RetrievalRequest& r) const override;
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_SA_RETRIEVER_H_
