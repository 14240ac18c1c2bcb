#include "retrieval/query_scores.h"

#include <algorithm>
#include <functional>
#include <span>
#include <string>

#include "vector/flat_index.h"

namespace flowrag {
namespace {

bool ByPassage(const PassageScore& a, const PassageScore& b) { return a.passage < b.passage; }

// The BM25 scores of the passages sharing a term with `query`, ascending by
// passage; with `best` > 0 only the `best` highest (ties by passage).
std::vector<PassageScore> Bm25Matches(const Snapshot& s, const std::string& query, size_t best) {
  const std::vector<Bm25Hit> hits = best > 0 ? s.bm25().Search(query, best, Bm25Params{})
                                             : s.bm25().ScoreMatching(query, Bm25Params{});
  std::vector<PassageScore> out;
  out.reserve(hits.size());
  for (const Bm25Hit& h : hits) {
    if (h.doc < s.num_passages()) out.push_back({h.doc, h.score});
  }
  if (best > 0) std::sort(out.begin(), out.end(), ByPassage);
  return out;
}

}  // namespace

Result<FloatMatrix> EmbedTexts(const Snapshot& snapshot, const std::vector<std::string>& texts) {
  if (snapshot.embedder() == nullptr) {
    return Status::FailedPrecondition("the snapshot has no embedder to embed the query with");
  }
  return snapshot.embedder()->Embed(std::span<const std::string>(texts));
}

Result<QueryScores> ScoreQuery(const Snapshot& s, const std::string& query, bool lexical) {
  if (s.graph() == nullptr) {
    return Status::FailedPrecondition(
        "graph retrieval: the store has no knowledge graph (run `flowrag index` with an "
        "extractor first)");
  }
  if (s.dense() == nullptr || s.embedder() == nullptr) {
    return Status::FailedPrecondition(
        "graph retrieval: the store has no passage embeddings for the configured embedder "
        "(run `flowrag index` first)");
  }
  QueryScores out;
  FLOWRAG_ASSIGN_OR_RETURN(out.query, s.embedder()->Embed(std::span<const std::string>(&query, 1)));
  if (out.query.rows != 1 || out.query.cols != s.dense()->Dimension()) {
    return Status::FailedPrecondition(
        "graph retrieval: query embedding has " + std::to_string(out.query.cols) +
        " dimensions, passage index has " + std::to_string(s.dense()->Dimension()));
  }
  const VectorIndex* facts = s.graph()->fact_index();
  if (facts != nullptr && facts->Dimension() != out.query.cols) {
    return Status::FailedPrecondition(
        "graph retrieval: query embedding has " + std::to_string(out.query.cols) +
        " dimensions, fact index has " + std::to_string(facts->Dimension()));
  }
  out.num_passages = s.num_passages();
  if (const auto* flat = dynamic_cast<const FlatIndex*>(s.dense());
      flat != nullptr && flat->exact() && flat->Size() == out.num_passages) {
    std::vector<float> all(out.num_passages);
    flat->ScoreAll(out.query.row(0), all);  // no ranking needed
    out.dense.reserve(all.size());
    for (uint32_t p = 0; p < all.size(); ++p) out.dense.push_back({p, all[p]});
    out.candidates_scored = flat->Size();
  } else {
    VectorSearchParams params;
    params.k = std::min(s.dense()->Size(), kApproximateDenseScores);
    params.exact_scores = false;  // a prior: no float row read (query_scores.h)
    VectorSearchStats stats;
    for (const VectorHit& h : s.dense()->Search(out.query.row(0), params, &stats)) {
      if (h.id < out.num_passages) out.dense.push_back({h.id, h.score});
    }
    std::sort(out.dense.begin(), out.dense.end(), ByPassage);
    out.candidates_scored = stats.candidates_scored;
    out.approximate = true;
  }
  out.lexical = lexical;
  if (lexical) out.bm25 = Bm25Matches(s, query, out.BestBm25());
  return out;
}

std::vector<double> MinMaxNormalize(const std::vector<float>& values) {
  std::vector<double> out(values.size(), 0.0);
  if (values.empty()) return out;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const double range = static_cast<double>(*hi) - *lo;
  if (!(range > 0)) return out;
  for (size_t i = 0; i < values.size(); ++i) out[i] = (values[i] - *lo) / range;
  return out;
}

Status PriorOptions::Override(ParamReader& r, const std::string& prefix) {
  FLOWRAG_RETURN_IF_ERROR(r.Read(prefix + ".prior", &source));
  FLOWRAG_RETURN_IF_ERROR(r.Read(prefix + ".prior_top", &top));
  if (source != "dense" && source != "bm25" && source != "hybrid") {
    return Status::InvalidArgument("option " + prefix + ".prior=\"" + source +
                                   "\": expected dense, bm25 or hybrid");
  }
  return Status::Ok();
}

namespace {

// MinMaxNormalize over n passages, `scores` listing some (ascending) and the
// others 0, as the passages that normalise above 0. Reads only the list
// when every unlisted passage normalises to 0 (the list is complete, or its
// minimum is ≥ 0); otherwise spreads the scores over all n. The arithmetic
// is MinMaxNormalize's, so the weights are the same bit for bit.
std::vector<PassageWeight> NormalizedScores(const std::vector<PassageScore>& scores, size_t n) {
  std::vector<PassageWeight> out;
  if (scores.empty()) return out;
  const bool complete = scores.size() >= n;
  float lo = complete ? scores[0].score : 0.0f, hi = lo;
  for (const PassageScore& x : scores) {
    lo = std::min(lo, x.score);
    hi = std::max(hi, x.score);
  }
  const double range = static_cast<double>(hi) - lo;
  if (!(range > 0)) return out;
  if (!complete && lo < 0) {  // the unlisted passages' 0 lies above the minimum
    std::vector<float> all(n, 0.0f);
    for (const PassageScore& x : scores) all[x.passage] = x.score;
    const std::vector<double> normalized = MinMaxNormalize(all);
    for (uint32_t p = 0; p < n; ++p) {
      if (normalized[p] > 0) out.push_back({p, normalized[p]});
    }
    return out;
  }
  for (const PassageScore& x : scores) {
    const float above = x.score - lo;
    const double w = above / range;
    if (w > 0) out.push_back({x.passage, w});
  }
  return out;
}

// 0.5 · (a + b) per passage, a missing entry counting 0 (both ascending).
std::vector<PassageWeight> MeanOf(const std::vector<PassageWeight>& a,
                                  const std::vector<PassageWeight>& b) {
  std::vector<PassageWeight> out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].passage < b[j].passage)) {
      out.push_back({a[i].passage, 0.5 * a[i].weight});
      ++i;
    } else if (i == a.size() || b[j].passage < a[i].passage) {
      out.push_back({b[j].passage, 0.5 * b[j].weight});
      ++j;
    } else {
      out.push_back({a[i].passage, 0.5 * (a[i].weight + b[j].weight)});
      ++i;
      ++j;
    }
  }
  return out;
}

// Keeps the `top` heaviest (ties at the cut by passage index), in order.
void KeepHeaviest(size_t top, std::vector<PassageWeight>* weights) {
  if (top == 0 || weights->size() <= top) return;
  std::vector<double> sorted;
  sorted.reserve(weights->size());
  for (const PassageWeight& w : *weights) sorted.push_back(w.weight);
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(top - 1),
                   sorted.end(), std::greater<double>());
  const double cut = sorted[top - 1];
  size_t above = 0;
  for (const PassageWeight& w : *weights) above += w.weight > cut;
  size_t ties_left = top - above;
  std::erase_if(*weights, [&](const PassageWeight& w) {
    if (w.weight > cut) return false;
    if (w.weight == cut && ties_left > 0) {
      --ties_left;
      return false;
    }
    return true;
  });
}

}  // namespace

float CosineOf(std::span<const PassageScore> dense, size_t num_passages, uint32_t p) {
  if (dense.size() == num_passages) return p < dense.size() ? dense[p].score : 0.0f;
  const auto it = std::lower_bound(dense.begin(), dense.end(), PassageScore{p, 0.0f}, ByPassage);
  return it != dense.end() && it->passage == p ? it->score : 0.0f;
}

float QueryScores::Cosine(uint32_t p) const { return CosineOf(dense, num_passages, p); }

float QueryScores::BestCosine() const {
  float best = 0.0f;
  for (const PassageScore& x : dense) best = std::max(best, x.score);
  return best;
}

std::vector<float> QueryScores::Cosines() const {
  std::vector<float> all(num_passages, 0.0f);
  for (const PassageScore& x : dense) all[x.passage] = x.score;
  return all;
}

std::vector<PassageWeight> PassagePrior(const Snapshot& s, const std::string& query,
                                        const QueryScores& qs, const PriorOptions& o) {
  std::vector<PassageWeight> prior;
  if (o.source != "bm25") prior = NormalizedScores(qs.dense, qs.num_passages);
  if (o.source != "dense") {
    std::vector<PassageWeight> lexical = NormalizedScores(
        qs.lexical ? qs.bm25 : Bm25Matches(s, query, qs.BestBm25()), qs.num_passages);
    prior = o.source == "bm25" ? std::move(lexical) : MeanOf(prior, lexical);
  }
  KeepHeaviest(o.top, &prior);
  return prior;
}

void RankDenseFallback(const QueryScores& qs, size_t top_k, RetrievalOutput* out) {
  const std::vector<float> cosines = qs.Cosines();
  std::vector<RankedPassage> all;
  all.reserve(cosines.size());
  for (uint32_t p = 0; p < cosines.size(); ++p) all.push_back({p, cosines[p]});
  const size_t k = std::min(top_k, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(),
                    [](const RankedPassage& a, const RankedPassage& b) {
                      return a.score != b.score ? a.score > b.score : a.passage < b.passage;
                    });
  all.resize(k);
  out->ranked = std::move(all);
  out->diagnostics.extra["fallback_dense"] = 1;
}

}  // namespace flowrag
