// The query's scores against the passages, shared by the graph methods'
// seeding and ranking: the query embedded once, its dense cosines and BM25
// scores (sparse above the HNSW threshold), the passage prior of the walks'
// reset vectors, and the dense ranking a method falls back to.
//
// Thread-safety: pure functions of their inputs.
#ifndef FLOWRAG_RETRIEVAL_QUERY_SCORES_H_
#define FLOWRAG_RETRIEVAL_QUERY_SCORES_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/matrix.h"
#include "flowrag/status.h"
#include "graph/snapshot.h"
#include "retrieval/params.h"
#include "retrieval/retriever.h"

namespace flowrag {

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
// counts as 0 in both channels; bench/out/qafd_scaling.md); with an exact
// flat index BM25 lists every passage sharing a term (exact scores and priors
// below EngineOptions::hnsw_threshold passages, so every benchmark ranks as
// before).
struct QueryScores {
  FloatMatrix query;  // 1 row
  // Cosines the dense index gave, ascending by passage: every passage with a
  // flat index; the best kApproximateDenseScores with an approximate one,
  // the others counting as cosine 0. An int8 index gives them from its
  // codes (VectorSearchParams::exact_scores false: a prior needs 128 scores,
  // and their float rescoring read 512 rows, 2 MB, per query; doc/scale.md).
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
// passage, O(P·d); an approximate one (HNSW, or int8 columns), used above
// EngineOptions::hnsw_threshold passages, is searched for its best
// kApproximateDenseScores only: asking it for all P cost 20 ms at 21k
// passages against 1.8 ms flat (bench/out/qafd_scaling.md), and the graph
// methods read no more than their prior's few dozen best passages.
// With `lexical` the BM25 scores too, which PassagePrior then reads instead
// of searching again.
Result<QueryScores> ScoreQuery(const Snapshot& snapshot, const std::string& query,
                               bool lexical = false);

// Embeds texts with the snapshot's embedder (FailedPrecondition without one).
Result<FloatMatrix> EmbedTexts(const Snapshot& snapshot, const std::vector<std::string>& texts);

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

// The walks' fallback when no fact yields a seed: the dense ranking's top_k
// (score desc, passage asc), marked extra["fallback_dense"] = 1.
void RankDenseFallback(const QueryScores& qs, size_t top_k, RetrievalOutput* out);

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_QUERY_SCORES_H_
