// Tests for src/vector/quantized.h against independent straightforward
// computations in double precision: float16 conversion (every half, and
// nearest-even rounding of random floats), int8 and float16 error bounds per
// vector, the AVX2 kernels against the portable ones, QuantizedFlatIndex
// against a brute-force ranking of the decoded vectors, and the top-k (exact
// and rescored) equal to the float top-k wherever the margins allow; the
// FlatIndex with int8 columns (vector/flat_index.h) likewise, its arrays
// out and back, and layered edits over it.
#include "vector/quantized.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "common/array_io.h"
#include "vector/dot_product.h"
#include "vector/flat_index.h"
#include "vector/layered_index.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using vector_internal::SimdLevel;

// ------------------------------------------------------------ references

// binary16 bits -> value, from the definition.
double HalfValue(uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) {
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  }
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

double DotDouble(const float* a, const float* b, size_t n) {
  double s = 0.0;
  for (size_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

// Unit vectors: dense Gaussian, or sparse like the hashed embedder (about
// `density` of the coordinates non-zero).
FloatMatrix RandomUnitRows(size_t n, size_t d, double density, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  FloatMatrix m(n, d);
  for (size_t r = 0; r < n; ++r) {
    float* x = m.row(r);
    double norm = 0.0;
    for (size_t i = 0; i < d; ++i) {
      x[i] = uniform(rng) < density ? normal(rng) : 0.0f;
      norm += static_cast<double>(x[i]) * x[i];
    }
    if (norm == 0.0) {
      x[r % d] = 1.0f;
      norm = 1.0;
    }
    for (size_t i = 0; i < d; ++i) x[i] = static_cast<float>(x[i] / std::sqrt(norm));
  }
  return m;
}

// The largest |<q, x> - <q, x̂>| the header promises for a row of `m`
// (encoded as the first rows of a QuantizedRows of `format`): per
// coordinate, half a step of the row's scale (int8 per vector), half a step
// of the dimension's range (int8 per dimension), or half an ulp of the half
// (float16), weighted by |q_i|; plus float rounding.
class ErrorBound {
 public:
  ErrorBound(QuantizedFormat format, const FloatMatrix& m) : format_(format), m_(m) {
    row_max_.assign(m.rows, 0.0);
    std::vector<double> lo(m.cols, INFINITY), hi(m.cols, -INFINITY);
    for (size_t r = 0; r < m.rows; ++r) {
      for (size_t i = 0; i < m.cols; ++i) {
        const double x = m.row(r)[i];
        row_max_[r] = std::max(row_max_[r], std::fabs(x));
        lo[i] = std::min(lo[i], x);
        hi[i] = std::max(hi[i], x);
      }
    }
    dim_step_.resize(m.cols);
    for (size_t i = 0; i < m.cols; ++i) dim_step_[i] = m.rows ? (hi[i] - lo[i]) / 254.0 : 0.0;
  }

  double operator()(size_t row, const float* q) const {
    double bound = 0.0;
    for (size_t i = 0; i < m_.cols; ++i) {
      const double x = m_.row(row)[i];
      double per = 0.0;
      switch (format_) {
        case QuantizedFormat::kInt8PerVector:
          per = row_max_[row] / 127.0 / 2.0;
          break;
        case QuantizedFormat::kInt8PerDimension:
          per = dim_step_[i] / 2.0;
          break;
        case QuantizedFormat::kFloat16:
          per = std::max(std::fabs(x) * std::ldexp(1.0, -11), std::ldexp(1.0, -25));
          break;
      }
      bound += per * std::fabs(double{q[i]});
    }
    return bound * (1.0 + 1e-4) + 1e-5;
  }

 private:
  QuantizedFormat format_;
  const FloatMatrix& m_;
  std::vector<double> row_max_, dim_step_;
};

// Indices of the top k rows by double-precision score, ties by id.
std::vector<uint32_t> ExactTopK(const std::vector<double>& scores, size_t k) {
  std::vector<uint32_t> ids(scores.size());
  for (uint32_t i = 0; i < ids.size(); ++i) ids[i] = i;
  std::sort(ids.begin(), ids.end(), [&](uint32_t a, uint32_t b) {
    return scores[a] != scores[b] ? scores[a] > scores[b] : a < b;
  });
  ids.resize(std::min(k, ids.size()));
  return ids;
}

constexpr QuantizedFormat kFormats[] = {
    QuantizedFormat::kInt8PerVector, QuantizedFormat::kInt8PerDimension, QuantizedFormat::kFloat16};

// Test names per format ("int8", "int8_dim", "fp16").
std::string FormatTestName(const ::testing::TestParamInfo<QuantizedFormat>& info) {
  std::string name(QuantizedFormatName(info.param));
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

// ------------------------------------------------------------ float16

TEST(HalfTest, EveryHalfDecodesToItsValueAndEncodesBack) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const double want = HalfValue(bits);
    const float got = HalfToFloat(bits);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << h;
      EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(got)))) << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(got), want) << h;
    ASSERT_EQ(FloatToHalf(got), bits) << h;
  }
}

TEST(HalfTest, RandomFloatsRoundToTheNearestHalfTiesToEven) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> exponent(-30, 17);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (int t = 0; t < 200000; ++t) {
    float x = static_cast<float>(std::ldexp(mantissa(rng), exponent(rng)));
    if (t % 2) x = -x;
    if (t % 1000 == 0)
      x = static_cast<float>(HalfValue(static_cast<uint16_t>(t % 0x7c00)) +
                             std::ldexp(1.0, -40));  // near representable
    const uint16_t h = FloatToHalf(x);
    if (std::fabs(x) >= 65520.0f) {  // beyond the largest half's rounding range
      ASSERT_EQ(h & 0x7fff, 0x7c00) << x;
      continue;
    }
    const double err = std::fabs(HalfValue(h) - x);
    // No other half is closer; at a tie the chosen one has an even mantissa.
    for (int step : {-1, 1}) {
      const auto other = static_cast<uint16_t>((h & 0x7fff) + step) | (h & 0x8000);
      if ((h & 0x7fff) == 0 && step < 0) continue;
      const double other_value = HalfValue(other);
      if (std::isnan(other_value)) continue;
      const double other_err = std::fabs(other_value - x);
      ASSERT_LE(err, other_err) << x;
      if (err == other_err) {
        ASSERT_EQ(h & 1, 0) << x;
      }
    }
  }
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // ties to even: infinity
  EXPECT_EQ(FloatToHalf(-1e9f), 0xfc00);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // tie between 0 and 2^-24
  EXPECT_EQ(FloatToHalf(std::ldexp(1.5f, -25)), 0x0001);
}

// ------------------------------------------------------------ kernels

TEST(QuantizedKernelTest, SimdAndPortableKernelsAgreeWithDouble) {
  std::mt19937_64 rng(11);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> code(-127, 127);
  const SimdLevel simd = vector_internal::DetectedSimdLevel();
  for (size_t n : {0, 1, 7, 15, 16, 17, 31, 33, 100, 1024, 1536}) {
    std::vector<float> q(n);
    std::vector<int8_t> c(n);
    std::vector<uint16_t> h(n);
    std::vector<float> hv(n), cv(n);
    for (size_t i = 0; i < n; ++i) {
      q[i] = normal(rng);
      c[i] = static_cast<int8_t>(code(rng));
      cv[i] = c[i];
      h[i] = FloatToHalf(normal(rng));
      hv[i] = HalfToFloat(h[i]);
    }
    double mag_c = 0, mag_h = 0;
    for (size_t i = 0; i < n; ++i) {
      mag_c += std::fabs(double{q[i]} * cv[i]);
      mag_h += std::fabs(double{q[i]} * hv[i]);
    }
    const double want_c = DotDouble(q.data(), cv.data(), n);
    const double want_h = DotDouble(q.data(), hv.data(), n);
    for (SimdLevel level : {SimdLevel::kScalar, simd}) {
      EXPECT_NEAR(vector_internal::DotInt8At(level, q.data(), c.data(), n), want_c,
                  1e-6 * mag_c + 1e-6)
          << n;
      EXPECT_NEAR(vector_internal::DotHalfAt(level, q.data(), h.data(), n), want_h,
                  1e-6 * mag_h + 1e-6)
          << n;
    }
    EXPECT_NEAR(vector_internal::DotInt8(q.data(), c.data(), n),
                vector_internal::DotInt8At(SimdLevel::kScalar, q.data(), c.data(), n),
                2e-6 * mag_c + 1e-6);
    // y += a·c, against double.
    const float a = normal(rng);
    for (SimdLevel level : {SimdLevel::kScalar, simd}) {
      std::vector<float> y(q);
      vector_internal::AxpyInt8At(level, a, c.data(), y.data(), n);
      for (size_t i = 0; i < n; ++i) {
        EXPECT_NEAR(y[i], double{q[i]} + double{a} * cv[i], 1e-6 * (std::fabs(a * cv[i]) + 1))
            << n << " " << i;
      }
    }
  }
}

// Several columns at once: the bits of one AxpyInt8 per column, in order,
// at each level, and near a double computation.
TEST(QuantizedKernelTest, ColumnsAtOnceEqualOneColumnAtATime) {
  std::mt19937_64 rng(12);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> code(-127, 127);
  const SimdLevel simd = vector_internal::DetectedSimdLevel();
  for (size_t n : {0, 1, 31, 32, 33, 95, 4096}) {
    for (size_t m : {0, 1, 2, 7, 60}) {
      std::vector<std::vector<int8_t>> columns(m, std::vector<int8_t>(n));
      std::vector<const int8_t*> pointers;
      std::vector<float> a(m), start(n);
      for (size_t j = 0; j < m; ++j) {
        a[j] = normal(rng);
        for (int8_t& c : columns[j]) c = static_cast<int8_t>(code(rng));
        pointers.push_back(columns[j].data());
      }
      for (float& y : start) y = normal(rng);
      for (SimdLevel level : {SimdLevel::kScalar, simd}) {
        std::vector<float> one = start, all = start;
        for (size_t j = 0; j < m; ++j) {
          vector_internal::AxpyInt8At(level, a[j], columns[j].data(), one.data(), n);
        }
        vector_internal::AxpyInt8ColumnsAt(level, a.data(), pointers.data(), m, all.data(), n);
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(all[i], one[i]) << n << " " << m << " " << i;
          double want = start[i], mag = std::fabs(start[i]);
          for (size_t j = 0; j < m; ++j) {
            want += double{a[j]} * columns[j][i];
            mag += std::fabs(double{a[j]} * columns[j][i]);
          }
          EXPECT_NEAR(all[i], want, 1e-5 * mag + 1e-6);
        }
      }
    }
  }
}

TEST(QuantizedKernelTest, EncodingWritesStridedCodesAndTheScale) {
  const float x[4] = {0.5f, -1.0f, 0.0f, 0.25f};
  int8_t codes[8] = {9, 9, 9, 9, 9, 9, 9, 9};
  EXPECT_FLOAT_EQ(vector_internal::EncodeInt8PerVector(x, 4, codes, 2), 1.0f / 127.0f);
  const int8_t want[8] = {64, 9, -127, 9, 0, 9, 32, 9};  // 63.5 rounds to even 64
  for (int i = 0; i < 8; ++i) EXPECT_EQ(codes[i], want[i]) << i;
  const float zero[3] = {0, 0, 0};
  int8_t z[3] = {5, 5, 5};
  EXPECT_EQ(vector_internal::EncodeInt8PerVector(zero, 3, z, 1), 0.0f);
  EXPECT_EQ(z[0] | z[1] | z[2], 0);
}

// ------------------------------------------------------------ rows

class QuantizedRowsTest : public ::testing::TestWithParam<QuantizedFormat> {};

TEST_P(QuantizedRowsTest, DecodedCoordinatesAndScoresStayWithinTheirBounds) {
  for (double density : {1.0, 0.1}) {
    const FloatMatrix data = RandomUnitRows(200, 257, density, 3);
    const FloatMatrix queries = RandomUnitRows(10, 257, density, 4);
    QuantizedRows rows(GetParam(), data.cols);
    ASSERT_TRUE(rows.Append(data).ok());
    const ErrorBound bound(GetParam(), data);
    ASSERT_EQ(rows.rows(), 200u);
    std::vector<float> decoded(data.cols);
    for (size_t r = 0; r < data.rows; ++r) {
      rows.Decode(r, decoded.data());
      if (GetParam() == QuantizedFormat::kInt8PerVector) {
        double max_abs = 0;
        for (size_t i = 0; i < data.cols; ++i)
          max_abs = std::max(max_abs, std::fabs(double{data.row(r)[i]}));
        for (size_t i = 0; i < data.cols; ++i) {
          ASSERT_LE(std::fabs(decoded[i] - double{data.row(r)[i]}), max_abs / 254.0 * 1.0001)
              << r << "," << i;
          if (data.row(r)[i] == 0.0f) {
            ASSERT_EQ(decoded[i], 0.0f);  // zeros stay exact
          }
        }
      }
      for (size_t qi = 0; qi < queries.rows; ++qi) {
        const float* q = queries.row(qi);
        const double want = DotDouble(q, data.row(r), data.cols);
        const auto prepared = rows.Prepare(q);
        ASSERT_NEAR(rows.Score(prepared, r), want, bound(r, q))
            << QuantizedFormatName(GetParam()) << " row " << r << " density " << density;
        // Score is the dot product with the decoded row.
        ASSERT_NEAR(rows.Score(prepared, r), DotDouble(q, decoded.data(), data.cols), 1e-5);
      }
    }
  }
}

TEST_P(QuantizedRowsTest, BytesPerRowAndRejectedBatches) {
  QuantizedRows rows(GetParam(), 64);
  const size_t want = GetParam() == QuantizedFormat::kFloat16         ? 128
                      : GetParam() == QuantizedFormat::kInt8PerVector ? 68
                                                                      : 64;
  EXPECT_EQ(rows.BytesPerRow(), want);
  FloatMatrix bad(2, 64);
  bad.row(1)[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(rows.Append(bad).ok());
  EXPECT_FALSE(rows.Append(FloatMatrix(1, 63)).ok());
  EXPECT_EQ(rows.rows(), 0u);
  EXPECT_TRUE(rows.Append(FloatMatrix(3, 64)).ok());  // all-zero rows are fine
  std::vector<float> out(64, 1.0f);
  rows.Decode(2, out.data());
  for (float v : out) EXPECT_EQ(v, 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Formats, QuantizedRowsTest, ::testing::ValuesIn(kFormats), FormatTestName);

TEST(QuantizedRowsPerDimensionTest, RowsOutsideTheFittedRangeAreClamped) {
  FloatMatrix fit(2, 2);
  fit.row(0)[0] = -1.0f;
  fit.row(1)[0] = 1.0f;
  QuantizedRows rows(QuantizedFormat::kInt8PerDimension, 2);
  ASSERT_TRUE(rows.Append(fit).ok());
  FloatMatrix later(1, 2);
  later.row(0)[0] = 5.0f;
  later.row(0)[1] = 3.0f;  // dimension 1 had no range: decodes to its middle
  ASSERT_TRUE(rows.Append(later).ok());
  float out[2];
  rows.Decode(2, out);
  EXPECT_FLOAT_EQ(out[0], 1.0f);
  EXPECT_FLOAT_EQ(out[1], 0.0f);
}

// ------------------------------------------------------------ index

class QuantizedIndexTest : public ::testing::TestWithParam<QuantizedFormat> {};

TEST_P(QuantizedIndexTest, SearchRanksTheDecodedVectorsAndMatchesFloatWhereMarginsAllow) {
  constexpr size_t kN = 2000, kD = 128, kK = 10;
  const FloatMatrix data = RandomUnitRows(kN, kD, 1.0, 21);
  const FloatMatrix queries = RandomUnitRows(30, kD, 1.0, 22);
  QuantizedFlatIndex index(kD, GetParam());
  ASSERT_TRUE(index.Add(data).ok());
  const ErrorBound bound(GetParam(), data);
  EXPECT_EQ(index.Size(), kN);
  size_t checked_against_float = 0;
  for (size_t qi = 0; qi < queries.rows; ++qi) {
    const float* q = queries.row(qi);
    VectorSearchParams params;
    params.k = kK;
    VectorSearchStats stats;
    const auto hits = index.Search(q, params, &stats);
    ASSERT_EQ(hits.size(), kK);
    EXPECT_EQ(stats.candidates_scored, kN);
    // Against the decoded vectors, in double: same scores up to float
    // rounding, and the ranking is the decoded ranking up to near ties.
    std::vector<double> decoded_scores(kN), float_scores(kN), bounds(kN);
    std::vector<float> decoded(kD);
    double max_bound = 0;
    for (size_t r = 0; r < kN; ++r) {
      index.rows().Decode(r, decoded.data());
      decoded_scores[r] = DotDouble(q, decoded.data(), kD);
      float_scores[r] = DotDouble(q, data.row(r), kD);
      bounds[r] = bound(r, q);
      max_bound = std::max(max_bound, bounds[r]);
    }
    for (const VectorHit& h : hits) EXPECT_NEAR(h.score, decoded_scores[h.id], 1e-5);
    const auto want_decoded = ExactTopK(decoded_scores, kK + 1);
    if (decoded_scores[want_decoded[kK - 1]] - decoded_scores[want_decoded[kK]] > 1e-4) {
      for (size_t i = 0; i < kK; ++i) EXPECT_EQ(hits[i].id, want_decoded[i]);
    }
    // Against float exact: the same set when the k-th and (k+1)-th float
    // scores are further apart than twice the largest error.
    const auto want = ExactTopK(float_scores, kK + 1);
    if (float_scores[want[kK - 1]] - float_scores[want[kK]] > 2 * max_bound) {
      std::vector<uint32_t> got, expected(want.begin(), want.begin() + kK);
      for (const VectorHit& h : hits) got.push_back(h.id);
      std::sort(got.begin(), got.end());
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(got, expected) << "query " << qi;
      ++checked_against_float;
    }
  }
  if (GetParam() == QuantizedFormat::kFloat16) {
    EXPECT_GT(checked_against_float, 0u);
  }
}

TEST_P(QuantizedIndexTest, RescoredTopKIsTheFloatTopKWhenTheCandidatesHoldIt) {
  constexpr size_t kN = 3000, kD = 96, kK = 10;
  const FloatMatrix data = RandomUnitRows(kN, kD, 0.3, 31);
  const FloatMatrix queries = RandomUnitRows(30, kD, 0.3, 32);
  QuantizedFlatIndex index(kD, GetParam());
  ASSERT_TRUE(index.Add(data).ok());
  const ErrorBound bound(GetParam(), data);
  size_t fetched_calls = 0;
  const QuantizedFlatIndex::ExactVectors exact = [&](std::span<const uint32_t> ids,
                                                     FloatMatrix* out) {
    ++fetched_calls;
    *out = FloatMatrix(ids.size(), kD);
    for (size_t i = 0; i < ids.size(); ++i) {
      std::copy(data.row(ids[i]), data.row(ids[i]) + kD, out->row(i));
    }
    return Status::Ok();
  };
  for (size_t qi = 0; qi < queries.rows; ++qi) {
    const float* q = queries.row(qi);
    std::vector<double> float_scores(kN);
    double max_bound = 0;
    for (size_t r = 0; r < kN; ++r) {
      float_scores[r] = DotDouble(q, data.row(r), kD);
      max_bound = std::max(max_bound, bound(r, q));
    }
    for (size_t factor : {2, 4}) {
      VectorSearchParams params;
      params.k = kK;
      auto hits = index.SearchRescored(q, params, factor, exact, nullptr);
      ASSERT_TRUE(hits.ok());
      ASSERT_EQ(hits->size(), kK);
      // Scores are exact float scores.
      for (const VectorHit& h : *hits) EXPECT_NEAR(h.score, float_scores[h.id], 1e-5);
      const auto want = ExactTopK(float_scores, kK * factor + 1);
      if (float_scores[want[kK - 1]] - float_scores[want[kK * factor]] > 2 * max_bound &&
          float_scores[want[kK - 1]] - float_scores[want[kK]] > 1e-5) {
        for (size_t i = 0; i < kK; ++i) EXPECT_EQ((*hits)[i].id, want[i]) << qi;
      }
    }
    // Rescoring every vector is float exact search.
    VectorSearchParams all;
    all.k = kK;
    auto hits = index.SearchRescored(q, all, kN / kK, exact, nullptr);
    ASSERT_TRUE(hits.ok());
    const auto want = ExactTopK(float_scores, kK + 1);
    if (float_scores[want[kK - 1]] - float_scores[want[kK]] > 1e-5) {
      for (size_t i = 0; i < kK; ++i) EXPECT_EQ((*hits)[i].id, want[i]) << qi;
    }
  }
  EXPECT_EQ(fetched_calls, queries.rows * 3);
}

TEST_P(QuantizedIndexTest, FilterMinScoreAndCallbackErrors) {
  const FloatMatrix data = RandomUnitRows(100, 32, 1.0, 41);
  QuantizedFlatIndex index(32, GetParam());
  ASSERT_TRUE(index.Add(data).ok());
  VectorSearchParams params;
  params.k = 5;
  params.filter = [](uint32_t id) { return id % 3 == 0; };
  VectorSearchStats stats;
  const auto hits = index.Search(data.row(9), params, &stats);
  ASSERT_EQ(hits.size(), 5u);
  EXPECT_EQ(hits[0].id, 9u);  // itself, score ~1
  for (const auto& h : hits) EXPECT_EQ(h.id % 3, 0u);
  EXPECT_EQ(stats.candidates_scored, 34u);
  params.min_score = 0.5f;
  for (const auto& h : index.Search(data.row(9), params, nullptr)) EXPECT_GE(h.score, 0.5f);

  const QuantizedFlatIndex::ExactVectors wrong_shape = [](std::span<const uint32_t> ids,
                                                          FloatMatrix* out) {
    *out = FloatMatrix(ids.size(), 31);
    return Status::Ok();
  };
  const QuantizedFlatIndex::ExactVectors failing = [](std::span<const uint32_t>, FloatMatrix*) {
    return Status::NotFound("vector gone");
  };
  EXPECT_FALSE(index.SearchRescored(data.row(0), params, 2, wrong_shape, nullptr).ok());
  EXPECT_FALSE(index.SearchRescored(data.row(0), params, 0, failing, nullptr).ok());
  const auto failed = index.SearchRescored(data.row(0), params, 2, failing, nullptr);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().ToString().find("vector gone"), std::string::npos);
  std::vector<float> nan_query(32, std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(index.Search(nan_query.data(), params, nullptr).empty());
}

INSTANTIATE_TEST_SUITE_P(Formats, QuantizedIndexTest, ::testing::ValuesIn(kFormats),
                         FormatTestName);

// ------------------------------------------------------------ int8 columns

// Sparse queries (below FlatIndex::kSparseFraction of the dimensions) take
// the int8 column path; its hits carry exact scores, and its top k is the
// float top k wherever the margin between the k-th and the
// (k·factor+1)-th float score exceeds twice the error bound (the
// candidates then hold the true top k), and always when every vector is a
// candidate.
TEST(Int8ColumnsTest, SparseQueriesRankByRescoredCandidates) {
  constexpr size_t kN = 5000, kD = 128, kK = 10;
  const FloatMatrix data = RandomUnitRows(kN, kD, 0.4, 41);
  const FloatMatrix queries = RandomUnitRows(40, kD, 0.1, 42);
  auto built = FlatIndex::FromMatrix(FloatMatrix(data), FlatIndex::ColumnCopy::kInt8);
  ASSERT_TRUE(built.ok());
  FlatIndex& index = **built;
  EXPECT_EQ(index.Kind(), "flat-int8");
  EXPECT_FALSE(index.exact());
  const ErrorBound bound(QuantizedFormat::kInt8PerVector, data);
  size_t checked = 0, found = 0;
  for (size_t qi = 0; qi < queries.rows; ++qi) {
    const float* q = queries.row(qi);
    std::vector<double> want_scores(kN);
    double max_bound = 0;
    for (size_t r = 0; r < kN; ++r) {
      want_scores[r] = DotDouble(q, data.row(r), kD);
      max_bound = std::max(max_bound, bound(r, q));
    }
    VectorSearchParams params;
    params.k = kK;
    params.scan_mass = 1.0f;  // every column: the bound below holds
    VectorSearchStats stats;
    const std::vector<VectorHit> hits = index.Search(q, params, &stats);
    ASSERT_EQ(hits.size(), kK);
    EXPECT_EQ(stats.candidates_scored, kN + kK * FlatIndex::kDefaultRescoreFactor);
    for (size_t i = 0; i < kK; ++i) {
      EXPECT_NEAR(hits[i].score, want_scores[hits[i].id], 1e-5);
      if (i > 0) EXPECT_GE(hits[i - 1].score, hits[i].score);
    }
    const auto want = ExactTopK(want_scores, kK * FlatIndex::kDefaultRescoreFactor + 1);
    for (const VectorHit& h : hits) {
      found += std::find(want.begin(), want.begin() + kK, h.id) != want.begin() + kK;
    }
    if (want_scores[want[kK - 1]] - want_scores[want[kK * FlatIndex::kDefaultRescoreFactor]] > 2 * max_bound &&
        want_scores[want[kK - 1]] - want_scores[want[kK]] > 1e-5) {
      ++checked;
      for (size_t i = 0; i < kK; ++i) EXPECT_EQ(hits[i].id, want[i]) << qi;
    }
    // Every vector a candidate: float exact search.
    VectorSearchParams every = params;
    every.rescore = kN / kK;
    const std::vector<VectorHit> all = index.Search(q, every, nullptr);
    if (want_scores[want[kK - 1]] - want_scores[want[kK]] > 1e-5) {
      for (size_t i = 0; i < kK; ++i) EXPECT_EQ(all[i].id, want[i]) << qi;
    }
  }
  // Recall@10 against exact search, on these random vectors: every column,
  // and the default share of them.
  EXPECT_GE(static_cast<double>(found) / (queries.rows * kK), 0.95);
  EXPECT_GT(checked, 0u);
  size_t found_default = 0;
  for (size_t qi = 0; qi < queries.rows; ++qi) {
    const float* q = queries.row(qi);
    std::vector<double> want_scores(kN);
    for (size_t r = 0; r < kN; ++r) want_scores[r] = DotDouble(q, data.row(r), kD);
    const auto want = ExactTopK(want_scores, kK);
    VectorSearchParams params;
    params.k = kK;
    for (const VectorHit& h : index.Search(q, params, nullptr)) {
      found_default += std::find(want.begin(), want.end(), h.id) != want.end();
    }
  }
  EXPECT_GE(static_cast<double>(found_default) / (queries.rows * kK), 0.95);
}

// The scan reads the columns of the largest coordinates up to the share
// asked for: a query whose one large coordinate carries most of its mass
// ranks by that column alone at m = 0.5 (the rescoring still scores every
// coordinate), and by all of them at m = 1.
TEST(Int8ColumnsTest, TheScanReadsTheLargestCoordinatesFirst) {
  constexpr size_t kD = 16;
  FloatMatrix data(3, kD);
  data.row(0)[0] = 1.0f;                          // the large coordinate only
  data.row(1)[1] = 0.6f, data.row(1)[0] = 0.8f;   // both
  data.row(2)[1] = 1.0f;                          // the small coordinate only
  auto index = FlatIndex::FromMatrix(std::move(data), FlatIndex::ColumnCopy::kInt8);
  ASSERT_TRUE(index.ok());
  std::vector<float> q(kD, 0.0f);
  q[0] = 0.6f;
  q[1] = 0.8f * 0.5f;  // mass 1.0: column 0 alone holds 0.6
  VectorSearchParams params;
  params.k = 1;
  params.rescore = 1;
  params.scan_mass = 0.5f;
  auto hits = (*index)->Search(q.data(), params, nullptr);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].id, 0u);  // by column 0: 0.6 beats row 1's 0.48
  params.scan_mass = 1.0f;
  hits = (*index)->Search(q.data(), params, nullptr);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].id, 1u);  // 0.48 + 0.24 = 0.72
  EXPECT_NEAR(hits[0].score, 0.72f, 1e-6);
}

// A filter and min_score apply as VectorIndex says; dense queries and
// ScoreAll are exact float (the rows).
TEST(Int8ColumnsTest, FilterMinScoreDenseQueriesAndScoreAll) {
  constexpr size_t kN = 600, kD = 64;
  const FloatMatrix data = RandomUnitRows(kN, kD, 0.5, 51);
  auto index = FlatIndex::FromMatrix(FloatMatrix(data), FlatIndex::ColumnCopy::kInt8);
  auto exact = FlatIndex::FromMatrix(FloatMatrix(data));
  ASSERT_TRUE(index.ok() && exact.ok());
  const FloatMatrix sparse = RandomUnitRows(1, kD, 0.1, 52);
  const FloatMatrix dense = RandomUnitRows(1, kD, 1.0, 53);
  VectorSearchParams params;
  params.k = 20;
  params.filter = [](uint32_t id) { return id % 3 == 0; };
  params.min_score = 0.05f;
  for (const VectorHit& h : (*index)->Search(sparse.row(0), params, nullptr)) {
    EXPECT_EQ(h.id % 3, 0u);
    EXPECT_GE(h.score, 0.05f);
  }
  VectorSearchParams plain;
  plain.k = 15;
  const auto a = (*index)->Search(dense.row(0), plain, nullptr);
  const auto b = (*exact)->Search(dense.row(0), plain, nullptr);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_EQ(a[i].score, b[i].score);
  }
  // A zero query: every score 0, ties by ascending id, as the float index.
  const std::vector<float> zero(kD, 0.0f);
  const auto z = (*index)->Search(zero.data(), plain, nullptr);
  const auto zf = (*exact)->Search(zero.data(), plain, nullptr);
  ASSERT_EQ(z.size(), zf.size());
  for (size_t i = 0; i < z.size(); ++i) {
    EXPECT_EQ(z[i].id, zf[i].id);
    EXPECT_EQ(z[i].score, 0.0f);
  }
  std::vector<float> all(kN);
  (*index)->ScoreAll(sparse.row(0), all);
  for (size_t r = 0; r < kN; ++r) EXPECT_NEAR(all[r], DotDouble(sparse.row(0), data.row(r), kD), 1e-5);
}

// Built at once or grown by Add, exported and adopted in place: the same
// codes, the same hits bit for bit; damaged arrays are refused by name.
TEST(Int8ColumnsTest, AddExportAndAdoptKeepTheSameHits) {
  constexpr size_t kN = 900, kD = 48;
  const FloatMatrix data = RandomUnitRows(kN, kD, 0.4, 61);
  auto whole = FlatIndex::FromMatrix(FloatMatrix(data), FlatIndex::ColumnCopy::kInt8);
  ASSERT_TRUE(whole.ok());
  FlatIndex grown(kD, 0, FlatIndex::ColumnCopy::kInt8);
  for (size_t start = 0; start < kN; start += 250) {
    const size_t n = std::min<size_t>(250, kN - start);
    FloatMatrix part(n, kD);
    std::copy_n(data.row(start), n * kD, part.row(0));
    ASSERT_TRUE(grown.Add(part).ok());
  }
  MemoryArrays arrays;
  ASSERT_TRUE(grown.ExportArrays(arrays, "p").ok());
  EXPECT_TRUE(arrays.Has("p.codes"));
  EXPECT_FALSE(arrays.Has("p.columns"));
  auto adopted = FlatIndex::AdoptArrays(arrays, "p");
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  EXPECT_TRUE((*adopted)->borrowed());
  EXPECT_EQ((*adopted)->Kind(), "flat-int8");
  const FloatMatrix queries = RandomUnitRows(10, kD, 0.15, 62);
  VectorSearchParams params;
  params.k = 12;
  for (size_t qi = 0; qi < queries.rows; ++qi) {
    const auto a = (*whole)->Search(queries.row(qi), params, nullptr);
    for (const VectorIndex* other : {static_cast<const VectorIndex*>(&grown),
                                     static_cast<const VectorIndex*>(adopted->get())}) {
      const auto b = other->Search(queries.row(qi), params, nullptr);
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].id, b[i].id);
        EXPECT_EQ(a[i].score, b[i].score);
      }
    }
  }
  MemoryArrays short_codes;
  ASSERT_TRUE(grown.ExportArrays(short_codes, "p").ok());
  std::vector<std::byte> fewer(short_codes.MutableBytes("p.codes").size() - 1);
  ASSERT_TRUE(short_codes.Replace("p.codes", fewer).ok());
  auto refused = FlatIndex::AdoptArrays(short_codes, "p");
  ASSERT_EQ(refused.status().code(), StatusCode::kCorruption);
  EXPECT_NE(refused.status().message().find("p.codes"), std::string::npos);
  MemoryArrays short_scales;
  ASSERT_TRUE(grown.ExportArrays(short_scales, "p").ok());
  std::vector<std::byte> fewer_scales(short_scales.MutableBytes("p.scales").size() - 4);
  ASSERT_TRUE(short_scales.Replace("p.scales", fewer_scales).ok());
  refused = FlatIndex::AdoptArrays(short_scales, "p");
  ASSERT_EQ(refused.status().code(), StatusCode::kCorruption);
  EXPECT_NE(refused.status().message().find("p.scales"), std::string::npos);
}

// Rows deleted and appended over an int8 base (a snapshot's insert and
// delete): with every vector a candidate, the hits are exact search over
// the current vectors, score for score with the base's rescoring kernel.
TEST(Int8ColumnsTest, LayeredEditsOverAnInt8BaseSearchTheCurrentVectors) {
  constexpr size_t kN = 400, kD = 40;
  const FloatMatrix data = RandomUnitRows(kN, kD, 0.5, 71);
  auto base = FlatIndex::FromMatrix(FloatMatrix(data), FlatIndex::ColumnCopy::kInt8);
  ASSERT_TRUE(base.ok());
  auto layered = LayeredIndex::Over(std::shared_ptr<const VectorIndex>(std::move(*base)));
  ASSERT_TRUE(layered.ok());
  std::vector<bool> removed(kN, false);
  for (size_t r = 0; r < kN; r += 7) removed[r] = true;
  auto without = (*layered)->Without(removed);
  ASSERT_TRUE(without.ok());
  const FloatMatrix extra = RandomUnitRows(30, kD, 0.5, 72);
  auto edited = (*without)->With(extra);
  ASSERT_TRUE(edited.ok());
  EXPECT_EQ((*edited)->Kind(), "flat-int8");
  FloatMatrix current = (*edited)->Vectors();
  ASSERT_EQ(current.rows, kN - (kN + 6) / 7 + 30);
  const FloatMatrix queries = RandomUnitRows(10, kD, 0.2, 73);
  VectorSearchParams params;
  params.k = 8;
  params.rescore = kN;  // every vector a candidate
  for (size_t qi = 0; qi < queries.rows; ++qi) {
    std::vector<double> scores(current.rows);
    for (size_t r = 0; r < current.rows; ++r) scores[r] = DotDouble(queries.row(qi), current.row(r), kD);
    const auto want = ExactTopK(scores, params.k + 1);
    const auto hits = (*edited)->Search(queries.row(qi), params, nullptr);
    ASSERT_EQ(hits.size(), params.k);
    for (size_t i = 0; i < hits.size(); ++i) EXPECT_NEAR(hits[i].score, scores[hits[i].id], 1e-5);
    if (scores[want[params.k - 1]] - scores[want[params.k]] > 1e-5) {
      for (size_t i = 0; i < params.k; ++i) EXPECT_EQ(hits[i].id, want[i]) << qi;
    }
  }
}

// exact_scores = false: the hits are the best k by the dequantized
// vectors' scores, computed here independently (s = max|x|/127, c =
// round(x/s), s·Σ q·c in double), whichever share of the columns the scan
// read; appended rows of a layered index score as a rebuilt index's do, bit
// for bit.
TEST(Int8ColumnsTest, ApproximateScoresAreTheDequantizedVectorsScores) {
  constexpr size_t kN = 800, kD = 128, kK = 12;
  const FloatMatrix data = RandomUnitRows(kN, kD, 0.4, 81);
  const FloatMatrix queries = RandomUnitRows(12, kD, 0.1, 82);  // sparse: the column path
  auto dequantized = [&](const float* q, const float* x) {
    double top = 0;
    for (size_t d = 0; d < kD; ++d) top = std::max(top, std::fabs(double{x[d]}));
    const double scale = static_cast<float>(top / 127.0);
    double sum = 0;
    for (size_t d = 0; d < kD; ++d) {
      sum += q[d] * std::clamp(std::round(x[d] / scale), -127.0, 127.0);
    }
    return scale * sum;
  };
  auto built = FlatIndex::FromMatrix(FloatMatrix(data), FlatIndex::ColumnCopy::kInt8);
  ASSERT_TRUE(built.ok());
  size_t compared = 0;
  for (float mass : {0.5f, 1.0f}) {
    for (size_t qi = 0; qi < queries.rows; ++qi) {
      const float* q = queries.row(qi);
      std::vector<double> want_scores(kN);
      for (size_t r = 0; r < kN; ++r) want_scores[r] = dequantized(q, data.row(r));
      const auto want = ExactTopK(want_scores, kK + 1);
      VectorSearchParams params;
      params.k = kK;
      params.scan_mass = mass;
      params.rescore = kN / kK + 1;  // every vector a candidate
      params.exact_scores = false;
      const auto hits = (*built)->Search(q, params, nullptr);
      ASSERT_EQ(hits.size(), kK);
      for (const VectorHit& h : hits) EXPECT_NEAR(h.score, want_scores[h.id], 1e-5);
      if (want_scores[want[kK - 1]] - want_scores[want[kK]] > 1e-5) {
        ++compared;
        for (size_t i = 0; i < kK; ++i) EXPECT_EQ(hits[i].id, want[i]) << qi;
      }
    }
  }
  EXPECT_GT(compared, 12u);

  // Rows appended to a layered index over it, against the index rebuilt
  // from every row.
  const FloatMatrix extra = RandomUnitRows(40, kD, 0.4, 83);
  auto layered = LayeredIndex::Over(std::shared_ptr<const VectorIndex>(std::move(*built)));
  ASSERT_TRUE(layered.ok());
  auto grown = (*layered)->With(extra);
  ASSERT_TRUE(grown.ok());
  FloatMatrix all = (*grown)->Vectors();
  auto rebuilt = FlatIndex::FromMatrix(FloatMatrix(all), FlatIndex::ColumnCopy::kInt8);
  ASSERT_TRUE(rebuilt.ok());
  for (size_t qi = 0; qi < queries.rows; ++qi) {
    VectorSearchParams params;
    params.k = kK;
    params.rescore = all.rows;
    params.scan_mass = 1.0f;
    params.exact_scores = false;
    const auto a = (*grown)->Search(queries.row(qi), params, nullptr);
    const auto b = (*rebuilt)->Search(queries.row(qi), params, nullptr);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_NEAR(a[i].score, dequantized(queries.row(qi), all.row(a[i].id)), 1e-5);
      // The same bits: a column copy's vectors and an appended row score by
      // the same function (FlatIndex::Int8Score).
      EXPECT_EQ(a[i].id, b[i].id);
      EXPECT_EQ(a[i].score, b[i].score);
    }
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
