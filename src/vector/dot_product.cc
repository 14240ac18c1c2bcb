// Dot-product kernels: scalar, AVX2+FMA and AVX-512F, picked at run time.
//
// The AVX kernels are compiled with per-function `target` attributes, so the
// translation unit itself needs no -mavx* flag and the library stays runnable
// on any x86-64 CPU. Tails are handled with masked loads (which never touch the
// masked-out lanes), so no kernel reads past a[n-1] / b[n-1].
#include "vector/dot_product.h"

#include <cmath>

#include <cstdint>

#include "vector/vector_index.h"

#if defined(__x86_64__) || defined(__i386__)
#define FLOWRAG_X86 1
#include <immintrin.h>
#else
#define FLOWRAG_X86 0
#endif

namespace flowrag {
namespace vector_internal {
namespace {

// ---------------------------------------------------------------- scalar

float DotScalar(const float* a, const float* b, size_t n) {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

void Dot4Scalar(const float* q, const float* r0, const float* r1, const float* r2, const float* r3,
                size_t dim, float* out) {
  out[0] = DotScalar(q, r0, dim);
  out[1] = DotScalar(q, r1, dim);
  out[2] = DotScalar(q, r2, dim);
  out[3] = DotScalar(q, r3, dim);
}

#if FLOWRAG_X86

// ---------------------------------------------------------------- AVX2 + FMA

#define FLOWRAG_TARGET_AVX2 __attribute__((target("avx2,fma")))

FLOWRAG_TARGET_AVX2 inline float HorizontalSum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  __m128 shuf = _mm_movehdup_ps(s);
  s = _mm_add_ps(s, shuf);
  shuf = _mm_movehl_ps(shuf, s);
  s = _mm_add_ss(s, shuf);
  return _mm_cvtss_f32(s);
}

// Lanes [0, rest) set, for rest in [0, 8].
FLOWRAG_TARGET_AVX2 inline __m256i TailMask256(size_t rest) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(rest)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Per-row summation scheme shared by DotAvx2 and Dot4Avx2 (so both give the
// same bits): two accumulators over 16-float steps, one 8-float step into the
// first, the masked tail into the second.
FLOWRAG_TARGET_AVX2 float DotAvx2(const float* a, const float* b, size_t n) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  if (i + 8 <= n) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    i += 8;
  }
  if (i < n) {
    const __m256i m = TailMask256(n - i);
    acc1 = _mm256_fmadd_ps(_mm256_maskload_ps(a + i, m), _mm256_maskload_ps(b + i, m), acc1);
  }
  return HorizontalSum256(_mm256_add_ps(acc0, acc1));
}

// Scores four rows against one query: each query chunk is loaded once for
// four rows, and the eight accumulators keep both FMA ports busy.
FLOWRAG_TARGET_AVX2 void Dot4Avx2(const float* q, const float* r0, const float* r1, const float* r2,
                                  const float* r3, size_t dim, float* out) {
  __m256 a0 = _mm256_setzero_ps(), b0 = _mm256_setzero_ps();
  __m256 a1 = _mm256_setzero_ps(), b1 = _mm256_setzero_ps();
  __m256 a2 = _mm256_setzero_ps(), b2 = _mm256_setzero_ps();
  __m256 a3 = _mm256_setzero_ps(), b3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= dim; i += 16) {
    const __m256 qa = _mm256_loadu_ps(q + i);
    const __m256 qb = _mm256_loadu_ps(q + i + 8);
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + i), qa, a0);
    b0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + i + 8), qb, b0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + i), qa, a1);
    b1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + i + 8), qb, b1);
    a2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + i), qa, a2);
    b2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + i + 8), qb, b2);
    a3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + i), qa, a3);
    b3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + i + 8), qb, b3);
  }
  if (i + 8 <= dim) {
    const __m256 qa = _mm256_loadu_ps(q + i);
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + i), qa, a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + i), qa, a1);
    a2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + i), qa, a2);
    a3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + i), qa, a3);
    i += 8;
  }
  if (i < dim) {
    const __m256i m = TailMask256(dim - i);
    const __m256 qa = _mm256_maskload_ps(q + i, m);
    b0 = _mm256_fmadd_ps(_mm256_maskload_ps(r0 + i, m), qa, b0);
    b1 = _mm256_fmadd_ps(_mm256_maskload_ps(r1 + i, m), qa, b1);
    b2 = _mm256_fmadd_ps(_mm256_maskload_ps(r2 + i, m), qa, b2);
    b3 = _mm256_fmadd_ps(_mm256_maskload_ps(r3 + i, m), qa, b3);
  }
  out[0] = HorizontalSum256(_mm256_add_ps(a0, b0));
  out[1] = HorizontalSum256(_mm256_add_ps(a1, b1));
  out[2] = HorizontalSum256(_mm256_add_ps(a2, b2));
  out[3] = HorizontalSum256(_mm256_add_ps(a3, b3));
}

// ---------------------------------------------------------------- AVX-512F

#define FLOWRAG_TARGET_AVX512 __attribute__((target("avx512f")))

// Pairwise sum of the 16 lanes. (Not _mm512_reduce_add_ps: GCC 12's version
// trips -Wuninitialized inside avx512fintrin.h, GCC PR 105593.)
FLOWRAG_TARGET_AVX512 inline float HorizontalSum512(__m512 v) {
  alignas(64) float t[16];
  _mm512_store_ps(t, v);
  for (int width = 8; width > 0; width /= 2) {
    for (int i = 0; i < width; ++i) t[i] += t[i + width];
  }
  return t[0];
}

// Lanes [0, rest) set, for rest in [0, 16).
FLOWRAG_TARGET_AVX512 inline __mmask16 TailMask512(size_t rest) {
  return static_cast<__mmask16>((1u << rest) - 1u);
}

// Per-row summation scheme shared by DotAvx512 and Dot4Avx512 (so both give
// the same bits): four accumulators over 64-float steps, 16-float steps into
// the first, the masked tail into the second, then ((0+1)+(2+3)).
FLOWRAG_TARGET_AVX512 float DotAvx512(const float* a, const float* b, size_t n) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  __m512 acc2 = _mm512_setzero_ps(), acc3 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
    acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), acc1);
    acc2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32), acc2);
    acc3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48), acc3);
  }
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
  }
  if (i < n) {
    const __mmask16 m = TailMask512(n - i);
    acc1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), acc1);
  }
  return HorizontalSum512(_mm512_add_ps(_mm512_add_ps(acc0, acc1), _mm512_add_ps(acc2, acc3)));
}

// Four rows per pass: 16 accumulators and 4 query registers fit in the 32
// zmm registers; each query chunk is loaded once for four rows.
FLOWRAG_TARGET_AVX512 void Dot4Avx512(const float* q, const float* r0, const float* r1,
                                      const float* r2, const float* r3, size_t dim, float* out) {
  const float* r[4] = {r0, r1, r2, r3};
  __m512 acc[4][4];
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
#pragma GCC unroll 4
    for (int t = 0; t < 4; ++t) acc[j][t] = _mm512_setzero_ps();
  }
  size_t i = 0;
  for (; i + 64 <= dim; i += 64) {
    __m512 qv[4];
#pragma GCC unroll 4
    for (int t = 0; t < 4; ++t) qv[t] = _mm512_loadu_ps(q + i + 16 * t);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
#pragma GCC unroll 4
      for (int t = 0; t < 4; ++t) {
        acc[j][t] = _mm512_fmadd_ps(_mm512_loadu_ps(r[j] + i + 16 * t), qv[t], acc[j][t]);
      }
    }
  }
  for (; i + 16 <= dim; i += 16) {
    const __m512 qv = _mm512_loadu_ps(q + i);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      acc[j][0] = _mm512_fmadd_ps(_mm512_loadu_ps(r[j] + i), qv, acc[j][0]);
    }
  }
  if (i < dim) {
    const __mmask16 m = TailMask512(dim - i);
    const __m512 qv = _mm512_maskz_loadu_ps(m, q + i);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      acc[j][1] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, r[j] + i), qv, acc[j][1]);
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    out[j] = HorizontalSum512(
        _mm512_add_ps(_mm512_add_ps(acc[j][0], acc[j][1]), _mm512_add_ps(acc[j][2], acc[j][3])));
  }
}

#endif  // FLOWRAG_X86

// ---------------------------------------------------------------- axpy
//
// y[i] += a·x[i]: one dimension of a sparse query applied to a column of the
// dimension-major matrix (FlatIndex's sparse path). Each element is one FMA,
// so every level gives the same result up to FMA vs multiply-add rounding.

void AxpyScalar(float a, const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] += a * x[i];
}

#if FLOWRAG_X86
FLOWRAG_TARGET_AVX2 void AxpyAvx2(float a, const float* x, float* y, size_t n) {
  const __m256 va = _mm256_set1_ps(a);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  }
  for (; i < n; ++i) y[i] = std::fma(a, x[i], y[i]);
}

FLOWRAG_TARGET_AVX512 void AxpyAvx512(float a, const float* x, float* y, size_t n) {
  const __m512 va = _mm512_set1_ps(a);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm512_storeu_ps(y + i, _mm512_fmadd_ps(va, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
  }
  if (i < n) {
    const __mmask16 m = TailMask512(n - i);
    _mm512_mask_storeu_ps(
        y + i, m, _mm512_fmadd_ps(va, _mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i)));
  }
}
#endif  // FLOWRAG_X86

// ---------------------------------------------------------------- loops
//
// The block and gather loops are stamped out per level with the level's
// target attribute so the four-row kernel can be inlined into them.

#define FLOWRAG_DEFINE_LOOPS(SUFFIX, ATTR)                                                     \
  ATTR void Block##SUFFIX(const float* q, const float* rows, size_t num_rows, size_t dim,      \
                          float* out) {                                                        \
    size_t r = 0;                                                                              \
    for (; r + 4 <= num_rows; r += 4) {                                                        \
      const float* p = rows + r * dim;                                                         \
      Dot4##SUFFIX(q, p, p + dim, p + 2 * dim, p + 3 * dim, dim, out + r);                     \
    }                                                                                          \
    for (; r < num_rows; ++r) out[r] = Dot##SUFFIX(q, rows + r * dim, dim);                    \
  }                                                                                            \
  ATTR void Gather##SUFFIX(const float* q, const float* const* rows, size_t count, size_t dim, \
                           float* out) {                                                       \
    size_t r = 0;                                                                              \
    for (; r + 4 <= count; r += 4) {                                                           \
      Dot4##SUFFIX(q, rows[r], rows[r + 1], rows[r + 2], rows[r + 3], dim, out + r);           \
    }                                                                                          \
    for (; r < count; ++r) out[r] = Dot##SUFFIX(q, rows[r], dim);                              \
  }

FLOWRAG_DEFINE_LOOPS(Scalar, )
#if FLOWRAG_X86
FLOWRAG_DEFINE_LOOPS(Avx2, FLOWRAG_TARGET_AVX2)
FLOWRAG_DEFINE_LOOPS(Avx512, FLOWRAG_TARGET_AVX512)
#endif

#undef FLOWRAG_DEFINE_LOOPS

// ---------------------------------------------------------------- dispatch

struct Kernels {
  float (*dot)(const float*, const float*, size_t);
  void (*block)(const float*, const float*, size_t, size_t, float*);
  void (*gather)(const float*, const float* const*, size_t, size_t, float*);
  void (*axpy)(float, const float*, float*, size_t);
};

Kernels KernelsFor(SimdLevel level) {
  switch (level) {
#if FLOWRAG_X86
    case SimdLevel::kAvx512:
      return {&DotAvx512, &BlockAvx512, &GatherAvx512, &AxpyAvx512};
    case SimdLevel::kAvx2:
      return {&DotAvx2, &BlockAvx2, &GatherAvx2, &AxpyAvx2};
#endif
    default:
      return {&DotScalar, &BlockScalar, &GatherScalar, &AxpyScalar};
  }
}

SimdLevel Detect() {
#if FLOWRAG_X86
  // __builtin_cpu_supports consults cpuid and, for AVX/AVX-512, whether the OS
  // saves the wide registers (xgetbv), so a "yes" means usable.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return SimdLevel::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return SimdLevel::kAvx2;
#endif
  return SimdLevel::kScalar;
}

const Kernels& Active() {
  static const Kernels kernels = KernelsFor(DetectedSimdLevel());
  return kernels;
}

}  // namespace

SimdLevel DetectedSimdLevel() {
  static const SimdLevel level = Detect();
  return level;
}

std::string_view SimdLevelName(SimdLevel level) {
  switch (level) {
    case SimdLevel::kScalar:
      return "scalar";
    case SimdLevel::kAvx2:
      return "avx2+fma";
    case SimdLevel::kAvx512:
      return "avx512f";
  }
  return "unknown";
}

void DotProductBlock(const float* query, const float* rows, size_t num_rows, size_t dim,
                     float* scores) {
  Active().block(query, rows, num_rows, dim, scores);
}

void DotProductGather(const float* query, const float* const* rows, size_t count, size_t dim,
                      float* scores) {
  Active().gather(query, rows, count, dim, scores);
}

void Axpy(float a, const float* x, float* y, size_t n) { Active().axpy(a, x, y, n); }

void AxpyAt(SimdLevel level, float a, const float* x, float* y, size_t n) {
  KernelsFor(level).axpy(a, x, y, n);
}

float DotProductAt(SimdLevel level, const float* a, const float* b, size_t n) {
  return KernelsFor(level).dot(a, b, n);
}

void DotProductBlockAt(SimdLevel level, const float* query, const float* rows, size_t num_rows,
                       size_t dim, float* scores) {
  KernelsFor(level).block(query, rows, num_rows, dim, scores);
}

void DotProductGatherAt(SimdLevel level, const float* query, const float* const* rows, size_t count,
                        size_t dim, float* scores) {
  KernelsFor(level).gather(query, rows, count, dim, scores);
}

}  // namespace vector_internal

float DotProduct(const float* a, const float* b, size_t n) {
  return vector_internal::Active().dot(a, b, n);
}

}  // namespace flowrag
