// One-hop baseline (LightRAG "local" mode; Guo et al. 2024, as compared in
// QAFD-RAG §4): seed entities by keyword similarity (the same Algorithm 1 as
// QAFD, seeds.h), their one-hop RELATED_TO neighbourhood, and the passages
// that mention them.
//
// Passage score: max_{seeds s it mentions} c_s + λ·max_{neighbours n it
// mentions} c_n + 10^-3·(seeds and neighbours it mentions), where
// c = score·(1 + ln occurrences in the passage) and a neighbour's score is
// its best adjacent seed's,
// λ = onehop.neighbor_weight. (LightRAG orders text chunks by the rank of the
// entity they come from, then by how many one-hop relations they carry; this
// is that order as one score, and a passage reached only through a neighbour
// can still rank. A plain sum over all seeds favours hub passages that
// mention many weak seeds.)
//
// Per-query options:
//   onehop.seeds            seed entities (60; LightRAG's default top_k)
//   onehop.neighbor_weight  λ (0.5)
//   onehop.max_neighbors    neighbours taken per seed, most facts first (100; bounds hub cost)
//   onehop.max_keywords     keyword cap (24)
//
// Thread-safety: Retrieve() is const and reentrant.
// Complexity: O(seed selection + Σ_seeds deg + mentions of seeds and neighbours).
#ifndef FLOWRAG_RETRIEVAL_ONE_HOP_RETRIEVER_H_
#define FLOWRAG_RETRIEVAL_ONE_HOP_RETRIEVER_H_

#include "retrieval/params.h"
#include "retrieval/retriever.h"

namespace flowrag {

struct OneHopOptions {
  size_t seeds = 60;
  double neighbor_weight = 0.5;
  size_t max_neighbors = 100;
  size_t max_keywords = 24;
  Status Override(ParamReader& r);
};

class OneHopRetriever final : public Retriever {
 public:
  std::string_view Name() const override { return "onehop"; }
  Result<RetrievalOutput> Retrieve(const Snapshot& s, const RetrievalRequest& r) const override;
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_ONE_HOP_RETRIEVER_H_
