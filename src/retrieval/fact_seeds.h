// Entity seeds from the facts most similar to the query, shared by the
// HippoRAG 2 PPR baseline and SemFlowRAG (§3.3 "Seed Retrieval and
// Initialization", A.2 "PPR reset distribution").
//
//  1. Rank the graph's distinct fact texts by cosine with the query
//     (KnowledgeGraph::fact_index(); ids are fact text ids) and keep the
//     top `facts` with a positive score.
//  2. Each kept fact text stands for every fact stated with that text
//     (FactsWithText: the offline extractor's sentence facts share one text);
//     its entities are the subjects and objects of those facts, each counted
//     once per fact text.
//  3. An entity's weight is score / EntityPassageCount(e) (the similarity
//     normalised by the entity's passage frequency), averaged over the kept
//     fact texts naming it (HippoRAG 2 `graph_search_with_fact_entities`).
//  4. Keep the `seeds` best entities (weight desc, then entity index asc).
//
// `score` is the raw cosine, or with `normalize_scores` the cosine divided
// by the best fact's cosine: HippoRAG 2 min-max normalises fact scores over
// all facts; the minimum over hundreds of thousands of facts is ≈ 0 for
// unrelated facts, and finding it exactly would cost a full scan per query,
// so it is taken as 0.
//
// Thread-safety: pure function of its inputs. Complexity: one fact-index
// search (k = facts) plus O(facts of the kept texts).
#ifndef FLOWRAG_RETRIEVAL_FACT_SEEDS_H_
#define FLOWRAG_RETRIEVAL_FACT_SEEDS_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/matrix.h"
#include "flowrag/status.h"
#include "graph/knowledge_graph.h"
#include "graph/snapshot.h"
#include "llm/chat_model.h"
#include "retrieval/params.h"
#include "retrieval/retriever.h"

namespace flowrag {

struct FactSeedOptions {
  size_t facts = 12;  // fact texts kept (SemFlowRAG A.2: top 12 facts)
  size_t seeds = 20;  // entity seeds kept (SemFlowRAG A.2: top 20 entity seeds)
  bool normalize_scores = false;
  // Entities whose name the query spells out (SeedWalkFromFacts) join the
  // seeds as if a fact naming them had the best fact's score.
  bool name_seeds = true;
  // With a chat model (SeedWalkFromFacts): the LLM fact filter of
  // SemFlowRAG A.5.2 / HippoRAG 2 keeps at most `facts` of the retrieved
  // facts (query_llm.h LlmFilterFacts).
  bool fact_filter = true;
  // SeedWalkFromFacts: with N > 0 only the fact texts stated in the N best
  // passages of the hybrid prior and those of the entities the query names
  // are scored (retrieval/local_facts.h); 0 scores every fact (HippoRAG 2).
  size_t local_passages = 0;
};

struct FactHit {
  uint32_t fact_text = 0;
  double score = 0.0;  // cosine (or normalised, see above)
};

struct EntitySeed {
  uint32_t entity = 0;  // entity index (node = graph.EntityNode(entity))
  double weight = 0.0;
};

struct FactSeeds {
  std::vector<FactHit> facts;       // best first
  std::vector<EntitySeed> seeds;    // best first
  size_t candidates_scored = 0;     // fact vectors scored
  size_t named = 0;                 // seeds the query names with a capitalised word (SeedWalkFromFacts)
};

// Keeps a subset of the retrieved facts (indexes into the hits, ascending).
using FactFilter = std::function<Result<std::vector<size_t>>(std::span<const FactHit>)>;

// Steps 2–4 on already retrieved fact hits (best first): the filter, score
// normalisation and the entity weights.
Result<FactSeeds> SeedsFromHits(const KnowledgeGraph& graph, std::vector<FactHit> hits,
                                size_t candidates_scored, const FactSeedOptions& options,
                                const FactFilter& filter = {});

// FailedPrecondition when the graph has no fact vectors; `query` must have
// fact_index()->Dimension() floats. An empty `seeds` means no fact matched
// (or the filter kept none). `filter`, when set, runs between step 1 and 2.
Result<FactSeeds> SeedsFromFacts(const KnowledgeGraph& graph, const float* query,
                                 const FactSeedOptions& options, const FactFilter& filter = {});

// Passages an approximate passage index scores per query (ScoreQuery): the
// HNSW search breadth's default, so it costs what a top-10 search costs, and
// more than any prior reads (semflow's 100 passages is the largest).
inline constexpr size_t kApproximateDenseScores = 128;

struct PassageScore {
  uint32_t passage = 0;
  float score = 0.0f;
};

// The query embedded with the snapshot's embedder and its passage scores,
// sparse so that the graph methods' per-query work does not grow with the
// corpus: an approximate index lists kApproximateDenseScores passages, and
// then BM25 its best kApproximateDenseScores too (a passage below them
// counts as 0 in both channels; bench/out/qafd_scaling.md); with a flat
// index BM25 lists every passage sharing a term (exact scores and priors
// below EngineOptions::hnsw_threshold passages, so every benchmark ranks as
// before).
struct QueryScores {
  FloatMatrix query;  // 1 row
  // Cosines the dense index gave, ascending by passage: every passage with a
  // flat index; the best kApproximateDenseScores with an approximate one,
  // the others counting as cosine 0.
  std::vector<PassageScore> dense;
  // With `lexical`: the BM25 score of each passage sharing a term with the
  // query (only the best BestBm25() when approximate), ascending by passage
  // (the others score 0).
  bool lexical = false;
  std::vector<PassageScore> bm25;
  size_t num_passages = 0;
  size_t candidates_scored = 0;
  // The dense index is approximate and listed its best only.
  bool approximate = false;

  // How many BM25 scores to list: kApproximateDenseScores when
  // `approximate`, else 0 (all).
  size_t BestBm25() const { return approximate ? kApproximateDenseScores : 0; }

  // Cosine of passage p (0 where not listed). O(1) when every passage is
  // listed, else O(log |dense|).
  float Cosine(uint32_t p) const;
  // The best listed cosine (0 when none is listed or all are negative).
  float BestCosine() const;
  // Every passage's cosine (num_passages floats), for the methods that read
  // them all. O(num_passages).
  std::vector<float> Cosines() const;
};

// QueryScores::Cosine on a `dense` list over `num_passages` passages.
float CosineOf(std::span<const PassageScore> dense, size_t num_passages, uint32_t p);

// FailedPrecondition when the snapshot has no embedder, dense index or
// graph, or when the dimensions disagree. A flat passage index scores every
// passage, O(P·d); an approximate (HNSW) one, used above
// EngineOptions::hnsw_threshold passages, is searched for its best
// kApproximateDenseScores only: asking it for all P cost 20 ms at 21k
// passages against 1.8 ms flat (bench/out/qafd_scaling.md), and the graph
// methods read no more than their prior's few dozen best passages.
// With `lexical` the BM25 scores too, which PassagePrior then reads instead
// of searching again.
Result<QueryScores> ScoreQuery(const Snapshot& snapshot, const std::string& query,
                               bool lexical = false);

// (x − min) / (max − min) over `values`; all zeros when max == min.
std::vector<double> MinMaxNormalize(const std::vector<float>& values);

// The passage part of the walks' reset vector: a weight in (0, 1] per
// passage, ascending by passage, passages of weight 0 left out.
//   source "dense"   min-max normalised dense cosine over every passage
//                    (HippoRAG 2, SemFlowRAG A.2)
//   source "bm25"    min-max normalised BM25 score (0 for passages sharing no term)
//   source "hybrid"  the mean of the two
//   top              keep only the `top` best passages (0 = all, as in HippoRAG 2;
//                    ties at the cut by passage index): the walk starts near
//                    the query instead of from every passage (the push
//                    solver's work grows with the reset's support).
// The embedder behind "dense" is the configured one; offline it is the
// hashed lexical embedder, which ranks passages below BM25, hence the choice.
// Cost O(listed scores): the minimum over every passage is 0 whenever some
// passage is not listed and every listed score is ≥ 0, which is what BM25
// and an approximate index's best cosines give; otherwise (a negative
// cosine among an approximate index's best) the scores are spread over
// every passage, O(P), and the result is the same.
struct PriorOptions {
  std::string source = "hybrid";
  size_t top = 0;
  // Reads `<prefix>.prior` and `<prefix>.prior_top`; InvalidArgument on an
  // unknown source.
  Status Override(ParamReader& r, const std::string& prefix);
};
struct PassageWeight {
  uint32_t passage = 0;
  double weight = 0.0;
};
std::vector<PassageWeight> PassagePrior(const Snapshot& snapshot, const std::string& query,
                                        const QueryScores& qs, const PriorOptions& options);

// The seeding step both fact-seeded walks share (HippoRAG 2, SemFlowRAG §3.3):
// SeedsFromFacts on the query vector (no seeds when the graph has no fact
// index); the retrieved fact texts go to out->keywords and the candidate
// counts to out->diagnostics.
//
// With options.name_seeds, the entities whose names occur in `query`
// (keywords.h ExtractKeywords) written with a capitalised token are seeds
// too (a name the query writes in lower case, "liver cancer", only selects
// local facts: as a seed it cost 1.1 points R@5 on medical-openie), with weight = best fact score / EntityPassageCount(e) (1 /
// count when scores are normalised or no fact matched), or their fact
// weight when higher. They are kept in addition to the `seeds` best fact
// seeds: HippoRAG 1 links the query's named entities to graph nodes the
// same way; with the offline lexical embedder a fact rarely outranks the
// question's own names. diagnostics.extra["name_seeds"] counts them.
//
// With `chat` and options.fact_filter the retrieved facts go through the
// LLM fact filter first (extra["facts_filtered_out"]); a failing call keeps
// every fact and sets extra["llm_fallback"] = 1.
Result<FactSeeds> SeedWalkFromFacts(const Snapshot& s, const std::string& query,
                                    const QueryScores& qs, const FactSeedOptions& options,
                                    ChatModel* chat, RetrievalOutput* out);

// The walks' fallback when no fact yields a seed: the dense ranking's top_k
// (score desc, passage asc), marked extra["fallback_dense"] = 1.
void RankDenseFallback(const QueryScores& qs, size_t top_k, RetrievalOutput* out);

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_FACT_SEEDS_H_
