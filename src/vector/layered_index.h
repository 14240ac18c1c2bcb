// LayeredIndex: an immutable base index seen with some of its rows deleted
// and rows appended after it, so that a delete or an insert costs O(change)
// instead of a rebuild (issue 34: at 10^5 passages a delete used to rebuild
// the passage HNSW index, 185 s).
//
// Ids: the base's rows that are not deleted keep their order and are
// renumbered densely, 0 .. live_base-1; the appended rows follow,
// live_base .. Size()-1. That is the numbering an index rebuilt from the
// same vectors in the same order has, so a snapshot's passage indexes stay
// those of a rebuild.
//
// Search: the base is searched with a filter that skips its deleted rows
// (an HNSW base still walks through them, as hnswlib's markDelete does: the
// graph stays connected), the appended rows exactly (a FlatIndex), and the
// two lists merged in VectorIndex order (score desc, id asc). Over an exact
// base the hits are those of an exact index rebuilt from the current
// vectors, score for score (tests/layered_index_test.cc checks both
// against an independent brute force); over an HNSW base they are
// approximate, as a rebuilt HNSW index's are (recall measured there).
//
// Folding: the edits cost search time (the appended rows are scanned, the
// deleted ones walked) and memory; a caller rebuilds the index from
// Vectors() once EditedRows() passes its bound (graph/snapshot.cc:
// FoldDenseEdits). A rebuild of an HNSW index from Vectors() with the
// base's parameters is byte for byte the index Build makes from the store.
//
// Arrays out and back (a snapshot segment): the base is exported by its own
// ExportArrays under the caller's prefix; ExportEdits adds "<prefix>.del"
// (the deleted base rows, ascending u32) and, when rows were appended,
// "<prefix>.add.*" (a FlatIndex). AdoptEdits layers them over an adopted
// base, checking them as a parser checks outside bytes.
//
// Costs: Search = the base's filtered search + O(appended · d) + a
// binary search per base hit (O(log deleted)); Without O(Size() + deleted
// + appended · d) (the removal flags are read once); With O((appended +
// new) · d); Vector(id) O(log deleted).
// Thread-safety: immutable after construction but for Add() (exclusive
// access); Search and the accessors may run concurrently. The base is
// shared (shared_ptr) by every index layered over it.
#ifndef FLOWRAG_VECTOR_LAYERED_INDEX_H_
#define FLOWRAG_VECTOR_LAYERED_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/array_io.h"
#include "common/matrix.h"
#include "flowrag/status.h"
#include "vector/flat_index.h"
#include "vector/vector_index.h"

namespace flowrag {

// Vector `id` of an index that holds its vectors (FlatIndex, HnswIndex,
// HnswArraysIndex, LayeredIndex over one of these): in place, or decoded
// into `scratch` (Dimension() floats: an int8 FlatIndex's packed rows),
// which it then returns; null for another kind (a sparse index) or an id
// out of range.
const float* StoredVector(const VectorIndex& index, uint32_t id, float* scratch);
// StoredVector copied to out[0, Dimension()); false (nothing written) where
// it is null.
bool CopyStoredVector(const VectorIndex& index, uint32_t id, float* out);

class LayeredIndex final : public VectorIndex {
 public:
  // `base` with no edits. REQUIRES: base != null and StoredVector works on
  // it (checked: InvalidArgument).
  static Result<std::unique_ptr<LayeredIndex>> Over(std::shared_ptr<const VectorIndex> base);

  // `index` as a layered index: a copy of its edits over the same base when
  // it is one, else Over(index).
  static Result<std::unique_ptr<LayeredIndex>> Of(std::shared_ptr<const VectorIndex> index);

  // This index without the ids where removed[id] is true (removed.size()
  // == Size(), else InvalidArgument). The base is shared.
  Result<std::unique_ptr<LayeredIndex>> Without(const std::vector<bool>& removed) const;
  // This index with `rows` appended (ids Size() ..). InvalidArgument as
  // FlatIndex::Add for a bad matrix.
  Result<std::unique_ptr<LayeredIndex>> With(const FloatMatrix& rows) const;

  // Every vector, in id order: what a rebuild is built from. O(Size()·d).
  FloatMatrix Vectors() const;
  // StoredVector of `id` (in place, or decoded into `scratch`).
  const float* Vector(uint32_t id, float* scratch) const;

  // Deleted base rows plus appended rows: how far the index has moved from
  // its base.
  size_t EditedRows() const { return deleted_.size() + appended(); }
  size_t appended() const { return delta_ == nullptr ? 0 : delta_->Size(); }
  const VectorIndex& base() const { return *base_; }
  std::span<const uint32_t> deleted_base_rows() const { return deleted_; }

  // The edits as arrays (above); the base is the caller's to export.
  // InvalidArgument when a name would exceed 31 bytes (`prefix` at most 19).
  Status ExportEdits(ArraySink& sink, std::string_view prefix) const;
  // True when `source` holds edits under `prefix`.
  static bool HasEdits(const ArraySource& source, std::string_view prefix);
  // The edits of `source` layered over `base`: Corruption naming the array
  // when the deleted rows are not ascending, repeat or lie outside the base,
  // or the appended rows' dimension is not the base's. O(deleted) checks;
  // the appended rows are borrowed in place.
  static Result<std::unique_ptr<LayeredIndex>> AdoptEdits(std::shared_ptr<const VectorIndex> base,
                                                          const ArraySource& source,
                                                          std::string_view prefix);

  // The base's kind: a layered HNSW index is an approximate "hnsw" index.
  std::string Kind() const override { return base_->Kind(); }
  size_t Dimension() const override { return base_->Dimension(); }
  size_t Size() const override { return base_->Size() - deleted_.size() + appended(); }
  // The edits' bytes; the base's are shared, counted by whoever owns it.
  size_t MemoryBytes() const override;
  // Appends to the appended rows (exclusive access).
  Status Add(const FloatMatrix& rows) override;
  std::vector<VectorHit> Search(const float* query, const VectorSearchParams& params,
                                VectorSearchStats* stats) const override;

 private:
  explicit LayeredIndex(std::shared_ptr<const VectorIndex> base) : base_(std::move(base)) {}
  size_t live_base() const { return base_->Size() - deleted_.size(); }
  // Base row of live id `id` < live_base(); id of live base row `row`.
  uint32_t BaseRow(uint32_t id) const;
  uint32_t IdOfBaseRow(uint32_t row) const;
  bool IsDeleted(uint32_t row) const;
  std::vector<VectorHit> SearchBase(const float* query, const VectorSearchParams& params,
                                    VectorSearchStats* stats) const;
  std::vector<VectorHit> SearchAppended(const float* query, const VectorSearchParams& params,
                                        VectorSearchStats* stats) const;
  // The appended rows' int8 codes (row-major) and scales, as a rebuild
  // would encode them (EncodeInt8PerVector): made at the first approximate
  // search (VectorSearchParams::exact_scores false), not once per query.
  struct AppendedCodes {
    std::once_flag once;
    std::vector<int8_t> codes;
    std::vector<float> scales;
  };
  const AppendedCodes& Codes() const;

  std::shared_ptr<const VectorIndex> base_;
  std::vector<uint32_t> deleted_;     // ascending base rows
  std::unique_ptr<FlatIndex> delta_;  // appended rows; null when none
  // Of delta_; replaced by Add (which has exclusive access).
  std::unique_ptr<AppendedCodes> codes_ = std::make_unique<AppendedCodes>();
};

}  // namespace flowrag

#endif  // FLOWRAG_VECTOR_LAYERED_INDEX_H_
