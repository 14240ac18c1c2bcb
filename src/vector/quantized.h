// Compressed passage vectors (issue 34, "one copy of the vectors"): int8
// scalar quantization and float16 storage, their dot products with a float
// query, an exact scan over the codes (QuantizedFlatIndex) and a top-k over
// the codes followed by exact rescoring with float vectors from a callback.
// The engine's consumer is FlatIndex's int8 column copy (flat_index.h: the
// passage index above hnsw_threshold passages for sparse queries), which
// encodes with EncodeInt8PerVector and scores with AxpyInt8Columns;
// bench/vector_quantization.cc measures the rest against float32 on the
// benchmarks (bench/out/vector_quantization.md).
//
// Representations (bytes per d-dimensional vector):
//  - kInt8PerVector: x ≈ s·c, c ∈ [-127, 127]^d, s = max_i |x_i| / 127, one
//    float scale per vector: d + 4 bytes. Zero is exact (the hashed
//    embedder's vectors are 80-95% zeros), and a vector needs no corpus
//    statistics, so a segment can be encoded alone. Per coordinate
//    |x_i - s·c_i| <= s/2; so |<q, x> - <q, x̂>| <= (s/2)·‖q‖₁.
//  - kInt8PerDimension: x_i ≈ m_i + w_i·c_i with m_i the middle and w_i =
//    (max_i - min_i)/254 of dimension i over the rows encoded first (fitted
//    once; later rows are clamped into the fitted range): d bytes per vector
//    plus 8·d bytes per index. Per coordinate |x_i - x̂_i| <= w_i/2 inside
//    the range. Zero is not exact.
//  - kFloat16: IEEE binary16, round to nearest even, 2·d bytes. Per
//    coordinate a relative error of at most 2^-11 for |x| >= 2^-14 (normal
//    halves), an absolute error of at most 2^-25 below (subnormals);
//    |x| > 65504 becomes infinity (never for unit vectors).
// bench/out/vector_quantization.md says which one the study chose and why.
//
// Kernels: each has a portable version and an AVX2 (+FMA, +F16C for halves)
// version compiled with `__attribute__((target))`, chosen once per process
// (vector/dot_product.h's DetectedSimdLevel, plus F16C for halves). The two
// differ only in float summation order (tests/quantized_test.cc checks
// them against each other and against a double-precision computation).
//
// Thread-safety: the row containers and QuantizedFlatIndex are values;
// const methods may run concurrently; Append / Add need exclusive access.
#ifndef FLOWRAG_VECTOR_QUANTIZED_H_
#define FLOWRAG_VECTOR_QUANTIZED_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/half.h"  // FloatToHalf, HalfToFloat
#include "common/matrix.h"
#include "flowrag/status.h"
#include "vector/dot_product.h"
#include "vector/vector_index.h"

namespace flowrag {

// ------------------------------------------------------------------ kernels

namespace vector_internal {

// Σ_i q_i·c_i in float, O(n). `level` as in dot_product.h; kAvx512 uses the
// AVX2 kernel. REQUIRES: level <= DetectedSimdLevel().
float DotInt8At(SimdLevel level, const float* q, const int8_t* codes, size_t n);
// Σ_i q_i·half(h_i). AVX2 needs F16C too (HalfKernelsUseSimd()).
float DotHalfAt(SimdLevel level, const float* q, const uint16_t* halves, size_t n);
// y_i += a·c_i for i in [0, n), the codes converted to float exactly; one
// FMA per element at AVX2 (a multiply and an add in portable code). O(n).
void AxpyInt8At(SimdLevel level, float a, const int8_t* codes, float* y, size_t n);
// y_i += Σ_j a_j·columns_j[i] for i in [0, n), j in [0, m) in that order,
// one FMA per term at AVX2 (a multiply and an add in portable code): the
// same bits as AxpyInt8 called once per column, without reading and
// writing y once per column (the sums of a run of rows stay in registers
// while a group of 8 columns adds to them; quantized.cc kColumnGroup).
// O(n·m).
void AxpyInt8ColumnsAt(SimdLevel level, const float* a, const int8_t* const* columns, size_t m,
                       float* y, size_t n);
// At the process's level.
void AxpyInt8Columns(const float* a, const int8_t* const* columns, size_t m, float* y, size_t n);
float DotInt8(const float* q, const int8_t* codes, size_t n);
float DotHalf(const float* q, const uint16_t* halves, size_t n);
// True when DotHalf uses the AVX2+F16C kernel.
bool HalfKernelsUseSimd();

// kInt8PerVector's encoding of one vector x of n floats: returns the scale
// s = max_i |x_i| / 127 (0 for the zero vector, whose codes are all 0) and
// writes c_i = round(x_i / s) clamped to [-127, 127] to codes[i·stride], so a
// caller can write a row (stride 1) or a column of a dimension-major array
// (stride = its capacity). REQUIRES: x finite. O(n).
float EncodeInt8PerVector(const float* x, size_t n, int8_t* codes, size_t stride);

}  // namespace vector_internal

// ------------------------------------------------------------------ rows

enum class QuantizedFormat { kInt8PerVector, kInt8PerDimension, kFloat16 };
std::string_view QuantizedFormatName(QuantizedFormat format);

// Encoded rows of one format, row-major. For kInt8PerDimension the ranges
// are fitted by the first Append (of one row or of a matrix) and fixed.
class QuantizedRows {
 public:
  QuantizedRows(QuantizedFormat format, size_t cols);

  QuantizedFormat format() const { return format_; }
  size_t cols() const { return cols_; }
  size_t rows() const { return rows_; }
  // Bytes of one encoded vector, and of everything held (per-dimension
  // ranges included).
  size_t BytesPerRow() const;
  size_t MemoryBytes() const;

  // Encodes and appends every row of `m` (m.cols == cols()). All-or-nothing:
  // InvalidArgument for a wrong shape or a non-finite value. O(m.rows·d).
  Status Append(const FloatMatrix& m);

  // Writes the decoded row into `out` (cols() floats). O(d).
  void Decode(size_t row, float* out) const;

  // A query prepared for scoring: for kInt8PerDimension, q_i·w_i and the
  // constant Σ q_i·m_i; for the others, a copy. O(d).
  struct Query {
    std::vector<float> weights;
    float offset = 0.0f;
  };
  Query Prepare(const float* query) const;
  // <query, decoded row> up to float summation order. O(d).
  float Score(const Query& q, size_t row) const;

 private:
  void FitRanges(const FloatMatrix& m);
  void EncodeRow(const float* x, size_t row);

  QuantizedFormat format_;
  size_t cols_;
  size_t rows_ = 0;
  std::vector<int8_t> codes_;     // int8 formats: rows·cols
  std::vector<float> scales_;     // kInt8PerVector: one per row
  std::vector<float> mids_;       // kInt8PerDimension: per dimension
  std::vector<float> steps_;      // kInt8PerDimension: per dimension
  std::vector<uint16_t> halves_;  // kFloat16: rows·cols
};

// ------------------------------------------------------------------ index

// Exact search over decoded codes: the same results as FlatIndex over the
// decoded vectors up to float summation order (ties by ascending id, filter
// and min_score as VectorIndex says). O(n·d) per query; memory
// QuantizedRows::MemoryBytes().
class QuantizedFlatIndex final : public VectorIndex {
 public:
  QuantizedFlatIndex(size_t dim, QuantizedFormat format) : rows_(format, dim) {}

  // "flat-int8", "flat-int8-dim" or "flat-fp16".
  std::string Kind() const override;
  size_t Dimension() const override { return rows_.cols(); }
  size_t Size() const override { return rows_.rows(); }
  size_t MemoryBytes() const override { return rows_.MemoryBytes(); }
  Status Add(const FloatMatrix& rows) override { return rows_.Append(rows); }
  std::vector<VectorHit> Search(const float* query, const VectorSearchParams& params,
                                VectorSearchStats* stats) const override;

  // Exact float vectors of `ids`, in that order, as rows of `out` (resized
  // by the callee to ids.size() × Dimension()). From the store, a FloatMatrix,
  // a memory map: whatever holds the truth.
  using ExactVectors = std::function<Status(std::span<const uint32_t> ids, FloatMatrix* out)>;

  // Top k·rescore_factor ids by their code scores (params.filter applies),
  // then those candidates rescored with exact float dot products (the
  // vector/dot_product.h kernel) and the best params.k of them returned by
  // (exact score desc, id asc), hits below params.min_score dropped. The
  // result equals the float top-k whenever every true top-k vector is among
  // the candidates, which holds when the k-th best float score exceeds the
  // (k·r+1)-th by more than twice the largest score error (see above).
  // Errors: the callback's, or InvalidArgument when rescore_factor == 0 or
  // the callback returns a wrong shape. O(n·d + k·r·(d + fetch)).
  // stats->candidates_scored counts code scores plus exact scores.
  Result<std::vector<VectorHit>> SearchRescored(const float* query,
                                                const VectorSearchParams& params,
                                                size_t rescore_factor, const ExactVectors& exact,
                                                VectorSearchStats* stats) const;

  const QuantizedRows& rows() const { return rows_; }

 private:
  QuantizedRows rows_;
};

}  // namespace flowrag

#endif  // FLOWRAG_VECTOR_QUANTIZED_H_
