// Random vectors for the vector index tests, the same for the same seed:
// unit vectors of normal components (RandomVectors), and mostly-zero rows
// (RandomSparseMatrix).
#ifndef FLOWRAG_TESTS_RANDOM_VECTORS_H_
#define FLOWRAG_TESTS_RANDOM_VECTORS_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>

#include "common/matrix.h"

namespace flowrag {

inline FloatMatrix RandomVectors(size_t n, size_t d, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  FloatMatrix m(n, d);
  for (size_t i = 0; i < n; ++i) {
    float norm = 0;
    for (size_t j = 0; j < d; ++j) {
      m.row(i)[j] = normal(rng);
      norm += m.row(i)[j] * m.row(i)[j];
    }
    for (size_t j = 0; j < d; ++j) m.row(i)[j] /= std::sqrt(norm);
  }
  return m;
}

// n rows of d columns, each with about `density`·d non-zeros in [-1, 1];
// every 17th row (r % 17 == 5) is empty.
inline FloatMatrix RandomSparseMatrix(size_t n, size_t d, double density, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::bernoulli_distribution keep(density);
  FloatMatrix m(n, d);
  for (size_t r = 0; r < n; ++r) {
    if (r % 17 == 5) continue;
    for (size_t c = 0; c < d; ++c) {
      if (keep(rng)) m.row(r)[c] = value(rng);
    }
  }
  return m;
}

}  // namespace flowrag

#endif  // FLOWRAG_TESTS_RANDOM_VECTORS_H_
