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
// the top k lie among the accumulated documents (the candidates). When the
// bound never separates (fewer than k candidates, or no gap), or the lists
// are short (kMinPostings), nullopt: the caller scores every posting.
//
// Then the candidates are narrowed: a candidate whose partial score plus
// the bounds still unread falls below the k-th partial score cannot reach
// the top k and is dropped; the left-out lists are probed for the
// survivors, largest bound first, each one raising the partial scores and
// lowering the unread bounds, so each drops more. The survivors' scores
// are finally computed again in full, term by term in string order, the
// sums of floats Accumulate makes, so the hits equal the exhaustive
// search's bit for bit, ties by ascending id included.
//
// Cost: the accumulated lists once, then per left-out list one galloping
// sweep over the survivors (ListCursor), instead of every posting. On the
// synthetic 10^6 store (bench/synthetic_corpus.py), whose passages share
// their frame words, a graph method's top 128 (QueryScores) accumulates
// two name lists (~24,000 documents), of which ~4,600 survive the first
// cut. `flowrag eval --method bm25 --k 10,128` there (200 questions five
// times, warm, p50 of two runs): every candidate probed by binary search
// in every list, 6.3 ms; the first cut only, 2.6 ms; the narrowing with
// galloping sweeps, 1.9-2.0 ms (and the top 10, 0.39 -> 0.16 ms). The
// graph methods' score_ms (their query scores) fell from 12.1 to 7.8 ms.
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

struct Candidate {
  uint32_t doc;
  float partial;  // the sum over the terms read so far
};

// Drops the candidates that cannot reach the top k once the terms still
// unread can add at most `rest`: a document's full score is at most its
// partial score plus `rest`, and the k-th full score is at least the k-th
// partial one. `scratch` is reused. Order kept; ties stay in.
void DropUnreachable(size_t k, double rest, std::vector<Candidate>* candidates,
                     std::vector<float>* scratch) {
  if (candidates->size() <= k) return;
  scratch->clear();
  for (const Candidate& c : *candidates) scratch->push_back(c.partial);
  const double floor = KthLargest(scratch, k) * (1.0 - kMargin) - rest * (1.0 + kMargin);
  std::erase_if(*candidates,
                [&](const Candidate& c) { return c.partial * (1.0 + kMargin) < floor; });
}

// A posting list probed for ascending documents: each Seek gallops forward
// from the last position (Bentley and Yao's exponential search), so a
// sweep over c candidates costs O(c · log(gap)) instead of O(c · log(df)).
class ListCursor {
 public:
  ListCursor(const uint32_t* first, const uint32_t* last) : at_(first), last_(last) {}
  // The posting of `doc`, or nullptr; `doc` must not be below the last one asked.
  const uint32_t* Seek(uint32_t doc) {
    size_t step = 1;
    const uint32_t* lo = at_;
    while (lo + step < last_ && lo[step] < doc) {
      lo += step;
      step *= 2;
    }
    at_ = std::lower_bound(lo, std::min(lo + step + 1, last_), doc);
    return at_ != last_ && *at_ == doc ? at_ : nullptr;
  }

 private:
  const uint32_t* at_;
  const uint32_t* last_;
};

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
  // The candidates, with their partial scores over terms[0..used).
  std::vector<Candidate> candidates;
  candidates.reserve(touched.size());
  for (uint32_t d : touched) candidates.push_back({d, acc[d]});
  reset();
  DropUnreachable(k, rest[used], &candidates, &partial);
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& x, const Candidate& y) { return x.doc < y.doc; });
  const auto contribution = [&](const QueryTerm& q, uint64_t p, uint32_t d) {
    return Contribution(q.idf, post_tf_[p], doc_len_[d], avgdl, k1, b);
  };
  // The left-out lists, largest bound first, each probed for the survivors
  // only; every list added tightens the bound and drops more of them.
  for (size_t i = used; i < terms.size() && candidates.size() > k; ++i) {
    const QueryTerm& q = terms[i];
    ListCursor list(post_doc_.data() + q.lo, post_doc_.data() + q.hi);
    for (Candidate& c : candidates) {
      if (const uint32_t* at = list.Seek(c.doc)) {
        c.partial += contribution(q, static_cast<uint64_t>(at - post_doc_.data()), c.doc);
      }
    }
    DropUnreachable(k, rest[i + 1], &candidates, &partial);
  }
  // The survivors' full scores, term by term in string order: the sums
  // Accumulate makes, so the hits equal the exhaustive search's.
  std::vector<size_t> by_rank(terms.size());
  std::iota(by_rank.begin(), by_rank.end(), 0);
  std::sort(by_rank.begin(), by_rank.end(),
            [&](size_t x, size_t y) { return terms[x].rank < terms[y].rank; });
  std::vector<float> score(candidates.size(), 0.0f);
  for (size_t i : by_rank) {
    const QueryTerm& q = terms[i];
    ListCursor list(post_doc_.data() + q.lo, post_doc_.data() + q.hi);
    for (size_t c = 0; c < candidates.size(); ++c) {
      if (const uint32_t* at = list.Seek(candidates[c].doc)) {
        score[c] +=
            contribution(q, static_cast<uint64_t>(at - post_doc_.data()), candidates[c].doc);
      }
    }
  }
  std::vector<Bm25Hit> hits(candidates.size());
  for (size_t c = 0; c < candidates.size(); ++c) hits[c] = {candidates[c].doc, score[c]};
  if (candidates_scored != nullptr) *candidates_scored = hits.size();
  std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(k), hits.end(),
                    RanksBefore);
  hits.resize(k);
  return hits;
}

}  // namespace flowrag
