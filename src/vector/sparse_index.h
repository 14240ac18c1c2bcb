// SparseIndex: exact maximum-inner-product search for vectors that are mostly
// zeros (the built-in hashed embedder's vectors of names, facts and short
// texts fill ~5% of their dimensions).
//
// Storage: inverted lists by dimension — for each dimension d, the (id,
// value) pairs of the vectors whose coordinate d is non-zero. Memory: 8 bytes
// per non-zero instead of 4·d per vector.
// Search: scores = Σ_{d : q_d ≠ 0} q_d · list_d, accumulated in a per-thread
// array, then the usual top-k (score desc, id asc). When the query's lists
// hold at least n/4 postings every id is scanned (no per-posting
// bookkeeping); otherwise only the touched ids are. O(Σ_{d∈nnz(q)} |list_d|
// + n) per query; exact, equal to the dense dot products up to float
// summation order.
//
// Thread-safety: Add() needs exclusive access; Search() may run concurrently.
#ifndef FLOWRAG_VECTOR_SPARSE_INDEX_H_
#define FLOWRAG_VECTOR_SPARSE_INDEX_H_

#include <cstdint>
#include <vector>

#include "vector/vector_index.h"

namespace flowrag {

class SparseIndex final : public VectorIndex {
 public:
  explicit SparseIndex(size_t dim) : dim_(dim), lists_(dim) {}

  std::string Kind() const override { return "sparse"; }
  size_t Dimension() const override { return dim_; }
  size_t Size() const override { return size_; }
  size_t MemoryBytes() const override { return nonzeros_ * sizeof(Posting) + dim_ * 24; }

  // All-or-nothing like FlatIndex::Add. Amortised O(rows·d).
  Status Add(const FloatMatrix& rows) override;

  std::vector<VectorHit> Search(const float* query, const VectorSearchParams& params,
                                VectorSearchStats* stats) const override;

  size_t NonZeros() const { return nonzeros_; }

 private:
  struct Posting {
    uint32_t id;
    float value;
  };
  size_t dim_;
  size_t size_ = 0;
  size_t nonzeros_ = 0;
  std::vector<std::vector<Posting>> lists_;
};

// Fraction of non-zero entries of `m` (0 for an empty matrix).
double Density(const FloatMatrix& m);

}  // namespace flowrag

#endif  // FLOWRAG_VECTOR_SPARSE_INDEX_H_
