// SparseRows, SparseIndex and FlatIndex out to arrays and back in place
// (ExportArrays / AdoptArrays through MemoryArrays): the adopted structures
// borrow every array, answer bit for bit as the exported ones (searches,
// scores, dot products), keep working when changed (Add, Remap, Append copy
// first), and each damaged array is refused with Corruption naming it;
// random damage never crashes (run under the sanitizers too).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/array_io.h"
#include "segment/segment_arrays.h"
#include "segment/segment_reader.h"
#include "segment/segment_writer.h"
#include "vector/flat_index.h"
#include "vector/index_util.h"
#include "vector/sparse_index.h"
#include "vector/sparse_rows.h"
#include "random_vectors.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

// ------------------------------------------------------------------ data

FloatMatrix SparseMatrix(size_t n, size_t d, double density, uint32_t seed) {
  return RandomSparseMatrix(n, d, density, seed);
}

std::vector<float> Query(size_t d, double density, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::bernoulli_distribution keep(density);
  std::vector<float> q(d, 0.0f);
  for (float& x : q) {
    if (keep(rng)) x = value(rng);
  }
  return q;
}

bool BitEqual(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

void ExpectSameHits(const std::vector<VectorHit>& a, const std::vector<VectorHit>& b,
                    const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, b[i].id) << what << " rank " << i;
    EXPECT_TRUE(BitEqual(a[i].score, b[i].score)) << what << " rank " << i;
  }
}

template <class A, class B>
bool SameElements(const A& a, const B& b) {
  return a.size() == b.size() &&
         (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * sizeof(*a.data())) == 0);
}

// True when `p` points into the bytes MemoryArrays holds for `name`.
bool Inside(MemoryArrays& arrays, std::string_view name, const void* p) {
  const std::span<std::byte> bytes = arrays.MutableBytes(name);
  const auto* b = reinterpret_cast<const std::byte*>(p);
  return !bytes.empty() && b >= bytes.data() && b < bytes.data() + bytes.size();
}

// The same queries against both indexes: sparse and dense queries, several
// k, a filter, a minimum score.
void ExpectSameSearches(const VectorIndex& got, const VectorIndex& want, size_t d) {
  for (uint32_t q = 0; q < 60; ++q) {
    const double density = q % 3 == 0 ? 0.05 : q % 3 == 1 ? 0.2 : 0.9;
    const std::vector<float> query = Query(d, density, 100 + q);
    for (size_t k : {1, 10, 1000}) {
      VectorSearchParams params;
      params.k = k;
      VectorSearchStats got_stats, want_stats;
      ExpectSameHits(got.Search(query.data(), params, &got_stats),
                     want.Search(query.data(), params, &want_stats),
                     "query " + std::to_string(q) + " k " + std::to_string(k));
      EXPECT_EQ(got_stats.candidates_scored, want_stats.candidates_scored);
    }
    VectorSearchParams filtered;
    filtered.k = 7;
    filtered.filter = [](uint32_t id) { return id % 3 != 1; };
    filtered.min_score = q % 2 == 0 ? 0.0f : -1e9f;
    ExpectSameHits(got.Search(query.data(), filtered, nullptr),
                   want.Search(query.data(), filtered, nullptr),
                   "filtered query " + std::to_string(q));
  }
}

// A MemoryArrays with `arrays`' arrays but for `name`, each with the element
// type `kind_of` gives it.
template <class KindOf>
MemoryArrays Without(MemoryArrays& arrays, const std::vector<std::string>& names,
                     std::string_view name, const KindOf& kind_of) {
  MemoryArrays out;
  for (const std::string& other : names) {
    if (other == name) continue;
    const auto [kind, size] = kind_of(other);
    EXPECT_TRUE(out.PutBytes(other, kind, size, arrays.MutableBytes(other), false).ok());
  }
  return out;
}

// Overwrites 1-3 random bytes of array `name` in `arrays`.
void Scribble(MemoryArrays& arrays, std::string_view name, std::mt19937& rng, int trial) {
  const std::span<std::byte> bytes = arrays.MutableBytes(name);
  if (bytes.empty()) return;
  for (int k = 0; k < 1 + trial % 3; ++k)
    bytes[rng() % bytes.size()] = static_cast<std::byte>(rng());
}

template <class T>
std::vector<T> Values(MemoryArrays& arrays, std::string_view name) {
  const std::span<std::byte> bytes = arrays.MutableBytes(name);
  std::vector<T> v(bytes.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

template <class T>
void Set(MemoryArrays& arrays, std::string_view name, const std::vector<T>& v) {
  ASSERT_TRUE(arrays.Replace(name, std::as_bytes(std::span<const T>(v))).ok()) << name;
}

// A change to array `name` of a MemoryArrays: `edit` applied to its values.
template <class T, class Edit>
auto Change(std::string name, Edit edit) {
  return [name, edit](MemoryArrays& arrays) {
    std::vector<T> v = Values<T>(arrays, name);
    edit(v);
    Set(arrays, name, v);
  };
}

template <class R>
void ExpectCorruptionNaming(const R& r, std::string_view array, const std::string& what) {
  ASSERT_FALSE(r.ok()) << what;
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << what << ": " << r.status().ToString();
  EXPECT_NE(r.status().message().find(array), std::string::npos)
      << what << ": " << r.status().ToString();
}

// ------------------------------------------------------------------ SparseRows

const std::vector<std::string>& RowsNames() {
  static const std::vector<std::string> kNames = {"r.cols", "r.off", "r.dims", "r.vals"};
  return kNames;
}

std::pair<ArrayKind, size_t> RowsKind(const std::string& name) {
  if (name == "r.vals") return {ArrayKind::kF32, 4};
  if (name == "r.dims") return {ArrayKind::kU32, 4};
  return {ArrayKind::kU64, 8};
}

TEST(SparseRowsArraysTest, AdoptedRowsBorrowTheirArraysAndReadTheSame) {
  const size_t d = 96;
  const SparseRows built = SparseRows::FromMatrix(SparseMatrix(300, d, 0.1, 1));
  MemoryArrays arrays;
  ASSERT_TRUE(built.ExportArrays(arrays, "gv.er").ok());
  auto adopted = SparseRows::AdoptArrays(arrays, "gv.er");
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  EXPECT_TRUE(adopted->borrowed());
  EXPECT_FALSE(built.borrowed());
  EXPECT_TRUE(Inside(arrays, "gv.er.off", adopted->offsets.data()));
  EXPECT_TRUE(Inside(arrays, "gv.er.dims", adopted->dims.data()));
  EXPECT_TRUE(Inside(arrays, "gv.er.vals", adopted->values.data()));
  EXPECT_EQ(adopted->cols, d);
  EXPECT_EQ(adopted->rows(), 300u);
  EXPECT_EQ(adopted->offsets, built.offsets);
  EXPECT_EQ(adopted->dims, built.dims);
  EXPECT_EQ(adopted->values, built.values);
  EXPECT_EQ(adopted->MemoryBytes(), built.MemoryBytes());
  const std::vector<float> q = Query(d, 0.5, 9);
  std::vector<float> a(d), b(d);
  for (uint32_t r = 0; r < 300; ++r) {
    EXPECT_TRUE(BitEqual(adopted->Dot(r, q.data()), built.Dot(r, q.data()))) << r;
    EXPECT_TRUE(
        BitEqual(adopted->DotRow(r, built, (r * 7) % 300), built.DotRow(r, built, (r * 7) % 300)));
    adopted->Densify(r, a.data());
    built.Densify(r, b.data());
    EXPECT_EQ(a, b) << r;
  }
  // Appending copies first: the source's bytes stay as they were.
  const std::vector<uint64_t> before = Values<uint64_t>(arrays, "gv.er.off");
  SparseRows grown = *adopted;
  grown.Append(q.data());
  grown.AppendRow(built, 3);
  EXPECT_FALSE(grown.borrowed());
  EXPECT_EQ(grown.rows(), 302u);
  EXPECT_EQ(Values<uint64_t>(arrays, "gv.er.off"), before);
  EXPECT_TRUE(adopted->borrowed());
}

// Adopted from a segment, the rows are borrowed lazily: the adoption
// verifies none of their blocks; each row is verified and checked at its
// first read, a row in altered blocks reads as empty (and is recorded), the
// others read bit for bit as the built rows, and an export refuses to copy
// the damage.
TEST(SparseRowsArraysTest, RowsFromASegmentAreCheckedRowByRowAsTheyAreRead) {
  namespace fs = std::filesystem;
  std::string dir = (fs::path(::testing::TempDir()) / "rows-lazy-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string path = dir + "/rows.seg";
  const size_t d = 64;
  const SparseRows built = SparseRows::FromMatrix(SparseMatrix(3000, d, 0.1, 12));
  {
    auto writer = SegmentWriter::Create(path, "test", 1, 1);
    ASSERT_TRUE(writer.ok());
    SegmentArraySink sink(writer->get());
    ASSERT_TRUE(built.ExportArrays(sink, "gv.er").ok());
    ASSERT_TRUE((*writer)->Finish().ok());
  }
  const auto adopt = [&](std::shared_ptr<const SegmentReader>* reader) {
    auto r = SegmentReader::Open(path);
    EXPECT_TRUE(r.ok());
    *reader = *r;
    return SparseRows::AdoptArrays(SegmentArraySource(*reader), "gv.er");
  };
  std::shared_ptr<const SegmentReader> reader;
  auto adopted = adopt(&reader);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  EXPECT_TRUE(adopted->lazy());
  const std::vector<float> q = Query(d, 0.5, 13);
  for (uint32_t r = 0; r < built.rows(); ++r) {
    ASSERT_TRUE(BitEqual(adopted->Dot(r, q.data()), built.Dot(r, q.data()))) << r;
  }
  EXPECT_TRUE(reader->Damage().ok());
  MemoryArrays copy;
  EXPECT_TRUE(adopted->ExportArrays(copy, "gv.er").ok());  // every row verified

  // Alter the last block of the dimensions: the rows there read as empty,
  // the first still reads; the damage is recorded and not exported.
  const SectionInfo dims = *reader->FindSection("gv.er.dims");
  ASSERT_GE(dims.block_count, 2u);
  testing::AlterEightBytesBefore(path, dims.offset + dims.length);
  adopted = adopt(&reader);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();  // the adoption does not read them
  const uint32_t last = static_cast<uint32_t>(built.rows() - 1);
  ASSERT_GT(built.RowNonZeros(last), 0u);
  EXPECT_TRUE(adopted->Row(last).dims.empty());
  EXPECT_EQ(adopted->Dot(last, q.data()), 0.0f);
  EXPECT_FALSE(reader->Damage().ok());
  EXPECT_TRUE(BitEqual(adopted->Dot(0, q.data()), built.Dot(0, q.data())));
  EXPECT_EQ(adopted->ExportArrays(copy, "gv.er2").code(), StatusCode::kCorruption);
  EXPECT_EQ(adopted->VerifyAll().code(), StatusCode::kCorruption);
  fs::remove_all(dir);
}

TEST(SparseRowsArraysTest, EmptyRowsRoundTrip) {
  MemoryArrays arrays;
  ASSERT_TRUE(SparseRows().ExportArrays(arrays, "rr").ok());
  auto adopted = SparseRows::AdoptArrays(arrays, "rr");
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  EXPECT_EQ(adopted->rows(), 0u);
  EXPECT_EQ(adopted->cols, 0u);
}

TEST(SparseRowsArraysTest, NamesLongerThan31BytesAreRefused) {
  MemoryArrays arrays;
  const SparseRows rows = SparseRows::FromMatrix(SparseMatrix(3, 8, 0.5, 2));
  EXPECT_TRUE(rows.ExportArrays(arrays, std::string(26, 'p')).ok());  // "<26>.cols" = 31
  const std::string long_prefix(27, 'q');
  Status st = rows.ExportArrays(arrays, long_prefix);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_EQ(rows.ExportArrays(arrays, "").code(), StatusCode::kInvalidArgument);
  std::string cols_name = long_prefix;
  cols_name += ".cols";
  EXPECT_FALSE(arrays.Has(cols_name));  // nothing was written
}

TEST(SparseRowsArraysTest, EachDamagedArrayIsRefusedNamingIt) {
  const SparseRows built = SparseRows::FromMatrix(SparseMatrix(40, 16, 0.3, 3));
  auto damage = [&](std::string_view array, const std::string& what, auto change) {
    MemoryArrays arrays;
    ASSERT_TRUE(built.ExportArrays(arrays, "r").ok());
    change(arrays);
    ExpectCorruptionNaming(SparseRows::AdoptArrays(arrays, "r"), array, what);
  };
  damage("r.dims", "too few columns", [](MemoryArrays& a) { Set<uint64_t>(a, "r.cols", {15}); });
  damage("r.cols", "no columns", [](MemoryArrays& a) { Set<uint64_t>(a, "r.cols", {0}); });
  damage("r.cols", "absurd columns",
         [](MemoryArrays& a) { Set<uint64_t>(a, "r.cols", {uint64_t{1} << 40}); });
  damage("r.cols", "two values", [](MemoryArrays& a) { Set<uint64_t>(a, "r.cols", {16, 16}); });
  damage("r.off", "no offsets", [](MemoryArrays& a) { Set<uint64_t>(a, "r.off", {}); });
  damage("r.off", "first offset", Change<uint64_t>("r.off", [](auto& v) { v[0] = 1; }));
  damage("r.off", "decreasing", Change<uint64_t>("r.off", [](auto& v) { v[5] = v[6] + 1000; }));
  damage("r.off", "past the end", Change<uint64_t>("r.off", [](auto& v) { v.back() += 1; }));
  damage("r.vals", "a value short", Change<float>("r.vals", [](auto& v) { v.pop_back(); }));
  damage("r.vals", "not finite",
         Change<float>("r.vals", [](auto& v) { v[3] = std::numeric_limits<float>::infinity(); }));
  damage("r.dims", "a dimension out of range",
         Change<uint32_t>("r.dims", [](auto& v) { v[2] = 16; }));
  ASSERT_GE(built.RowNonZeros(1), 2u);  // row 1 has two non-zeros at least
  damage("r.dims", "dimensions out of order", Change<uint32_t>("r.dims", [&](auto& v) {
           std::swap(v[built.offsets[1]], v[built.offsets[1] + 1]);
         }));
  // Another element type than ExportArrays wrote is damage too.
  {
    MemoryArrays arrays;
    ASSERT_TRUE(built.ExportArrays(arrays, "r").ok());
    MemoryArrays retyped = Without(arrays, RowsNames(), "r.dims", RowsKind);
    const std::vector<int32_t> dims(built.nonzeros(), 0);
    ASSERT_TRUE(retyped.Put<int32_t>("r.dims", dims).ok());
    ExpectCorruptionNaming(SparseRows::AdoptArrays(retyped, "r"), "r.dims", "signed dims");
  }
}

TEST(SparseRowsArraysTest, MissingArraysAreNotFound) {
  const SparseRows built = SparseRows::FromMatrix(SparseMatrix(10, 8, 0.3, 4));
  MemoryArrays arrays;
  ASSERT_TRUE(built.ExportArrays(arrays, "r").ok());
  for (const std::string& name : RowsNames()) {
    MemoryArrays partial = Without(arrays, RowsNames(), name, RowsKind);
    EXPECT_EQ(SparseRows::AdoptArrays(partial, "r").status().code(), StatusCode::kNotFound) << name;
  }
}

TEST(SparseRowsArraysTest, RandomDamageIsRefusedOrHarmless) {
  const size_t d = 32;
  const SparseRows built = SparseRows::FromMatrix(SparseMatrix(60, d, 0.2, 5));
  std::mt19937 rng(6);
  const std::vector<float> q = Query(d, 1.0, 7);
  size_t refused = 0;
  for (const std::string& name : RowsNames()) {
    for (int trial = 0; trial < 60; ++trial) {
      MemoryArrays arrays;
      ASSERT_TRUE(built.ExportArrays(arrays, "r").ok());
      Scribble(arrays, name, rng, trial);
      auto r = SparseRows::AdoptArrays(arrays, "r");
      if (!r.ok()) {
        EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << name;
        ++refused;
        continue;
      }
      if (r->cols != d) continue;  // the caller refuses rows of another dimension
      std::vector<float> dense(d);
      for (uint32_t row = 0; row < r->rows(); ++row) {
        (void)r->Dot(row, q.data());
        r->Densify(row, dense.data());
      }
    }
  }
  EXPECT_GT(refused, 0u);
}

// ------------------------------------------------------------------ SparseIndex

const std::vector<std::string>& SparseNames() {
  static const std::vector<std::string> kNames = {"s.dim", "s.size", "s.off", "s.delta", "s.vals"};
  return kNames;
}

std::pair<ArrayKind, size_t> SparseKind(const std::string& name) {
  if (name == "s.delta") return {ArrayKind::kU16, 2};
  if (name == "s.vals") return {ArrayKind::kF32, 4};
  return {ArrayKind::kU64, 8};
}

TEST(SparseIndexArraysTest, AdoptedIndexBorrowsItsArraysAndSearchesBitForBit) {
  const size_t d = 128;
  const SparseRows rows = SparseRows::FromMatrix(SparseMatrix(900, d, 0.08, 11));
  auto built = SparseIndex::FromRows(rows);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  MemoryArrays arrays;
  ASSERT_TRUE((*built)->ExportArrays(arrays, "gv.fi").ok());
  auto adopted = SparseIndex::AdoptArrays(arrays, "gv.fi");
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  EXPECT_TRUE((*adopted)->borrowed());
  EXPECT_FALSE((*built)->borrowed());
  EXPECT_TRUE(Inside(arrays, "gv.fi.off", (*adopted)->offsets().data()));
  EXPECT_TRUE(Inside(arrays, "gv.fi.delta", (*adopted)->deltas().data()));
  EXPECT_TRUE(Inside(arrays, "gv.fi.vals", (*adopted)->values().data()));
  EXPECT_EQ((*adopted)->Dimension(), d);
  EXPECT_EQ((*adopted)->Size(), 900u);
  EXPECT_EQ((*adopted)->NonZeros(), (*built)->NonZeros());
  EXPECT_EQ((*adopted)->MemoryBytes(), (*built)->MemoryBytes());
  EXPECT_TRUE(SameElements((*adopted)->offsets(), (*built)->offsets()));
  EXPECT_TRUE(SameElements((*adopted)->deltas(), (*built)->deltas()));
  EXPECT_TRUE(SameElements((*adopted)->values(), (*built)->values()));
  ExpectSameSearches(**adopted, **built, d);
  const SparseRows back = (*adopted)->Rows();
  EXPECT_EQ(back.offsets, rows.offsets);
  EXPECT_EQ(back.dims, rows.dims);
  EXPECT_EQ(back.values, rows.values);
}

TEST(SparseIndexArraysTest, AddAndRemapOfAnAdoptedIndexEqualTheBuiltOnes) {
  const size_t d = 40;
  const FloatMatrix m = SparseMatrix(200, d, 0.15, 12);
  auto built = SparseIndex::FromRows(SparseRows::FromMatrix(m));
  ASSERT_TRUE(built.ok());
  MemoryArrays arrays;
  ASSERT_TRUE((*built)->ExportArrays(arrays, "s").ok());
  auto adopted = SparseIndex::AdoptArrays(arrays, "s");
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  const SparseRows fresh = SparseRows::FromMatrix(SparseMatrix(5, d, 0.3, 13));
  std::vector<int64_t> old_of_new;
  for (int64_t i = 199; i >= 0; i -= 2) old_of_new.push_back(i);
  for (int i = 0; i < 5; ++i) old_of_new.push_back(-1);
  auto remapped_adopted = SparseIndex::Remap(**adopted, old_of_new, fresh);
  auto remapped_built = SparseIndex::Remap(**built, old_of_new, fresh);
  ASSERT_TRUE(remapped_adopted.ok() && remapped_built.ok());
  EXPECT_FALSE((*remapped_adopted)->borrowed());
  EXPECT_TRUE(SameElements((*remapped_adopted)->deltas(), (*remapped_built)->deltas()));
  EXPECT_TRUE(SameElements((*remapped_adopted)->values(), (*remapped_built)->values()));
  const FloatMatrix more = SparseMatrix(30, d, 0.2, 14);
  ASSERT_TRUE((*adopted)->Add(more).ok());
  ASSERT_TRUE((*built)->Add(more).ok());
  EXPECT_FALSE((*adopted)->borrowed());
  ExpectSameSearches(**adopted, **built, d);
}

// Lists with gaps of 65,535 ids or more carry skip entries; a posting right
// after a skip may have delta 0 (a gap of exactly 65,535), which the arrays'
// check must accept.
TEST(SparseIndexArraysTest, SkipEntriesRoundTrip) {
  const size_t n = 3 * 65535 + 10;
  SparseIndex::TwoPassBuilder builder(4);
  auto row_dims = [](size_t r) -> std::vector<uint32_t> {
    if (r == 0 || r == 65535 || r == 2 * 65535 + 3) return {0, 2};
    if (r == n - 1) return {1};
    return {};
  };
  for (size_t r = 0; r < n; ++r) ASSERT_TRUE(builder.CountRow(row_dims(r)).ok());
  for (size_t r = 0; r < n; ++r) {
    const std::vector<uint32_t> dims = row_dims(r);
    const std::vector<float> values(dims.size(), 0.5f + static_cast<float>(r % 7));
    ASSERT_TRUE(builder.FillRow(dims, values).ok());
  }
  auto built = builder.Finish();
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  // Dimension 0: ids 0, 65535 (a skip, then delta 0), 131073.
  ASSERT_GE((*built)->offsets()[1], 4u);
  EXPECT_EQ((*built)->deltas()[1], SparseIndex::kSkip);
  EXPECT_EQ((*built)->deltas()[2], 0);
  MemoryArrays arrays;
  ASSERT_TRUE((*built)->ExportArrays(arrays, "s").ok());
  auto adopted = SparseIndex::AdoptArrays(arrays, "s");
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  ExpectSameSearches(**adopted, **built, 4);
  const std::vector<float> q = {1.0f, 1.0f, 0.0f, 0.0f};
  VectorSearchParams params;
  params.k = 4;
  const std::vector<VectorHit> hits = (*adopted)->Search(q.data(), params, nullptr);
  ASSERT_EQ(hits.size(), 4u);
  std::vector<uint32_t> ids;
  for (const VectorHit& h : hits) ids.push_back(h.id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<uint32_t>{0, 65535, 2 * 65535 + 3, static_cast<uint32_t>(n - 1)}));
  // FromArrays (the snapshot part's path) accepts the same lists.
  auto again =
      SparseIndex::FromArrays(4, n, {(*built)->offsets().begin(), (*built)->offsets().end()},
                              {(*built)->deltas().begin(), (*built)->deltas().end()},
                              {(*built)->values().begin(), (*built)->values().end()});
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

TEST(SparseIndexArraysTest, EachDamagedArrayIsRefusedNamingIt) {
  const size_t d = 12;
  auto built = SparseIndex::FromRows(SparseRows::FromMatrix(SparseMatrix(50, d, 0.3, 15)));
  ASSERT_TRUE(built.ok());
  auto damage = [&](std::string_view array, const std::string& what, auto change) {
    MemoryArrays arrays;
    ASSERT_TRUE((*built)->ExportArrays(arrays, "s").ok());
    change(arrays);
    ExpectCorruptionNaming(SparseIndex::AdoptArrays(arrays, "s"), array, what);
  };
  damage("s.dim", "no dimensions", [](MemoryArrays& a) { Set<uint64_t>(a, "s.dim", {0}); });
  damage("s.dim", "absurd dimensions",
         [](MemoryArrays& a) { Set<uint64_t>(a, "s.dim", {uint64_t{1} << 33}); });
  damage("s.off", "a dimension more", [](MemoryArrays& a) { Set<uint64_t>(a, "s.dim", {13}); });
  damage("s.size", "absurd size",
         [](MemoryArrays& a) { Set<uint64_t>(a, "s.size", {uint64_t{1} << 40}); });
  damage("s.delta", "fewer vectors than ids",
         [](MemoryArrays& a) { Set<uint64_t>(a, "s.size", {10}); });
  damage("s.off", "first offset", Change<uint64_t>("s.off", [](auto& v) { v[0] = 1; }));
  damage("s.off", "decreasing", Change<uint64_t>("s.off", [](auto& v) { v[3] = v[4] + 1; }));
  damage("s.off", "entries short", Change<uint16_t>("s.delta", [](auto& v) { v.pop_back(); }));
  damage("s.vals", "a value short", Change<float>("s.vals", [](auto& v) { v.pop_back(); }));
  damage("s.vals", "not finite", Change<float>("s.vals", [](auto& v) { v[1] = std::nanf(""); }));
  damage("s.delta", "a repeated id", Change<uint16_t>("s.delta", [&](auto& v) {
           const uint64_t list = (*built)->offsets()[0];
           ASSERT_GE((*built)->offsets()[1] - list, 2u);
           v[list + 1] = 0;
         }));
  damage("s.delta", "an id past the vectors",
         Change<uint16_t>("s.delta", [&](auto& v) { v[0] = 60; }));
}

TEST(SparseIndexArraysTest, MissingArraysAreNotFoundAndRandomDamageIsHarmless) {
  const size_t d = 24;
  auto built = SparseIndex::FromRows(SparseRows::FromMatrix(SparseMatrix(80, d, 0.2, 16)));
  ASSERT_TRUE(built.ok());
  MemoryArrays arrays;
  ASSERT_TRUE((*built)->ExportArrays(arrays, "s").ok());
  for (const std::string& name : SparseNames()) {
    MemoryArrays partial = Without(arrays, SparseNames(), name, SparseKind);
    EXPECT_EQ(SparseIndex::AdoptArrays(partial, "s").status().code(), StatusCode::kNotFound)
        << name;
  }
  std::mt19937 rng(17);
  size_t refused = 0;
  for (const std::string& name : SparseNames()) {
    for (int trial = 0; trial < 60; ++trial) {
      MemoryArrays damaged;
      ASSERT_TRUE((*built)->ExportArrays(damaged, "s").ok());
      Scribble(damaged, name, rng, trial);
      auto r = SparseIndex::AdoptArrays(damaged, "s");
      if (!r.ok()) {
        EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << name;
        ++refused;
        continue;
      }
      // The caller refuses another dimension or size (a search holds
      // Size() scores: a damaged size could ask for gigabytes).
      if ((*r)->Dimension() != d || (*r)->Size() != 80) continue;
      for (uint32_t q = 0; q < 4; ++q) {
        const std::vector<float> query = Query(d, q % 2 ? 0.1 : 0.9, q);
        VectorSearchParams params;
        params.k = 5;
        for (const VectorHit& h : (*r)->Search(query.data(), params, nullptr)) {
          EXPECT_LT(h.id, (*r)->Size());
        }
      }
      (void)(*r)->Rows();
    }
  }
  EXPECT_GT(refused, 0u);
}

// ------------------------------------------------------------------ FlatIndex

const std::vector<std::string>& FlatNames() {
  static const std::vector<std::string> kNames = {"dense.dim", "dense.rows", "dense.columns"};
  return kNames;
}

std::pair<ArrayKind, size_t> FlatKind(const std::string& name) {
  if (name == "dense.dim") return {ArrayKind::kU64, 8};
  return {ArrayKind::kF32, 4};
}

TEST(FlatIndexArraysTest, AdoptedIndexBorrowsRowsAndColumnsAndSearchesBitForBit) {
  const size_t d = 64;
  // Built by Add in batches, so its column copy has spare capacity that the
  // export compacts.
  FlatIndex built(d);
  const FloatMatrix m = SparseMatrix(700, d, 0.9, 21);
  for (size_t start = 0; start < m.rows; start += 150) {
    const size_t n = std::min<size_t>(150, m.rows - start);
    FloatMatrix part(n, d);
    std::copy_n(m.row(start), n * d, part.data.begin());
    ASSERT_TRUE(built.Add(part).ok());
  }
  MemoryArrays arrays;
  ASSERT_TRUE(built.ExportArrays(arrays, "dense").ok());
  EXPECT_TRUE(FlatIndex::HasArrays(arrays, "dense"));
  EXPECT_FALSE(FlatIndex::HasArrays(arrays, "other"));
  auto adopted = FlatIndex::AdoptArrays(arrays, "dense");
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  EXPECT_TRUE((*adopted)->borrowed());
  EXPECT_FALSE(built.borrowed());
  EXPECT_EQ((*adopted)->Size(), 700u);
  EXPECT_EQ((*adopted)->Dimension(), d);
  EXPECT_TRUE(Inside(arrays, "dense.rows", (*adopted)->FloatRow(0)));
  EXPECT_TRUE(Inside(arrays, "dense.rows", (*adopted)->vectors().data()));
  EXPECT_TRUE(SameElements((*adopted)->vectors(), built.vectors()));
  EXPECT_TRUE(SameElements((*adopted)->vectors(), m.data));
  // The columns: column d of the file is coordinate d of every vector.
  const std::vector<float> columns = Values<float>(arrays, "dense.columns");
  ASSERT_EQ(columns.size(), 700 * d);
  for (size_t i = 0; i < 700; i += 37) {
    for (size_t c = 0; c < d; c += 5) EXPECT_EQ(columns[c * 700 + i], m.row(i)[c]);
  }
  ExpectSameSearches(**adopted, built, d);
  for (uint32_t q = 0; q < 20; ++q) {
    const std::vector<float> query = Query(d, q % 2 ? 0.1 : 0.8, 300 + q);
    std::vector<float> a(700), b(700);
    (*adopted)->ScoreAll(query.data(), a);
    built.ScoreAll(query.data(), b);
    EXPECT_TRUE(SameElements(a, b)) << q;
  }
  // matrix(): an adopted index copies its rows once, into the same matrix.
  const FloatMatrix& copy = (*adopted)->matrix();
  EXPECT_EQ(&copy, &(*adopted)->matrix());
  EXPECT_EQ(copy.rows, 700u);
  EXPECT_EQ(copy.cols, d);
  EXPECT_TRUE(SameElements(copy.data, m.data));
  // An adopted index exports what it adopted.
  MemoryArrays again;
  ASSERT_TRUE((*adopted)->ExportArrays(again, "dense").ok());
  EXPECT_EQ(Values<float>(again, "dense.rows"), Values<float>(arrays, "dense.rows"));
  EXPECT_EQ(Values<float>(again, "dense.columns"), columns);
}

TEST(FlatIndexArraysTest, AddToAnAdoptedIndexCopiesItFirst) {
  const size_t d = 32;
  FloatMatrix m = SparseMatrix(300, d, 0.7, 22);
  auto built = FlatIndex::FromMatrix(FloatMatrix(m));
  ASSERT_TRUE(built.ok());
  MemoryArrays arrays;
  ASSERT_TRUE((*built)->ExportArrays(arrays, "f").ok());
  auto adopted = FlatIndex::AdoptArrays(arrays, "f");
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  const std::vector<float> rows_before = Values<float>(arrays, "f.rows");
  const FloatMatrix more = SparseMatrix(45, d, 0.5, 23);
  ASSERT_TRUE((*adopted)->Add(more).ok());
  ASSERT_TRUE((*built)->Add(more).ok());
  EXPECT_FALSE((*adopted)->borrowed());
  EXPECT_EQ(Values<float>(arrays, "f.rows"), rows_before);  // the source is not written
  EXPECT_EQ((*adopted)->Size(), 345u);
  ExpectSameSearches(**adopted, **built, d);
  EXPECT_TRUE(SameElements((*adopted)->matrix().data, (*built)->matrix().data));
  // A failed Add (a non-finite value) leaves an adopted index as it was.
  auto untouched = FlatIndex::AdoptArrays(arrays, "f");
  ASSERT_TRUE(untouched.ok());
  FloatMatrix bad(1, d);
  bad.data[3] = std::nanf("");
  EXPECT_FALSE((*untouched)->Add(bad).ok());
  EXPECT_TRUE((*untouched)->borrowed());
  EXPECT_EQ((*untouched)->Size(), 300u);
}

TEST(FlatIndexArraysTest, SeveralIndexesShareOneSource) {
  const size_t d = 16;
  auto a = FlatIndex::FromMatrix(SparseMatrix(50, d, 0.9, 24));
  auto b = FlatIndex::FromMatrix(SparseMatrix(70, d, 0.9, 25));
  auto s = SparseIndex::FromRows(SparseRows::FromMatrix(SparseMatrix(60, d, 0.2, 26)));
  ASSERT_TRUE(a.ok() && b.ok() && s.ok());
  MemoryArrays arrays;
  ASSERT_TRUE((*a)->ExportArrays(arrays, "gv.di").ok());
  ASSERT_TRUE((*b)->ExportArrays(arrays, "gv.fi").ok());
  ASSERT_TRUE((*s)->ExportArrays(arrays, "gv.ei").ok());
  auto a2 = FlatIndex::AdoptArrays(arrays, "gv.di");
  auto b2 = FlatIndex::AdoptArrays(arrays, "gv.fi");
  auto s2 = SparseIndex::AdoptArrays(arrays, "gv.ei");
  ASSERT_TRUE(a2.ok() && b2.ok() && s2.ok());
  ExpectSameSearches(**a2, **a, d);
  ExpectSameSearches(**b2, **b, d);
  ExpectSameSearches(**s2, **s, d);
  EXPECT_EQ(FlatIndex::AdoptArrays(arrays, "gv.ei").status().code(), StatusCode::kNotFound);
}

TEST(FlatIndexArraysTest, EachDamagedArrayIsRefusedNamingIt) {
  const size_t d = 8;
  auto built = FlatIndex::FromMatrix(SparseMatrix(20, d, 0.9, 27));
  ASSERT_TRUE(built.ok());
  auto damage = [&](std::string_view array, const std::string& what, auto change) {
    MemoryArrays arrays;
    ASSERT_TRUE((*built)->ExportArrays(arrays, "dense").ok());
    change(arrays);
    ExpectCorruptionNaming(FlatIndex::AdoptArrays(arrays, "dense"), array, what);
  };
  damage("dense.dim", "no dimensions", [](MemoryArrays& a) { Set<uint64_t>(a, "dense.dim", {0}); });
  damage("dense.dim", "absurd dimensions",
         [](MemoryArrays& a) { Set<uint64_t>(a, "dense.dim", {uint64_t{1} << 21}); });
  damage("dense.dim", "two values", [](MemoryArrays& a) { Set<uint64_t>(a, "dense.dim", {8, 8}); });
  damage("dense.rows", "not a whole number of vectors",
         [](MemoryArrays& a) { Set<uint64_t>(a, "dense.dim", {7}); });
  damage("dense.rows", "a float short", Change<float>("dense.rows", [](auto& v) { v.pop_back(); }));
  damage("dense.columns", "a vector short",
         Change<float>("dense.columns", [&](auto& v) { v.resize(v.size() - d); }));
  damage("dense.columns", "another element type", [](MemoryArrays& a) {
    MemoryArrays retyped = Without(a, FlatNames(), "dense.columns", FlatKind);
    const std::vector<double> wide(160, 0.0);
    ASSERT_TRUE(retyped.Put<double>("dense.columns", wide).ok());
    a = retyped;
  });
  MemoryArrays arrays;
  ASSERT_TRUE((*built)->ExportArrays(arrays, "dense").ok());
  for (const std::string& name : FlatNames()) {
    MemoryArrays partial = Without(arrays, FlatNames(), name, FlatKind);
    EXPECT_EQ(FlatIndex::AdoptArrays(partial, "dense").status().code(), StatusCode::kNotFound)
        << name;
  }
}

TEST(FlatIndexArraysTest, RandomDamageIsRefusedOrHarmless) {
  const size_t d = 16;
  auto built = FlatIndex::FromMatrix(SparseMatrix(90, d, 0.9, 28));
  ASSERT_TRUE(built.ok());
  std::mt19937 rng(29);
  size_t refused = 0, adopted = 0;
  for (const std::string& name : FlatNames()) {
    for (int trial = 0; trial < 60; ++trial) {
      MemoryArrays arrays;
      ASSERT_TRUE((*built)->ExportArrays(arrays, "dense").ok());
      Scribble(arrays, name, rng, trial);
      auto r = FlatIndex::AdoptArrays(arrays, "dense");
      if (!r.ok()) {
        EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << name;
        ++refused;
        continue;
      }
      ++adopted;
      if ((*r)->Dimension() != d) continue;  // the caller refuses another dimension
      for (uint32_t q = 0; q < 4; ++q) {
        const std::vector<float> query = Query(d, q % 2 ? 0.1 : 0.9, q);
        VectorSearchParams params;
        params.k = 5;
        for (const VectorHit& h : (*r)->Search(query.data(), params, nullptr)) {
          EXPECT_LT(h.id, (*r)->Size());
        }
      }
    }
  }
  EXPECT_GT(refused, 0u);
  EXPECT_GT(adopted, 0u);  // a changed value is not detectable without reading n·d floats
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
