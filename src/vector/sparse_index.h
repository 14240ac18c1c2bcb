// SparseIndex: exact maximum-inner-product search for vectors that are mostly
// zeros (the built-in hashed embedder's vectors of names, facts and short
// texts fill 3–20% of their dimensions; vector/sparse_rows.h).
//
// Storage: inverted lists by dimension in one CSR array — for each dimension
// d, the postings of the vectors whose coordinate d is non-zero, ids
// ascending, each as (id delta: uint16, value: float). A gap of 65,535 ids or
// more is bridged by skip entries (delta kSkip, no posting), which only very
// sparse lists of very large indexes need. Memory: 6 bytes per non-zero
// instead of 4·d per vector (2wiki's 122,665 fact texts: 10.6 M non-zeros,
// 63 MB against 85 MB with 32-bit ids and 502 MB dense).
// Search: scores = Σ_{d : q_d ≠ 0} q_d · list_d, accumulated in a per-thread
// array, then the usual top-k (score desc, id asc). When the query's lists
// hold at least n/4 postings every id is scanned (no per-posting
// bookkeeping); otherwise only the touched ids are. O(Σ_{d∈nnz(q)} |list_d|
// + n) per query; exact, equal to the dense dot products up to float
// summation order. An index built from rows (FromRows) and one rebuilt from
// its own arrays (FromArrays, how a persisted snapshot loads it) hold the
// same postings in the same order, so they return bit-identical scores.
//
// The three arrays are FlatArrays (common/flat_array.h): owned when built,
// borrowed in place when adopted from an ArraySource (ExportArrays /
// AdoptArrays: a snapshot segment's graph vectors); Add() and Remap() build
// new owned arrays.
//
// Thread-safety: Add() needs exclusive access; Search() may run concurrently.
#ifndef FLOWRAG_VECTOR_SPARSE_INDEX_H_
#define FLOWRAG_VECTOR_SPARSE_INDEX_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/array_io.h"
#include "common/checked_once.h"
#include "common/flat_array.h"
#include "vector/sparse_rows.h"
#include "vector/vector_index.h"

namespace flowrag {

class SparseIndex final : public VectorIndex {
 public:
  // The delta of an entry that carries no posting, only advances the id.
  static constexpr uint16_t kSkip = 0xFFFF;

  explicit SparseIndex(size_t dim) : dim_(dim), offsets_(std::vector<uint64_t>(dim + 1, 0)) {}

  // The index of `rows` (ids = row numbers). InvalidArgument when a dimension
  // is out of range or a value is not finite. O(nnz + dim), no dense copy.
  static Result<std::unique_ptr<SparseIndex>> FromRows(const SparseRows& rows);
  // Builds an index in two passes over the same rows without holding them
  // all (an embedder's rows are embedded again for the second pass):
  // CountRow() every row in order, then FillRow() the same rows in the same
  // order, then Finish(). The postings are FromRows' over those rows. A row
  // is its non-zeros' dimensions (ascending, < dim) and values (finite):
  // InvalidArgument naming the row otherwise, and Internal when the second
  // pass's rows differ from the first's. Memory: the index plus O(dim).
  class TwoPassBuilder {
   public:
    explicit TwoPassBuilder(size_t dim);
    Status CountRow(std::span<const uint32_t> dims);
    Status FillRow(std::span<const uint32_t> dims, std::span<const float> values);
    Result<std::unique_ptr<SparseIndex>> Finish();

    size_t rows_counted() const { return counted_; }
    size_t nonzeros_counted() const { return nonzeros_; }

   private:
    Status StartFilling();

    size_t dim_;
    std::vector<uint64_t> offsets_;  // dim_ + 1: counts, then CSR offsets
    std::vector<uint16_t> deltas_;
    std::vector<float> values_;
    std::vector<uint32_t> last_;  // per dimension: the row of its last posting
    std::vector<uint64_t> next_;  // per dimension: where its next entry goes (pass 2)
    size_t counted_ = 0, filled_ = 0, nonzeros_ = 0;
    bool filling_ = false;
  };

  // An index from the arrays of another (offsets(), deltas(), values(),
  // Size()), as persisted. Validates them (offsets monotonic and spanning
  // the entries, ids < size and strictly ascending within a list, finite
  // values): Corruption naming the first violation. O(entries + dim).
  static Result<std::unique_ptr<SparseIndex>> FromArrays(size_t dim, size_t size,
                                                         std::vector<uint64_t> offsets,
                                                         std::vector<uint16_t> deltas,
                                                         std::vector<float> values);

  std::string Kind() const override { return "sparse"; }
  size_t Dimension() const override { return dim_; }
  size_t Size() const override { return size_; }
  size_t MemoryBytes() const override {
    return deltas_.bytes() + values_.bytes() + offsets_.bytes();
  }
  // True when the arrays are borrowed (AdoptArrays).
  bool borrowed() const { return offsets_.borrowed() && deltas_.borrowed() && values_.borrowed(); }

  // Hands the index to `sink` as "<prefix>.dim" and "<prefix>.size" (uint64
  // scalars), "<prefix>.off" (list offsets, random access: a query reads
  // the lists of its non-zero dimensions), "<prefix>.delta" and
  // "<prefix>.vals" (each list read whole). InvalidArgument when a name would
  // exceed 31 bytes (`prefix` at most 25). O(1) beyond the sink's copy.
  Status ExportArrays(ArraySink& sink, std::string_view prefix) const;
  // The index of those arrays, borrowed in place; it searches exactly as the
  // exported one. Checks as FromArrays does (offsets, ids in range and
  // ascending, finite values; a dimension of at most 2^20, a size of at most
  // kMaxVectors), Corruption naming the array. From a source that verifies
  // lazily (a segment: ArraySource::GetLazy) only the offsets are checked
  // at adoption; each list is verified (checksums) and checked (ids,
  // values) at its first read, so adoption reads O(dim), not O(entries). A
  // list that fails reads as empty from then on, and its damage is
  // recorded with the source (ArraySource::Damage) for its owner to
  // rebuild from. The caller checks Size() and
  // Dimension() against its texts and the queries it will ask before any
  // search: a query is read for Dimension() floats, and a search holds
  // Size() scores (a size is not bounded by the arrays: vectors without
  // non-zeros have no entries). A missing array: the source's NotFound.
  // O(entries + dim).
  static Result<std::unique_ptr<SparseIndex>> AdoptArrays(const ArraySource& source,
                                                          std::string_view prefix);

  // The arrays AdoptArrays borrows lazily (the lists), which a reader
  // verifying a segment ahead of the adoption leaves to it.
  static std::vector<std::string> LazyArrays(std::string_view prefix);

  // The index of other vectors that are mostly `old`'s: vector i of the
  // result is old's vector old_of_new[i] (an old vector may be used more than
  // once), or, where that is -1, the next row of `fresh` (in order). Equal to FromRows over those
  // rows, without materialising them: one pass over old's postings plus a sort of the lists that
  // renumbering put out of order; when old_of_new keeps a prefix of old's vectors in place and
  // then takes only fresh rows (an insert's graph texts), each list is old's entries copied as
  // they are plus the fresh postings. O(nnz + dim). InvalidArgument when a reference is out of
  // range or `fresh` does not have one row per -1.
  static Result<std::unique_ptr<SparseIndex>> Remap(const SparseIndex& old,
                                                    std::span<const int64_t> old_of_new,
                                                    const SparseRows& fresh);

  // All-or-nothing like FlatIndex::Add. Merges the new postings into every
  // list: O(nnz already held + rows·d) per call, so add in large batches.
  Status Add(const FloatMatrix& rows) override;

  std::vector<VectorHit> Search(const float* query, const VectorSearchParams& params,
                                VectorSearchStats* stats) const override;

  // The postings; for a lazily adopted index its entries, which count the
  // skip entries too (a list of more than 65,535 vectors may hold some):
  // counting postings would read every list.
  size_t NonZeros() const { return nonzeros_; }
  // The vectors again as rows (a transpose). O(nnz + n) time and memory.
  SparseRows Rows() const;
  // The same transpose into caller-chosen arrays: row i's non-zeros are
  // (dims, values)[offsets[i], offsets[i + 1]), dimensions ascending. `Dim`
  // must hold Dimension() - 1 (uint16_t halves the dimension array of an
  // index of at most 65,536 dimensions).
  template <typename Dim>
  void Transpose(std::vector<uint64_t>* offsets, std::vector<Dim>* dims,
                 std::vector<float>* values) const {
    offsets->assign(size_ + 1, 0);
    for (size_t d = 0; d < dim_; ++d) {
      ForEachPosting(d, [&](uint32_t id, float) { ++(*offsets)[id + 1]; });
    }
    for (size_t i = 0; i < size_; ++i) (*offsets)[i + 1] += (*offsets)[i];
    dims->resize(offsets->back());
    values->resize(offsets->back());
    std::vector<uint64_t> next(offsets->begin(), offsets->end() - 1);
    for (size_t d = 0; d < dim_; ++d) {
      ForEachPosting(d, [&](uint32_t id, float value) {
        const uint64_t at = next[id]++;
        (*dims)[at] = static_cast<Dim>(d);
        (*values)[at] = value;
      });
    }
  }

  // OK when every list is readable: at once for an index not adopted
  // lazily; else each list verified and checked now (once), Corruption
  // naming the first that fails. What a writer of the arrays calls first.
  Status VerifyLists() const;

  // The arrays, for persistence (after VerifyLists): the entries of list d
  // are (deltas, values)[offsets()[d], offsets()[d+1]).
  std::span<const uint64_t> offsets() const { return offsets_; }
  std::span<const uint16_t> deltas() const { return deltas_; }
  std::span<const float> values() const { return values_; }

  // Calls fn(id, value) for every posting of list d (d < Dimension()), ids
  // ascending.
  template <typename Fn>
  void ForEachPosting(size_t d, const Fn& fn) const {
    if (!ListReadable(d)) return;
    uint32_t id = 0;
    for (uint64_t i = offsets_[d]; i < offsets_[d + 1]; ++i) {
      id += deltas_[i];
      if (deltas_[i] != kSkip) fn(id, values_[i]);
    }
  }

 private:
  // A lazily adopted index's lists: per list 0 (not yet checked), 1
  // (readable) or 2 (damaged: read as empty). Shared by copies.
  // True when list d may be read (above). O(1) after its first check.
  bool ListReadable(size_t d) const { return lists_ == nullptr || ListChecked(d); }
  // The state of list d, checking it the first time (CheckList; a failure
  // reported to the source).
  bool ListChecked(size_t d) const;
  // List d's bytes verified and its ids and values checked: OK or
  // Corruption naming the list.
  Status CheckList(size_t d) const;

  // Remap's case of old's first `kept` vectors followed by `fresh`'s.
  static std::unique_ptr<SparseIndex> KeepPrefixAndAppend(const SparseIndex& old, size_t kept,
                                                          const SparseIndex& fresh);
  // An index of `size` vectors over these arrays (already checked).
  static std::unique_ptr<SparseIndex> Of(size_t dim, size_t size, size_t nonzeros,
                                         FlatArray<uint64_t> offsets, FlatArray<uint16_t> deltas,
                                         FlatArray<float> values);

  size_t dim_;
  size_t size_ = 0;
  size_t nonzeros_ = 0;
  FlatArray<uint64_t> offsets_;  // dim_ + 1
  FlatArray<uint16_t> deltas_;
  FlatArray<float> values_;
  std::shared_ptr<const CheckedOnce> lists_;  // lazily adopted only
  std::string list_names_;                   // lazily adopted: "<prefix>.delta"
};

// Checks a SparseRows for use as an index's input: offsets consistent with
// the arrays, dimensions < cols, finite values. InvalidArgument naming the
// row. O(nnz).
Status ValidateSparseRows(const SparseRows& rows);

// Fraction of non-zero entries of `m` (0 for an empty matrix).
double Density(const FloatMatrix& m);

}  // namespace flowrag

#endif  // FLOWRAG_VECTOR_SPARSE_INDEX_H_
