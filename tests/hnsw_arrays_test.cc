// The HNSW index's arrays out and back in place (HnswIndex::ExportArrays /
// AdoptArrays through MemoryArrays): the adopted index searches hit for hit
// and score for score as the built one (with and without a filter, several
// M and ef) and as hnswlib's own searchKnn where hnsw_index.h says they
// agree, reads its vectors in place, exports the same arrays again, converts
// back into an hnswlib index that Save()s the same bytes and continues Add()
// alike; every missing, retyped, truncated or inconsistent array is refused
// with NotFound or Corruption naming it, and random damage never crashes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/array_io.h"
#include "random_vectors.h"
#include "vector/hnsw_index.h"
#include "vector/index_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

constexpr char kPrefix[] = "dense";

std::unique_ptr<HnswIndex> Built(const FloatMatrix& vectors, size_t m) {
  VectorIndexOptions options;
  options.hnsw_m = m;
  options.hnsw_ef_construction = 64;
  options.seed = 7 + m;
  auto index = HnswIndex::Create(vectors.cols, vectors.rows, options);
  EXPECT_TRUE(index.ok());
  EXPECT_TRUE((*index)->Add(vectors).ok());
  return std::move(index).value();
}

// Every array put, by name (kind and bytes), forwarded to `out` except
// `drop`; `retype` forwarded as bytes of another element type.
class RecordingSink final : public ArraySink {
 public:
  struct Array {
    ArrayKind kind;
    size_t element_size;
    std::vector<std::byte> bytes;
  };
  explicit RecordingSink(ArraySink* out, std::string drop = "", std::string retype = "")
      : out_(out), drop_(std::move(drop)), retype_(std::move(retype)) {}
  Status PutBytes(std::string_view name, ArrayKind kind, size_t element_size,
                  std::span<const std::byte> bytes, bool random) override {
    EXPECT_LE(name.size(), 31u) << name;
    EXPECT_TRUE(name.starts_with("dense.h")) << name;
    EXPECT_TRUE(
        arrays_.emplace(std::string(name), Array{kind, element_size, {bytes.begin(), bytes.end()}})
            .second)
        << name;
    if (out_ == nullptr || name == drop_) return Status::Ok();
    if (name == retype_) {
      const ArrayKind other = kind == ArrayKind::kU8 ? ArrayKind::kI8 : ArrayKind::kU8;
      return out_->PutBytes(name, other, 1, bytes, random);
    }
    return out_->PutBytes(name, kind, element_size, bytes, random);
  }
  const std::map<std::string, Array>& arrays() const { return arrays_; }

 private:
  ArraySink* out_;
  std::string drop_, retype_;
  std::map<std::string, Array> arrays_;
};

std::map<std::string, RecordingSink::Array> Exported(const HnswIndex& index) {
  RecordingSink sink(nullptr);
  EXPECT_TRUE(index.ExportArrays(sink, kPrefix).ok());
  return sink.arrays();
}

std::vector<std::string> Names(const HnswIndex& index) {
  std::vector<std::string> names;
  for (const auto& [name, array] : Exported(index)) names.push_back(name);
  return names;
}

void ExpectSameHits(const std::vector<VectorHit>& a, const std::vector<VectorHit>& b,
                    const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, b[i].id) << what << " hit " << i;
    EXPECT_EQ(a[i].score, b[i].score) << what << " hit " << i;
  }
}

class HnswArraysTest : public ::testing::TestWithParam<size_t> {};

TEST_P(HnswArraysTest, AdoptedSearchesAsBuilt) {
  const size_t m = GetParam();
  const FloatMatrix vectors = RandomVectors(3000, 24, 11);
  const FloatMatrix queries = RandomVectors(40, 24, 12);
  std::unique_ptr<HnswIndex> built = Built(vectors, m);
  MemoryArrays arrays;
  ASSERT_TRUE(built->ExportArrays(arrays, kPrefix).ok());
  ASSERT_TRUE(HnswIndex::HasArrays(arrays, kPrefix));
  auto adopted = HnswIndex::AdoptArrays(arrays, kPrefix);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  const HnswArraysIndex& a = **adopted;
  EXPECT_EQ(a.Size(), built->Size());
  EXPECT_EQ(a.Dimension(), built->Dimension());
  EXPECT_EQ(a.Kind(), "hnsw");
  EXPECT_EQ(a.m(), built->m());
  EXPECT_EQ(a.ef_construction(), built->ef_construction());
  EXPECT_EQ(a.seed(), built->seed());
  for (size_t ef : {1, 10, 50, 200}) {
    for (size_t k : {1, 10, 40}) {
      VectorSearchParams params;
      params.k = k;
      params.ef_search = ef;
      VectorSearchParams filtered = params;
      filtered.filter = [](uint32_t id) { return id % 7 == 2; };
      for (size_t q = 0; q < queries.rows; ++q) {
        const std::string what = "M " + std::to_string(m) + " ef " + std::to_string(ef) + " k " +
                                 std::to_string(k) + " query " + std::to_string(q);
        VectorSearchStats sa, sb;
        const auto ours = a.Search(queries.row(q), params, &sa);
        ExpectSameHits(ours, built->Search(queries.row(q), params, &sb), what);
        EXPECT_EQ(sa.candidates_scored, sb.candidates_scored) << what;
        EXPECT_EQ(ours.size(), k) << what;
        ExpectSameHits(ours, built->SearchWithHnswlibForTesting(queries.row(q), k, std::max(ef, k)),
                       what + " (hnswlib)");
        const auto with_filter = a.Search(queries.row(q), filtered, nullptr);
        ExpectSameHits(with_filter, built->Search(queries.row(q), filtered, nullptr),
                       what + " filtered");
        for (const VectorHit& hit : with_filter) EXPECT_EQ(hit.id % 7, 2u) << what;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(M, HnswArraysTest, ::testing::Values(2, 4, 8, 16));

TEST(HnswArraysRoundTripTest, VectorsInPlaceSameArraysSameSaveAndAddContinues) {
  const FloatMatrix vectors = RandomVectors(1200, 16, 21);
  const FloatMatrix more = RandomVectors(300, 16, 22);
  std::unique_ptr<HnswIndex> built = Built(vectors, 6);
  std::unique_ptr<HnswArraysIndex> adopted;
  const auto exported = Exported(*built);
  {
    MemoryArrays arrays;
    ASSERT_TRUE(built->ExportArrays(arrays, kPrefix).ok());
    auto a = HnswIndex::AdoptArrays(arrays, kPrefix);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    adopted = std::move(a).value();
    // Vectors read in place, bit for bit.
    const std::span<std::byte> hvec = arrays.MutableBytes("dense.hvec");
    for (uint32_t i = 0; i < built->Size(); ++i) {
      const auto* p = reinterpret_cast<const std::byte*>(adopted->Vector(i));
      EXPECT_TRUE(p >= hvec.data() && p < hvec.data() + hvec.size());
      ASSERT_EQ(std::memcmp(adopted->Vector(i), built->Vector(i), 16 * sizeof(float)), 0) << i;
    }
  }  // the adopted index outlives the arrays' owner
  EXPECT_GT(adopted->MemoryBytes(), 1200u * 16 * 4);
  // The same arrays again.
  RecordingSink again(nullptr);
  ASSERT_TRUE(adopted->ExportArrays(again, kPrefix).ok());
  ASSERT_EQ(again.arrays().size(), exported.size());
  for (const auto& [name, array] : exported) {
    ASSERT_TRUE(again.arrays().count(name)) << name;
    EXPECT_EQ(again.arrays().at(name).kind, array.kind) << name;
    EXPECT_EQ(again.arrays().at(name).bytes, array.bytes) << name;
  }
  // Back into hnswlib: the same Save bytes, and Add continues alike.
  EXPECT_EQ(adopted->Add(more).code(), StatusCode::kFailedPrecondition);
  auto converted = adopted->ToHnswIndex();
  ASSERT_TRUE(converted.ok()) << converted.status().ToString();
  std::string a_bytes, b_bytes;
  ASSERT_TRUE(built->Save(&b_bytes).ok());
  ASSERT_TRUE((*converted)->Save(&a_bytes).ok());
  EXPECT_EQ(a_bytes, b_bytes);
  ASSERT_TRUE(built->Add(more).ok());
  ASSERT_TRUE((*converted)->Add(more).ok());
  ASSERT_TRUE(built->Save(&b_bytes).ok());
  ASSERT_TRUE((*converted)->Save(&a_bytes).ok());
  EXPECT_EQ(a_bytes, b_bytes);
}

TEST(HnswArraysRoundTripTest, EmptyIndex) {
  VectorIndexOptions options;
  auto built = HnswIndex::Create(8, 0, options);
  ASSERT_TRUE(built.ok());
  MemoryArrays arrays;
  ASSERT_TRUE((*built)->ExportArrays(arrays, kPrefix).ok());
  auto a = HnswIndex::AdoptArrays(arrays, kPrefix);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)->Size(), 0u);
  const std::vector<float> query(8, 0.5f);
  EXPECT_TRUE((*a)->Search(query.data(), VectorSearchParams{}, nullptr).empty());
  auto converted = (*a)->ToHnswIndex();
  ASSERT_TRUE(converted.ok()) << converted.status().ToString();
  EXPECT_EQ((*converted)->Size(), 0u);
}

TEST(HnswArraysRoundTripTest, LongPrefixIsInvalidArgument) {
  std::unique_ptr<HnswIndex> built = Built(RandomVectors(10, 4, 1), 4);
  MemoryArrays arrays;
  EXPECT_EQ(built->ExportArrays(arrays, std::string(24, 'p')).code(), StatusCode::kInvalidArgument);
}

class HnswArraysDamageTest : public ::testing::Test {
 protected:
  static constexpr size_t kM = 4;
  void SetUp() override {
    vectors_ = RandomVectors(500, 8, 31);
    built_ = Built(vectors_, kM);
    Reset();
  }
  void Reset() {
    arrays_ = MemoryArrays();
    ASSERT_TRUE(built_->ExportArrays(arrays_, kPrefix).ok());
  }
  template <class T>
  std::span<T> Elements(const std::string& name) {
    const std::span<std::byte> bytes = arrays_.MutableBytes(name);
    EXPECT_FALSE(bytes.empty()) << name;
    return {reinterpret_cast<T*>(bytes.data()), bytes.size() / sizeof(T)};
  }
  // Adoption refused with Corruption naming `name`; the arrays restored.
  void ExpectRefused(const std::string& name, const std::string& what) {
    auto a = HnswIndex::AdoptArrays(arrays_, kPrefix);
    ASSERT_FALSE(a.ok()) << what << " of " << name;
    EXPECT_EQ(a.status().code(), StatusCode::kCorruption) << what << ": " << a.status().ToString();
    EXPECT_NE(a.status().message().find(name), std::string::npos)
        << what << ": " << a.status().ToString();
    Reset();
  }
  size_t stride() const { return 2 * kM + 1; }

  FloatMatrix vectors_;
  std::unique_ptr<HnswIndex> built_;
  MemoryArrays arrays_;
};

TEST_F(HnswArraysDamageTest, MissingArraysAreNotFoundAndRetypedOnesCorrupt) {
  const std::vector<std::string> names = Names(*built_);
  ASSERT_EQ(names.size(), 8u);
  for (const std::string& name : names) {
    for (bool drop : {true, false}) {
      MemoryArrays arrays;
      RecordingSink sink(&arrays, drop ? name : "", drop ? "" : name);
      ASSERT_TRUE(built_->ExportArrays(sink, kPrefix).ok());
      auto a = HnswIndex::AdoptArrays(arrays, kPrefix);
      ASSERT_FALSE(a.ok()) << (drop ? "without " : "retyped ") << name;
      EXPECT_EQ(a.status().code(), drop ? StatusCode::kNotFound : StatusCode::kCorruption)
          << a.status().ToString();
      EXPECT_NE(a.status().message().find(name), std::string::npos) << a.status().ToString();
    }
  }
}

// Every array but the level generator's state (text whose shorter form may
// still parse; checked when converted) one element short.
TEST_F(HnswArraysDamageTest, TruncatedArraysAreCorrupt) {
  const auto exported = Exported(*built_);
  for (const auto& [name, array] : exported) {
    if (name == "dense.hrng") continue;
    ASSERT_GE(array.bytes.size(), array.element_size) << name;
    const std::vector<std::byte> shorter(
        array.bytes.begin(), array.bytes.end() - static_cast<ptrdiff_t>(array.element_size));
    ASSERT_TRUE(arrays_.Replace(name, shorter).ok()) << name;
    ExpectRefused(name, "truncated");
  }
}

TEST_F(HnswArraysDamageTest, BadParametersAndEntryPointAreCorrupt) {
  const uint64_t count = built_->Size();
  const std::vector<std::pair<size_t, uint64_t>> bad = {{0, 0},
                                                        {0, uint64_t{1} << 40},
                                                        {1, uint64_t{1} << 40},
                                                        {2, 1},
                                                        {2, 20000},
                                                        {3, 0},
                                                        {5, 66},
                                                        {5, 0},
                                                        {6, count},
                                                        {6, 0xFFFFFFFFu},
                                                        {6, uint64_t{1} << 33}};
  for (const auto& [field, value] : bad) {
    Elements<uint64_t>("dense.hparams")[field] = value;
    ExpectRefused("dense.hparams",
                  "field " + std::to_string(field) + " = " + std::to_string(value));
  }
  // An entry point below the top level.
  const std::span<uint8_t> levels = Elements<uint8_t>("dense.hlevel");
  const uint64_t top = Elements<uint64_t>("dense.hparams")[5] - 1;
  ASSERT_GT(top, 0u);
  const auto low = std::find(levels.begin(), levels.end(), uint8_t{0});
  ASSERT_NE(low, levels.end());
  Elements<uint64_t>("dense.hparams")[6] = static_cast<uint64_t>(low - levels.begin());
  ExpectRefused("dense.hparams", "entry point on level 0");
  // A stored max level above every vector's.
  Elements<uint64_t>("dense.hparams")[5] = top + 2;
  ExpectRefused("dense.hparams", "max level above the vectors'");
}

TEST_F(HnswArraysDamageTest, LevelsOutOfRangeAreCorrupt) {
  Elements<uint8_t>("dense.hlevel")[3] = 65;
  ExpectRefused("dense.hlevel", "level 65");
  // A vector with more levels than its upper lists.
  const std::span<uint8_t> levels = Elements<uint8_t>("dense.hlevel");
  const auto low = std::find(levels.begin(), levels.end(), uint8_t{0});
  ASSERT_NE(low, levels.end());
  *low = 1;
  ExpectRefused("dense.hupn", "a level without its list");
}

TEST_F(HnswArraysDamageTest, Level0IdsAndDegreesAreChecked) {
  const size_t count = built_->Size();
  Elements<uint32_t>("dense.hl0")[5 * stride()] = 2 * kM + 1;
  ExpectRefused("dense.hl0", "degree above 2M");
  ASSERT_GT(Elements<uint32_t>("dense.hl0")[5 * stride()], 0u);
  Elements<uint32_t>("dense.hl0")[5 * stride() + 1] = static_cast<uint32_t>(count);
  ExpectRefused("dense.hl0", "id out of range");
  Elements<uint32_t>("dense.hl0")[5 * stride() + 1] = 5;
  ExpectRefused("dense.hl0", "a link to itself");
}

TEST_F(HnswArraysDamageTest, UpperIdsDegreesAndOffsetsAreChecked) {
  const size_t count = built_->Size();
  const std::span<uint32_t> targets = Elements<uint32_t>("dense.hupt");
  ASSERT_FALSE(targets.empty());
  targets[0] = static_cast<uint32_t>(count);
  ExpectRefused("dense.hupt", "id out of range");
  // A link on level 1 to a vector on level 0.
  const std::span<uint8_t> levels = Elements<uint8_t>("dense.hlevel");
  const auto low = std::find(levels.begin(), levels.end(), uint8_t{0});
  ASSERT_NE(low, levels.end());
  Elements<uint32_t>("dense.hupt")[0] = static_cast<uint32_t>(low - levels.begin());
  ExpectRefused("dense.hupt", "a link below the list's level");
  // Two lists merged into one of degree above M (the first emptied).
  const std::span<uint64_t> offsets = Elements<uint64_t>("dense.hupo");
  size_t merged = 0;
  for (size_t j = 1; j + 1 < offsets.size() && merged == 0; ++j) {
    if (offsets[j + 1] - offsets[j - 1] > kM) merged = j;
  }
  ASSERT_GT(merged, 0u);
  offsets[merged] = offsets[merged - 1];
  ExpectRefused("dense.hupo", "degree above M");
  Elements<uint64_t>("dense.hupo")[1] = Elements<uint64_t>("dense.hupo")[2] + 1;
  ExpectRefused("dense.hupo", "decreasing offsets");
  Elements<uint64_t>("dense.hupn")[1] += 1;
  ExpectRefused("dense.hupn", "a vector with lists beyond its level");
}

// Random bits of random arrays flipped: the index is refused, or adopted
// and searches, reads its vectors and converts within its arrays (the
// sanitizer build checks).
TEST_F(HnswArraysDamageTest, RandomDamageIsRefusedOrReadable) {
  const std::vector<std::string> names = Names(*built_);
  const FloatMatrix queries = RandomVectors(4, 8, 32);
  std::mt19937 rng(34);
  size_t refused = 0;
  for (int round = 0; round < 1500; ++round) {
    MemoryArrays arrays;
    ASSERT_TRUE(built_->ExportArrays(arrays, kPrefix).ok());
    for (int hits = 1 + static_cast<int>(rng() % 3); hits > 0; --hits) {
      std::span<std::byte> bytes = arrays.MutableBytes(names[rng() % names.size()]);
      if (bytes.empty()) continue;
      bytes[rng() % bytes.size()] ^= static_cast<std::byte>(1u << (rng() % 8));
    }
    auto a = HnswIndex::AdoptArrays(arrays, kPrefix);
    if (!a.ok()) {
      EXPECT_EQ(a.status().code(), StatusCode::kCorruption) << a.status().ToString();
      ++refused;
      continue;
    }
    const HnswArraysIndex& index = **a;
    VectorSearchParams params;
    params.ef_search = 20;
    for (size_t q = 0; q < queries.rows; ++q) {
      EXPECT_LE(index.Search(queries.row(q), params, nullptr).size(), params.k);
    }
    float sum = 0;
    for (uint32_t i = 0; i < index.Size(); ++i) sum += index.Vector(i)[0];
    (void)sum;
    auto converted = index.ToHnswIndex();
    if (!converted.ok()) {
      EXPECT_EQ(converted.status().code(), StatusCode::kCorruption);
    }
  }
  RecordProperty("refused", static_cast<int>(refused));
  // Damage to a vector's bits or a neighbour's order need not be caught;
  // to a level, degree, offset or parameter mostly is.
  EXPECT_GT(refused, 300u);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
