// int8 and float16 passage vectors: encoding, kernels (portable and AVX2 via
// per-function target attributes, as vector/dot_product.cc), the exact scan
// over codes and the rescored top-k.
#include "vector/quantized.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "vector/index_util.h"

#if defined(__x86_64__) || defined(__i386__)
#define FLOWRAG_QX86 1
#include <immintrin.h>
#else
#define FLOWRAG_QX86 0
#endif

namespace flowrag {

// ------------------------------------------------------------------ kernels

namespace vector_internal {
namespace {

float DotInt8Scalar(const float* q, const int8_t* c, size_t n) {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += q[i] * static_cast<float>(c[i]);
    s1 += q[i + 1] * static_cast<float>(c[i + 1]);
    s2 += q[i + 2] * static_cast<float>(c[i + 2]);
    s3 += q[i + 3] * static_cast<float>(c[i + 3]);
  }
  for (; i < n; ++i) s0 += q[i] * static_cast<float>(c[i]);
  return (s0 + s1) + (s2 + s3);
}

// Columns AxpyInt8ColumnsAt reads side by side. All of a sparse query's
// ~100 at once are more streams than the hardware prefetcher follows: the
// int8 scan at 10^6 (flowrag eval --method dense, 200 questions five times,
// p50, beside an index run) took 7.8 ms with every column at once, 5.0 with
// groups of 4, 4.1 with 8 and 4.3 with 16. Run out of memory bandwidth
// then: int16 weights with vpdpwssd (four times fewer instructions per
// term) measured the same, 3.9-4.0 ms against 3.9-4.1 with these floats.
constexpr size_t kColumnGroup = 8;

void AxpyInt8Scalar(float a, const int8_t* c, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] += a * static_cast<float>(c[i]);
}

float DotHalfScalar(const float* q, const uint16_t* h, size_t n) {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += q[i] * HalfToFloat(h[i]);
    s1 += q[i + 1] * HalfToFloat(h[i + 1]);
    s2 += q[i + 2] * HalfToFloat(h[i + 2]);
    s3 += q[i + 3] * HalfToFloat(h[i + 3]);
  }
  for (; i < n; ++i) s0 += q[i] * HalfToFloat(h[i]);
  return (s0 + s1) + (s2 + s3);
}

#if FLOWRAG_QX86

#define FLOWRAG_QTARGET_AVX2 __attribute__((target("avx2,fma")))
#define FLOWRAG_QTARGET_F16C __attribute__((target("avx2,fma,f16c")))

FLOWRAG_QTARGET_AVX2 inline float SumLanes(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// 16 codes per step: sign-extended to int32, converted to float (exact), two
// FMA accumulators; the tail in scalar code.
FLOWRAG_QTARGET_AVX2 float DotInt8Avx2(const float* q, const int8_t* c, size_t n) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + i));
    const __m256 lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b));
    const __m256 hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(b, 8)));
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), lo, acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), hi, acc1);
  }
  float s = SumLanes(_mm256_add_ps(acc0, acc1));
  for (; i < n; ++i) s += q[i] * static_cast<float>(c[i]);
  return s;
}

// 16 codes per step, as DotInt8Avx2; y updated in place.
FLOWRAG_QTARGET_AVX2 void AxpyInt8Avx2(float a, const int8_t* c, float* y, size_t n) {
  const __m256 va = _mm256_set1_ps(a);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + i));
    const __m256 lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b));
    const __m256 hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(b, 8)));
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, lo, _mm256_loadu_ps(y + i)));
    _mm256_storeu_ps(y + i + 8, _mm256_fmadd_ps(va, hi, _mm256_loadu_ps(y + i + 8)));
  }
  for (; i < n; ++i) y[i] = std::fma(a, static_cast<float>(c[i]), y[i]);
}

// 32 rows per step held in four registers while every column is added.
FLOWRAG_QTARGET_AVX2 void AxpyInt8ColumnsAvx2(const float* a, const int8_t* const* columns,
                                              size_t m, float* y, size_t n) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256 y0 = _mm256_loadu_ps(y + i), y1 = _mm256_loadu_ps(y + i + 8);
    __m256 y2 = _mm256_loadu_ps(y + i + 16), y3 = _mm256_loadu_ps(y + i + 24);
    for (size_t j = 0; j < m; ++j) {
      const __m256 va = _mm256_set1_ps(a[j]);
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(columns[j] + i));
      const __m128i b0 = _mm256_castsi256_si128(b), b1 = _mm256_extracti128_si256(b, 1);
      y0 = _mm256_fmadd_ps(va, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b0)), y0);
      y1 = _mm256_fmadd_ps(va, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(b0, 8))), y1);
      y2 = _mm256_fmadd_ps(va, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b1)), y2);
      y3 = _mm256_fmadd_ps(va, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(b1, 8))), y3);
    }
    _mm256_storeu_ps(y + i, y0), _mm256_storeu_ps(y + i + 8, y1);
    _mm256_storeu_ps(y + i + 16, y2), _mm256_storeu_ps(y + i + 24, y3);
  }
  for (; i < n; ++i) {
    for (size_t j = 0; j < m; ++j) y[i] = std::fma(a[j], static_cast<float>(columns[j][i]), y[i]);
  }
}

FLOWRAG_QTARGET_F16C float DotHalfAvx2(const float* q, const uint16_t* h, size_t n) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 lo = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i)));
    const __m256 hi = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i + 8)));
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), lo, acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), hi, acc1);
  }
  float s = SumLanes(_mm256_add_ps(acc0, acc1));
  for (; i < n; ++i) s += q[i] * HalfToFloat(h[i]);
  return s;
}

bool CpuHasF16c() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("f16c");
}

#endif  // FLOWRAG_QX86

}  // namespace

bool HalfKernelsUseSimd() {
#if FLOWRAG_QX86
  static const bool simd = DetectedSimdLevel() >= SimdLevel::kAvx2 && CpuHasF16c();
  return simd;
#else
  return false;
#endif
}

float DotInt8At(SimdLevel level, const float* q, const int8_t* codes, size_t n) {
#if FLOWRAG_QX86
  if (level >= SimdLevel::kAvx2) return DotInt8Avx2(q, codes, n);
#endif
  (void)level;
  return DotInt8Scalar(q, codes, n);
}

void AxpyInt8At(SimdLevel level, float a, const int8_t* codes, float* y, size_t n) {
#if FLOWRAG_QX86
  if (level >= SimdLevel::kAvx2) return AxpyInt8Avx2(a, codes, y, n);
#endif
  (void)level;
  AxpyInt8Scalar(a, codes, y, n);
}

void AxpyInt8ColumnsAt(SimdLevel level, const float* a, const int8_t* const* columns, size_t m,
                       float* y, size_t n) {
  for (size_t j = 0; j < m; j += kColumnGroup) {
    const size_t g = std::min(kColumnGroup, m - j);
#if FLOWRAG_QX86
    if (level >= SimdLevel::kAvx2) {
      AxpyInt8ColumnsAvx2(a + j, columns + j, g, y, n);
      continue;
    }
#endif
    (void)level;
    for (size_t c = j; c < j + g; ++c) AxpyInt8Scalar(a[c], columns[c], y, n);
  }
}

void AxpyInt8Columns(const float* a, const int8_t* const* columns, size_t m, float* y, size_t n) {
  static const SimdLevel level = DetectedSimdLevel();
  AxpyInt8ColumnsAt(level, a, columns, m, y, n);
}

float DotHalfAt(SimdLevel level, const float* q, const uint16_t* halves, size_t n) {
#if FLOWRAG_QX86
  if (level >= SimdLevel::kAvx2 && HalfKernelsUseSimd()) return DotHalfAvx2(q, halves, n);
#endif
  (void)level;
  return DotHalfScalar(q, halves, n);
}

float DotInt8(const float* q, const int8_t* codes, size_t n) {
  static const SimdLevel level = DetectedSimdLevel();
  return DotInt8At(level, q, codes, n);
}

float DotHalf(const float* q, const uint16_t* halves, size_t n) {
  static const SimdLevel level = DetectedSimdLevel();
  return DotHalfAt(level, q, halves, n);
}

}  // namespace vector_internal

// ------------------------------------------------------------------ rows

std::string_view QuantizedFormatName(QuantizedFormat format) {
  switch (format) {
    case QuantizedFormat::kInt8PerVector:
      return "int8";
    case QuantizedFormat::kInt8PerDimension:
      return "int8-dim";
    case QuantizedFormat::kFloat16:
      return "fp16";
  }
  return "unknown";
}

QuantizedRows::QuantizedRows(QuantizedFormat format, size_t cols) : format_(format), cols_(cols) {}

size_t QuantizedRows::BytesPerRow() const {
  switch (format_) {
    case QuantizedFormat::kInt8PerVector:
      return cols_ + sizeof(float);
    case QuantizedFormat::kInt8PerDimension:
      return cols_;
    case QuantizedFormat::kFloat16:
      return 2 * cols_;
  }
  return 0;
}

size_t QuantizedRows::MemoryBytes() const {
  return codes_.capacity() + scales_.capacity() * sizeof(float) +
         (mids_.capacity() + steps_.capacity()) * sizeof(float) +
         halves_.capacity() * sizeof(uint16_t);
}

void QuantizedRows::FitRanges(const FloatMatrix& m) {
  std::vector<float> lo(cols_, std::numeric_limits<float>::infinity());
  std::vector<float> hi(cols_, -std::numeric_limits<float>::infinity());
  for (size_t r = 0; r < m.rows; ++r) {
    const float* x = m.row(r);
    for (size_t i = 0; i < cols_; ++i) {
      lo[i] = std::min(lo[i], x[i]);
      hi[i] = std::max(hi[i], x[i]);
    }
  }
  mids_.assign(cols_, 0.0f);
  steps_.assign(cols_, 0.0f);
  for (size_t i = 0; i < cols_; ++i) {
    if (m.rows == 0) continue;
    mids_[i] = 0.5f * (lo[i] + hi[i]);
    steps_[i] = (hi[i] - lo[i]) / 254.0f;
  }
}

namespace {

int8_t RoundToCode(float v) {
  return static_cast<int8_t>(std::clamp(std::nearbyint(v), -127.0f, 127.0f));
}

}  // namespace

float vector_internal::EncodeInt8PerVector(const float* x, size_t n, int8_t* codes,
                                           size_t stride) {
  float max_abs = 0.0f;
  for (size_t i = 0; i < n; ++i) max_abs = std::max(max_abs, std::fabs(x[i]));
  if (max_abs == 0.0f) {
    for (size_t i = 0; i < n; ++i) codes[i * stride] = 0;
    return 0.0f;
  }
  const float inv = 127.0f / max_abs;
  for (size_t i = 0; i < n; ++i) codes[i * stride] = RoundToCode(x[i] * inv);
  return max_abs / 127.0f;
}

void QuantizedRows::EncodeRow(const float* x, size_t row) {
  switch (format_) {
    case QuantizedFormat::kInt8PerVector:
      scales_[row] =
          vector_internal::EncodeInt8PerVector(x, cols_, codes_.data() + row * cols_, 1);
      return;
    case QuantizedFormat::kInt8PerDimension: {
      int8_t* c = codes_.data() + row * cols_;
      for (size_t i = 0; i < cols_; ++i) {
        c[i] = steps_[i] > 0.0f ? RoundToCode((x[i] - mids_[i]) / steps_[i]) : int8_t{0};
      }
      return;
    }
    case QuantizedFormat::kFloat16: {
      uint16_t* h = halves_.data() + row * cols_;
      for (size_t i = 0; i < cols_; ++i) h[i] = FloatToHalf(x[i]);
      return;
    }
  }
}

Status QuantizedRows::Append(const FloatMatrix& m) {
  FLOWRAG_RETURN_IF_ERROR(vector_internal::ValidateRows(m, cols_, rows_));
  if (format_ == QuantizedFormat::kInt8PerDimension && mids_.empty()) FitRanges(m);
  const size_t total = rows_ + m.rows;
  if (format_ == QuantizedFormat::kFloat16) {
    halves_.resize(total * cols_);
  } else {
    codes_.resize(total * cols_);
  }
  if (format_ == QuantizedFormat::kInt8PerVector) scales_.resize(total);
  for (size_t r = 0; r < m.rows; ++r) EncodeRow(m.row(r), rows_ + r);
  rows_ = total;
  return Status::Ok();
}

void QuantizedRows::Decode(size_t row, float* out) const {
  switch (format_) {
    case QuantizedFormat::kInt8PerVector: {
      const int8_t* c = codes_.data() + row * cols_;
      for (size_t i = 0; i < cols_; ++i) out[i] = scales_[row] * static_cast<float>(c[i]);
      return;
    }
    case QuantizedFormat::kInt8PerDimension: {
      const int8_t* c = codes_.data() + row * cols_;
      for (size_t i = 0; i < cols_; ++i) out[i] = mids_[i] + steps_[i] * static_cast<float>(c[i]);
      return;
    }
    case QuantizedFormat::kFloat16: {
      const uint16_t* h = halves_.data() + row * cols_;
      for (size_t i = 0; i < cols_; ++i) out[i] = HalfToFloat(h[i]);
      return;
    }
  }
}

QuantizedRows::Query QuantizedRows::Prepare(const float* query) const {
  Query q;
  q.weights.assign(query, query + cols_);
  if (format_ == QuantizedFormat::kInt8PerDimension && !mids_.empty()) {
    double offset = 0.0;
    for (size_t i = 0; i < cols_; ++i) {
      offset += static_cast<double>(query[i]) * mids_[i];
      q.weights[i] = query[i] * steps_[i];
    }
    q.offset = static_cast<float>(offset);
  }
  return q;
}

float QuantizedRows::Score(const Query& q, size_t row) const {
  switch (format_) {
    case QuantizedFormat::kInt8PerVector:
      return scales_[row] *
             vector_internal::DotInt8(q.weights.data(), codes_.data() + row * cols_, cols_);
    case QuantizedFormat::kInt8PerDimension:
      return q.offset +
             vector_internal::DotInt8(q.weights.data(), codes_.data() + row * cols_, cols_);
    case QuantizedFormat::kFloat16:
      return vector_internal::DotHalf(q.weights.data(), halves_.data() + row * cols_, cols_);
  }
  return 0.0f;
}

// ------------------------------------------------------------------ index

std::string QuantizedFlatIndex::Kind() const {
  return "flat-" + std::string(QuantizedFormatName(rows_.format()));
}

std::vector<VectorHit> QuantizedFlatIndex::Search(const float* query,
                                                  const VectorSearchParams& params,
                                                  VectorSearchStats* stats) const {
  if (!vector_internal::AllFinite(query, Dimension())) return {};
  const QuantizedRows::Query q = rows_.Prepare(query);
  vector_internal::TopK top(params.k);
  size_t scored = 0;
  for (size_t id = 0; id < rows_.rows(); ++id) {
    const auto id32 = static_cast<uint32_t>(id);
    if (params.filter && !params.filter(id32)) continue;
    top.Push(id32, rows_.Score(q, id));
    ++scored;
  }
  if (stats != nullptr) stats->candidates_scored += scored;
  return vector_internal::DropBelow(top.Take(), params.min_score);
}

Result<std::vector<VectorHit>> QuantizedFlatIndex::SearchRescored(const float* query,
                                                                  const VectorSearchParams& params,
                                                                  size_t rescore_factor,
                                                                  const ExactVectors& exact,
                                                                  VectorSearchStats* stats) const {
  if (rescore_factor == 0) {
    return Status::InvalidArgument("SearchRescored: rescore_factor must be at least 1");
  }
  VectorSearchParams wide = params;
  wide.k = params.k * rescore_factor;
  wide.min_score = -std::numeric_limits<float>::infinity();
  const std::vector<VectorHit> candidates = Search(query, wide, stats);
  if (candidates.empty()) return candidates;
  std::vector<uint32_t> ids;
  ids.reserve(candidates.size());
  for (const VectorHit& h : candidates) ids.push_back(h.id);
  FloatMatrix vectors;
  FLOWRAG_RETURN_IF_ERROR(exact(ids, &vectors));
  if (vectors.rows != ids.size() || vectors.cols != Dimension() ||
      vectors.data.size() != vectors.rows * vectors.cols) {
    return Status::InvalidArgument(
        "SearchRescored: the exact-vector callback returned " + std::to_string(vectors.rows) + "x" +
        std::to_string(vectors.cols) + " for " + std::to_string(ids.size()) + " ids of dimension " +
        std::to_string(Dimension()));
  }
  vector_internal::TopK top(params.k);
  for (size_t i = 0; i < ids.size(); ++i) {
    top.Push(ids[i], DotProduct(query, vectors.row(i), Dimension()));
  }
  if (stats != nullptr) stats->candidates_scored += ids.size();
  return vector_internal::DropBelow(top.Take(), params.min_score);
}

}  // namespace flowrag
