// FloatMatrix: a dense row-major matrix of floats, the one layout embeddings
// and vector indexes exchange (Embedder::Embed returns one).
//
// Thread-safety: a value type; concurrent reads are safe.
#ifndef FLOWRAG_MATRIX_H_
#define FLOWRAG_MATRIX_H_

#include <cstddef>
#include <span>
#include <vector>

namespace flowrag {

struct FloatMatrix {
  size_t rows = 0;
  size_t cols = 0;
  std::vector<float> data;  // rows * cols values, row-major

  FloatMatrix() = default;
  FloatMatrix(size_t r, size_t c) : rows(r), cols(c), data(r * c, 0.0f) {}

  float* row(size_t i) { return data.data() + i * cols; }
  const float* row(size_t i) const { return data.data() + i * cols; }
  std::span<const float> row_span(size_t i) const { return {row(i), cols}; }
};

}  // namespace flowrag

#endif  // FLOWRAG_MATRIX_H_
