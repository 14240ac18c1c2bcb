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
//   onehop.seed_ratio       drop seeds below ratio × the best seed's score (0.9; as
//                           qafd.seed_ratio, see qafd_retriever.h; 0 keeps all)
//   onehop.llm              keywords by the A4.3 prompt when a chat model is set (true)
//   onehop.seed_specificity scale seed scores by entity specificity (true; seeds.h)
//
// Offline defaults, Recall@5 (bench/retrieval_report.py): LightRAG's 60
// seeds by name similarity give 18.8 on 2wiki and 22.9 on 2wiki-train;
// seed_ratio 0.9 38.4 / 46.1; with specificity (generic entities such as
// "Film" match the content word "film" exactly) and the query's exact names
// kept as seeds 62.9 / 64.9, and musique-dev 12.9 → 29.9, hotpotqa-train
// 19.5 → 36.5.
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
  double seed_ratio = 0.9;
  bool seed_specificity = true;
  bool llm = true;
  Status Override(ParamReader& r);
};

class OneHopRetriever final : public Retriever {
 public:
  std::string_view Name() const override { return "onehop"; }
  Result<RetrievalOutput> Retrieve(const Snapshot& s, const RetrievalRequest& r) const override;
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_ONE_HOP_RETRIEVER_H_
