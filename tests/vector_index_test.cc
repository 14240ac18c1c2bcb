// Tests for src/vector: SIMD dot products against a double-precision loop,
// FlatIndex against a brute-force sort, HnswIndex against FlatIndex (recall)
// and against hnswlib's own searchKnn, serialisation, concurrency, factory.
#include "vector/vector_index.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "vector/dot_product.h"
#include "vector/flat_index.h"
#include "vector/sparse_index.h"
#include "vector/hnsw_index.h"
#include "vector/index_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using vector_internal::SimdLevel;

// ------------------------------------------------------------------ data

void Normalise(float* v, size_t d) {
  double norm = 0;
  for (size_t i = 0; i < d; ++i) norm += double{v[i]} * v[i];
  norm = std::sqrt(norm);
  if (norm == 0) return;
  for (size_t i = 0; i < d; ++i) v[i] = static_cast<float>(v[i] / norm);
}

FloatMatrix RandomNormalised(size_t n, size_t d, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  FloatMatrix m(n, d);
  for (float& x : m.data) x = normal(rng);
  for (size_t i = 0; i < n; ++i) Normalise(m.row(i), d);
  return m;
}

// n points around `clusters` random unit centres, each point = centre + noise,
// normalised: the shape of real embedding collections.
FloatMatrix Clustered(size_t n, size_t d, size_t clusters, float noise, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  FloatMatrix centres = RandomNormalised(clusters, d, seed ^ 0x5bd1e995);
  std::uniform_int_distribution<size_t> pick(0, clusters - 1);
  FloatMatrix m(n, d);
  const float scale = noise / std::sqrt(static_cast<float>(d));
  for (size_t i = 0; i < n; ++i) {
    const float* c = centres.row(pick(rng));
    for (size_t j = 0; j < d; ++j) m.row(i)[j] = c[j] + scale * normal(rng);
    Normalise(m.row(i), d);
  }
  return m;
}

// Small multiples of 1/4: every partial sum of a dot product is exact in
// float, so all kernels agree bit for bit and duplicates give exact ties.
FloatMatrix QuarterGrid(size_t n, size_t d, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> v(-2, 2);
  FloatMatrix m(n, d);
  for (float& x : m.data) x = 0.25f * static_cast<float>(v(rng));
  return m;
}

double ReferenceDot(const float* a, const float* b, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += double{a[i]} * double{b[i]};
  return s;
}

double AbsDot(const float* a, const float* b, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += std::fabs(double{a[i]} * double{b[i]});
  return s;
}

std::vector<SimdLevel> SupportedLevels() {
  std::vector<SimdLevel> levels = {SimdLevel::kScalar};
  if (vector_internal::DetectedSimdLevel() >= SimdLevel::kAvx2) levels.push_back(SimdLevel::kAvx2);
  if (vector_internal::DetectedSimdLevel() >= SimdLevel::kAvx512) {
    levels.push_back(SimdLevel::kAvx512);
  }
  return levels;
}

// All (score desc, id asc) hits of a brute-force scan in double precision.
std::vector<VectorHit> BruteForce(const FloatMatrix& data, const float* q,
                                  const std::function<bool(uint32_t)>& filter = nullptr) {
  std::vector<VectorHit> all;
  for (size_t i = 0; i < data.rows; ++i) {
    if (filter && !filter(static_cast<uint32_t>(i))) continue;
    all.push_back(
        {static_cast<uint32_t>(i), static_cast<float>(ReferenceDot(q, data.row(i), data.cols))});
  }
  std::sort(all.begin(), all.end(), vector_internal::HitBefore);
  return all;
}

std::vector<uint32_t> Ids(const std::vector<VectorHit>& hits) {
  std::vector<uint32_t> ids;
  for (const auto& h : hits) ids.push_back(h.id);
  return ids;
}

double RecallAt(const std::vector<VectorHit>& got, const std::vector<VectorHit>& truth) {
  if (truth.empty()) return 1.0;
  const std::vector<uint32_t> truth_ids = Ids(truth);
  const std::set<uint32_t> want(truth_ids.begin(), truth_ids.end());
  size_t found = 0;
  for (const auto& h : got) found += want.count(h.id);
  return static_cast<double>(found) / static_cast<double>(truth.size());
}

// Checks `got` is an exact top-k of `data` for `q` up to float rounding:
// sorted, scores right, nothing better left out.
void ExpectExactTopK(const FloatMatrix& data, const float* q, size_t k,
                     const std::vector<VectorHit>& got,
                     const std::function<bool(uint32_t)>& filter = nullptr) {
  const auto truth = BruteForce(data, q, filter);
  ASSERT_EQ(got.size(), std::min(k, truth.size()));
  if (got.empty()) return;
  constexpr float kTol = 1e-5f;
  std::set<uint32_t> seen;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_LT(got[i].id, data.rows);
    EXPECT_TRUE(seen.insert(got[i].id).second) << "duplicate id " << got[i].id;
    if (filter) {
      EXPECT_TRUE(filter(got[i].id)) << "filtered-out id " << got[i].id;
    }
    EXPECT_NEAR(got[i].score, ReferenceDot(q, data.row(got[i].id), data.cols), kTol);
    if (i > 0) {
      EXPECT_FALSE(vector_internal::HitBefore(got[i], got[i - 1])) << "unsorted at " << i;
    }
  }
  // Every hit scoring clearly above the last returned one must be returned.
  const float last = got.back().score;
  for (const auto& t : truth) {
    if (t.score <= last + kTol) break;
    EXPECT_TRUE(seen.count(t.id)) << "missed id " << t.id << " score " << t.score;
  }
}

// ------------------------------------------------------------------ dot products

TEST(DotProductTest, DetectsALevel) {
  const SimdLevel level = vector_internal::DetectedSimdLevel();
  RecordProperty("simd_level", std::string(vector_internal::SimdLevelName(level)));
  std::printf("[ info     ] SIMD level: %s\n",
              std::string(vector_internal::SimdLevelName(level)).c_str());
  EXPECT_EQ(vector_internal::DetectedSimdLevel(), level);  // stable
}

TEST(DotProductTest, MatchesDoubleLoopForAllLengthsAndAlignments) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> a(300 + 8), b(300 + 8);
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  for (SimdLevel level : SupportedLevels()) {
    for (size_t n = 0; n <= 300; ++n) {
      for (size_t oa = 0; oa < 4; ++oa) {
        for (size_t ob : {size_t{0}, size_t{3}}) {
          const float* pa = a.data() + oa;
          const float* pb = b.data() + ob;
          const double want = ReferenceDot(pa, pb, n);
          const double tol = 1e-5 * AbsDot(pa, pb, n) + 1e-7;
          ASSERT_NEAR(vector_internal::DotProductAt(level, pa, pb, n), want, tol)
              << vector_internal::SimdLevelName(level) << " n=" << n << " offsets " << oa << ","
              << ob;
        }
      }
    }
  }
  for (size_t n = 0; n <= 300; ++n) {
    const float* pa = a.data() + 1;
    ASSERT_NEAR(DotProduct(pa, b.data(), n), ReferenceDot(pa, b.data(), n),
                1e-5 * AbsDot(pa, b.data(), n) + 1e-7)
        << "n=" << n;
  }
}

TEST(DotProductTest, ExactOnExactlyRepresentableInputsAtEveryLevel) {
  const FloatMatrix m = QuarterGrid(2, 1000, 3);
  for (SimdLevel level : SupportedLevels()) {
    for (size_t n : {1, 15, 16, 17, 63, 64, 65, 999, 1000}) {
      EXPECT_EQ(vector_internal::DotProductAt(level, m.row(0), m.row(1), n),
                static_cast<float>(ReferenceDot(m.row(0), m.row(1), n)));
    }
  }
}

// The vectors end exactly at a PROT_NONE page: any read past the last element
// faults. Checks that the masked tails really stay inside the arrays.
TEST(DotProductTest, NeverReadsPastTheEnd) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  char* mem = static_cast<char*>(
      mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(mem, MAP_FAILED);
  ASSERT_EQ(mprotect(mem + page, page, PROT_NONE), 0);
  float* end = reinterpret_cast<float*>(mem + page);
  for (size_t i = 0; i < page / sizeof(float); ++i) reinterpret_cast<float*>(mem)[i] = 0.5f;
  for (SimdLevel level : SupportedLevels()) {
    for (size_t n = 1; n <= 100; ++n) {
      const float* p = end - n;
      EXPECT_FLOAT_EQ(vector_internal::DotProductAt(level, p, p, n), 0.25f * n);
      // Four rows of n floats ending at the guard page, and the query too.
      const float* rows = end - 4 * n;
      float scores[4];
      vector_internal::DotProductBlockAt(level, p, rows, 4, n, scores);
      for (float s : scores) EXPECT_FLOAT_EQ(s, 0.25f * n);
    }
  }
  munmap(mem, 2 * page);
}

TEST(DotProductTest, BlockAndGatherMatchSingleDots) {
  std::mt19937 rng(11);
  for (SimdLevel level : SupportedLevels()) {
    for (size_t dim : {1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65, 100, 129, 257, 1024}) {
      for (size_t rows : {0, 1, 3, 4, 5, 8, 11}) {
        FloatMatrix m = RandomNormalised(rows + 1, dim, rng());
        const float* q = m.row(rows);
        std::vector<float> block(rows), gather(rows);
        vector_internal::DotProductBlockAt(level, q, m.data.data(), rows, dim, block.data());
        std::vector<const float*> ptrs;
        for (size_t r = 0; r < rows; ++r) ptrs.push_back(m.row(rows - 1 - r));  // reversed
        vector_internal::DotProductGatherAt(level, q, ptrs.data(), rows, dim, gather.data());
        for (size_t r = 0; r < rows; ++r) {
          const double want = ReferenceDot(q, m.row(r), dim);
          ASSERT_NEAR(block[r], want, 2e-6) << "dim " << dim << " row " << r;
          // Same bits as the single-row kernel, so DotProduct() reproduces the
          // scores the indexes report.
          ASSERT_EQ(block[r], vector_internal::DotProductAt(level, q, m.row(r), dim));
          ASSERT_EQ(gather[rows - 1 - r], block[r]);
        }
      }
    }
  }
}

// ------------------------------------------------------------------ flat

TEST(TopKTest, OrderIsTotalWithNaN) {
  const float nan = std::nanf("");
  const VectorHit a{1, 0.5f}, b{2, 0.5f}, c{0, nan}, d{3, nan};
  EXPECT_TRUE(vector_internal::HitBefore(a, b));
  EXPECT_FALSE(vector_internal::HitBefore(b, a));
  EXPECT_TRUE(vector_internal::HitBefore(b, c));
  EXPECT_FALSE(vector_internal::HitBefore(c, b));
  EXPECT_TRUE(vector_internal::HitBefore(c, d));
  EXPECT_FALSE(vector_internal::HitBefore(c, c));
  vector_internal::TopK top(2);
  top.Push(5, nan);
  top.Push(6, -1.0f);
  top.Push(7, 2.0f);  // replaces the NaN (kept as -inf)
  const auto hits = top.Take();
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].id, 7u);
  EXPECT_EQ(hits[1].id, 6u);
}

TEST(FlatIndexTest, ExactTopKOnRandomData) {
  const FloatMatrix data = RandomNormalised(1000, 37, 1);
  const FloatMatrix queries = RandomNormalised(20, 37, 2);
  FlatIndex index(37);
  ASSERT_TRUE(index.Add(data).ok());
  EXPECT_EQ(index.Size(), 1000u);
  for (size_t k : {1, 10, 100, 999, 1000, 5000}) {
    for (size_t qi = 0; qi < queries.rows; ++qi) {
      VectorSearchParams params;
      params.k = k;
      VectorSearchStats stats;
      const auto hits = index.Search(queries.row(qi), params, &stats);
      ExpectExactTopK(data, queries.row(qi), k, hits);
      EXPECT_EQ(stats.candidates_scored, 1000u);
    }
  }
}

TEST(FlatIndexTest, TiesBreakByAscendingIdAndMatchBruteForceExactly) {
  // Few distinct values and duplicated rows: many exact ties. Row 7 is all
  // 0.5 (the largest value) and copied to every third row, so the copies are
  // the strict top for a query equal to it.
  FloatMatrix data = QuarterGrid(300, 24, 5);
  std::fill(data.row(7), data.row(7) + 24, 0.5f);
  for (size_t i = 0; i < 300; i += 3) std::copy(data.row(7), data.row(7) + 24, data.row(i));
  const FloatMatrix queries = QuarterGrid(10, 24, 6);
  FlatIndex index(24, 300);
  ASSERT_TRUE(index.Add(data).ok());
  for (size_t k : {1, 5, 50, 120, 300, 400}) {
    for (size_t qi = 0; qi < queries.rows; ++qi) {
      VectorSearchParams params;
      params.k = k;
      const auto got = index.Search(queries.row(qi), params, nullptr);
      auto want = BruteForce(data, queries.row(qi));
      want.resize(std::min(k, want.size()));
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].id, want[i].id) << "k=" << k << " rank " << i;
        EXPECT_EQ(got[i].score, want[i].score);
      }
    }
  }
  // A query equal to the duplicated row: the 101 copies tie; lowest ids win.
  VectorSearchParams params;
  params.k = 10;
  const auto hits = index.Search(data.row(7), params, nullptr);
  const std::vector<uint32_t> want = {0, 3, 6, 7, 9, 12, 15, 18, 21, 24};
  EXPECT_EQ(Ids(hits), want);
  for (const auto& h : hits) EXPECT_EQ(h.score, 6.0f);
}

TEST(FlatIndexTest, FilterIsRespected) {
  const FloatMatrix data = RandomNormalised(777, 50, 3);
  const FloatMatrix queries = RandomNormalised(10, 50, 4);
  FlatIndex index(50);
  ASSERT_TRUE(index.Add(data).ok());
  VectorSearchParams params;
  params.k = 25;
  params.filter = [](uint32_t id) { return id % 7 == 3; };
  for (size_t qi = 0; qi < queries.rows; ++qi) {
    VectorSearchStats stats;
    const auto hits = index.Search(queries.row(qi), params, &stats);
    ExpectExactTopK(data, queries.row(qi), 25, hits, params.filter);
    EXPECT_EQ(stats.candidates_scored, 111u);  // ids 3, 10, ..., 773
  }
  params.filter = [](uint32_t id) { return id == 500 || id == 2; };
  auto hits = index.Search(queries.row(0), params, nullptr);
  ASSERT_EQ(hits.size(), 2u);
  params.filter = [](uint32_t) { return false; };
  VectorSearchStats stats;
  EXPECT_TRUE(index.Search(queries.row(0), params, &stats).empty());
  EXPECT_EQ(stats.candidates_scored, 0u);
}

TEST(DotProductTest, AxpyMatchesScalarAtEveryLevel) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  for (size_t n : {0, 1, 7, 8, 15, 16, 17, 100, 1027}) {
    std::vector<float> x(n), y(n);
    for (auto& v : x) v = u(rng);
    for (auto& v : y) v = u(rng);
    for (SimdLevel level : SupportedLevels()) {
      std::vector<float> got = y;
      AxpyAt(level, 0.37f, x.data(), got.data(), n);
      for (size_t i = 0; i < n; ++i) EXPECT_NEAR(got[i], y[i] + 0.37f * x[i], 1e-6) << n;
    }
  }
}

// Queries with few non-zero coordinates take FlatIndex's dimension-major
// path; it must give the brute-force top-k, with filters, after incremental adds.
TEST(FlatIndexTest, SparseQueriesMatchBruteForce) {
  const size_t d = 256;
  FloatMatrix data = RandomNormalised(700, d, 11);
  FlatIndex index(d);
  for (size_t start = 0; start < data.rows; start += 250) {  // three Adds: column regrowth
    FloatMatrix part(std::min<size_t>(250, data.rows - start), d);
    std::copy_n(data.row(start), part.rows * d, part.data.begin());
    ASSERT_TRUE(index.Add(part).ok());
  }
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> q(d, 0.0f);
    for (int i = 0; i < 30; ++i) q[rng() % d] = u(rng);  // ≤ 30 non-zeros: sparse
    VectorSearchParams params;
    params.k = 10;
    if (trial % 2) params.filter = [](uint32_t id) { return id % 3 != 0; };
    VectorSearchStats stats;
    auto got = index.Search(q.data(), params, &stats);
    auto want = BruteForce(data, q.data(), params.filter);
    want.resize(params.k);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].id, want[i].id) << "trial " << trial << " rank " << i;
      EXPECT_NEAR(got[i].score, want[i].score, 1e-5);
    }
    EXPECT_EQ(stats.candidates_scored, trial % 2 ? 466u : 700u);
  }
}

TEST(SparseIndexTest, MatchesBruteForceIncludingZeroAndNegativeScores) {
  const size_t d = 128;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-1, 1);
  FloatMatrix data(300, d);
  for (size_t r = 0; r < data.rows; ++r) {
    for (int i = 0; i < 6; ++i) data.row(r)[rng() % d] = u(rng);  // ~5% dense, signed
  }
  SparseIndex index(d);
  ASSERT_TRUE(index.Add(data).ok());
  EXPECT_LE(index.NonZeros(), 300u * 6);
  EXPECT_LT(Density(data), 0.06);
  for (int trial = 0; trial < 30; ++trial) {
    std::vector<float> q(d, 0.0f);
    // 4 non-zeros touch ~56 postings (the touched-ids path), 40 touch ~560
    // (the scan-every-id path, >= n/4 postings).
    const int nnz = trial % 4 < 2 ? 4 : 40;
    for (int i = 0; i < nnz; ++i) q[rng() % d] = u(rng);
    VectorSearchParams params;
    params.k = trial % 3 == 0 ? 250 : 10;  // deep enough to need zero-score fill
    if (trial % 2) params.filter = [](uint32_t id) { return id % 4 != 1; };
    auto got = index.Search(q.data(), params, nullptr);
    auto want = BruteForce(data, q.data(), params.filter);
    want.resize(std::min(want.size(), params.k));
    ASSERT_EQ(got.size(), want.size()) << trial;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i].score, want[i].score, 1e-5) << trial << " " << i;
      if (std::fabs(got[i].score - want[i].score) < 1e-6 && i + 1 < got.size() &&
          std::fabs(want[i].score - want[i + 1].score) > 1e-5) {
        EXPECT_EQ(got[i].id, want[i].id) << trial << " rank " << i;
      }
    }
  }
}

TEST(FlatIndexTest, EmptyIndexAndZeroK) {
  FlatIndex index(8);
  const std::vector<float> q(8, 0.1f);
  VectorSearchParams params;
  EXPECT_TRUE(index.Search(q.data(), params, nullptr).empty());
  ASSERT_TRUE(index.Add(RandomNormalised(10, 8, 1)).ok());
  params.k = 0;
  EXPECT_TRUE(index.Search(q.data(), params, nullptr).empty());
}

TEST(FlatIndexTest, IncrementalAddsKeepDenseIds) {
  const FloatMatrix data = RandomNormalised(300, 16, 9);
  FlatIndex index(16);
  for (size_t start = 0; start < 300; start += 77) {
    const size_t n = std::min<size_t>(77, 300 - start);
    FloatMatrix part(n, 16);
    std::copy(data.row(start), data.row(start) + n * 16, part.data.begin());
    ASSERT_TRUE(index.Add(part).ok());
  }
  ASSERT_EQ(index.Size(), 300u);
  for (uint32_t id : {0u, 76u, 77u, 299u}) {
    VectorSearchParams params;
    params.k = 1;
    const auto hits = index.Search(data.row(id), params, nullptr);
    ASSERT_EQ(hits.size(), 1u);
    EXPECT_EQ(hits[0].id, id);
    EXPECT_NEAR(hits[0].score, 1.0f, 1e-5);
  }
}

void ExpectRejectsBadRows(VectorIndex& index) {
  const size_t before = index.Size();
  Status st = index.Add(RandomNormalised(3, index.Dimension() + 1, 1));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find(std::to_string(index.Dimension())), std::string::npos)
      << st.message();
  FloatMatrix short_data(2, index.Dimension());
  short_data.data.pop_back();
  EXPECT_EQ(index.Add(short_data).code(), StatusCode::kInvalidArgument);
  FloatMatrix nan_rows = RandomNormalised(4, index.Dimension(), 2);
  nan_rows.row(2)[1] = std::nanf("");
  st = index.Add(nan_rows);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("row 2, column 1"), std::string::npos) << st.message();
  EXPECT_EQ(index.Size(), before);  // nothing added
  ASSERT_TRUE(index.Add(FloatMatrix(0, index.Dimension())).ok());
  EXPECT_EQ(index.Size(), before);
  // Non-finite queries match nothing.
  std::vector<float> query(index.Dimension(), 0.1f);
  VectorSearchParams params;
  EXPECT_FALSE(index.Search(query.data(), params, nullptr).empty());
  query[0] = std::nanf("");
  EXPECT_TRUE(index.Search(query.data(), params, nullptr).empty());
  query[0] = -INFINITY;
  EXPECT_TRUE(index.Search(query.data(), params, nullptr).empty());
}

TEST(FlatIndexTest, RejectsBadRows) {
  FlatIndex index(12);
  ASSERT_TRUE(index.Add(RandomNormalised(5, 12, 1)).ok());
  ExpectRejectsBadRows(index);
}

// ------------------------------------------------------------------ hnsw

constexpr size_t kHnswDim = 64;
constexpr size_t kHnswSize = 5000;

class HnswIndexTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_ = new FloatMatrix(Clustered(kHnswSize, kHnswDim, 50, 0.9f, 42));
    queries_ = new FloatMatrix(Clustered(200, kHnswDim, 50, 0.9f, 42 ^ 0xabc));
    flat_ = new FlatIndex(kHnswDim);
    ASSERT_TRUE(flat_->Add(*data_).ok());
    VectorIndexOptions options;
    auto made = HnswIndex::Create(kHnswDim, kHnswSize, options);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    hnsw_ = std::move(made).value().release();
    ASSERT_TRUE(hnsw_->Add(*data_).ok());
    truth_ = new std::vector<std::vector<VectorHit>>();
    for (size_t qi = 0; qi < queries_->rows; ++qi) {
      truth_->push_back(flat_->Search(queries_->row(qi), VectorSearchParams(), nullptr));
    }
  }
  static void TearDownTestSuite() {
    delete truth_;
    delete hnsw_;
    delete flat_;
    delete queries_;
    delete data_;
  }

  // Mean recall@k of `index` against exact search over the query set.
  // REQUIRES: params.k == 10 and no filter (the cached ground truth).
  static double MeanRecall(const VectorIndex& index, const VectorSearchParams& params) {
    EXPECT_EQ(params.k, 10u);
    EXPECT_FALSE(params.filter);
    double sum = 0;
    for (size_t qi = 0; qi < queries_->rows; ++qi) {
      sum += RecallAt(index.Search(queries_->row(qi), params, nullptr), (*truth_)[qi]);
    }
    return sum / static_cast<double>(queries_->rows);
  }

  static FloatMatrix* data_;
  static FloatMatrix* queries_;
  static FlatIndex* flat_;
  static HnswIndex* hnsw_;
  static std::vector<std::vector<VectorHit>>* truth_;  // exact top-10 per query
};

FloatMatrix* HnswIndexTest::data_ = nullptr;
FloatMatrix* HnswIndexTest::queries_ = nullptr;
FlatIndex* HnswIndexTest::flat_ = nullptr;
HnswIndex* HnswIndexTest::hnsw_ = nullptr;
std::vector<std::vector<VectorHit>>* HnswIndexTest::truth_ = nullptr;

TEST_F(HnswIndexTest, RecallAt10AgainstExactSearch) {
  EXPECT_EQ(hnsw_->Kind(), "hnsw");
  EXPECT_EQ(hnsw_->Size(), kHnswSize);
  VectorSearchParams params;  // k = 10, ef_search = 128
  const double recall = MeanRecall(*hnsw_, params);
  RecordProperty("recall_at_10", std::to_string(recall));
  std::printf("[ info     ] HNSW recall@10 (ef=128) over %zu queries: %.4f\n", queries_->rows,
              recall);
  EXPECT_GE(recall, 0.95);
}

TEST_F(HnswIndexTest, EfSearchIsPerCall) {
  VectorSearchParams narrow;
  narrow.ef_search = 10;
  VectorSearchParams wide;
  wide.ef_search = 400;
  VectorSearchStats narrow_stats, wide_stats;
  for (size_t qi = 0; qi < queries_->rows; ++qi) {
    hnsw_->Search(queries_->row(qi), narrow, &narrow_stats);
    hnsw_->Search(queries_->row(qi), wide, &wide_stats);
  }
  EXPECT_GT(wide_stats.candidates_scored, 2 * narrow_stats.candidates_scored);
  EXPECT_LT(wide_stats.candidates_scored, queries_->rows * kHnswSize);  // not a full scan
  EXPECT_GE(MeanRecall(*hnsw_, wide), MeanRecall(*hnsw_, narrow));
  EXPECT_GE(MeanRecall(*hnsw_, wide), 0.99);
  // ef below k is raised to k: k results come back.
  VectorSearchParams big_k;
  big_k.k = 300;
  big_k.ef_search = 5;
  EXPECT_EQ(hnsw_->Search(queries_->row(0), big_k, nullptr).size(), 300u);
}

TEST_F(HnswIndexTest, ScoresAreExactInnerProducts) {
  VectorSearchParams params;
  for (size_t qi = 0; qi < 20; ++qi) {
    for (const auto& hit : hnsw_->Search(queries_->row(qi), params, nullptr)) {
      EXPECT_NEAR(hit.score, ReferenceDot(queries_->row(qi), data_->row(hit.id), kHnswDim), 1e-5);
    }
  }
}

// Without a filter our search must walk the graph exactly like hnswlib's
// searchKnn at the same ef (an independent implementation of the same query).
TEST_F(HnswIndexTest, SameHitsAsHnswlibSearchKnn) {
  for (size_t ef : {10, 64, 200}) {
    VectorSearchParams params;
    params.ef_search = ef;
    for (size_t qi = 0; qi < 50; ++qi) {
      const auto ours = hnsw_->Search(queries_->row(qi), params, nullptr);
      const auto ref = hnsw_->SearchWithHnswlibForTesting(queries_->row(qi), params.k, ef);
      ASSERT_EQ(Ids(ours), Ids(ref)) << "ef " << ef << " query " << qi;
      for (size_t i = 0; i < ours.size(); ++i) EXPECT_EQ(ours[i].score, ref[i].score);
    }
  }
}

TEST_F(HnswIndexTest, FiltersAreRespected) {
  VectorSearchParams params;
  params.filter = [](uint32_t id) { return id % 3 == 0; };
  double recall = 0;
  for (size_t qi = 0; qi < queries_->rows; ++qi) {
    const auto hits = hnsw_->Search(queries_->row(qi), params, nullptr);
    ASSERT_EQ(hits.size(), 10u);
    for (const auto& h : hits) ASSERT_EQ(h.id % 3, 0u);
    recall += RecallAt(hits, flat_->Search(queries_->row(qi), params, nullptr));
  }
  recall /= static_cast<double>(queries_->rows);
  std::printf("[ info     ] HNSW recall@10 with a 1/3 filter: %.4f\n", recall);
  EXPECT_GE(recall, 0.95);

  // A very selective filter (12 eligible ids) is still answered exactly: the
  // beam never fills, so the whole graph is explored.
  params.filter = [](uint32_t id) { return id % 417 == 5; };
  for (size_t qi = 0; qi < 20; ++qi) {
    const auto hits = hnsw_->Search(queries_->row(qi), params, nullptr);
    EXPECT_EQ(Ids(hits), Ids(flat_->Search(queries_->row(qi), params, nullptr)));
  }
  params.filter = [](uint32_t) { return false; };
  EXPECT_TRUE(hnsw_->Search(queries_->row(0), params, nullptr).empty());
}

TEST_F(HnswIndexTest, SaveLoadRoundTripGivesIdenticalResults) {
  std::string buffer;
  ASSERT_TRUE(hnsw_->Save(&buffer).ok());
  auto loaded = HnswIndex::Load(buffer);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const HnswIndex& copy = **loaded;
  EXPECT_EQ(copy.Size(), hnsw_->Size());
  EXPECT_EQ(copy.Dimension(), hnsw_->Dimension());
  EXPECT_EQ(copy.m(), hnsw_->m());
  EXPECT_EQ(copy.ef_construction(), hnsw_->ef_construction());
  EXPECT_EQ(copy.seed(), hnsw_->seed());
  VectorSearchParams plain;
  VectorSearchParams filtered;
  filtered.filter = [](uint32_t id) { return id % 2 == 1; };
  for (size_t qi = 0; qi < queries_->rows; ++qi) {
    for (const auto* params : {&plain, &filtered}) {
      VectorSearchStats a, b;
      const auto want = hnsw_->Search(queries_->row(qi), *params, &a);
      const auto got = copy.Search(queries_->row(qi), *params, &b);
      ASSERT_EQ(Ids(got), Ids(want));
      for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i].score, want[i].score);
      EXPECT_EQ(a.candidates_scored, b.candidates_scored);
    }
  }
  std::string again;
  ASSERT_TRUE(copy.Save(&again).ok());
  EXPECT_EQ(again, buffer);
}

TEST_F(HnswIndexTest, CorruptBuffersAreRejected) {
  std::string good;
  ASSERT_TRUE(hnsw_->Save(&good).ok());
  auto expect_corrupt = [](const std::string& buffer, const std::string& fragment) {
    auto loaded = HnswIndex::Load(buffer);
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.status().code(), StatusCode::kCorruption) << loaded.status().ToString();
    EXPECT_NE(loaded.status().message().find(fragment), std::string::npos)
        << loaded.status().ToString();
  };
  expect_corrupt("", "magic");
  expect_corrupt("not an index at all, just text", "magic");
  std::string bad_version = good;
  bad_version[8] = 7;
  expect_corrupt(bad_version, "version 7");
  for (size_t len : {size_t{9}, size_t{12}, size_t{40}, good.size() / 2, good.size() - 1}) {
    expect_corrupt(good.substr(0, len), "");
  }
  for (size_t pos : {size_t{20}, good.size() / 3, good.size() - 100, good.size() - 3}) {
    std::string flipped = good;
    flipped[pos] ^= 0x10;
    expect_corrupt(flipped, "checksum");
  }
  expect_corrupt(good + "x", "checksum");

  // Structurally impossible graphs behind a valid checksum.
  auto reseal = [](std::string body) {
    body.resize(body.size() - 8);
    const uint64_t sum = vector_internal::Checksum64(body.data(), body.size());
    body.append(reinterpret_cast<const char*>(&sum), 8);
    return body;
  };
  // The first link id: the degree of vector 0's level-0 list follows the
  // header (60 bytes), the generator state, the vectors and the levels.
  uint32_t rng_size;
  std::memcpy(&rng_size, good.data() + 56, 4);
  const size_t links = 60 + rng_size + kHnswSize * kHnswDim * 4 + kHnswSize * 4;
  uint32_t degree;
  std::memcpy(&degree, good.data() + links, 4);
  ASSERT_GT(degree, 0u);
  std::string bad_link = good;
  const uint32_t out_of_range = kHnswSize + 3;
  std::memcpy(bad_link.data() + links + 4, &out_of_range, 4);
  expect_corrupt(reseal(bad_link), "links to 5003");
  std::string bad_degree = good;
  const uint32_t huge_degree = 1000;
  std::memcpy(bad_degree.data() + links, &huge_degree, 4);
  expect_corrupt(reseal(bad_degree), "degree 1000");
  std::string bad_count = good;
  const uint64_t huge_count = uint64_t{1} << 40;
  std::memcpy(bad_count.data() + 16, &huge_count, 8);
  expect_corrupt(reseal(bad_count), "does not fit");
  std::string bad_entry = good;
  const uint32_t entry = kHnswSize;
  std::memcpy(bad_entry.data() + 52, &entry, 4);
  expect_corrupt(reseal(bad_entry), "entry point");
}

TEST_F(HnswIndexTest, ConcurrentSearchMatchesSequential) {
  VectorSearchParams plain;
  VectorSearchParams filtered;
  filtered.filter = [](uint32_t id) { return id % 5 != 0; };
  filtered.ef_search = 64;
  const std::vector<const VectorIndex*> indexes = {hnsw_, flat_};
  for (const VectorIndex* index : indexes) {
    std::vector<std::vector<VectorHit>> want;
    for (size_t qi = 0; qi < queries_->rows; ++qi) {
      want.push_back(index->Search(queries_->row(qi), plain, nullptr));
      want.push_back(index->Search(queries_->row(qi), filtered, nullptr));
    }
    std::vector<int> mismatches(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (size_t i = 0; i < queries_->rows; ++i) {
          const size_t qi = (i * 7 + t * 13) % queries_->rows;  // different orders
          const auto a = index->Search(queries_->row(qi), plain, nullptr);
          const auto b = index->Search(queries_->row(qi), filtered, nullptr);
          if (Ids(a) != Ids(want[2 * qi]) || Ids(b) != Ids(want[2 * qi + 1])) ++mismatches[t];
        }
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << index->Kind() << " thread " << t;
  }
}

TEST(HnswIndexSmallTest, DeterministicForSeedAndBatchSplit) {
  const FloatMatrix data = Clustered(1200, 24, 10, 0.8f, 7);
  VectorIndexOptions options;
  options.hnsw_m = 8;
  options.hnsw_ef_construction = 64;
  options.seed = 1234;
  auto build = [&](std::vector<size_t> splits, size_t expected) {
    auto index = std::move(HnswIndex::Create(24, expected, options)).value();
    size_t start = 0;
    splits.push_back(data.rows);
    for (size_t end : splits) {
      FloatMatrix part(end - start, 24);
      std::copy(data.row(start), data.row(start) + (end - start) * 24, part.data.begin());
      EXPECT_TRUE(index->Add(part).ok());
      start = end;
    }
    std::string bytes;
    EXPECT_TRUE(index->Save(&bytes).ok());
    return bytes;
  };
  const std::string one = build({}, 1200);
  EXPECT_EQ(build({}, 1200), one);
  EXPECT_EQ(build({1, 500, 501, 1000}, 0), one);  // growth past expected_size
  options.seed = 99;
  EXPECT_NE(build({}, 1200), one);
  options.seed = 1234;

  // Load + Add continues exactly like an index that was never saved.
  auto first = std::move(HnswIndex::Create(24, 600, options)).value();
  FloatMatrix head(600, 24), tail(600, 24);
  std::copy(data.row(0), data.row(600), head.data.begin());
  std::copy(data.row(600), data.row(0) + 1200 * 24, tail.data.begin());
  ASSERT_TRUE(first->Add(head).ok());
  std::string saved;
  ASSERT_TRUE(first->Save(&saved).ok());
  auto resumed = std::move(HnswIndex::Load(saved)).value();
  ASSERT_TRUE(resumed->Add(tail).ok());
  std::string bytes;
  ASSERT_TRUE(resumed->Save(&bytes).ok());
  EXPECT_EQ(bytes, one);
}

TEST(HnswIndexSmallTest, TinyAndEmptyIndexes) {
  VectorIndexOptions options;
  auto index = std::move(HnswIndex::Create(5, 0, options)).value();
  const std::vector<float> q = {1, 0, 0, 0, 0};
  VectorSearchParams params;
  EXPECT_TRUE(index->Search(q.data(), params, nullptr).empty());
  std::string empty_bytes;
  ASSERT_TRUE(index->Save(&empty_bytes).ok());
  auto empty_copy = HnswIndex::Load(empty_bytes);
  ASSERT_TRUE(empty_copy.ok()) << empty_copy.status().ToString();
  EXPECT_EQ((*empty_copy)->Size(), 0u);

  FloatMatrix five(5, 5);
  for (size_t i = 0; i < 5; ++i) five.row(i)[i] = 1.0f;
  ASSERT_TRUE(index->Add(five).ok());
  params.k = 50;  // k > size: everything, best first
  const auto hits = index->Search(q.data(), params, nullptr);
  ASSERT_EQ(hits.size(), 5u);
  EXPECT_EQ(hits[0].id, 0u);
  EXPECT_EQ(hits[0].score, 1.0f);
  for (size_t i = 1; i < 5; ++i) EXPECT_EQ(hits[i].id, i);  // all 0: ascending ids
  ExpectRejectsBadRows(*index);
}

TEST(HnswIndexSmallTest, RejectsBadOptions) {
  VectorIndexOptions options;
  options.hnsw_m = 1;
  EXPECT_EQ(HnswIndex::Create(8, 10, options).status().code(), StatusCode::kInvalidArgument);
  options.hnsw_m = 16;
  options.hnsw_ef_construction = 0;
  EXPECT_EQ(HnswIndex::Create(8, 10, options).status().code(), StatusCode::kInvalidArgument);
  options.hnsw_ef_construction = 100;
  EXPECT_EQ(HnswIndex::Create(0, 10, options).status().code(), StatusCode::kInvalidArgument);
}

// ------------------------------------------------------------------ factory

TEST(MakeVectorIndexTest, ChoosesByKindAndThreshold) {
  VectorIndexOptions options;
  options.hnsw_threshold = 1000;
  auto small = MakeVectorIndex(32, 999, options);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ((*small)->Kind(), "flat");
  EXPECT_EQ((*small)->Dimension(), 32u);
  auto large = MakeVectorIndex(32, 1000, options);
  ASSERT_TRUE(large.ok());
  EXPECT_EQ((*large)->Kind(), "hnsw");
  // Sparse queries: int8 columns at the threshold, exact floats below.
  options.sparse_queries = true;
  EXPECT_EQ((*MakeVectorIndex(32, 999, options))->Kind(), "flat");
  EXPECT_EQ((*MakeVectorIndex(32, 1000, options))->Kind(), "flat-int8");
  EXPECT_FALSE(ChoosesHnsw(options, 1000));
  EXPECT_TRUE(ChoosesInt8Columns(options, 1000));
  options.sparse_queries = false;
  options.kind = "flat";
  EXPECT_EQ((*MakeVectorIndex(32, 1 << 20, options))->Kind(), "flat");
  options.kind = "flat-int8";
  EXPECT_EQ((*MakeVectorIndex(32, 3, options))->Kind(), "flat-int8");
  options.kind = "hnsw";
  EXPECT_EQ((*MakeVectorIndex(32, 3, options))->Kind(), "hnsw");

  // Both kinds answer the same small query the same way.
  const FloatMatrix data = RandomNormalised(200, 32, 8);
  std::vector<std::vector<uint32_t>> answers;
  for (const char* kind : {"flat", "hnsw"}) {
    options.kind = kind;
    auto index = std::move(MakeVectorIndex(32, 200, options)).value();
    ASSERT_TRUE(index->Add(data).ok());
    VectorSearchParams params;
    params.k = 5;
    answers.push_back(Ids(index->Search(data.row(17), params, nullptr)));
  }
  EXPECT_EQ(answers[0], answers[1]);
  EXPECT_EQ(answers[0][0], 17u);
}

TEST(MakeVectorIndexTest, RejectsBadArguments) {
  VectorIndexOptions options;
  options.kind = "faiss";
  auto bad_kind = MakeVectorIndex(16, 10, options);
  ASSERT_FALSE(bad_kind.ok());
  EXPECT_EQ(bad_kind.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_kind.status().message().find("\"faiss\""), std::string::npos);
  EXPECT_NE(bad_kind.status().message().find("\"auto\", \"flat\", \"flat-int8\", \"hnsw\" or \"sparse\""), std::string::npos);
  options.kind = "flat";
  auto zero_dim = MakeVectorIndex(0, 10, options);
  ASSERT_FALSE(zero_dim.ok());
  EXPECT_EQ(zero_dim.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(zero_dim.status().message().find("dim"), std::string::npos);
  options.kind = "hnsw";
  options.hnsw_m = 0;
  EXPECT_EQ(MakeVectorIndex(16, 10, options).status().code(), StatusCode::kInvalidArgument);
}

// SparseIndex built from sparse rows (how snapshots build it) equals one
// built by Add() from dense rows, returns its rows again, and rebuilt from
// its own arrays (how a persisted snapshot loads it) searches identically.
TEST(SparseIndexTest, RowsArraysAndAddAgree) {
  const size_t d = 64;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  FloatMatrix data(500, d);
  for (size_t r = 0; r < data.rows; ++r) {
    for (int i = 0; i < 5; ++i) data.row(r)[rng() % d] = u(rng);
  }
  const SparseRows rows = SparseRows::FromMatrix(data);
  auto a = SparseIndex::FromRows(rows);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  SparseIndex b(d);
  ASSERT_TRUE(b.Add(FloatMatrix(0, d)).ok());
  FloatMatrix first(200, d), second(300, d);
  std::copy_n(data.data.begin(), 200 * d, first.data.begin());
  std::copy(data.data.begin() + 200 * d, data.data.end(), second.data.begin());
  ASSERT_TRUE(b.Add(first).ok());
  ASSERT_TRUE(b.Add(second).ok());
  EXPECT_EQ((*a)->NonZeros(), rows.nonzeros());
  EXPECT_EQ(b.NonZeros(), rows.nonzeros());
  const SparseRows back = (*a)->Rows();
  EXPECT_EQ(back.offsets, rows.offsets);
  EXPECT_EQ(back.dims, rows.dims);
  EXPECT_EQ(back.values, rows.values);
  auto c = SparseIndex::FromArrays(d, (*a)->Size(), {(*a)->offsets().begin(), (*a)->offsets().end()},
                                   {(*a)->deltas().begin(), (*a)->deltas().end()},
                                   {(*a)->values().begin(), (*a)->values().end()});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> q(d, 0.0f);
    for (int i = 0; i < 1 + trial % 10; ++i) q[rng() % d] = u(rng);
    VectorSearchParams params;
    params.k = 15;
    const auto x = (*a)->Search(q.data(), params, nullptr);
    for (const VectorIndex* other : {static_cast<const VectorIndex*>(&b),
                                     static_cast<const VectorIndex*>(c->get())}) {
      const auto y = other->Search(q.data(), params, nullptr);
      ASSERT_EQ(x.size(), y.size());
      for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_EQ(x[i].id, y[i].id) << trial;
        EXPECT_EQ(x[i].score, y[i].score) << trial;
      }
    }
  }
}

// Gaps of 65,535 ids or more between the vectors of one dimension take skip
// entries; ids, scores and rows stay exact.
TEST(SparseIndexTest, LargeIdGapsAreBridged) {
  const size_t d = 8, n = 200000;
  SparseRows rows;
  rows.cols = d;
  std::vector<float> dense(d);
  // Gaps: 65,535 exactly (a skip, then delta 0) and 65,536 (a skip, then 1).
  const std::set<size_t> with_dim0 = {0, 1, 65536, 65537, 131073, 131074, 199999};
  for (size_t r = 0; r < n; ++r) {
    std::fill(dense.begin(), dense.end(), 0.0f);
    if (with_dim0.count(r)) dense[0] = 1.0f + static_cast<float>(r) * 1e-6f;
    dense[1 + r % 7] = 0.5f;
    rows.Append(dense.data());
  }
  auto index = SparseIndex::FromRows(rows);
  ASSERT_TRUE(index.ok());
  EXPECT_EQ((*index)->NonZeros(), rows.nonzeros());
  EXPECT_GT((*index)->offsets()[1], with_dim0.size());  // skip entries exist
  std::vector<float> q(d, 0.0f);
  q[0] = 1.0f;
  VectorSearchParams params;
  params.k = 8;
  params.min_score = 0.5f;
  const auto hits = (*index)->Search(q.data(), params, nullptr);
  ASSERT_EQ(hits.size(), with_dim0.size());
  std::set<size_t> got;
  for (const VectorHit& h : hits) {
    got.insert(h.id);
    EXPECT_EQ(h.score, 1.0f + static_cast<float>(h.id) * 1e-6f);
  }
  EXPECT_EQ(got, with_dim0);
  const SparseRows back = (*index)->Rows();
  EXPECT_EQ(back.dims, rows.dims);
  EXPECT_EQ(back.values, rows.values);
}

// The two-pass builder refuses rows out of order or range, and a second pass
// that differs from the first, instead of writing past a list.
TEST(SparseIndexTest, TwoPassBuilderRefusesPassesThatDisagree) {
  const std::vector<uint32_t> row0 = {1, 3}, row1 = {0, 3};
  const std::vector<float> v = {0.5f, 0.25f};
  {
    SparseIndex::TwoPassBuilder b(4);
    EXPECT_EQ(b.CountRow(std::vector<uint32_t>{3, 1}).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(b.CountRow(std::vector<uint32_t>{4}).code(), StatusCode::kInvalidArgument);
  }
  {
    SparseIndex::TwoPassBuilder b(4);
    ASSERT_TRUE(b.CountRow(row0).ok());
    ASSERT_TRUE(b.CountRow(row1).ok());
    ASSERT_TRUE(b.FillRow(row0, v).ok());
    EXPECT_EQ(b.FillRow(row0, v).code(), StatusCode::kInternal);  // dimension 1 twice
  }
  {
    SparseIndex::TwoPassBuilder b(4);
    ASSERT_TRUE(b.CountRow(row0).ok());
    ASSERT_TRUE(b.CountRow(row1).ok());
    ASSERT_TRUE(b.FillRow(row0, v).ok());
    EXPECT_EQ(b.Finish().status().code(), StatusCode::kInternal);  // a row short
  }
  {
    SparseIndex::TwoPassBuilder b(4);
    ASSERT_TRUE(b.CountRow(row0).ok());
    ASSERT_TRUE(b.FillRow(row0, std::vector<float>{0.5f, NAN}).code() ==
                StatusCode::kInvalidArgument);
  }
  SparseIndex::TwoPassBuilder b(4);
  ASSERT_TRUE(b.CountRow(row0).ok());
  ASSERT_TRUE(b.CountRow(row1).ok());
  ASSERT_TRUE(b.FillRow(row0, v).ok());
  ASSERT_TRUE(b.FillRow(row1, v).ok());
  auto index = b.Finish();
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ((*index)->Size(), 2u);
  EXPECT_EQ((*index)->NonZeros(), 4u);
  const SparseRows rows = (*index)->Rows();
  EXPECT_EQ(rows.dims, FlatArray<uint32_t>(std::vector<uint32_t>{1, 3, 0, 3}));
}

TEST(SparseIndexTest, DamagedArraysAreRefused) {
  SparseRows rows;
  rows.cols = 4;
  const float r0[] = {0.5f, 0, 0, 0.5f}, r1[] = {0, 1, 0, 0}, r2[] = {0.5f, 0, 0.5f, 0};
  for (const float* r : {r0, r1, r2}) rows.Append(r);
  auto a = SparseIndex::FromRows(rows);
  ASSERT_TRUE(a.ok());
  auto arrays = [&] {
    return std::make_tuple(std::vector<uint64_t>((*a)->offsets().begin(), (*a)->offsets().end()),
                           std::vector<uint16_t>((*a)->deltas().begin(), (*a)->deltas().end()),
                           std::vector<float>((*a)->values().begin(), (*a)->values().end()));
  };
  auto refused = [](size_t dim, size_t size, std::tuple<std::vector<uint64_t>, std::vector<uint16_t>,
                                                        std::vector<float>> t) {
    auto r = SparseIndex::FromArrays(dim, size, std::get<0>(t), std::get<1>(t), std::get<2>(t));
    return !r.ok() && r.status().code() == StatusCode::kCorruption;
  };
  EXPECT_FALSE(refused(4, 3, arrays()));
  EXPECT_TRUE(refused(4, 2, arrays()));  // id 2 out of range
  EXPECT_TRUE(refused(5, 3, arrays()));  // wrong number of offsets
  auto t = arrays();
  std::get<1>(t)[1] = 0;  // dimension 0: ids 0, 0: not ascending
  EXPECT_TRUE(refused(4, 3, t));
  t = arrays();
  std::get<2>(t)[0] = std::nanf("");
  EXPECT_TRUE(refused(4, 3, t));
  t = arrays();
  std::get<0>(t)[2] = 100;  // offsets past the entries
  EXPECT_TRUE(refused(4, 3, t));
  // Rows with unsorted or out-of-range dimensions are refused as input.
  SparseRows bad = rows;
  std::swap(bad.dims.Mutable()[0], bad.dims.Mutable()[1]);
  EXPECT_FALSE(SparseIndex::FromRows(bad).ok());
  bad = rows;
  bad.dims.Mutable()[0] = 9;
  EXPECT_FALSE(SparseIndex::FromRows(bad).ok());
}

TEST(FlatIndexTest, FromMatrixAdoptsTheRowsAndSearchesAsAdd) {
  FloatMatrix m = RandomNormalised(300, 32, 5);
  const FloatMatrix copy = m;
  FlatIndex added(32);
  ASSERT_TRUE(added.Add(copy).ok());
  auto adopted = FlatIndex::FromMatrix(std::move(m));
  ASSERT_TRUE(adopted.ok());
  EXPECT_EQ((*adopted)->matrix().data, copy.data);
  EXPECT_EQ((*adopted)->Size(), 300u);
  EXPECT_EQ(std::memcmp((*adopted)->FloatRow(17), copy.row(17), 32 * sizeof(float)), 0);
  const FloatMatrix queries = RandomNormalised(5, 32, 6);
  for (size_t i = 0; i < queries.rows; ++i) {
    VectorSearchParams params;
    params.k = 7;
    const auto x = added.Search(queries.row(i), params, nullptr);
    const auto y = (*adopted)->Search(queries.row(i), params, nullptr);
    ASSERT_EQ(x.size(), y.size());
    for (size_t j = 0; j < x.size(); ++j) {
      EXPECT_EQ(x[j].id, y[j].id);
      EXPECT_EQ(x[j].score, y[j].score);
    }
  }
  FloatMatrix bad(2, 4);
  bad.data[3] = std::nanf("");
  EXPECT_FALSE(FlatIndex::FromMatrix(std::move(bad)).ok());
  // Adding after adoption keeps ids dense.
  ASSERT_TRUE((*adopted)->Add(RandomNormalised(3, 32, 7)).ok());
  EXPECT_EQ((*adopted)->Size(), 303u);
  EXPECT_EQ((*adopted)->matrix().rows, 303u);
}

// Remap(FromRows(old_rows), old_of_new, fresh) holds the arrays of FromRows
// over the rows old_of_new gathers.
void ExpectRemapEqualsFromRows(const SparseRows& old_rows, const std::vector<int64_t>& old_of_new,
                               const SparseRows& fresh) {
  auto old = SparseIndex::FromRows(old_rows);
  ASSERT_TRUE(old.ok());
  SparseRows gathered;
  gathered.cols = old_rows.cols;
  size_t next_fresh = 0;
  for (int64_t o : old_of_new) {
    if (o >= 0) {
      gathered.AppendRow(old_rows, static_cast<size_t>(o));
    } else {
      gathered.AppendRow(fresh, next_fresh++);
    }
  }
  auto want = SparseIndex::FromRows(gathered);
  auto got = SparseIndex::Remap(**old, old_of_new, fresh);
  ASSERT_TRUE(want.ok() && got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)->Size(), old_of_new.size());
  EXPECT_EQ((*got)->NonZeros(), (*want)->NonZeros());
  EXPECT_TRUE(std::ranges::equal((*got)->offsets(), (*want)->offsets()));
  EXPECT_TRUE(std::ranges::equal((*got)->deltas(), (*want)->deltas()));
  EXPECT_TRUE(std::ranges::equal((*got)->values(), (*want)->values()));
}

// Remap (how a snapshot keeps an earlier one's vectors after a write):
// dropping, repeating and reordering old vectors and adding fresh rows gives
// the arrays FromRows builds from those rows.
TEST(SparseIndexTest, RemapEqualsFromRowsOfTheGatheredRows) {
  const size_t d = 48;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  auto random_rows = [&](size_t n) {
    FloatMatrix m(n, d);
    for (size_t r = 0; r < n; ++r) {
      for (int i = 0; i < 4; ++i) m.row(r)[rng() % d] = u(rng);
    }
    return SparseRows::FromMatrix(m);
  };
  const SparseRows old_rows = random_rows(300), fresh = random_rows(40);
  auto old = SparseIndex::FromRows(old_rows);
  ASSERT_TRUE(old.ok());
  // Drop every third, repeat a few, shuffle, and interleave 40 fresh ones.
  std::vector<int64_t> old_of_new;
  for (int64_t o = 0; o < 300; ++o) {
    if (o % 3 != 0) old_of_new.push_back(o);
  }
  old_of_new.push_back(7);
  old_of_new.push_back(7);
  std::shuffle(old_of_new.begin(), old_of_new.end(), rng);
  for (int i = 0; i < 40; ++i) old_of_new.insert(old_of_new.begin() + (rng() % old_of_new.size()), -1);
  ExpectRemapEqualsFromRows(old_rows, old_of_new, fresh);
  // Bad references are refused.
  std::vector<int64_t> bad = {0, 300};
  EXPECT_FALSE(SparseIndex::Remap(**old, bad, SparseRows{}).ok());
  std::vector<int64_t> missing_fresh = {0, -1};
  SparseRows none;
  none.cols = d;
  EXPECT_FALSE(SparseIndex::Remap(**old, missing_fresh, none).ok());
}

// An insert's remapping: the earlier vectors kept in place (all, or all but
// the last ones) and fresh rows after them. Lists with gaps of 65,535 ids
// and more (skip entries) before, across and after the cut.
TEST(SparseIndexTest, RemapThatKeepsAPrefixAndAppendsEqualsFromRows) {
  const size_t d = 16, n = 140000;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.1f, 1);
  auto rows_with = [&](size_t count, size_t sparse_every) {
    FloatMatrix m(count, d);
    for (size_t r = 0; r < count; ++r) {
      m.row(r)[rng() % 8] = u(rng);                         // dense lists
      if (r % sparse_every == 3) m.row(r)[8] = u(rng);  // far apart: skip entries
    }
    return SparseRows::FromMatrix(m);
  };
  const SparseRows old_rows = rows_with(n, 70001), fresh = rows_with(90000, 66000);
  for (size_t kept : {size_t{0}, size_t{1}, size_t{70004}, n - 1000, n}) {
    SCOPED_TRACE(kept);
    std::vector<int64_t> old_of_new;
    for (size_t i = 0; i < kept; ++i) old_of_new.push_back(static_cast<int64_t>(i));
    old_of_new.resize(kept + fresh.rows(), -1);
    ExpectRemapEqualsFromRows(old_rows, old_of_new, fresh);
  }
  // No fresh rows: the prefix alone.
  SparseRows none;
  none.cols = d;
  std::vector<int64_t> prefix(n / 2);
  std::iota(prefix.begin(), prefix.end(), int64_t{0});
  ExpectRemapEqualsFromRows(old_rows, prefix, none);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
