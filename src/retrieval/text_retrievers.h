// The text baselines: BM25, dense (cosine over passage embeddings) and
// hybrid (reciprocal rank fusion of the two).
//
// Per-query overrides (QueryOptions::params):
//   bm25.k1, bm25.b          BM25 parameters (default 1.2, 0.75)
//   dense.ef_search          HNSW breadth when the dense index is HNSW (128)
//   hybrid.rrf_k             RRF constant k in Σ 1/(k + rank) (60, Cormack et al. 2009)
//   hybrid.candidates        depth of each fused list (100)
#ifndef FLOWRAG_RETRIEVAL_TEXT_RETRIEVERS_H_
#define FLOWRAG_RETRIEVAL_TEXT_RETRIEVERS_H_

#include "retrieval/options_retriever.h"
#include "retrieval/params.h"
#include "retrieval/retriever.h"
#include "text/bm25_index.h"

namespace flowrag {

struct DenseOptions {
  size_t ef_search = 128;
  Status Override(ParamReader& r) { return r.Read("dense.ef_search", &ef_search); }
};

struct HybridOptions {
  double rrf_k = 60.0;
  size_t candidates = 100;
  Status Override(ParamReader& r);
};

Status OverrideBm25(ParamReader& r, Bm25Params* p);

// The bm25 method's options: the BM25 parameters.
struct Bm25Options {
  Bm25Params params;
  Status Override(ParamReader& r) { return OverrideBm25(r, &params); }
};

// The hybrid method's options: its two lists' and the fusion's.
struct HybridMethodOptions {
  Bm25Params bm25;
  DenseOptions dense;
  HybridOptions hybrid;
  Status Override(ParamReader& r);
};

// Scores all passages with BM25. O(postings of the query terms).
class Bm25Retriever final : public OptionsRetriever<Bm25Options> {
 public:
  std::string_view Name() const override { return "bm25"; }
  Result<RetrievalOutput> Retrieve(const Snapshot& s, const RetrievalRequest& r) const override;
};

// Embeds the query with the snapshot's embedder and searches the passage
// vectors. FailedPrecondition when the store has no embeddings.
class DenseRetriever final : public OptionsRetriever<DenseOptions> {
 public:
  std::string_view Name() const override { return "dense"; }
  Result<RetrievalOutput> Retrieve(const Snapshot& s, const RetrievalRequest& r) const override;
};

// Reciprocal rank fusion of BM25 and dense lists; ties by passage index.
class HybridRetriever final : public OptionsRetriever<HybridMethodOptions> {
 public:
  std::string_view Name() const override { return "hybrid"; }
  Result<RetrievalOutput> Retrieve(const Snapshot& s, const RetrievalRequest& r) const override;
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_TEXT_RETRIEVERS_H_
