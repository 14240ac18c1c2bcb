// Synthetic vectors shared by the vector benchmarks: unit rows around 500
// fixed Gaussian centres (the same centres for every seed, so data and
// queries made with different seeds fall in the same clusters).
#ifndef FLOWRAG_BENCH_SYNTHETIC_VECTORS_H_
#define FLOWRAG_BENCH_SYNTHETIC_VECTORS_H_

#include <cmath>
#include <cstdint>
#include <random>

#include "vector/vector_index.h"

namespace flowrag::bench {

// Scales v[0..d) to unit length (a zero vector stays zero).
inline void Normalise(float* v, size_t d) {
  double norm = 0;
  for (size_t i = 0; i < d; ++i) norm += double{v[i]} * v[i];
  const float inv = norm > 0 ? static_cast<float>(1.0 / std::sqrt(norm)) : 0.0f;
  for (size_t i = 0; i < d; ++i) v[i] *= inv;
}

// n unit rows of dimension d: a random centre plus Gaussian noise of
// norm about 1.5, normalised.
inline FloatMatrix Clustered(size_t n, size_t d, uint64_t seed) {
  constexpr size_t kClusters = 500;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  FloatMatrix centres(kClusters, d);
  std::mt19937_64 centre_rng(12345);  // same centres for data and queries
  for (float& x : centres.data) x = normal(centre_rng);
  for (size_t c = 0; c < kClusters; ++c) Normalise(centres.row(c), d);
  std::uniform_int_distribution<size_t> pick(0, kClusters - 1);
  const float scale = 1.5f / std::sqrt(static_cast<float>(d));
  FloatMatrix m(n, d);
  for (size_t i = 0; i < n; ++i) {
    const float* c = centres.row(pick(rng));
    float* row = m.row(i);
    for (size_t j = 0; j < d; ++j) row[j] = c[j] + scale * normal(rng);
    Normalise(row, d);
  }
  return m;
}

}  // namespace flowrag::bench

#endif  // FLOWRAG_BENCH_SYNTHETIC_VECTORS_H_
