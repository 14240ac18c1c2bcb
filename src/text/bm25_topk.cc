// Bm25Index::PrunedTopK: the exact top k of a BM25 query without reading
// the long posting lists through (MaxScore: Turtle and Flood, "Query
// evaluation: strategies and optimizations", 1995).
//
// A term adds less than ub(t) = idf(t)·(k1 + 1) to any document (tf/(tf +
// norm) ≤ 1), and a frequent term has a small idf, so a small bound. The
// terms are taken in decreasing bound order and their lists accumulated
// into partial scores until the k-th best partial score exceeds R, the
// sum of the bounds of the terms left out: a document no accumulated list
// holds scores at most R, below k documents that are already above it, so
// the top k lie among the accumulated documents. Their scores are then
// computed again in full, term by term in string order (the accumulated
// lists read again, the left-out lists probed by binary search for each
// candidate), the sums of floats Accumulate makes, so the hits equal the
// exhaustive search's bit for bit, ties by ascending id included. When the
// bound never separates (fewer than k candidates, or no gap), or the lists
// are short (kMinPostings), nullopt: the caller scores every posting.
//
// Cost: the accumulated lists twice and |candidates| · Σ log(df) probes of
// the left-out ones, instead of every posting. On the synthetic 10^5 store
// (bench/synthetic_corpus.py), whose passages share their frame words,
// the frame words are the left-out terms.
#include <algorithm>
#include <cstddef>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "text/bm25_index.h"

namespace flowrag {
namespace {

// The partial and the full float sums differ by rounding only: a margin of
// 10^-4 relative keeps the separation strict whatever the order of the sums.
constexpr double kMargin = 1e-4;
// Below this many postings over the query's terms every posting is scored:
// the bounds, the partial selections and the probes cost more than short
// lists (2wiki's questions, ~10^3 postings: BM25 p50 0.051 -> 0.096 ms
// when pruned; bench/latency_ab.py, 7 rounds).
constexpr uint64_t kMinPostings = uint64_t{1} << 15;

struct QueryTerm {
  size_t rank;  // position in the string-ordered unique terms
  uint64_t lo, hi;
  double idf, bound;
};

// The k-th largest of `scores` (k ≥ 1, k ≤ size), reordering them.
float KthLargest(std::vector<float>* scores, size_t k) {
  std::nth_element(scores->begin(), scores->begin() + static_cast<std::ptrdiff_t>(k - 1),
                   scores->end(), std::greater<float>());
  return (*scores)[k - 1];
}

}  // namespace

std::optional<std::vector<Bm25Hit>> Bm25Index::PrunedTopK(
    const std::vector<std::string>& unique_terms, const Scoring& scoring, size_t k,
    const Bm25Params& params, size_t* candidates_scored) const {
  const double k1 = params.k1, b = params.b;
  const double avgdl = scoring.avgdl;
  std::vector<QueryTerm> terms;
  uint64_t postings = 0;
  for (size_t r = 0; r < unique_terms.size(); ++r) {
    const uint32_t t = FindTerm(unique_terms[r]);
    if (t == kNoTerm) continue;
    const double idf = scoring.idf[r];
    const auto [lo, hi] = Postings(t);
    terms.push_back({r, lo, hi, idf, idf * (k1 + 1.0)});
    postings += hi - lo;
  }
  if (k == 0 || terms.size() < 2 || postings < kMinPostings || k1 < 0 || b < 0 || b > 1) {
    return std::nullopt;
  }
  // Decreasing bounds: the rare terms first.
  std::sort(terms.begin(), terms.end(), [](const QueryTerm& x, const QueryTerm& y) {
    return x.bound != y.bound ? x.bound > y.bound : x.rank < y.rank;
  });
  std::vector<double> rest(terms.size() + 1, 0.0);  // rest[i]: Σ bounds of terms[i..]
  for (size_t i = terms.size(); i-- > 0;) rest[i] = rest[i + 1] + terms[i].bound;

  thread_local std::vector<float> acc;
  thread_local std::vector<uint32_t> touched;
  if (acc.size() < num_docs()) acc.assign(num_docs(), 0.0f);
  touched.clear();
  auto reset = [&] {
    for (uint32_t d : touched) acc[d] = 0.0f;
    touched.clear();
  };
  // Accumulate terms[0..used) until the k-th best partial score clears the rest.
  size_t used = 0;
  bool separated = false;
  std::vector<float> partial;
  while (used + 1 < terms.size() && !separated) {
    const QueryTerm& q = terms[used++];
    for (uint64_t p = q.lo; p < q.hi; ++p) {
      const uint32_t d = post_doc_[p];
      if (acc[d] == 0.0f) touched.push_back(d);
      acc[d] += Contribution(q.idf, post_tf_[p], doc_len_[d], avgdl, k1, b);
    }
    if (touched.size() < k) continue;
    partial.clear();
    for (uint32_t d : touched) partial.push_back(acc[d]);
    separated = KthLargest(&partial, k) * (1.0 - kMargin) > rest[used] * (1.0 + kMargin);
  }
  if (!separated) {
    reset();
    return std::nullopt;
  }
  // The candidates' full scores, term by term in string order.
  std::vector<uint32_t> candidates(touched.begin(), touched.end());
  reset();
  std::sort(candidates.begin(), candidates.end());
  std::vector<size_t> by_rank(terms.size());
  std::iota(by_rank.begin(), by_rank.end(), 0);
  std::sort(by_rank.begin(), by_rank.end(),
            [&](size_t x, size_t y) { return terms[x].rank < terms[y].rank; });
  std::vector<float> score(candidates.size(), 0.0f);
  for (size_t i : by_rank) {
    const QueryTerm& q = terms[i];
    const uint32_t* first = post_doc_.data() + q.lo;
    const uint32_t* last = post_doc_.data() + q.hi;
    for (size_t c = 0; c < candidates.size(); ++c) {
      const uint32_t* at = std::lower_bound(first, last, candidates[c]);
      if (at == last || *at != candidates[c]) continue;
      const uint64_t p = static_cast<uint64_t>(at - post_doc_.data());
      score[c] += Contribution(q.idf, post_tf_[p], doc_len_[candidates[c]], avgdl, k1, b);
      first = at + 1;  // candidates ascend: the next one lies after
    }
  }
  std::vector<Bm25Hit> hits(candidates.size());
  for (size_t c = 0; c < candidates.size(); ++c) hits[c] = {candidates[c], score[c]};
  if (candidates_scored != nullptr) *candidates_scored = hits.size();
  std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(k), hits.end(),
                    RanksBefore);
  hits.resize(k);
  return hits;
}

}  // namespace flowrag
