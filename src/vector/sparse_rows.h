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
// Costs: Dot with a dense query O(nnz of the row); Append O(cols) (scans the
// dense row); Dot of two rows O(nnz_a + nnz_b).
// Thread-safety: a value type; concurrent reads are safe.
#ifndef FLOWRAG_VECTOR_SPARSE_ROWS_H_
#define FLOWRAG_VECTOR_SPARSE_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/array_io.h"
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

  // Room for `rows` more rows and `nonzeros` more non-zeros.
  void Reserve(size_t rows, size_t nonzeros) {
    offsets.Mutable().reserve(offsets.size() + rows);
    offsets.Sync();
    dims.Mutable().reserve(dims.size() + nonzeros);
    dims.Sync();
    values.Mutable().reserve(values.size() + nonzeros);
    values.Sync();
  }

  // Appends the non-zeros of a dense row of `cols` floats.
  void Append(const float* dense) {
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

  // Appends row `row` of `other` (same cols).
  void AppendRow(const SparseRows& other, size_t row) {
    const uint64_t b = other.offsets[row], e = other.offsets[row + 1];
    std::vector<uint32_t>& d = dims.Mutable();
    std::vector<float>& v = values.Mutable();
    d.insert(d.end(), other.dims.begin() + static_cast<ptrdiff_t>(b),
             other.dims.begin() + static_cast<ptrdiff_t>(e));
    v.insert(v.end(), other.values.begin() + static_cast<ptrdiff_t>(b),
             other.values.begin() + static_cast<ptrdiff_t>(e));
    dims.Sync();
    values.Sync();
    offsets.Mutable().push_back(d.size());
    offsets.Sync();
  }

  // Writes row `row` into `dense` (cols floats, zeroed first).
  void Densify(size_t row, float* dense) const {
    for (size_t d = 0; d < cols; ++d) dense[d] = 0.0f;
    for (uint64_t i = offsets[row]; i < offsets[row + 1]; ++i) dense[dims[i]] = values[i];
  }

  float Dot(uint32_t row, const float* dense) const {
    float s = 0.0f;
    for (uint64_t i = offsets[row]; i < offsets[row + 1]; ++i) s += values[i] * dense[dims[i]];
    return s;
  }

  // Dot product of row `a` with row `b` of `other` (same cols): a merge of
  // the two ascending dimension lists.
  float DotRow(uint32_t a, const SparseRows& other, uint32_t b) const {
    uint64_t i = offsets[a], j = other.offsets[b];
    const uint64_t ie = offsets[a + 1], je = other.offsets[b + 1];
    float s = 0.0f;
    while (i < ie && j < je) {
      if (dims[i] < other.dims[j]) {
        ++i;
      } else if (dims[i] > other.dims[j]) {
        ++j;
      } else {
        s += values[i++] * other.values[j++];
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
  // exceed 31 bytes (so `prefix` at most 26). O(1) beyond the sink's copy.
  Status ExportArrays(ArraySink& sink, std::string_view prefix) const;
  // The rows of those arrays, borrowed in place. Corruption naming the
  // array when they are not rows: offsets (first 0, non-decreasing, last ==
  // the non-zeros; at most kMaxVectors rows), as many values as dims, each
  // row's dims ascending and < cols, values finite, cols > 0 when there are
  // rows. The caller checks rows() and cols against its texts and
  // embedder (a dense query of another dimension would be read out of
  // range). A missing array: the source's NotFound. O(rows + nonzeros).
  static Result<SparseRows> AdoptArrays(const ArraySource& source, std::string_view prefix);
};

}  // namespace flowrag

#endif  // FLOWRAG_VECTOR_SPARSE_ROWS_H_
