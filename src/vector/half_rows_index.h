// HalfRowsIndex: sparse vectors held once, as rows of 16-bit dimensions and
// float16 values, searchable like any VectorIndex (issue 34: "the
// graph-text vectors compressed or replaced").
//
// Why: the knowledge graph's fact-text vectors were held twice, as a
// SparseIndex (inverted lists, float values: 6 bytes per non-zero) for a
// search over every fact text, and as rows (retrieval/local_facts.h: float16,
// 4 bytes per non-zero) for the local fact channel every graph method uses
// by default. At 10^6 passages (591 M non-zeros) that was 3.5 GB and 2.4 GB
// of the snapshot segment. Queries read the rows; the global search over
// every fact text is an option (fact_passages = 0). So the rows are the one
// copy, and the inverted lists a global search needs are built from them at
// its first search (SparseIndex::FromRows over Rows(): 6 bytes per non-zero
// of private memory, held by the index from then on).
//
// Values are float16 (vector/quantized.h FloatToHalf: round to nearest even,
// relative error at most 2^-11; local_facts.h measured float16 against float
// on every benchmark). Every search and dot product reads a value as the
// float of its half, so an index built from rows, one remapped, one adopted
// from a segment and one read from a snapshot part score bit-identically.
// Search: exact over those values, the SparseIndex's rules (score desc, id
// asc; filter; min_score).
//
// Storage: CSR rows (offsets: Size() + 1; dims ascending within a row, each <
// Dimension() <= 65,536; halves finite), FlatArrays owned when built and
// borrowed when adopted (ExportArrays / AdoptArrays). Lazily adopted rows (a
// segment, ArraySource::GetLazy; offsets included) are verified and checked
// at their first read through Row(), the only way to read a row: a row that
// fails reads as empty and its damage is recorded with the source for the
// owner to rebuild, as SparseRows does.
//
// Costs: Row and Dot O(non-zeros of the row); Add O(rows·d); the first
// Search O(nnz + d), later ones SparseIndex's. Memory: 4 bytes per non-zero
// and 8 per row, plus 6 per non-zero once searched.
// Thread-safety: Add() needs exclusive access; Row, Dot and Search may run
// concurrently (the first Search builds the lists under a mutex).
#ifndef FLOWRAG_VECTOR_HALF_ROWS_INDEX_H_
#define FLOWRAG_VECTOR_HALF_ROWS_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
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

class SparseIndex;

class HalfRowsIndex final : public VectorIndex {
 public:
  // Dimensions are stored in 16 bits.
  static constexpr size_t kMaxDimension = size_t{1} << 16;

  // An empty index of `dim`-dimensional vectors. REQUIRES: 0 < dim <=
  // kMaxDimension (FromRows and AdoptArrays check it).
  explicit HalfRowsIndex(size_t dim);
  HalfRowsIndex(const HalfRowsIndex&) = delete;
  HalfRowsIndex& operator=(const HalfRowsIndex&) = delete;
  ~HalfRowsIndex() override;

  // The index of `rows` (ids = row numbers). InvalidArgument when cols is 0
  // or above kMaxDimension, a row is not ascending within range, or a value
  // is not finite as a float16 (|x| > 65504). O(nnz).
  static Result<std::unique_ptr<HalfRowsIndex>> FromRows(const SparseRows& rows);

  // The index of other vectors that are mostly `old`'s: vector i is old's
  // vector old_of_new[i] (as old.Row reads it), or, where that is -1, the
  // next row of `fresh` (in order). Equal to FromRows over those rows
  // (halves of halves are the same halves). InvalidArgument as FromRows for
  // a fresh row, or when a reference is out of range or `fresh` does not
  // have one row per -1. O(nnz + rows).
  static Result<std::unique_ptr<HalfRowsIndex>> Remap(const HalfRowsIndex& old,
                                                      std::span<const int64_t> old_of_new,
                                                      const SparseRows& fresh);

  std::string Kind() const override { return "sparse-half"; }
  size_t Dimension() const override { return dim_; }
  size_t Size() const override { return offsets_.size() - 1; }
  size_t MemoryBytes() const override;
  // All-or-nothing: InvalidArgument as FromRows, or for rows of another
  // dimension. Drops lists built by an earlier Search.
  Status Add(const FloatMatrix& rows) override;
  std::vector<VectorHit> Search(const float* query, const VectorSearchParams& params,
                                VectorSearchStats* stats) const override;

  // Row `row`'s non-zeros, dimensions ascending; empty when a lazily adopted
  // row failed its check. REQUIRES: row < Size().
  struct RowView {
    std::span<const uint16_t> dims;
    std::span<const uint16_t> halves;
  };
  RowView Row(size_t row) const;
  // Σ half(h_i) · query[d_i] over row `row`, accumulated in float in the
  // row's order. REQUIRES: row < Size(), `query` holds Dimension() floats.
  float Dot(size_t row, const float* query) const;
  // The vectors as float rows (each value the float of its half). O(nnz).
  SparseRows Rows() const;
  size_t NonZeros() const { return dims_.size(); }

  // OK when every row reads as written: at once unless lazily adopted; else
  // after every row not read yet is checked (Corruption naming the first
  // that fails). What a writer of the arrays calls first.
  Status VerifyAll() const;
  bool lazy() const { return checked_ != nullptr; }

  // Hands the rows to `sink` as "<prefix>.dim" (uint64 scalar), "<prefix>.off",
  // "<prefix>.dims" and "<prefix>.halves" (random access: rows are read one
  // at a time, by id). Lazy rows are verified first. InvalidArgument when a
  // name would exceed 31 bytes (`prefix` at most 24). O(1) beyond the copy.
  Status ExportArrays(ArraySink& sink, std::string_view prefix) const;
  // The index of those arrays, borrowed in place. Corruption naming the
  // array when they are not rows: dimension 1..kMaxDimension, offsets (first
  // 0, non-decreasing, last = the non-zeros, at most kMaxVectors rows), as
  // many halves as dims, each row's dims ascending and below the dimension,
  // halves finite. From a source that verifies lazily nothing of the three
  // arrays is read at adoption (O(1): at 10^6 passages the offsets alone are
  // 52 MB); a row's two offsets (within the entries, not decreasing), its
  // dimensions and values are verified and checked at its first read. The
  // caller checks Size() and Dimension() against its texts and queries. A
  // missing array: the source's NotFound.
  static Result<std::unique_ptr<HalfRowsIndex>> AdoptArrays(const ArraySource& source,
                                                            std::string_view prefix);
  // The arrays AdoptArrays borrows lazily (all three).
  static std::vector<std::string> LazyArrays(std::string_view prefix);

 private:
  // Appends one row's non-zeros, each converted once; InvalidArgument
  // (naming `row`) for a dimension out of range or order, or a value not
  // finite as a half, and then nothing of the row is kept.
  Status AppendFloatRow(size_t row, std::span<const uint32_t> dims, std::span<const float> values);
  // Drops the rows from `rows` on (an Add that failed part way).
  void TruncateTo(size_t rows);
  void AppendRow(const RowView& row);
  // Room for `rows` rows and `nonzeros` entries in all (an empty index).
  void Reserve(size_t rows, size_t nonzeros);
  bool RowChecked(size_t row) const;
  Status CheckRow(size_t row) const;
  // The inverted lists Search reads, built at the first search.
  const SparseIndex& Postings() const;

  size_t dim_;
  FlatArray<uint64_t> offsets_{std::vector<uint64_t>{0}};
  FlatArray<uint16_t> dims_;
  FlatArray<uint16_t> halves_;
  std::unique_ptr<const CheckedOnce> checked_;  // lazily adopted rows only
  std::string offsets_name_, dims_name_, halves_name_;  // for messages: "<prefix>.off", ...
  mutable std::mutex postings_mu_;
  mutable std::unique_ptr<const SparseIndex> postings_;
};

}  // namespace flowrag

#endif  // FLOWRAG_VECTOR_HALF_ROWS_INDEX_H_
