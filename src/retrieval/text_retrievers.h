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

// Scores all passages with BM25. O(postings of the query terms).
class Bm25Retriever final : public Retriever {
 public:
  std::string_view Name() const override { return "bm25"; }
  Result<RetrievalOutput> Retrieve(const Snapshot& s, const RetrievalRequest& r) const override;
  Status ReadOptions(ParamReader& r) const override {
    Bm25Params p; return OverrideBm25(r, &p);
  }
};

// Embeds the query with the snapshot's embedder and searches the passage
// vectors. FailedPrecondition when the store has no embeddings.
class DenseRetriever final : public Retriever {
 public:
  std::string_view Name() const override { return "dense"; }
  Result<RetrievalOutput> Retrieve(const Snapshot& s, const RetrievalRequest& r) const override;
  Status ReadOptions(ParamReader& r) const override {
    DenseOptions o; return o.Override(r);
  }
};

// Reciprocal rank fusion of BM25 and dense lists; ties by passage index.
class HybridRetriever final : public Retriever {
 public:
  std::string_view Name() const override { return "hybrid"; }
  Result<RetrievalOutput> Retrieve(const Snapshot& s, const RetrievalRequest& r) const override;
  Status ReadOptions(ParamReader& r) const override {
    Bm25Params bm25;
    DenseOptions dense;
    HybridOptions hybrid;
    FLOWRAG_RETURN_IF_ERROR(OverrideBm25(r, &bm25));
    FLOWRAG_RETURN_IF_ERROR(dense.Override(r));
    return hybrid.Override(r);
  }
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_TEXT_RETRIEVERS_H_
