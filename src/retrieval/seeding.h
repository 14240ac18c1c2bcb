// Seeding: where every graph method starts. The methods take their seeds
// from here, so that a change to how a query finds its entities is made in
// one place:
//   ppr, qafd (facts)  BuildFactReset: entity seeds from the facts most
//                      similar to the query and the entities it names, and
//                      the best passages of the passage prior (HippoRAG 2)
//   semflow            SeedWalkFromFacts, mixed with the passage prior by
//                      its own rule (semflow_retriever.h)
//   qafd (names)       SelectSeeds: the entities whose names are most similar
//                      to the query keywords (QAFD-RAG Algorithm 1)
//   sa                 QueryNames first, then its description search
//   onehop             RetrieveFacts for its global mode
// The query's passage scores they read are in query_scores.h; the
// per-snapshot indexes behind them in query_index.h (entity names, entity
// vectors), local_facts.h (the facts each passage states, their vectors'
// rows) and fact_bm25.h (BM25 over the fact texts).
//
// What each method reads of the graph's vectors at query time: ppr and
// semflow the fact vectors (LocalFacts' rows; the fact index itself only
// with fact_passages = 0); qafd the fact vectors and the entity rows (its
// query-aware edge weights; the entity index in its names mode); onehop the
// entity index and, in its global mode, the fact vectors; sa the description
// index (the entity index on a graph without descriptions) and the relation
// rows. No method reads the fact vectors with fact_search=bm25.
//
// Fact search (issue 34: "the graph-text vectors compressed or replaced,
// measured"). Fact texts are scored by the cosine of their vectors (the
// default) or by BM25 over their words (fact_search=bm25, fact_bm25.h), the
// channel that needs no fact vector: in the 2wiki snapshot segment (6,119
// passages, 276.5 MB) the fact vectors take 128.5 MB (the fact index gv.fi
// 63.5 MB, LocalFacts' rows lf.* 65.0 MB), the BM25 index fb.* 7.0 MB. The
// rule followed: BM25 becomes the default and the fact vectors go only if
// its Recall@5 is within 0.5 points of the vectors' (or better) for every
// fact-seeded method on every benchmark. It is not (bench/retrieval_report.py
// --runs 1 --graphs offline,openie, with and without --set fact_search=bm25;
// R@5 vector -> bm25):
//   better or equal: 2wiki ppr 92.8 -> 93.8, qafd 93.1 -> 94.1, semflow
//     76.0 -> 77.2; hotpotqa-train ppr 93.0 -> 94.5, semflow 89.0 -> 92.5;
//     musique-dev ppr 64.1 -> 65.2, semflow 59.4 -> 62.8, qafd 64.8 -> 64.9;
//     medical onehop 91.0 -> 93.4; the rest of 2wiki-train and medical
//     within 0.5;
//   worse by more than 0.5: musique-train OpenIE ppr 71.7 -> 69.2, semflow
//     69.1 -> 66.1, qafd 71.4 -> 67.8, onehop 50.6 -> 49.3; musique-train
//     offline qafd 70.3 -> 69.3, semflow 66.8 -> 66.1, onehop 46.4 -> 45.1;
//     hotpotqa-train qafd 93.0 -> 92.0, onehop 65.5 -> 64.0; 2wiki onehop
//     59.9 -> 58.4; musique-dev onehop 39.6 -> 36.5; medical OpenIE onehop
//     91.8 -> 91.1;
//   and R@2 falls further where the passages carry the evidence: medical
//     ppr 92.0 -> 87.6, semflow 91.8 -> 84.4 (OpenIE 88.8 -> 82.4).
// (Not examined question by question; a likely reason: the built-in
// embedder's fact vectors are lexical too, but with character n-grams and
// word bigrams, which match inflections and partial names that BM25's whole
// stemmed words miss.) So the vectors stay the default and the BM25 channel
// is an option; the rows the default reads are float16 instead (local_facts.h:
// int8 was measured too and is not within 0.5 points). What dropping the
// fact vectors would buy, measured on 2wiki with a build that makes none
// (bm25 answers identical to the table's): the segment 148.4 MB instead of
// 276.5 (24 instead of 45 KB per passage), the index run's peak RSS 277 MiB
// instead of 398 MiB, and a warm-cache new-process `flowrag query --method
// qafd` 169 MiB RSS instead of 284 MiB (wall 0.18-0.22 s against 0.23-0.24
// s, median of 5, on a machine shared with other work).
//
// Thread-safety: every function is reentrant.
#ifndef FLOWRAG_RETRIEVAL_SEEDING_H_
#define FLOWRAG_RETRIEVAL_SEEDING_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/matrix.h"
#include "flowrag/status.h"
#include "graph/knowledge_graph.h"
#include "graph/snapshot.h"
#include "graph_algo/ppr.h"
#include "llm/chat_model.h"
#include "retrieval/keywords.h"
#include "retrieval/params.h"
#include "retrieval/query_scores.h"
#include "retrieval/retriever.h"

namespace flowrag {

class LocalFacts;

// ---------------------------------------------------------------- keyword seeds
//
// Seed selection by maximum keyword similarity (QAFD-RAG §2.2, Algorithm 1,
// Eq. 1–3). Eq. 1: score(v) = max_i H_sim(e_{q,i}, e_v) over the query
// keywords' embeddings e_{q,i} and the entity-name embeddings e_v (cosine:
// all vectors are L2-normalised). Eq. 2: the N highest-scoring entities,
// ties by entity index. Implemented as one exact top-N search of the entity
// index per keyword followed by a max over the union: a node in the global
// top N by max-score is in the top N of the keyword that attains its max, so
// the union contains the answer. Entities scoring <= 0 against every keyword
// (no shared feature) are never seeds. O(|K|·(|V|·d or postings) + |V| log N).

struct Seed {
  uint32_t entity = 0;   // entity index (node id = graph.EntityNode(entity))
  float score = 0.0f;    // Eq. 1
  uint32_t keyword = 0;  // index of the keyword attaining the max
};

// Eq. 1–2 over the graph's entity index. `keyword_vectors` rows are
// L2-normalised keyword embeddings of the entity index's dimension.
// FailedPrecondition when the graph has no entity vectors or the dimensions
// differ. Result: best first, at most n.
//
// Offline refinements (both off by default, i.e. the paper's Eq. 1–2):
//   specificity  score × ln(1 + P/df_v) / ln(1 + P), df_v = passages
//                mentioning v, P = num_passages (the snapshot's; 0:
//                the graph's passage slots): an entity every passage names
//                ("Film") is weak evidence even when a keyword equals it
//                seeds). Selection and ranking use the product.
//   min_ratio    seeds scoring below min_ratio × the best score are dropped
//                (the best stays).
//   named        entities the query names exactly (keywords.h
//                QueryKeywords::matched_entities): seeds with score 1 (the
//                largest cosine), whatever their specificity.
struct SeedSelection {
  size_t n = 40;
  double min_ratio = 0.0;
  bool specificity = false;
  std::span<const uint32_t> named;
  size_t num_passages = 0;
};
Result<std::vector<Seed>> SelectSeeds(const KnowledgeGraph& graph,
                                      const FloatMatrix& keyword_vectors,
                                      const SeedSelection& selection);
inline Result<std::vector<Seed>> SelectSeeds(const KnowledgeGraph& graph,
                                             const FloatMatrix& keyword_vectors, size_t n) {
  return SelectSeeds(graph, keyword_vectors, SeedSelection{n, 0.0, false, {}});
}

// ---------------------------------------------------------------- named entities

// The entities whose names occur in `query` (keywords.h ExtractKeywords
// with the snapshot's entity-name matcher, names only): matched_entities,
// and proper_entities for those the query writes with a capitalised token.
QueryKeywords QueryNames(const Snapshot& snapshot, std::string_view query);

// ---------------------------------------------------------------- fact seeds
//
// Entity seeds from the facts most similar to the query, shared by the
// HippoRAG 2 PPR baseline, QAFD's facts mode and SemFlowRAG (§3.3 "Seed
// Retrieval and Initialization", A.2 "PPR reset distribution"):
//
//  1. Rank the graph's distinct fact texts by cosine with the query
//     (KnowledgeGraph::fact_index(); ids are fact text ids), or by BM25
//     (FactSearch::kBm25), and keep the top `facts` with a positive score.
//  2. Each kept fact text stands for every fact stated with that text
//     (FactsWithText: the offline extractor's sentence facts share one text);
//     its entities are the subjects and objects of those facts, each counted
//     once per fact text.
//  3. An entity's weight is score / EntityPassageCount(e) (the similarity
//     normalised by the entity's passage frequency), averaged over the kept
//     fact texts naming it (HippoRAG 2 `graph_search_with_fact_entities`).
//  4. Keep the `seeds` best entities (weight desc, then entity index asc).
//
// `score` is the raw cosine (or BM25 score), or with `normalize_scores` the
// score divided by the best fact's: HippoRAG 2 min-max normalises fact scores over
// all facts; the minimum over hundreds of thousands of facts is ≈ 0 for
// unrelated facts, and finding it exactly would cost a full scan per query,
// so it is taken as 0.
//
// Thread-safety: pure function of its inputs. Complexity: one fact-index
// search (k = facts) plus O(facts of the kept texts).

// How fact texts are scored against the query: the cosine of their vectors
// (GraphVectors::fact_index, or LocalFacts' rows of it) or BM25 over their
// words (retrieval/fact_bm25.h). The per-query option "fact_search"
// (vector | bm25), one key read by every method that seeds from facts
// (ppr, qafd, semflow, onehop).
enum class FactSearch { kVector, kBm25 };
inline constexpr char kFactSearchOption[] = "fact_search";
// Reads "fact_search" into *search; InvalidArgument for another value.
Status ReadFactSearch(ParamReader& r, FactSearch* search);

struct FactSeedOptions {
  FactSearch search = FactSearch::kVector;
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
  std::vector<FactHit> facts;     // best first
  std::vector<EntitySeed> seeds;  // best first
  size_t candidates_scored = 0;   // fact vectors scored
  size_t named = 0;  // seeds the query names with a capitalised word (SeedWalkFromFacts)
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

// The fact texts near the query (local_facts.h): those stated by the best
// `passages` passages of the hybrid prior (PassagePrior) or by a fact of one
// of `entities` (entity indexes); ascending, each once.
std::vector<uint32_t> NearFactTexts(const Snapshot& snapshot, const LocalFacts& local,
                                    const std::string& query, const QueryScores& qs,
                                    size_t passages, std::span<const uint32_t> entities);

// What the fact texts are scored against: `vector` (of the fact index's
// dimension) for FactSearch::kVector, `text` for kBm25.
struct FactQuery {
  FactSearch search = FactSearch::kVector;
  const float* vector = nullptr;
  std::string_view text;
};

// The best `k` fact texts for `fq`, those scoring > 0 only, best first (ties
// by fact text id). With `passages` > 0 only the fact texts near the query
// are scored (NearFactTexts: the local channel); with 0, or for the vector
// search when the graph's fact index has no rows to read (LocalFacts::
// has_vectors: an HNSW index), every fact text through its index (fact_index
// or FactBm25). None when the graph has no index of that kind.
// *candidates_scored counts the fact texts scored.
std::vector<FactHit> RetrieveFacts(const Snapshot& snapshot, const std::string& query,
                                   const QueryScores& qs, size_t passages,
                                   std::span<const uint32_t> entities, const FactQuery& fq,
                                   size_t k, size_t* candidates_scored);

// The seeding step both fact-seeded walks share (HippoRAG 2, SemFlowRAG §3.3):
// SeedsFromFacts on the query vector (no seeds when the graph has no fact
// index); the retrieved fact texts go to out->keywords and the candidate
// counts to out->diagnostics.
//
// With options.name_seeds, the entities whose names occur in `query`
// (keywords.h ExtractKeywords) written with a capitalised token are seeds
// too (a name the query writes in lower case, "liver cancer", only selects
// local facts: as a seed it cost 1.1 points R@5 on medical-openie), with weight = best fact score /
// EntityPassageCount(e) (1 / count when scores are normalised or no fact matched), or their fact
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

// ---------------------------------------------------------------- the fact-seeded reset

struct FactResetOptions {
  FactSearch search = FactSearch::kVector;  // how fact texts are scored
  size_t facts = 5;                    // fact texts scored for seeds (HippoRAG 2 linking_top_k)
  size_t seeds = 5;                    // entity seeds kept
  bool name_seeds = true;              // entities the query names are seeds too
  bool fact_filter = true;             // the LLM fact filter with a chat model
  double passage_share = 0.03;         // φ when the query names an entity
  double unnamed_passage_share = 0.5;  // φ otherwise
  size_t fact_passages = 20;           // local fact channel (FactSeedOptions::local_passages)
  PriorOptions prior{"hybrid", 50};    // the passages of the reset
};

// The FactResetOptions of a method's options (ppr, qafd's facts mode): its
// fields of the same names, and `seeds` entity seeds.
template <typename MethodOptions>
FactResetOptions FactResetOptionsOf(const MethodOptions& o, size_t seeds) {
  FactResetOptions r;
  r.search = o.fact_search;
  r.facts = o.facts;
  r.seeds = seeds;
  r.name_seeds = o.name_seeds;
  r.fact_filter = o.fact_filter;
  r.passage_share = o.passage_share;
  r.unnamed_passage_share = o.unnamed_passage_share;
  r.fact_passages = o.fact_passages;
  r.prior = o.prior;
  return r;
}

// A walk's reset vector (HippoRAG 2, ppr_retriever.h): entity seeds
// (SeedWalkFromFacts with normalised fact scores: fact seeds and the
// entities the query names) sharing 1 − φ by weight, and the best
// options.prior.top passages of the passage prior sharing φ by prior (all to
// the entities when no passage has a prior). φ = passage_share when the
// query names an entity with a capitalised word, unnamed_passage_share
// otherwise. `seeds.seeds` empty means no fact or name matched (the methods
// then fall back to the dense ranking). `chat` (may be null) runs the LLM
// fact filter; `out` receives the keywords and the seeding diagnostics
// (extra["seeding_ms"], ["prior_ms"]).
struct FactReset {
  FactSeeds seeds;
  std::vector<NodeWeight> entries;  // seeds first, then passages; Σ = 1 up to rounding
  double total = 0.0;               // the entries' intended sum: 1
};
Result<FactReset> BuildFactReset(const Snapshot& snapshot, const std::string& query,
                                 const QueryScores& qs, const FactResetOptions& options,
                                 ChatModel* chat, RetrievalOutput* out);

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_SEEDING_H_
