#include "vector/flat_index.h"

#include <algorithm>

#include "vector/dot_product.h"
#include "vector/index_util.h"

namespace flowrag {

namespace {
// Rows scored per kernel call: 256 scores (1 KiB) live on the stack, and the
// heap update for a block runs while its rows are still in cache.
constexpr size_t kBlockRows = 256;
}  // namespace

FlatIndex::FlatIndex(size_t dim, size_t expected_size) : dim_(dim) {
  data_.reserve(expected_size * dim);
}

Status FlatIndex::Add(const FloatMatrix& rows) {
  FLOWRAG_RETURN_IF_ERROR(vector_internal::ValidateRows(rows, dim_, size_));
  data_.insert(data_.end(), rows.data.begin(), rows.data.end());
  size_ += rows.rows;
  return Status::Ok();
}

std::vector<VectorHit> FlatIndex::Search(const float* query, const VectorSearchParams& params,
                                         VectorSearchStats* stats) const {
  const size_t k = std::min(params.k, size_);
  if (k == 0 || !vector_internal::AllFinite(query, dim_)) return {};

  vector_internal::TopK top(k);
  float scores[kBlockRows];
  size_t scored = 0;
  if (!params.filter) {
    for (size_t start = 0; start < size_; start += kBlockRows) {
      const size_t n = std::min(kBlockRows, size_ - start);
      vector_internal::DotProductBlock(query, data_.data() + start * dim_, n, dim_, scores);
      // Ids arrive in ascending order, so a score equal to the current worst
      // loses the tie: only a strictly greater score can enter a full heap.
      for (size_t i = 0; i < n; ++i) {
        if (!top.full() || scores[i] > top.worst().score) {
          top.Push(static_cast<uint32_t>(start + i), scores[i]);
        }
      }
    }
    scored = size_;
  } else {
    const float* rows[kBlockRows];
    uint32_t ids[kBlockRows];
    for (size_t start = 0; start < size_; start += kBlockRows) {
      const size_t n = std::min(kBlockRows, size_ - start);
      size_t m = 0;
      for (size_t i = 0; i < n; ++i) {
        const auto id = static_cast<uint32_t>(start + i);
        if (params.filter(id)) {
          rows[m] = Row(id);
          ids[m] = id;
          ++m;
        }
      }
      vector_internal::DotProductGather(query, rows, m, dim_, scores);
      for (size_t i = 0; i < m; ++i) top.Push(ids[i], scores[i]);
      scored += m;
    }
  }
  if (stats != nullptr) stats->candidates_scored += scored;
  return top.Take();
}

}  // namespace flowrag
