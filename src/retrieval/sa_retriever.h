// SA-RAG retrieval ("sa"): spreading activation over the query's entity
// subgraph (Pavlović et al., SA-RAG §5.4–5.5, Algorithm 1).
//
// Per query:
//  1. Seeds (§5.4). The query is embedded with the snapshot's embedder; the
//     top-k entity descriptions by cosine (description vector index) give
//     their entities (DESCRIBES), deduplicated, best description first.
//     Entities the query names exactly (keywords.h) are seeds before them
//     (sa.name_seeds; not in the paper, whose LLM-embedded descriptions
//     rank the named entities first anyway; Recall@5 2wiki 62.1 → 63.1,
//     2wiki-train 65.2 → 66.8, musique-dev 46.9 → 48.8).
//     A graph without descriptions (an imported OpenIE graph) seeds from
//     the top-k entity names instead (diagnostics.extra["seeds_by_name"]).
//  2. Subgraph (§5.4). All entities within `hops` RELATED_TO hops of a seed
//     (BFS by hop level, neighbours in id order) and every RELATED_TO arc
//     between two of them, one arc per fact and direction (both directions:
//     links are undirected, as in the authors' code). Link weight = cosine of
//     the query with the fact's relation text embedding (RelationDot),
//     rescaled w' = max(0, (w − c)/(1 − c)) (§5.5; the clip at 0 is the
//     authors' code). When the subgraph would exceed `max_entities`, the
//     expansion stops at that many entities (hub guard; reported in
//     diagnostics.extra["truncated"]).
//  3. Activation (§5.5, Algorithm 1; retrieval/spreading_activation.h):
//     seeds start at 1; entities with activation > τa are activated.
//     The adjacency given to Algorithm 1 holds only the arcs with w' > 0
//     reachable from the seeds through such arcs (inside the n-hop
//     subgraph): arcs of weight 0 carry no activation, so only relation
//     cosines around reachable entities are computed. In Algorithm 1 the
//     0-weight arcs also take part in the BFS, which changes the order in
//     which nodes are expanded (and so, rarely, how much activation a node
//     has when it is expanded); sa.all_arcs=true keeps every arc and runs
//     the exact published traversal, at the cost of scoring every relation
//     of the subgraph (≈100× slower on 2Wiki).
//  4. Passages (§5.5). Candidates are the passages that MENTION an activated
//     entity; those whose cosine with the query is below τd are dropped.
//     Ranking (the paper returns an unordered set): a candidate p scores
//         score(p) = 1 + a_max(p) · sim(q, p)    ∈ (1, 2]
//     (sim = cos, or the relative hybrid of sa.scale)
//     where a_max(p) is the highest activation among the activated entities
//     p mentions; ties by passage index. At most min(top_k, max_passages)
//     come from activation.
//  5. Dense fill. When activation yields fewer than top_k passages, the rest
//     of top_k comes from the dense ranking (cosine, score = cos ≤ 1, so
//     filled passages always rank below activated ones), skipping passages
//     already returned. diagnostics.extra["dense_fill"] counts them.
//  6. Relation context (§5.5). The relation texts of arcs between two
//     activated entities whose rescaled weight w' exceeds τr (the authors'
//     code compares the rescaled weight), distinct, by w' descending, go to
//     RetrievalOutput::context (at most max_relations; 0 = all).
//
// Defaults (SaOptions) are the paper's: c = 0.4, τa = 0.5, τd = 0.45,
// τr = 0.5. The paper tunes k and n per dataset (MuSiQue k=3, n=4; 2Wiki
// k=10, n=3); the single default here is the 2Wiki setting k = 10, n = 3:
// for unknown data more seeds are the safer entry (comparison questions need
// two or more unrelated seeds, and a lexical embedder ranks descriptions less
// precisely than the paper's neural one), and 3 hops bounds the subgraph,
// which grows roughly as degree^n on a graph with hub entities.
//
// Outputs besides `ranked`: seeds (entity nodes, score 1), node_scores
// (entities by activation, then the activation passages by score; at most
// max_nodes entities), subgraph (RELATED_TO arcs that carried activation,
// weight = w', flow = activation added; MENTIONS edges from the entity to
// each activation passage), paths (for each activation passage: the seed,
// the chain of arcs that first activated each entity, the passage), context
// (relation texts), diagnostics (iterations = BFS expansions of Algorithm 1,
// nodes/edges touched, time, extra counters).
//
// Per-query overrides:
//   sa.k               top-k entity descriptions → seeds            (10)
//   sa.hops            subgraph radius n in RELATED_TO hops          (3)
//   sa.c               weight rescaling constant c, in [0, 1)        (0.4)
//   sa.tau_a           activation threshold τa                       (0.5)
//   sa.tau_d           passage cosine threshold τd                   (0.45)
//   sa.tau_r           relation weight threshold τr (on w')          (0.5)
//   sa.max_passages    cap on activation passages; 0 = top_k         (0)
//   sa.max_relations   cap on context relation texts; 0 = all        (0)
//   sa.max_entities    subgraph size cap (entities)                  (50000)
//   sa.max_nodes       entities reported in node_scores              (500)
//   sa.dense_fill      fill top_k from the dense ranking             (true)
//   sa.all_arcs        exact traversal over all arcs, see step 3     (false)
//   sa.name_seeds      entities the query names are seeds too, first  (true)
//   sa.scale           absolute | relative | auto: how c and τd read   (auto)
//                      cosines. absolute: as published (neural
//                      embeddings). relative: a link's cosine is divided by
//                      the best relation cosine among the seeds' own links
//                      (capped at 1), and a passage's similarity is the mean
//                      of its cosine and BM25 score, each divided by the
//                      best candidate's (the walks' hybrid prior), so c and
//                      τd are fractions of the best evidence. Recall@5
//                      2wiki 59.7 → 62.1, musique-dev 41.5 → 46.9,
//                      hotpotqa-train 72.0 → 76.0. auto: relative with the built-in lexical
//                      embedder, whose cosines of related texts sit far
//                      below a neural model's (on 2wiki the median query
//                      had one passage above τd = 0.45 and no link above
//                      c = 0.4: SA returned the dense ranking), absolute
//                      with a model endpoint.
//
// Errors: FailedPrecondition when the snapshot has no knowledge graph, no
// description or entity vectors or no dense passage index; InvalidArgument for bad
// overrides.
// Complexity: O(k·log D) description search + O(subgraph arcs · nnz of the
// relation vectors) weights + O(k·subgraph) activation + O(P·nnz(q)) dense
// scoring. Thread-safety: Retrieve() is const and reentrant (per-thread
// scratch).
#ifndef FLOWRAG_RETRIEVAL_SA_RETRIEVER_H_
#define FLOWRAG_RETRIEVAL_SA_RETRIEVER_H_

#include <string>

#include "retrieval/params.h"
#include "retrieval/retriever.h"

namespace flowrag {

struct SaOptions {
  size_t k = 10;            // SA-RAG §5.4 (2Wiki setting; MuSiQue used 3)
  size_t hops = 3;          // SA-RAG §5.4 (2Wiki setting; MuSiQue used 4)
  double c = 0.4;           // SA-RAG §5.5
  double tau_a = 0.5;       // SA-RAG §5.5
  double tau_d = 0.45;      // SA-RAG §5.5
  double tau_r = 0.5;       // SA-RAG §5.5
  size_t max_passages = 0;  // 0 = top_k
  size_t max_relations = 0; // 0 = all
  size_t max_entities = 50000;
  size_t max_nodes = 500;
  bool dense_fill = true;
  bool all_arcs = false;
  std::string scale = "auto";
  bool name_seeds = true;

  // Reads the sa.* keys; InvalidArgument naming the key for out-of-range values.
  Status Override(ParamReader& r);
};

class SaRetriever final : public Retriever {
 public:
  std::string_view Name() const override { return "sa"; }
  Result<RetrievalOutput> Retrieve(const Snapshot& s, const RetrievalRequest& r) const override;
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_SA_RETRIEVER_H_
