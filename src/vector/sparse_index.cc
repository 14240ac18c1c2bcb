#include "vector/sparse_index.h"

#include "vector/index_util.h"

namespace flowrag {

double Density(const FloatMatrix& m) {
  if (m.data.empty()) return 0.0;
  size_t nz = 0;
  for (float v : m.data) nz += v != 0.0f;
  return static_cast<double>(nz) / static_cast<double>(m.data.size());
}

Status SparseIndex::Add(const FloatMatrix& rows) {
  FLOWRAG_RETURN_IF_ERROR(vector_internal::ValidateRows(rows, dim_, size_));
  for (size_t r = 0; r < rows.rows; ++r) {
    const float* row = rows.row(r);
    const auto id = static_cast<uint32_t>(size_ + r);
    for (size_t d = 0; d < dim_; ++d) {
      if (row[d] != 0.0f) {
        lists_[d].push_back({id, row[d]});
        ++nonzeros_;
      }
    }
  }
  size_ += rows.rows;
  return Status::Ok();
}

std::vector<VectorHit> SparseIndex::Search(const float* query, const VectorSearchParams& params,
                                           VectorSearchStats* stats) const {
  const size_t k = std::min(params.k, size_);
  if (k == 0 || !vector_internal::AllFinite(query, dim_)) return {};
  size_t postings = 0;
  for (size_t d = 0; d < dim_; ++d) {
    if (query[d] != 0.0f) postings += lists_[d].size();
  }
  thread_local std::vector<float> scores;
  if (scores.size() < size_) scores.resize(size_, 0.0f);  // all zero between calls
  vector_internal::TopK top(k);
  size_t scored = 0;
  auto offer = [&](uint32_t id) {
    const float v = scores[id];
    scores[id] = 0.0f;
    if (v < params.min_score || (top.full() && v < top.worst().score)) return;
    if (params.filter && !params.filter(id)) return;
    ++scored;
    top.Push(id, v);
  };
  if (postings >= size_ / 4) {
    // Long lists (the hashed embedder's character n-grams): accumulate, then
    // scan every id; an id no list touched scores 0, as it should.
    for (size_t d = 0; d < dim_; ++d) {
      const float q = query[d];
      if (q == 0.0f) continue;
      for (const Posting& p : lists_[d]) scores[p.id] += q * p.value;
    }
    for (uint32_t id = 0; id < size_; ++id) offer(id);
  } else {
    // Short lists: track the touched ids and scan only those.
    thread_local std::vector<uint32_t> touched;
    thread_local std::vector<uint8_t> seen;
    touched.clear();
    if (seen.size() < size_) seen.resize(size_, 0);
    for (size_t d = 0; d < dim_; ++d) {
      const float q = query[d];
      if (q == 0.0f) continue;
      for (const Posting& p : lists_[d]) {
        if (!seen[p.id]) {
          seen[p.id] = 1;
          touched.push_back(p.id);
        }
        scores[p.id] += q * p.value;
      }
    }
    for (uint32_t id : touched) {
      seen[id] = 0;
      offer(id);
    }
    // Vectors sharing no dimension with the query score exactly 0: they
    // belong in the result when fewer than k vectors overlap the query or
    // some overlap scored below 0. Ascending ids, so the first zeros win ties.
    std::sort(touched.begin(), touched.end());
    size_t t = 0;
    for (uint32_t id = 0; params.min_score <= 0.0f && id < size_ &&
                          (!top.full() || top.worst().score < 0.0f);
         ++id) {
      while (t < touched.size() && touched[t] < id) ++t;
      if ((t < touched.size() && touched[t] == id) || (params.filter && !params.filter(id))) {
        continue;
      }
      top.Push(id, 0.0f);
    }
  }
  if (stats != nullptr) stats->candidates_scored += scored;
  return top.Take();
}

}  // namespace flowrag
