// Stored vectors as float16 (storage/vector_blob.h, store format 7): the
// encoding, its fallback to floats, the decoding of what older builds wrote,
// and a format-6 store's float rows read as the float16 rows a new index run
// would write.
#include "storage/vector_blob.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/half.h"
#include "sqldb/connection.h"
#include "storage/store.h"
#include "store_docs.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

std::vector<float> RandomUnitVector(size_t d, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> x(d);
  double norm = 0;
  for (float& v : x) {
    v = normal(rng);
    norm += double{v} * v;
  }
  for (float& v : x) v = static_cast<float>(v / std::sqrt(norm));
  return x;
}

std::vector<float> Decoded(std::string_view blob, size_t d) {
  std::vector<float> out(d, -7.0f);
  EXPECT_TRUE(DecodeVectorBlob(blob, d, out.data())) << blob.size() << " bytes";
  return out;
}

std::string FloatBytes(const std::vector<float>& x) {
  return std::string(reinterpret_cast<const char*>(x.data()), x.size() * sizeof(float));
}

TEST(VectorBlobTest, AVectorThatFitsIsStoredAsFloat16AndReadRounded) {
  const std::vector<float> x = RandomUnitVector(1024, 1);
  const std::string blob = EncodeVectorBlob(x.data(), x.size());
  ASSERT_EQ(blob.size(), 2 * x.size());
  const std::vector<float> back = Decoded(blob, x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(back[i], HalfToFloat(FloatToHalf(x[i]))) << i;
    // 11 significant bits: within 2^-11 relative (2^-24 absolute for subnormals).
    ASSERT_LE(std::fabs(back[i] - x[i]), std::max(std::fabs(x[i]) * 0x1p-11f, 0x1p-24f)) << i;
  }
}

TEST(VectorBlobTest, AVectorThatDoesNotFitKeepsItsFloats) {
  for (float big : {65520.0f, -1e6f, std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()}) {
    std::vector<float> x = {0.25f, 0.1f, big, -3.0f};
    const std::string blob = EncodeVectorBlob(x.data(), x.size());
    ASSERT_EQ(blob, FloatBytes(x)) << big;
    const std::vector<float> back = Decoded(blob, x.size());
    EXPECT_EQ(std::memcmp(back.data(), x.data(), x.size() * sizeof(float)), 0) << big;
  }
  const std::vector<float> edge = {65504.0f, -65519.0f};  // the largest that round to a finite half
  EXPECT_EQ(EncodeVectorBlob(edge.data(), edge.size()).size(), 2 * edge.size());
}

// What an older build wrote (floats) reads bit for bit as what this build
// writes for the same vector, so the two stores give the same snapshot.
TEST(VectorBlobTest, FloatsAnOlderBuildWroteReadAsTheFloat16Form) {
  for (uint32_t seed = 0; seed < 20; ++seed) {
    std::vector<float> x = RandomUnitVector(257, seed);
    x[seed] = 0.0f;
    x[seed + 1] = 1e-9f;  // below the smallest subnormal half's half: 0
    const std::vector<float> old_form = Decoded(FloatBytes(x), x.size());
    const std::vector<float> new_form = Decoded(EncodeVectorBlob(x.data(), x.size()), x.size());
    ASSERT_EQ(std::memcmp(old_form.data(), new_form.data(), x.size() * sizeof(float)), 0) << seed;
  }
}

// The built-in embedder's vectors fill under half their dimensions: they
// are stored as a bitmap and the float16 values of the non-zeros.
TEST(VectorBlobTest, AMostlyZeroVectorIsStoredSparse) {
  const size_t d = 1024;
  std::vector<float> x = RandomUnitVector(d, 5);
  for (size_t i = 0; i < d; ++i) {
    if (i % 5 >= 2) x[i] = 0.0f;  // 40% filled
  }
  x[3] = -0.0f;
  x[7] = 1e-9f;  // rounds to a float16 zero
  const std::string blob = EncodeVectorBlob(x.data(), x.size());
  size_t nonzero = 0;
  for (size_t i = 0; i < d; ++i) nonzero += (FloatToHalf(x[i]) & 0x7fff) != 0;
  EXPECT_EQ(blob.size(), SparseVectorBitmapBytes(d) + 2 * nonzero);
  EXPECT_LT(blob.size(), 1000u);
  const std::vector<float> back = Decoded(blob, d);
  for (size_t i = 0; i < d; ++i) {
    const uint16_t h = FloatToHalf(x[i]);
    const float want = (h & 0x7fff) == 0 ? 0.0f : HalfToFloat(h);
    ASSERT_EQ(std::memcmp(&back[i], &want, sizeof want), 0) << i;  // zeros are +0
  }
  // The same values read from the dense float16 form and from floats.
  EXPECT_EQ(Decoded(FloatBytes(x), d), back);
  // Past the break-even (more than 15/16 filled), the dense form.
  std::vector<float> dense = x;
  for (float& v : dense) v = v == 0.0f ? 0.25f : v;
  EXPECT_EQ(EncodeVectorBlob(dense.data(), d).size(), 2 * d);
}

TEST(VectorBlobTest, OtherSizesAreRefusedAndWriteNothing) {
  const size_t d = 8;  // the sparse form: 1 to 15 bytes
  for (size_t bytes : {size_t{0}, 2 * d + 1, 3 * d, 4 * d - 1, 4 * d + 1, 8 * d}) {
    std::vector<float> out(d, -7.0f);
    EXPECT_FALSE(DecodeVectorBlob(std::string(bytes, '\0'), d, out.data())) << bytes;
    EXPECT_FALSE(IsVectorBytesSize(bytes, d)) << bytes;
    EXPECT_EQ(out, std::vector<float>(d, -7.0f)) << bytes;
  }
  // Sparse blobs whose bitmap does not match their values, or sets a bit
  // past the dimension.
  const std::string no_bits_three_values(7, '\0');
  const std::string two_bits_one_value = std::string("\x03", 1) + std::string(2, '\x3c');
  const std::string bit_past_d = std::string("\x20", 1) + std::string(2, '\x3c');
  for (const std::string& blob : {no_bits_three_values, two_bits_one_value}) {
    std::vector<float> out(d, -7.0f);
    EXPECT_FALSE(DecodeVectorBlob(blob, d, out.data())) << blob.size();
    EXPECT_EQ(out, std::vector<float>(d, -7.0f));
  }
  std::vector<float> five(5, -7.0f);
  EXPECT_FALSE(DecodeVectorBlob(bit_past_d, 5, five.data()));
  EXPECT_TRUE(DecodeVectorBlob(bit_past_d, 6, std::vector<float>(6).data()));
  float unused = 0;
  EXPECT_FALSE(DecodeVectorBlob(std::string(4, '\0'), 0, &unused));
  EXPECT_TRUE(IsVectorBytesSize(1, d));
  EXPECT_TRUE(IsVectorBytesSize(2 * d, d));
  EXPECT_TRUE(IsVectorBytesSize(4 * d, d));
}

// A format-6 store (floats in `embeddings`) opens read-only as it is,
// its vectors read as float16 ones; a writable open raises it to format 7;
// the store then holds float rows and float16 rows side by side, and every
// reader (lookups, the snapshot's passage stream, the size check) takes both.
TEST(VectorBlobTest, AFormatSixStoreReadsItsFloatsAsTheFloat16Form) {
  testing::TempDir dir;
  const std::string path = dir.File("s.db");
  const std::vector<float> a = RandomUnitVector(16, 3), b = RandomUnitVector(16, 4);
  {
    StoreOptions old;
    old.create_format_version = 6;
    auto store = Store::Open(path, old);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_EQ((*store)->format_version(), 6);
    std::vector<DocumentWrite> docs = {testing::Doc("a", "alpha", 1), testing::Doc("b", "beta", 2)};
    ASSERT_TRUE((*store)->WriteDocuments(docs).ok());
  }
  // The float row an older build wrote for passage "a".
  std::vector<uint64_t> hashes;
  {
    auto store = Store::Open(path, {.create_if_missing = false, .read_only = true});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)
                    ->ForEachPassage([&](const PassageRow& p) {
                      hashes.push_back(p.embed_hash);
                      return Status::Ok();
                    })
                    .ok());
  }
  ASSERT_EQ(hashes.size(), 2u);
  {
    auto conn = OpenSqlConnection(path, {});
    ASSERT_TRUE(conn.ok());
    auto ins = (*conn)->Prepare(
        "INSERT INTO embeddings(model, text_hash, dim, vector) VALUES "
        "('m', ?, 16, ?)");
    ASSERT_TRUE(ins.ok());
    const std::string floats = FloatBytes(a);
    ASSERT_TRUE(ins->Bind(1, static_cast<int64_t>(hashes[0]))
                    .BindBlob(2, floats.data(), floats.size())
                    .Run()
                    .ok());
  }
  auto read_vectors = [&](Store& store) {
    std::vector<std::vector<float>> seen;
    EXPECT_TRUE(store
                    .ForEachPassageEmbedding("m",
                                             [&](int64_t, std::span<const float> v) {
                                               seen.emplace_back(v.begin(), v.end());
                                               return Status::Ok();
                                             })
                    .ok());
    return seen;
  };
  const std::vector<float> a16 = Decoded(EncodeVectorBlob(a.data(), a.size()), a.size());
  const std::vector<float> b16 = Decoded(EncodeVectorBlob(b.data(), b.size()), b.size());
  {
    auto store = Store::Open(path, {.create_if_missing = false, .read_only = true});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_EQ((*store)->format_version(), 6);
    EXPECT_EQ(read_vectors(**store), std::vector<std::vector<float>>{a16});
  }
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->format_version(), 7);
  FloatMatrix more(1, 16);
  std::copy(b.begin(), b.end(), more.row(0));
  ASSERT_TRUE((*store)->PutEmbeddings("m", std::vector<uint64_t>{hashes[1]}, more).ok());
  EXPECT_EQ(read_vectors(**store), (std::vector<std::vector<float>>{a16, b16}));
  std::vector<bool> found;
  auto got = (*store)->GetEmbeddings("m", hashes, 16, &found);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(found, (std::vector<bool>{true, true}));
  EXPECT_EQ(std::vector<float>(got->row(0), got->row(0) + 16), a16);
  EXPECT_EQ(std::vector<float>(got->row(1), got->row(1) + 16), b16);
  EXPECT_TRUE((*store)->CheckVectorSizes("m", 16).ok());
  {
    auto conn = OpenSqlConnection(path, {});
    ASSERT_TRUE(conn.ok());
    auto sizes = (*conn)->Prepare("SELECT length(vector) FROM embeddings ORDER BY length(vector)");
    ASSERT_TRUE(sizes.ok());
    std::vector<int64_t> lengths;
    while (sizes->Step().value()) lengths.push_back(sizes->Int(0));
    EXPECT_EQ(lengths, (std::vector<int64_t>{32, 64}));  // float16 beside the old floats
  }
}

// A new store keeps a built-in embedder's vector (1,024 dimensions, 40%
// filled) in about 1.4 KiB: sparse float16 rows in a rowid table, where
// format 6 kept 4 KiB of floats in a WITHOUT ROWID table, a page and part
// of an overflow page each (4.5 KiB).
TEST(VectorBlobTest, ANewStoreHoldsAVectorInItsOwnSize) {
  testing::TempDir dir;
  const std::string path = dir.File("s.db");
  constexpr size_t kVectors = 2000, kDim = 1024;
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    FloatMatrix vectors(kVectors, kDim);
    std::vector<uint64_t> hashes(kVectors);
    for (size_t i = 0; i < kVectors; ++i) {
      hashes[i] = 1000 + i;
      std::vector<float> x = RandomUnitVector(kDim, static_cast<uint32_t>(i));
      for (size_t j = 0; j < kDim; ++j) {
        if ((i + j) % 5 >= 2) x[j] = 0.0f;
      }
      std::copy(x.begin(), x.end(), vectors.row(i));
    }
    ASSERT_TRUE((*store)
                    ->PutEmbeddings("flowrag-hash-v1:a-model-id-as-long-as-the-built-in-one's",
                                    hashes, vectors)
                    .ok());
  }
  auto conn = OpenSqlConnection(path, {});
  ASSERT_TRUE(conn.ok());
  auto scalar = [&](const std::string& sql) {
    auto s = (*conn)->Prepare(sql);
    EXPECT_TRUE(s.ok()) << sql;
    EXPECT_TRUE(s->Step().value()) << sql;
    return s->Int(0);
  };
  EXPECT_EQ(scalar("SELECT count(*) FROM sqlite_master WHERE name = 'embeddings' AND sql LIKE "
                   "'%WITHOUT ROWID%'"),
            0);
  const int64_t table_bytes = scalar("SELECT sum(pgsize) FROM dbstat WHERE name = 'embeddings'");
  EXPECT_LE(table_bytes, static_cast<int64_t>(kVectors * 1500)) << table_bytes;
}

// A stored vector whose bytes fit neither form is Corruption naming the
// passage, for the snapshot's stream and for a lookup alike.
TEST(VectorBlobTest, AVectorOfTheWrongSizeIsCorruptionNamingThePassage) {
  testing::TempDir dir;
  const std::string path = dir.File("s.db");
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok());
  std::vector<DocumentWrite> docs = {testing::Doc("a", "alpha", 1)};
  ASSERT_TRUE((*store)->WriteDocuments(docs).ok());
  uint64_t hash = 0;
  int64_t passage = 0;
  ASSERT_TRUE((*store)
                  ->ForEachPassage([&](const PassageRow& p) {
                    hash = p.embed_hash;
                    passage = p.id;
                    return Status::Ok();
                  })
                  .ok());
  {
    auto conn = OpenSqlConnection(path, {});
    ASSERT_TRUE(conn.ok());
    auto ins = (*conn)->Prepare(
        "INSERT INTO embeddings(model, text_hash, dim, vector) VALUES ('m', ?, 16, zeroblob(48))");
    ASSERT_TRUE(ins.ok());
    ASSERT_TRUE(ins->Bind(1, static_cast<int64_t>(hash)).Run().ok());
  }
  Status st = (*store)->ForEachPassageEmbedding(
      "m", [](int64_t, std::span<const float>) { return Status::Ok(); });
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("the cached embedding of passage " + std::to_string(passage) +
                              " is 48 bytes for dimension 16"),
            std::string::npos)
      << st.message();
  std::vector<bool> found;
  auto got = (*store)->GetEmbeddings("m", std::vector<uint64_t>{hash}, 16, &found);
  EXPECT_EQ(got.status().code(), StatusCode::kCorruption);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
