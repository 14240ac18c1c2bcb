// Dot-product kernels for the vector indexes, with run-time dispatch.
//
// The library is built for the baseline x86-64 ISA (-O2, no -march), so the
// kernels carry their own `target` attributes and are picked once per process
// from what the CPU and the OS support (cpuid + xgetbv via
// __builtin_cpu_supports): AVX-512F, else AVX2+FMA, else portable scalar code.
// `DotProduct()` (vector_index.h) uses the same dispatch.
//
// All kernels accept unaligned pointers and any length n >= 0. Results of
// different levels differ only by floating-point summation order (a few ulps
// of sum |a_i·b_i|); within one process the chosen level is fixed, so results
// are reproducible.
//
// Thread-safety: stateless functions; the dispatch decision is a function-local
// static initialised on first use (thread-safe).
#ifndef FLOWRAG_VECTOR_DOT_PRODUCT_H_
#define FLOWRAG_VECTOR_DOT_PRODUCT_H_

#include <cstddef>
#include <string_view>

namespace flowrag::vector_internal {

enum class SimdLevel { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

// The best level the running CPU and OS support. Cached after the first call.
SimdLevel DetectedSimdLevel();
std::string_view SimdLevelName(SimdLevel level);

// Kernels at the detected level.
//
// DotProductBlock: scores[r] = <query, rows + r·dim> for r in [0, num_rows);
// `rows` is a contiguous row-major block. Four rows are scored per pass so the
// query chunk is loaded once for four rows and eight independent accumulators
// hide the FMA latency. O(num_rows · dim).
void DotProductBlock(const float* query, const float* rows, size_t num_rows, size_t dim,
                     float* scores);
// DotProductGather: scores[i] = <query, rows[i]> for i in [0, count); each
// rows[i] points at `dim` floats. Same blocking as DotProductBlock; used for
// filtered scans and for scoring a graph node's neighbours together.
void DotProductGather(const float* query, const float* const* rows, size_t count, size_t dim,
                      float* scores);

// Axpy: y[i] += a·x[i] for i in [0, n). O(n).
void Axpy(float a, const float* x, float* y, size_t n);

// The same kernels at an explicit level, for tests and benchmarks.
// REQUIRES: level <= DetectedSimdLevel().
float DotProductAt(SimdLevel level, const float* a, const float* b, size_t n);
void DotProductBlockAt(SimdLevel level, const float* query, const float* rows, size_t num_rows,
                       size_t dim, float* scores);
void AxpyAt(SimdLevel level, float a, const float* x, float* y, size_t n);
void DotProductGatherAt(SimdLevel level, const float* query, const float* const* rows, size_t count,
                        size_t dim, float* scores);

}  // namespace flowrag::vector_internal

#endif  // FLOWRAG_VECTOR_DOT_PRODUCT_H_
