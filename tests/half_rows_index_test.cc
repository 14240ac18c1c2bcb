// HalfRowsIndex (vector/half_rows_index.h): rows of float16 values that are
// searched like a SparseIndex. Checked against an independent computation
// (dot products in double over the halves of the input floats, sorted by
// score desc, id asc), against FromRows for Remap and Add, and through
// arrays and a real segment file (lazily checked rows, damage recorded).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/array_io.h"
#include "segment/segment_arrays.h"
#include "segment/segment_reader.h"
#include "segment/segment_writer.h"
#include "vector/half_rows_index.h"
#include "vector/quantized.h"
#include "vector/sparse_rows.h"
#include "random_vectors.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

SparseRows RandomRows(size_t n, size_t d, double density, uint32_t seed) {
  return SparseRows::FromMatrix(RandomSparseMatrix(n, d, density, seed));
}

std::vector<float> Query(size_t d, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> q(d, 0.0f);
  for (size_t c = 0; c < d; c += 3) q[c] = value(rng);
  return q;
}

// The reference: every row's dot product with the halves of its floats.
std::vector<double> ReferenceScores(const SparseRows& rows, const std::vector<float>& q) {
  std::vector<double> scores(rows.rows(), 0.0);
  for (size_t r = 0; r < rows.rows(); ++r) {
    for (uint64_t i = rows.offsets[r]; i < rows.offsets[r + 1]; ++i) {
      scores[r] += double{HalfToFloat(FloatToHalf(rows.values[i]))} * q[rows.dims[i]];
    }
  }
  return scores;
}

void ExpectSameRows(const HalfRowsIndex& a, const HalfRowsIndex& b) {
  ASSERT_EQ(a.Size(), b.Size());
  ASSERT_EQ(a.Dimension(), b.Dimension());
  for (size_t r = 0; r < a.Size(); ++r) {
    const auto x = a.Row(r), y = b.Row(r);
    ASSERT_TRUE(std::ranges::equal(x.dims, y.dims)) << r;
    ASSERT_TRUE(std::ranges::equal(x.halves, y.halves)) << r;
  }
}

TEST(HalfRowsIndexTest, RowsAreTheHalvesOfTheInputAndDotsMatchTheReference) {
  const SparseRows rows = RandomRows(300, 96, 0.1, 1);
  auto index = HalfRowsIndex::FromRows(rows);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ((*index)->Size(), rows.rows());
  EXPECT_EQ((*index)->NonZeros(), rows.nonzeros());
  const SparseRows back = (*index)->Rows();
  const std::vector<float> q = Query(96, 2);
  const std::vector<double> want = ReferenceScores(rows, q);
  for (size_t r = 0; r < rows.rows(); ++r) {
    const auto row = (*index)->Row(r);
    ASSERT_TRUE(std::ranges::equal(row.dims, rows.Row(r).dims)) << r;
    for (size_t i = 0; i < row.halves.size(); ++i) {
      EXPECT_EQ(row.halves[i], FloatToHalf(rows.Row(r).values[i]));
      EXPECT_EQ(back.Row(r).values[i], HalfToFloat(row.halves[i]));
    }
    EXPECT_NEAR((*index)->Dot(r, q.data()), want[r], 1e-5) << r;
  }
}

TEST(HalfRowsIndexTest, SearchRanksAsTheReferenceWithFilterAndMinimum) {
  const SparseRows rows = RandomRows(500, 64, 0.15, 3);
  auto index = HalfRowsIndex::FromRows(rows);
  ASSERT_TRUE(index.ok());
  for (uint32_t seed = 10; seed < 15; ++seed) {
    const std::vector<float> q = Query(64, seed);
    const std::vector<double> scores = ReferenceScores(rows, q);
    std::vector<uint32_t> order;
    for (uint32_t r = 0; r < rows.rows(); ++r) {
      if (r % 2 == 0 && scores[r] >= 0.05) order.push_back(r);  // the filter and min_score
    }
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return scores[a] != scores[b] ? scores[a] > scores[b] : a < b;
    });
    VectorSearchParams params;
    params.k = 20;
    params.min_score = 0.05f;
    params.filter = [](uint32_t id) { return id % 2 == 0; };
    const std::vector<VectorHit> hits = (*index)->Search(q.data(), params, nullptr);
    ASSERT_EQ(hits.size(), std::min<size_t>(20, order.size())) << seed;
    for (size_t i = 0; i < hits.size(); ++i) {
      EXPECT_NEAR(hits[i].score, scores[hits[i].id], 1e-5);
      // Near-ties may swap under float summation; the score at each rank
      // is the reference's.
      EXPECT_NEAR(hits[i].score, scores[order[i]], 1e-5) << seed << " rank " << i;
    }
  }
}

TEST(HalfRowsIndexTest, RemapAndAddEqualFromRowsOverTheSameVectors) {
  const SparseRows old_rows = RandomRows(120, 48, 0.2, 5);
  const SparseRows fresh = RandomRows(7, 48, 0.2, 6);
  auto old = HalfRowsIndex::FromRows(old_rows);
  ASSERT_TRUE(old.ok());
  const std::vector<int64_t> old_of_new = {5, -1, 0, 119, -1, -1, 5, -1, -1, -1, -1, 60};
  auto remapped = HalfRowsIndex::Remap(**old, old_of_new, fresh);
  ASSERT_TRUE(remapped.ok()) << remapped.status().ToString();
  SparseRows gathered;
  gathered.cols = 48;
  size_t next = 0;
  for (int64_t o : old_of_new) {
    gathered.AppendRow(o >= 0 ? old_rows : fresh, o >= 0 ? static_cast<size_t>(o) : next++);
  }
  auto want = HalfRowsIndex::FromRows(gathered);
  ASSERT_TRUE(want.ok());
  ExpectSameRows(**remapped, **want);

  // Bad remaps are refused.
  EXPECT_EQ(HalfRowsIndex::Remap(**old, std::vector<int64_t>{120}, SparseRows{}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(HalfRowsIndex::Remap(**old, std::vector<int64_t>{-1}, fresh).status().code(),
            StatusCode::kInvalidArgument);

  // Add after a search: the lists are built again and see the new rows.
  const std::vector<float> q = Query(48, 7);
  (void)(*old)->Search(q.data(), VectorSearchParams{}, nullptr);
  FloatMatrix more(fresh.rows(), 48);
  for (size_t r = 0; r < fresh.rows(); ++r) fresh.Densify(r, more.row(r));
  ASSERT_TRUE((*old)->Add(more).ok());
  SparseRows all = old_rows;
  for (size_t r = 0; r < fresh.rows(); ++r) all.AppendRow(fresh, r);
  auto all_index = HalfRowsIndex::FromRows(all);
  ASSERT_TRUE(all_index.ok());
  ExpectSameRows(**old, **all_index);
  VectorSearchParams params;
  params.k = all.rows();
  const auto a = (*old)->Search(q.data(), params, nullptr);
  const auto b = (*all_index)->Search(q.data(), params, nullptr);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_EQ(a[i].score, b[i].score);
  }
}

TEST(HalfRowsIndexTest, BadRowsAreRefusedNamingTheRow) {
  SparseRows rows;
  rows.cols = 8;
  FloatMatrix m(2, 8);
  m.row(1)[3] = 1e6f;  // beyond float16's range
  rows.Append(m.row(0));
  rows.Append(m.row(1));
  auto big = HalfRowsIndex::FromRows(rows);
  EXPECT_EQ(big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(big.status().message().find("row 1"), std::string::npos) << big.status().ToString();
  SparseRows wide;
  wide.cols = HalfRowsIndex::kMaxDimension + 1;
  EXPECT_EQ(HalfRowsIndex::FromRows(wide).status().code(), StatusCode::kInvalidArgument);
  HalfRowsIndex index(8);
  EXPECT_EQ(index.Add(m).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(index.Size(), 0u);  // all or nothing
}

TEST(HalfRowsIndexTest, ArraysRoundTripAndDamageIsRefusedNamingTheArray) {
  const SparseRows rows = RandomRows(60, 32, 0.2, 8);
  auto built = HalfRowsIndex::FromRows(rows);
  ASSERT_TRUE(built.ok());
  MemoryArrays arrays;
  ASSERT_TRUE((*built)->ExportArrays(arrays, "gv.fi").ok());
  auto adopted = HalfRowsIndex::AdoptArrays(arrays, "gv.fi");
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  EXPECT_FALSE((*adopted)->lazy());
  ExpectSameRows(**built, **adopted);

  std::span<std::byte> halves = arrays.MutableBytes("gv.fi.halves");
  const uint16_t infinity = 0x7c00;
  std::memcpy(halves.data(), &infinity, 2);
  auto bad = HalfRowsIndex::AdoptArrays(arrays, "gv.fi");
  EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
  EXPECT_NE(bad.status().message().find("gv.fi.halves"), std::string::npos);

  MemoryArrays out_of_range;
  ASSERT_TRUE((*built)->ExportArrays(out_of_range, "x").ok());
  std::span<std::byte> dims = out_of_range.MutableBytes("x.dims");
  const uint16_t far = 40;  // >= the dimension, 32
  std::memcpy(dims.data(), &far, 2);
  auto bad_dim = HalfRowsIndex::AdoptArrays(out_of_range, "x");
  EXPECT_EQ(bad_dim.status().code(), StatusCode::kCorruption);
  EXPECT_NE(bad_dim.status().message().find("x.dims"), std::string::npos);
  EXPECT_EQ((*built)->ExportArrays(arrays, std::string(25, 'p')).code(),
            StatusCode::kInvalidArgument);  // "<25>.halves" is 32 bytes
}

// From a segment nothing is read at adoption; each row's offsets, dimensions
// and values are verified when the row is first read. Damage in the last
// block of the offsets or of the values: the last row reads as empty and
// scores 0, the damage is recorded, the first row still reads, and the
// index refuses to be exported or verified.
TEST(HalfRowsIndexTest, RowsFromASegmentAreCheckedRowByRowAsTheyAreRead) {
  const SparseRows rows = RandomRows(3000, 64, 0.1, 9);
  auto built = HalfRowsIndex::FromRows(rows);
  ASSERT_TRUE(built.ok());
  const size_t last = rows.rows() - 1;
  ASSERT_GT(rows.RowNonZeros(last), 0u);
  const std::vector<float> q = Query(64, 10);
  for (const char* damaged : {"gv.fi.halves", "gv.fi.off"}) {
    const testing::TempDir dir;
    const std::string path = dir.File("rows.seg");
    {
      auto writer = SegmentWriter::Create(path, "test", 1, 1);
      ASSERT_TRUE(writer.ok());
      SegmentArraySink sink(writer->get());
      ASSERT_TRUE((*built)->ExportArrays(sink, "gv.fi").ok());
      ASSERT_TRUE((*writer)->Finish().ok());
    }
    const auto adopt = [&](std::shared_ptr<const SegmentReader>* reader) {
      auto r = SegmentReader::Open(path);
      EXPECT_TRUE(r.ok());
      *reader = *r;
      return HalfRowsIndex::AdoptArrays(SegmentArraySource(*reader), "gv.fi");
    };
    std::shared_ptr<const SegmentReader> reader;
    auto adopted = adopt(&reader);
    ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
    EXPECT_TRUE((*adopted)->lazy());
    ExpectSameRows(**built, **adopted);
    EXPECT_TRUE(reader->Damage().ok());

    const SectionInfo section = *reader->FindSection(damaged);
    ASSERT_GE(section.block_count, 2u) << damaged;
    testing::AlterEightBytesBefore(path, section.offset + section.length);
    adopted = adopt(&reader);
    ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();  // nothing read at adoption
    EXPECT_TRUE((*adopted)->Row(last).dims.empty()) << damaged;
    EXPECT_EQ((*adopted)->Dot(last, q.data()), 0.0f);
    EXPECT_EQ(reader->Damage().code(), StatusCode::kCorruption) << damaged;
    EXPECT_EQ((*adopted)->Dot(0, q.data()), (*built)->Dot(0, q.data()));
    MemoryArrays copy;
    EXPECT_EQ((*adopted)->ExportArrays(copy, "gv.fi").code(), StatusCode::kCorruption);
    EXPECT_EQ((*adopted)->VerifyAll().code(), StatusCode::kCorruption);
  }
}

// Offsets that pass their checksums but do not describe rows (decreasing,
// or beyond the entries) are refused row by row, naming the array.
TEST(HalfRowsIndexTest, OffsetsThatAreNotRowsAreRefused) {
  auto built = HalfRowsIndex::FromRows(RandomRows(40, 16, 0.3, 11));
  ASSERT_TRUE(built.ok());
  MemoryArrays arrays;
  ASSERT_TRUE((*built)->ExportArrays(arrays, "x").ok());
  std::span<std::byte> off = arrays.MutableBytes("x.off");
  const uint64_t beyond = (*built)->NonZeros() + 1;
  std::memcpy(off.data() + 8 * 20, &beyond, 8);
  auto bad = HalfRowsIndex::AdoptArrays(arrays, "x");
  EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
  EXPECT_NE(bad.status().message().find("x.off"), std::string::npos) << bad.status().ToString();
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
