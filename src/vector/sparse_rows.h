// SparseRows: rows of mostly-zero vectors in CSR form (row offsets, then the
// non-zero dimensions of each row in ascending order with their values).
//
// The built-in hashed embedder fills 3–20% of its 1,024 dimensions for the
// short texts of a knowledge graph (2wiki: entity names 33 non-zeros,
// fact texts 81, relation texts 50, descriptions 190), so a graph's vectors
// are held like this everywhere: 8 bytes per non-zero instead of 4 bytes per
// dimension. Dense vectors of remote models can be held too (FromMatrix),
// but then cost twice their dense size.
//
// The three arrays are FlatArrays (common/flat_array.h): owned when built,
// borrowed in place when adopted from an ArraySource (AdoptArrays); the
// appending methods copy borrowed arrays first (FlatArray::Mutable).
//
// Lazily adopted rows (a segment, ArraySource::GetLazy): only the offsets
// are checked at adoption; each row's bytes are verified and its meaning
// checked (dimensions ascending and < cols, values finite) at its first
// read through Row(), the only way to read a row's non-zeros. A row that
// fails reads as empty from then on and its damage is recorded with the
// source (ArraySource::Damage), so that the owner rebuilds. At 10^6
// passages the entity rows are 278 MB that an open no longer reads.
//
// Costs: Dot with a dense query O(nnz of the row); Append O(cols) (scans the
// dense row); Dot of two rows O(nnz_a + nnz_b).
// Thread-safety: a value type; concurrent reads are safe.
#ifndef FLOWRAG_VECTOR_SPARSE_ROWS_H_
#define FLOWRAG_VECTOR_SPARSE_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/array_io.h"
#include "common/checked_once.h"
#include "common/flat_array.h"
#include "common/matrix.h"

namespace flowrag {

struct SparseRows {
  FlatArray<uint64_t> offsets{std::vector<uint64_t>{0}};  // rows() + 1
  FlatArray<uint32_t> dims;                               // ascending within a row
  FlatArray<float> values;
  size_t cols = 0;

  static SparseRows FromMatrix(const FloatMatrix& m) {
    SparseRows r;
    r.cols = m.cols;
    r.Reserve(m.rows, 0);
    for (size_t i = 0; i < m.rows; ++i) r.Append(m.row(i));
    return r;
  }

  size_t rows() const { return offsets.size() - 1; }
  size_t nonzeros() const { return dims.size(); }
  size_t RowNonZeros(size_t row) const { return offsets[row + 1] - offsets[row]; }

  // Row `row`'s non-zeros, dimensions ascending. Of lazily adopted rows:
  // checked at the row's first read (above), empty when it failed.
  // REQUIRES: row < rows().
  struct RowView {
    std::span<const uint32_t> dims;
    std::span<const float> values;
  };
  RowView Row(size_t row) const {
    if (lazy_rows_ != nullptr && !RowChecked(row)) return {};
    const uint64_t b = offsets[row], n = offsets[row + 1] - b;
    return {dims.span().subspan(b, n), values.span().subspan(b, n)};
  }
  // OK when every row reads as written: at once unless lazily adopted;
  // else after each row not read yet is checked (Corruption naming the first
  // that fails). O(nonzeros) the first time.
  Status VerifyAll() const;
  // True when rows are checked at their first read (AdoptArrays from a lazy
  // source).
  bool lazy() const { return lazy_rows_ != nullptr; }

  // The mutating methods below copy borrowed arrays first and REQUIRE rows
  // that are not lazy or were verified (VerifyAll OK): the copy is owned and
  // checked no more.
  // Room for `rows` more rows and `nonzeros` more non-zeros.
  void Reserve(size_t rows, size_t nonzeros) {
    lazy_rows_.reset();
    offsets.Mutable().reserve(offsets.size() + rows);
    offsets.Sync();
    dims.Mutable().reserve(dims.size() + nonzeros);
    dims.Sync();
    values.Mutable().reserve(values.size() + nonzeros);
    values.Sync();
  }

  // Appends the non-zeros of a dense row of `cols` floats.
  void Append(const float* dense) {
    lazy_rows_.reset();
    std::vector<uint32_t>& d = dims.Mutable();
    std::vector<float>& v = values.Mutable();
    for (size_t c = 0; c < cols; ++c) {
      if (dense[c] != 0.0f) {
        d.push_back(static_cast<uint32_t>(c));
        v.push_back(dense[c]);
      }
    }
    dims.Sync();
    values.Sync();
    offsets.Mutable().push_back(d.size());
    offsets.Sync();
  }

  // Appends row `row` of `other` (same cols), as other.Row() reads it.
  void AppendRow(const SparseRows& other, size_t row) {
    const RowView r = other.Row(row);
    lazy_rows_.reset();
    std::vector<uint32_t>& d = dims.Mutable();
    std::vector<float>& v = values.Mutable();
    d.insert(d.end(), r.dims.begin(), r.dims.end());
    v.insert(v.end(), r.values.begin(), r.values.end());
    dims.Sync();
    values.Sync();
    offsets.Mutable().push_back(d.size());
    offsets.Sync();
  }

  // Writes row `row` into `dense` (cols floats, zeroed first).
  void Densify(size_t row, float* dense) const {
    for (size_t d = 0; d < cols; ++d) dense[d] = 0.0f;
    const RowView r = Row(row);
    for (size_t i = 0; i < r.dims.size(); ++i) dense[r.dims[i]] = r.values[i];
  }

  float Dot(uint32_t row, const float* dense) const {
    const RowView r = Row(row);
    float s = 0.0f;
    for (size_t i = 0; i < r.dims.size(); ++i) s += r.values[i] * dense[r.dims[i]];
    return s;
  }

  // Dot product of row `a` with row `b` of `other` (same cols): a merge of
  // the two ascending dimension lists.
  float DotRow(uint32_t a, const SparseRows& other, uint32_t b) const {
    const RowView x = Row(a), y = other.Row(b);
    size_t i = 0, j = 0;
    float s = 0.0f;
    while (i < x.dims.size() && j < y.dims.size()) {
      if (x.dims[i] < y.dims[j]) {
        ++i;
      } else if (x.dims[i] > y.dims[j]) {
        ++j;
      } else {
        s += x.values[i++] * y.values[j++];
      }
    }
    return s;
  }

  // Fraction of non-zero entries (0 when there are no rows or columns).
  double Density() const {
    const double cells = static_cast<double>(rows()) * static_cast<double>(cols);
    return cells > 0 ? static_cast<double>(nonzeros()) / cells : 0.0;
  }

  // Bytes of the three arrays (owned or borrowed).
  size_t MemoryBytes() const { return offsets.bytes() + dims.bytes() + values.bytes(); }
  // True when the three arrays are borrowed (AdoptArrays).
  bool borrowed() const { return offsets.borrowed() && dims.borrowed() && values.borrowed(); }

  // Hands the rows to `sink` as "<prefix>.cols" (uint64 scalar),
  // "<prefix>.off", "<prefix>.dims" and "<prefix>.vals", all random access
  // (rows are read one at a time, by id). InvalidArgument when a name would
  // exceed 31 bytes (so `prefix` at most 26); lazy rows are verified first
  // (VerifyAll), so damage is never copied. O(1) beyond the sink's copy.
  Status ExportArrays(ArraySink& sink, std::string_view prefix) const;
  // The rows of those arrays, borrowed in place. Corruption naming the
  // array when they are not rows: offsets (first 0, non-decreasing, last ==
  // the non-zeros; at most kMaxVectors rows), as many values as dims, each
  // row's dims ascending and < cols, values finite, cols > 0 when there are
  // rows. From a source that verifies lazily, the rows' checks wait for
  // their first read (above) and adoption is O(rows). The caller checks
  // rows() and cols against its texts and embedder (a dense query of
  // another dimension would be read out of range). A missing array: the
  // source's NotFound. O(rows + nonzeros).
  static Result<SparseRows> AdoptArrays(const ArraySource& source, std::string_view prefix);
  // The arrays AdoptArrays borrows lazily (dims and values), which a reader
  // verifying a segment ahead of the adoption leaves to it.
  static std::vector<std::string> LazyArrays(std::string_view prefix);

 private:
  struct LazyRows {
    LazyRows(size_t rows, std::string dims, std::string vals)
        : checked(rows), dims_name(std::move(dims)), vals_name(std::move(vals)) {}
    CheckedOnce checked;
    std::string dims_name, vals_name;  // "<prefix>.dims", "<prefix>.vals"
  };
  // Row `row`'s state, checking it the first time (CheckRow; a failure
  // reported to the source).
  bool RowChecked(size_t row) const;
  // Row `row`'s bytes verified and its non-zeros checked: OK or Corruption
  // naming the array (lazy_rows_'s names).
  Status CheckRow(size_t row) const;
  Status CheckAllRows() const;

  std::shared_ptr<const LazyRows> lazy_rows_;  // lazily adopted only; shared by copies
};

}  // namespace flowrag

#endif  // FLOWRAG_VECTOR_SPARSE_ROWS_H_
