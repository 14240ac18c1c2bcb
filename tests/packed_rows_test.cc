// PackedRows (vector/packed_rows.h): each row in the smallest form that
// holds it exactly, read back bit for bit, adopted lazily with damage read
// as zeros; and the int8 FlatIndex that rescores from them.
#include "vector/packed_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "common/array_io.h"
#include "common/half.h"
#include "common/vector_bytes.h"
#include "vector/flat_index.h"

namespace flowrag {
namespace {

// d coordinates, a share `fill` of them non-zero, each a float16 value
// (what a store's vectors are) unless `halves` is false.
std::vector<float> RandomRow(size_t d, double fill, bool halves, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::bernoulli_distribution keep(fill);
  std::vector<float> x(d, 0.0f);
  for (float& v : x) {
    if (!keep(rng)) continue;
    v = u(rng);
    if (halves) v = HalfToFloat(FloatToHalf(v));
  }
  return x;
}

bool BitEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(PackedRowsTest, EachRowTakesTheSmallestExactFormAndReadsBackBitForBit) {
  constexpr size_t kD = 1024;
  const std::vector<std::vector<float>> rows = {
      RandomRow(kD, 0.4, true, 1),   // sparse float16: 128 + 2·nnz bytes
      RandomRow(kD, 0.95, true, 2),  // dense float16: 2·d
      RandomRow(kD, 0.4, false, 3),  // not float16 values: floats, 4·d
      std::vector<float>(kD, 0.0f),  // all zeros: the bitmap alone
  };
  PackedRows packed(kD);
  for (const auto& r : rows) packed.Append(r.data());
  ASSERT_EQ(packed.size(), rows.size());
  std::vector<float> out(kD);
  for (uint32_t i = 0; i < rows.size(); ++i) {
    ASSERT_TRUE(packed.Read(i, out.data()));
    EXPECT_TRUE(BitEqual(out, rows[i])) << i;
  }
  size_t nonzero = 0;
  for (float v : rows[0]) nonzero += v != 0.0f;
  const size_t expected = (128 + 2 * nonzero) + 2 * kD + 4 * kD + 128;
  EXPECT_EQ(packed.MemoryBytes(), expected + 8 * (rows.size() + 1));
}

// Every float16 value decodes as HalfToFloat reads it (±0 as +0), in the
// half form and the sparse one: the widening that decoding vectorizes
// (F16C where the CPU has it) is exact.
TEST(PackedRowsTest, EveryHalfValueDecodesAsHalfToFloatReadsIt) {
  constexpr size_t kD = 65536;
  std::vector<uint8_t> half(2 * kD);
  for (size_t h = 0; h < kD; ++h) {
    half[2 * h] = static_cast<uint8_t>(h & 0xff);
    half[2 * h + 1] = static_cast<uint8_t>(h >> 8);
  }
  std::vector<float> out(kD);
  ASSERT_TRUE(DecodeVectorBytes(half, kD, out.data()));
  for (uint32_t h = 0; h < kD; ++h) {
    const float want = (h & 0x7fffu) == 0 ? 0.0f : HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(out[h])) << h;
    } else {
      EXPECT_EQ(std::memcmp(&out[h], &want, sizeof want), 0) << h;
    }
  }
  // The sparse form of finite positive halves, subnormal to 0x7801 (1 in 3 coordinates).
  std::vector<float> x(3 * 2048, 0.0f);
  for (size_t i = 0; i < 2048; ++i) x[3 * i] = HalfToFloat(static_cast<uint16_t>(0x0001 + 15 * i));
  std::vector<uint8_t> bytes(MaxVectorBytes(x.size()));
  bytes.resize(EncodeVectorBytes(x.data(), x.size(), HalfRounding::kExact, bytes.data()));
  ASSERT_LT(bytes.size(), 2 * x.size());  // sparse
  std::vector<float> back(x.size());
  ASSERT_TRUE(DecodeVectorBytes(bytes, x.size(), back.data()));
  EXPECT_TRUE(BitEqual(back, x));
}

TEST(PackedRowsTest, NegativeZeroAndTheHalfRangeEdgesStayExact) {
  const std::vector<float> edges = {-0.0f, 65504.0f, -65504.0f, HalfToFloat(1), 0.5f};
  PackedRows packed(edges.size());
  packed.Append(edges.data());
  std::vector<float> out(edges.size());
  ASSERT_TRUE(packed.Read(0, out.data()));
  for (size_t i = 0; i < edges.size(); ++i) EXPECT_EQ(out[i], edges[i]) << i;
  // 65520 does not fit a float16, and 0.1f is no float16 value: floats.
  const std::vector<float> wide = {65520.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  const std::vector<float> inexact = {0.1f, 0.0f, 0.0f, 0.0f, 0.0f};
  PackedRows floats(5);
  floats.Append(wide.data());
  floats.Append(inexact.data());
  EXPECT_EQ(floats.MemoryBytes(), 2 * 5 * sizeof(float) + 3 * 8);
  ASSERT_TRUE(floats.Read(1, out.data()));
  EXPECT_EQ(out[0], 0.1f);
}

TEST(PackedRowsTest, AdoptedRowsAreBorrowedAndADamagedRowReadsAsZeros) {
  constexpr size_t kD = 64;
  PackedRows built(kD);
  std::vector<std::vector<float>> rows;
  for (uint32_t i = 0; i < 20; ++i) {
    rows.push_back(RandomRow(kD, 0.3, true, 10 + i));
    built.Append(rows.back().data());
  }
  MemoryArrays arrays;
  ASSERT_TRUE(built.ExportArrays(arrays, "p").ok());
  ASSERT_TRUE(PackedRows::HasArrays(arrays, "p"));
  auto adopted = PackedRows::AdoptArrays(arrays, "p", kD, rows.size());
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  std::vector<float> out(kD);
  for (uint32_t i = 0; i < rows.size(); ++i) {
    ASSERT_TRUE(adopted->Read(i, out.data()));
    EXPECT_TRUE(BitEqual(out, rows[i])) << i;
  }
  // Another row count than the offsets hold: refused, naming the array.
  auto wrong = PackedRows::AdoptArrays(arrays, "p", kD, rows.size() + 1);
  ASSERT_EQ(wrong.status().code(), StatusCode::kCorruption);
  EXPECT_NE(wrong.status().message().find("p.offsets"), std::string::npos);
  // Row 3's offsets swapped (its end before its start; rows 2 and 4 then
  // span the wrong bytes), row 7's end moved to a size no form of a
  // 64-vector has (and row 8's start with it): each reads as zeros, the
  // others as before.
  std::vector<uint64_t> offsets(rows.size() + 1);
  std::memcpy(offsets.data(), arrays.MutableBytes("p.offsets").data(), offsets.size() * 8);
  std::swap(offsets[3], offsets[4]);
  offsets[8] = offsets[7] + 3;  // 3 bytes: under the 8-byte bitmap
  std::memcpy(arrays.MutableBytes("p.offsets").data(), offsets.data(), offsets.size() * 8);
  adopted = PackedRows::AdoptArrays(arrays, "p", kD, rows.size());
  ASSERT_TRUE(adopted.ok());
  for (uint32_t i = 0; i < rows.size(); ++i) {
    const bool damaged = (i >= 2 && i <= 4) || i == 7 || i == 8;
    EXPECT_EQ(adopted->Read(i, out.data()), !damaged) << i;
    if (damaged) {
      EXPECT_TRUE(BitEqual(out, std::vector<float>(kD, 0.0f))) << i;
    } else {
      EXPECT_TRUE(BitEqual(out, rows[i])) << i;
    }
  }
  EXPECT_EQ(adopted->Own().code(), StatusCode::kCorruption);
}

TEST(PackedRowsTest, OwnCopiesBorrowedRowsSoAppendsContinue) {
  constexpr size_t kD = 16;
  PackedRows built(kD);
  const auto a = RandomRow(kD, 0.5, true, 1), b = RandomRow(kD, 0.5, false, 2);
  built.Append(a.data());
  MemoryArrays arrays;
  ASSERT_TRUE(built.ExportArrays(arrays, "p").ok());
  auto adopted = PackedRows::AdoptArrays(arrays, "p", kD, 1);
  ASSERT_TRUE(adopted.ok());
  ASSERT_TRUE(adopted->Own().ok());
  adopted->Append(b.data());
  std::vector<float> out(kD);
  ASSERT_TRUE(adopted->Read(0, out.data()));
  EXPECT_TRUE(BitEqual(out, a));
  ASSERT_TRUE(adopted->Read(1, out.data()));
  EXPECT_TRUE(BitEqual(out, b));
}

// The int8 index rescores from packed rows: for float16-valued vectors the
// rows take their sparse form, read back as given, and the exact scores
// are the float index's over the same vectors, bit for bit.
TEST(PackedRowsTest, AnInt8IndexHoldsItsRowsPackedAndRescoresAsFromFloats) {
  constexpr size_t kN = 600, kD = 256;
  FloatMatrix data(kN, kD);
  for (size_t r = 0; r < kN; ++r) {
    const auto x = RandomRow(kD, 0.35, true, 100 + static_cast<uint32_t>(r));
    std::copy(x.begin(), x.end(), data.row(r));
  }
  auto int8 = FlatIndex::FromMatrix(FloatMatrix(data), FlatIndex::ColumnCopy::kInt8);
  auto floats = FlatIndex::FromMatrix(FloatMatrix(data));
  ASSERT_TRUE(int8.ok() && floats.ok());
  EXPECT_FALSE((*int8)->holds_floats());
  // Codes (d + 4 bytes), packed rows (~0.35·2·d + d/8 + 8): under half the floats.
  EXPECT_LT((*int8)->MemoryBytes(), kN * kD * sizeof(float) / 2);
  std::vector<float> scratch(kD);
  for (uint32_t r = 0; r < kN; r += 41) {
    const float* row = (*int8)->Row(r, scratch.data());
    EXPECT_EQ(std::memcmp(row, data.row(r), kD * sizeof(float)), 0) << r;
  }
  EXPECT_EQ((*int8)->matrix().data, data.data);
  // Every vector a candidate: the rescored top k is the exact one (the
  // rows read back as given, above, so rescoring reads the same floats).
  VectorSearchParams params;
  params.k = 10;
  params.rescore = kN;
  params.scan_mass = 1.0f;
  for (uint32_t q = 0; q < 8; ++q) {
    const auto query = RandomRow(kD, 0.1, false, 900 + q);
    const auto got = (*int8)->Search(query.data(), params, nullptr);
    const auto want = (*floats)->Search(query.data(), params, nullptr);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].id, want[i].id) << q;
      EXPECT_NEAR(got[i].score, want[i].score, 1e-5) << q;
    }
    std::vector<float> all(kN), exact(kN);
    (*int8)->ScoreAll(query.data(), all);
    (*floats)->ScoreAll(query.data(), exact);
    for (size_t r = 0; r < kN; ++r) EXPECT_NEAR(all[r], exact[r], 1e-5) << r;
  }
}

}  // namespace
}  // namespace flowrag
