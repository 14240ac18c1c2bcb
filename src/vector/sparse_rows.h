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
// Costs: Dot with a dense query O(nnz of the row); Append O(cols) (scans the
// dense row); Dot of two rows O(nnz_a + nnz_b).
// Thread-safety: a value type; concurrent reads are safe.
#ifndef FLOWRAG_VECTOR_SPARSE_ROWS_H_
#define FLOWRAG_VECTOR_SPARSE_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/matrix.h"

namespace flowrag {

struct SparseRows {
  std::vector<uint64_t> offsets{0};  // rows() + 1
  std::vector<uint32_t> dims;        // ascending within a row
  std::vector<float> values;
  size_t cols = 0;

  static SparseRows FromMatrix(const FloatMatrix& m) {
    SparseRows r;
    r.cols = m.cols;
    r.offsets.reserve(m.rows + 1);
    for (size_t i = 0; i < m.rows; ++i) r.Append(m.row(i));
    return r;
  }

  size_t rows() const { return offsets.size() - 1; }
  size_t nonzeros() const { return dims.size(); }
  size_t RowNonZeros(size_t row) const { return offsets[row + 1] - offsets[row]; }

  // Appends the non-zeros of a dense row of `cols` floats.
  void Append(const float* dense) {
    for (size_t d = 0; d < cols; ++d) {
      if (dense[d] != 0.0f) {
        dims.push_back(static_cast<uint32_t>(d));
        values.push_back(dense[d]);
      }
    }
    offsets.push_back(dims.size());
  }

  // Appends row `row` of `other` (same cols).
  void AppendRow(const SparseRows& other, size_t row) {
    const uint64_t b = other.offsets[row], e = other.offsets[row + 1];
    dims.insert(dims.end(), other.dims.begin() + static_cast<ptrdiff_t>(b),
                other.dims.begin() + static_cast<ptrdiff_t>(e));
    values.insert(values.end(), other.values.begin() + static_cast<ptrdiff_t>(b),
                  other.values.begin() + static_cast<ptrdiff_t>(e));
    offsets.push_back(dims.size());
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

  size_t MemoryBytes() const {
    return offsets.capacity() * sizeof(uint64_t) + dims.capacity() * sizeof(uint32_t) +
           values.capacity() * sizeof(float);
  }
};

}  // namespace flowrag

#endif  // FLOWRAG_VECTOR_SPARSE_ROWS_H_
