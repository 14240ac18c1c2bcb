// FlatIndex: exact maximum-inner-product search by scanning every vector.
//
// Storage: one contiguous row-major float matrix (a FloatMatrix, row i at
// i·dim), grown by Add() or adopted whole by FromMatrix() (no copy, so a
// snapshot's passage vectors exist once). Memory: 4·n·d bytes.
//
// Search: the query is scored against blocks of 256 rows with the batched
// SIMD kernel (vector/dot_product.h: four rows per pass, AVX-512 or AVX2 when
// the CPU has them) and a bounded heap keeps the best k. Scores are exact
// float inner products; ties are broken by ascending id, so the result is the
// first k of all (score desc, id asc) pairs. O(n·d + n·log k) time, O(k) extra
// memory. With a filter, the filter is called once per id in ascending order
// and only accepted rows are scored (stats->candidates_scored counts them).
//
// Sparse queries: the index also keeps a dimension-major copy of the matrix
// (column d holds coordinate d of every vector). A query with at most
// dim/kSparseFraction non-zero coordinates (the built-in hashed embedder's
// short queries touch ~15% of dimensions) is scored as Σ_d q_d·column_d over
// its non-zeros only: O(nnz·n) instead of O(d·n), same top-k rules. Its
// scores equal the dense ones up to float summation order. Memory: 8·n·d
// bytes in all.
//
// Thread-safety: Add() needs exclusive access; Search() is const and may run
// concurrently with other Search() calls. The filter must be safe to call from
// the searching thread and must not throw.
#ifndef FLOWRAG_VECTOR_FLAT_INDEX_H_
#define FLOWRAG_VECTOR_FLAT_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <span>
#include <vector>

#include "vector/vector_index.h"

namespace flowrag {

namespace vector_internal {
// Minimal allocator giving 64-byte (cache line, AVX-512 register) alignment.
template <typename T>
struct CacheAlignedAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheAlignedAllocator() = default;
  template <typename U>
  CacheAlignedAllocator(const CacheAlignedAllocator<U>&) {}  // NOLINT: allocator rebind
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, size_t) { ::operator delete(p, kAlign); }
  template <typename U>
  bool operator==(const CacheAlignedAllocator<U>&) const {
    return true;
  }
};
}  // namespace vector_internal

class FlatIndex final : public VectorIndex {
 public:
  // An empty index of `dim`-dimensional vectors with room reserved for
  // `expected_size` of them. REQUIRES: dim > 0 (MakeVectorIndex checks it).
  explicit FlatIndex(size_t dim, size_t expected_size = 0);

  // An index over `rows`, which it takes over (ids = row numbers).
  // InvalidArgument as Add() for a bad matrix (then `rows` is left as it
  // was). O(rows·d) for the dimension-major copy.
  static Result<std::unique_ptr<FlatIndex>> FromMatrix(FloatMatrix&& rows);

  std::string Kind() const override { return "flat"; }
  size_t Dimension() const override { return dim_; }
  size_t Size() const override { return size_; }
  size_t MemoryBytes() const override { return (rows_.data.capacity() + columns_.capacity()) * 4; }

  // Appends rows (ids Size() .. Size()+rows.rows-1). All-or-nothing: a batch
  // with the wrong column count, a short data array or a non-finite value is
  // rejected with InvalidArgument and nothing is added. Amortised O(rows·d).
  Status Add(const FloatMatrix& rows) override;

  // REQUIRES: `query` points at Dimension() floats. Returns min(k, eligible)
  // hits. `stats` may be null.
  std::vector<VectorHit> Search(const float* query, const VectorSearchParams& params,
                                VectorSearchStats* stats) const override;

  // Queries with nnz·kSparseFraction <= dim take the sparse path.
  static constexpr size_t kSparseFraction = 4;

  // The stored vector of `id`. REQUIRES: id < Size(). Valid until the next Add().
  // The score of every vector (out.size() == Size()), without ranking
  // them: what a caller that needs all scores (a min-max normalised prior)
  // would otherwise get from Search with k = Size() at the cost of a sort.
  // Same arithmetic as Search. O(Size()·nnz(query)) for a sparse query, else
  // O(Size()·d).
  void ScoreAll(const float* query, std::span<float> out) const;
  const float* Row(uint32_t id) const { return rows_.row(id); }
  // Every stored vector (rows = Size()). Valid until the next Add().
  const FloatMatrix& matrix() const { return rows_; }

 private:
  size_t dim_;
  size_t size_ = 0;
  std::vector<VectorHit> SearchSparse(const float* query, const VectorSearchParams& params,
                                      size_t k, VectorSearchStats* stats) const;

  // Grows with every vector; the dimension-major copy below is rebuilt on
  // capacity growth.
  FloatMatrix rows_;
  void AppendColumns(const FloatMatrix& rows);
  // Dimension-major copy: column d at columns_[d·capacity_], first size_ valid.
  std::vector<float, vector_internal::CacheAlignedAllocator<float>> columns_;
  size_t capacity_ = 0;
};

}  // namespace flowrag

#endif  // FLOWRAG_VECTOR_FLAT_INDEX_H_
