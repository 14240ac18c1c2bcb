// Random unit vectors for the vector index tests: n rows of d normal
// components, each row scaled to length 1, the same for the same seed.
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

}  // namespace flowrag

#endif  // FLOWRAG_TESTS_RANDOM_VECTORS_H_
