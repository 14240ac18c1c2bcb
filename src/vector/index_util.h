// Pieces shared by the vector indexes: input validation, the result order, a
// bounded top-k selector, and the checks of arrays adopted from an
// ArraySource (ExportArrays / AdoptArrays of SparseRows, SparseIndex and
// FlatIndex).
//
// Thread-safety: TopK is a plain value, one per search; the functions are pure.
#ifndef FLOWRAG_VECTOR_INDEX_UTIL_H_
#define FLOWRAG_VECTOR_INDEX_UTIL_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/array_io.h"
#include "common/flat_array.h"
#include "common/matrix.h"
#include "flowrag/status.h"
#include "vector/vector_index.h"

namespace flowrag::vector_internal {

// Largest number of vectors an index holds: ids are uint32 and hnswlib keeps
// 0xFFFFFFFF as "no entry point".
inline constexpr size_t kMaxVectors = std::numeric_limits<uint32_t>::max() - 1;

// Checks a batch for Add(): rows.cols == dim, rows.data holds rows·cols
// values, every value is finite, and the index stays within kMaxVectors.
// Messages name the offending row and column. O(rows · cols).
Status ValidateRows(const FloatMatrix& rows, size_t dim, size_t current_size);

// 64-bit checksum of a byte range (multiply-rotate word hash with a final
// avalanche), for serialised indexes. Detects truncation, bit flips and
// overwritten ranges; not a cryptographic MAC. ~1 byte/cycle.
uint64_t Checksum64(const char* data, size_t size);

// The result order of VectorIndex::Search: higher score first, then lower id.
// A strict total order even with NaN scores (NaN ranks below every number), so
// it is always safe for std::sort and heaps.
inline bool HitBefore(const VectorHit& a, const VectorHit& b) {
  const bool a_nan = std::isnan(a.score), b_nan = std::isnan(b.score);
  if (a_nan || b_nan) return a_nan != b_nan ? b_nan : a.id < b.id;
  return a.score > b.score || (a.score == b.score && a.id < b.id);
}

// True when all n values are finite. Search() answers a query with a NaN or
// infinite component with no hits rather than with an arbitrary order.
inline bool AllFinite(const float* v, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i])) return false;
  }
  return true;
}

// Keeps the best `k` hits (in HitBefore order) of a stream of (id, score).
// Push is O(1) for a rejected hit and O(log k) otherwise; Take is O(k log k).
// A NaN score is kept as -infinity, so a full selector can always replace it.
// Removes hits scoring below `min_score` from a best-first list.
inline std::vector<VectorHit> DropBelow(std::vector<VectorHit> hits, float min_score) {
  while (!hits.empty() && hits.back().score < min_score) hits.pop_back();
  return hits;
}

// ---- arrays out and back

// `prefix` + `suffix` as an array name: InvalidArgument when `prefix` is
// empty or the name is longer than the 31 bytes an array name may have.
Result<std::string> ArrayName(std::string_view prefix, std::string_view suffix);

// Corruption "<name>: <what>".
Status CorruptArray(std::string_view name, const std::string& what);

// source.Get<T>(name), where an array of another element type is
// Corruption naming it (the file is not what ExportArrays wrote), not
// InvalidArgument; NotFound stays NotFound.
// `lazily`: source.GetLazy<T>, verified by the reader as it reads.
template <class T>
Result<FlatArray<T>> GetArray(const ArraySource& source, const std::string& name,
                              bool lazily = false) {
  Result<FlatArray<T>> array = lazily ? source.GetLazy<T>(name) : source.Get<T>(name);
  if (!array.ok() && array.status().code() == StatusCode::kInvalidArgument) {
    return CorruptArray(name, array.status().message());
  }
  return array;
}

// A one-element array, as GetArray; Corruption naming it for another count.
template <class T>
Result<T> GetScalar(const ArraySource& source, const std::string& name) {
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<T> array, GetArray<T>(source, name));
  if (array.size() != 1) {
    return CorruptArray(name, std::to_string(array.size()) + " values, not one");
  }
  return array[0];
}

// CSR offsets of `lists` lists into `entries` entries: lists + 1 of them,
// the first 0, non-decreasing, the last `entries`. Corruption naming `name`.
// O(lists).
Status CheckOffsets(const std::string& name, std::span<const uint64_t> offsets, size_t lists,
                    size_t entries);

// Largest dimension an adopted index may declare (a sanity bound: 4 MiB
// per dense vector).
inline constexpr size_t kMaxAdoptedDimension = size_t{1} << 20;

class TopK {
 public:
  explicit TopK(size_t k) : k_(k) { heap_.reserve(k); }

  bool full() const { return heap_.size() >= k_; }
  size_t size() const { return heap_.size(); }

  // The worst kept hit. REQUIRES: size() > 0.
  const VectorHit& worst() const { return heap_.front(); }

  void Push(uint32_t id, float score) {
    if (std::isnan(score)) score = -std::numeric_limits<float>::infinity();
    const VectorHit hit{id, score};
    if (heap_.size() < k_) {
      heap_.push_back(hit);
      PushHeap();
    } else if (k_ > 0 && HitBefore(hit, heap_.front())) {
      PopHeap();
      heap_.back() = hit;
      PushHeap();
    }
  }

  // The kept hits, best first. Leaves the selector empty.
  std::vector<VectorHit> Take();

 private:
  void PushHeap();
  void PopHeap();

  size_t k_;
  std::vector<VectorHit> heap_;  // max-heap on "worse", i.e. front() is the worst
};

}  // namespace flowrag::vector_internal

#endif  // FLOWRAG_VECTOR_INDEX_UTIL_H_
