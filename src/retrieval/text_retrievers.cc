#include "retrieval/text_retrievers.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/stopwatch.h"

namespace flowrag {
namespace {

Result<std::vector<RankedPassage>> Bm25Ranking(const Snapshot& s, const std::string& query,
                                               size_t k, const Bm25Params& params, size_t* scored) {
  std::vector<RankedPassage> out;
  for (const Bm25Hit& h : s.bm25().Search(query, k, params, scored)) {
    out.push_back({h.doc, h.score});
  }
  return out;
}

Result<std::vector<RankedPassage>> DenseRanking(const Snapshot& s, const std::string& query,
                                                size_t k, const DenseOptions& options,
                                                size_t* scored) {
  if (s.dense() == nullptr || s.embedder() == nullptr) {
    return Status::FailedPrecondition(
        "dense retrieval: the store has no passage embeddings for the configured embedder "
        "(run `flowrag index` first)");
  }
  std::string q(query);
  FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix qv,
                           s.embedder()->Embed(std::span<const std::string>(&q, 1)));
  if (qv.cols != s.dense()->Dimension()) {
    return Status::FailedPrecondition("dense retrieval: query embedding has " +
                                      std::to_string(qv.cols) + " dimensions, index has " +
                                      std::to_string(s.dense()->Dimension()));
  }
  VectorSearchParams params;
  params.k = k;
  params.ef_search = options.ef_search;
  VectorSearchStats stats;
  std::vector<RankedPassage> out;
  for (const VectorHit& h : s.dense()->Search(qv.row(0), params, &stats)) {
    out.push_back({h.id, h.score});
  }
  if (scored) *scored = stats.candidates_scored;
  return out;
}

}  // namespace

Status OverrideBm25(ParamReader& r, Bm25Params* p) {
  FLOWRAG_RETURN_IF_ERROR(r.Read("bm25.k1", &p->k1));
  FLOWRAG_RETURN_IF_ERROR(r.Read("bm25.b", &p->b));
  if (p->k1 < 0) return Status::InvalidArgument("option bm25.k1: expected >= 0");
  if (p->b < 0 || p->b > 1) return Status::InvalidArgument("option bm25.b: expected 0..1");
  return Status::Ok();
}

Status HybridOptions::Override(ParamReader& r) {
  FLOWRAG_RETURN_IF_ERROR(r.Read("hybrid.rrf_k", &rrf_k));
  FLOWRAG_RETURN_IF_ERROR(r.Read("hybrid.candidates", &candidates));
  if (rrf_k < 0) return Status::InvalidArgument("option hybrid.rrf_k: expected >= 0");
  return Status::Ok();
}

Status HybridMethodOptions::Override(ParamReader& r) {
  FLOWRAG_RETURN_IF_ERROR(OverrideBm25(r, &bm25));
  FLOWRAG_RETURN_IF_ERROR(dense.Override(r));
  return hybrid.Override(r);
}

Result<RetrievalOutput> Bm25Retriever::Retrieve(const Snapshot& s,
                                                const RetrievalRequest& r) const {
  const auto start = SteadyClock::now();
  std::optional<Bm25Options> scratch;
  FLOWRAG_ASSIGN_OR_RETURN(const Bm25Options* options, RequestOptions(r, &scratch));
  RetrievalOutput out;
  FLOWRAG_ASSIGN_OR_RETURN(out.ranked, Bm25Ranking(s, r.query, r.top_k, options->params,
                                                   &out.diagnostics.candidates_scored));
  out.diagnostics.time_ms = MillisSince(start);
  return out;
}

Result<RetrievalOutput> DenseRetriever::Retrieve(const Snapshot& s,
                                                 const RetrievalRequest& r) const {
  const auto start = SteadyClock::now();
  std::optional<DenseOptions> scratch;
  FLOWRAG_ASSIGN_OR_RETURN(const DenseOptions* options, RequestOptions(r, &scratch));
  RetrievalOutput out;
  FLOWRAG_ASSIGN_OR_RETURN(
      out.ranked, DenseRanking(s, r.query, r.top_k, *options, &out.diagnostics.candidates_scored));
  out.diagnostics.time_ms = MillisSince(start);
  return out;
}

Result<RetrievalOutput> HybridRetriever::Retrieve(const Snapshot& s,
                                                  const RetrievalRequest& r) const {
  const auto start = SteadyClock::now();
  std::optional<HybridMethodOptions> scratch;
  FLOWRAG_ASSIGN_OR_RETURN(const HybridMethodOptions* options, RequestOptions(r, &scratch));
  const auto& [bm25, dense, hybrid] = *options;

  const size_t depth = std::max(hybrid.candidates, r.top_k);
  size_t scored_a = 0, scored_b = 0;
  FLOWRAG_ASSIGN_OR_RETURN(auto lexical, Bm25Ranking(s, r.query, depth, bm25, &scored_a));
  FLOWRAG_ASSIGN_OR_RETURN(auto semantic, DenseRanking(s, r.query, depth, dense, &scored_b));
  std::unordered_map<uint32_t, double> fused;
  for (const auto* list : {&lexical, &semantic}) {
    for (size_t rank = 0; rank < list->size(); ++rank) {
      fused[(*list)[rank].passage] += 1.0 / (hybrid.rrf_k + static_cast<double>(rank + 1));
    }
  }
  RetrievalOutput out;
  out.ranked.reserve(fused.size());
  for (const auto& [p, score] : fused) out.ranked.push_back({p, score});
  auto better = [](const RankedPassage& a, const RankedPassage& b) {
    return a.score != b.score ? a.score > b.score : a.passage < b.passage;
  };
  std::sort(out.ranked.begin(), out.ranked.end(), better);
  if (out.ranked.size() > r.top_k) out.ranked.resize(r.top_k);
  out.diagnostics.candidates_scored = scored_a + scored_b;
  out.diagnostics.extra["bm25_candidates"] = static_cast<double>(scored_a);
  out.diagnostics.extra["dense_candidates"] = static_cast<double>(scored_b);
  out.diagnostics.time_ms = MillisSince(start);
  return out;
}

}  // namespace flowrag
