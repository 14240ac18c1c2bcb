// LayeredIndex: deletes and appended rows over a shared base. Over an exact
// base every search equals, hit for hit and score for score, a FlatIndex
// rebuilt from the same vectors, and its order agrees with a brute force
// written here; over an HNSW base the recall@10 against exact search stays
// high after a fifth of the rows are deleted and more appended; ids follow
// a rebuild's numbering, filters see those ids; the edits go out as arrays
// and come back over an adopted base, and damaged edits are refused.
#include "vector/layered_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "common/array_io.h"
#include "random_vectors.h"
#include "vector/flat_index.h"
#include "vector/hnsw_index.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

// The test's own copy of the current vectors, edited alongside the index.
struct Rows {
  size_t dim;
  std::vector<std::vector<float>> rows;
  void Append(const FloatMatrix& m) {
    for (size_t i = 0; i < m.rows; ++i) rows.emplace_back(m.row(i), m.row(i) + m.cols);
  }
  void Remove(const std::vector<bool>& removed) {
    std::vector<std::vector<float>> kept;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (!removed[i]) kept.push_back(rows[i]);
    }
    rows = std::move(kept);
  }
  FloatMatrix Matrix() const {
    FloatMatrix m(rows.size(), dim);
    for (size_t i = 0; i < rows.size(); ++i) std::copy(rows[i].begin(), rows[i].end(), m.row(i));
    return m;
  }
};

std::shared_ptr<const VectorIndex> FlatBase(const FloatMatrix& m) {
  FloatMatrix copy = m;
  return std::shared_ptr<const VectorIndex>(FlatIndex::FromMatrix(std::move(copy)).value());
}

std::shared_ptr<const VectorIndex> HnswBase(const FloatMatrix& m) {
  VectorIndexOptions options;
  options.hnsw_m = 16;
  options.hnsw_ef_construction = 100;
  auto index = HnswIndex::Create(m.cols, m.rows, options);
  EXPECT_TRUE(index.ok());
  EXPECT_TRUE((*index)->Add(m).ok());
  return std::shared_ptr<const VectorIndex>(std::move(index).value());
}

std::vector<bool> RandomRemoval(size_t n, double fraction, std::mt19937_64& rng) {
  std::bernoulli_distribution pick(fraction);
  std::vector<bool> removed(n);
  for (size_t i = 0; i < n; ++i) removed[i] = pick(rng);
  return removed;
}

// A sequence of deletes and appends on a layered index and on the test's
// rows; returns the final index.
std::unique_ptr<LayeredIndex> Edited(std::shared_ptr<const VectorIndex> base, Rows* rows,
                                     uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto index = LayeredIndex::Over(std::move(base));
  EXPECT_TRUE(index.ok());
  std::unique_ptr<LayeredIndex> current = std::move(index).value();
  for (int step = 0; step < 6; ++step) {
    if (step % 2 == 0) {
      const std::vector<bool> removed = RandomRemoval(current->Size(), 0.05, rng);
      auto next = current->Without(removed);
      EXPECT_TRUE(next.ok()) << next.status().ToString();
      rows->Remove(removed);
      current = std::move(next).value();
    } else {
      const FloatMatrix more = RandomVectors(40 + step, rows->dim, seed * 31 + step);
      auto next = current->With(more);
      EXPECT_TRUE(next.ok()) << next.status().ToString();
      rows->Append(more);
      current = std::move(next).value();
    }
    EXPECT_EQ(current->Size(), rows->rows.size());
  }
  return current;
}

TEST(LayeredIndexTest, OverAnExactBaseSearchesAsARebuiltExactIndex) {
  const FloatMatrix m = RandomVectors(600, 24, 1);
  Rows rows{24, {}};
  rows.Append(m);
  std::unique_ptr<LayeredIndex> index = Edited(FlatBase(m), &rows, 5);
  ASSERT_GT(index->deleted_base_rows().size(), 0u);
  ASSERT_GT(index->appended(), 0u);
  auto rebuilt = FlatIndex::FromMatrix(rows.Matrix());
  ASSERT_TRUE(rebuilt.ok());
  // Every vector where a rebuild has it.
  std::vector<float> scratch(24);
  for (uint32_t id = 0; id < index->Size(); ++id) {
    ASSERT_EQ(std::memcmp(index->Vector(id, scratch.data()), rows.rows[id].data(),
                          sizeof scratch[0] * 24),
              0)
        << id;
  }
  const FloatMatrix queries = RandomVectors(30, 24, 9);
  for (size_t q = 0; q < queries.rows; ++q) {
    for (bool filtered : {false, true}) {
      VectorSearchParams params;
      params.k = 12;
      if (filtered) params.filter = [](uint32_t id) { return id % 3 != 1; };
      const auto got = index->Search(queries.row(q), params, nullptr);
      const auto want = (*rebuilt)->Search(queries.row(q), params, nullptr);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].id, want[i].id) << "query " << q << " rank " << i;
        EXPECT_EQ(got[i].score, want[i].score);
        if (filtered) {
          EXPECT_NE(got[i].id % 3, 1u);
        }
      }
      // The brute force: no vector outside the hits scores clearly above the last.
      if (got.size() == params.k) {
        for (uint32_t id = 0; id < rows.rows.size(); ++id) {
          if (filtered && id % 3 == 1) continue;
          double dot = 0;
          for (size_t j = 0; j < 24; ++j) dot += double{rows.rows[id][j]} * queries.row(q)[j];
          const bool hit =
              std::any_of(got.begin(), got.end(), [&](const VectorHit& h) { return h.id == id; });
          if (!hit) {
            EXPECT_LE(dot, got.back().score + 1e-5) << id;
          }
        }
      }
    }
  }
}

TEST(LayeredIndexTest, OverAnHnswBaseKeepsItsRecallAgainstExactSearch) {
  const FloatMatrix m = RandomVectors(3000, 32, 2);
  Rows rows{32, {}};
  rows.Append(m);
  std::shared_ptr<const VectorIndex> base = HnswBase(m);
  std::unique_ptr<LayeredIndex> index = Edited(base, &rows, 6);
  EXPECT_EQ(index->Kind(), "hnsw");
  EXPECT_EQ(&index->base(), base.get());  // shared, not copied
  auto exact = FlatIndex::FromMatrix(rows.Matrix());
  ASSERT_TRUE(exact.ok());
  const FloatMatrix queries = RandomVectors(200, 32, 10);
  size_t found = 0, wanted = 0;
  for (size_t q = 0; q < queries.rows; ++q) {
    VectorSearchParams params;
    params.k = 10;
    const auto got = index->Search(queries.row(q), params, nullptr);
    const auto want = (*exact)->Search(queries.row(q), params, nullptr);
    ASSERT_EQ(got.size(), 10u);
    for (const VectorHit& w : want) {
      ++wanted;
      found +=
          std::any_of(got.begin(), got.end(), [&](const VectorHit& h) { return h.id == w.id; });
    }
    for (const VectorHit& h : got) {  // a hit's score is its vector's
      double dot = 0;
      for (size_t j = 0; j < 32; ++j) dot += double{rows.rows[h.id][j]} * queries.row(q)[j];
      EXPECT_NEAR(h.score, dot, 1e-4);
    }
  }
  EXPECT_GE(static_cast<double>(found) / wanted, 0.95);
}

TEST(LayeredIndexTest, EditsComposeAndFoldToTheVectorsOfARebuild) {
  const FloatMatrix m = RandomVectors(50, 8, 3);
  auto index = LayeredIndex::Over(FlatBase(m));
  ASSERT_TRUE(index.ok());
  std::vector<bool> removed(50, false);
  removed[0] = removed[7] = removed[49] = true;
  auto once = (*index)->Without(removed);
  ASSERT_TRUE(once.ok());
  EXPECT_EQ((*once)->Size(), 47u);
  std::vector<float> scratch(8);
  EXPECT_EQ(std::memcmp((*once)->Vector(0, scratch.data()), m.row(1), 8 * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp((*once)->Vector(6, scratch.data()), m.row(8), 8 * sizeof(float)), 0);
  const FloatMatrix more = RandomVectors(3, 8, 4);
  auto twice = (*once)->With(more);
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ((*twice)->EditedRows(), 6u);
  // Delete one appended row and one base row: the base rows deleted stay
  // ascending, the appended ones shift down.
  std::vector<bool> again(50, false);
  again[3] = again[47] = true;
  auto thrice = (*twice)->Without(again);
  ASSERT_TRUE(thrice.ok());
  EXPECT_EQ((*thrice)->Size(), 48u);
  const std::vector<uint32_t> deleted((*thrice)->deleted_base_rows().begin(),
                                      (*thrice)->deleted_base_rows().end());
  EXPECT_EQ(deleted, (std::vector<uint32_t>{0, 4, 7, 49}));
  EXPECT_EQ(std::memcmp((*thrice)->Vector(46, scratch.data()), more.row(1), 8 * sizeof(float)), 0);
  const FloatMatrix all = (*thrice)->Vectors();
  EXPECT_EQ(all.rows, 48u);
  EXPECT_EQ(std::memcmp(all.row(47), more.row(2), 8 * sizeof(float)), 0);
  // Of() copies the edits over the same base; a bad removal is refused.
  std::shared_ptr<const VectorIndex> shared = std::move(thrice).value();
  auto copy = LayeredIndex::Of(shared);
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(&(*copy)->base(), &dynamic_cast<const LayeredIndex&>(*shared).base());
  EXPECT_EQ((*copy)->Size(), 48u);
  EXPECT_EQ((*copy)->Without(std::vector<bool>(3)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*copy)->With(RandomVectors(2, 5, 1)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LayeredIndex::Over(shared).status().code(), StatusCode::kInvalidArgument);
}

TEST(LayeredIndexTest, EditsGoOutAsArraysAndComeBackOverTheBase) {
  const FloatMatrix m = RandomVectors(400, 16, 5);
  Rows rows{16, {}};
  rows.Append(m);
  std::shared_ptr<const VectorIndex> base = HnswBase(m);
  std::unique_ptr<LayeredIndex> index = Edited(base, &rows, 7);
  MemoryArrays arrays;
  ASSERT_TRUE(index->ExportEdits(arrays, "dense").ok());
  ASSERT_TRUE(LayeredIndex::HasEdits(arrays, "dense"));
  auto adopted = LayeredIndex::AdoptEdits(base, arrays, "dense");
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  ASSERT_EQ((*adopted)->Size(), index->Size());
  const FloatMatrix queries = RandomVectors(20, 16, 11);
  for (size_t q = 0; q < queries.rows; ++q) {
    VectorSearchParams params;
    params.k = 8;
    const auto a = index->Search(queries.row(q), params, nullptr);
    const auto b = (*adopted)->Search(queries.row(q), params, nullptr);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].id, b[i].id);
      EXPECT_EQ(a[i].score, b[i].score);
    }
  }
  EXPECT_FALSE(LayeredIndex::HasEdits(MemoryArrays(), "dense"));
}

TEST(LayeredIndexTest, DamagedEditsAreRefused) {
  const FloatMatrix m = RandomVectors(20, 4, 6);
  std::shared_ptr<const VectorIndex> base = FlatBase(m);
  auto refused = [&](std::vector<uint32_t> deleted, size_t appended_dim) {
    MemoryArrays arrays;
    EXPECT_TRUE(arrays.Put<uint32_t>("dense.del", deleted).ok());
    if (appended_dim > 0) {
      auto flat = FlatIndex::FromMatrix(RandomVectors(2, appended_dim, 1));
      EXPECT_TRUE((*flat)->ExportArrays(arrays, "dense.add").ok());
    }
    return LayeredIndex::AdoptEdits(base, arrays, "dense").status();
  };
  EXPECT_TRUE(refused({1, 5}, 4).ok());
  for (const auto& [deleted, dim] : std::vector<std::pair<std::vector<uint32_t>, size_t>>{
           {{20}, 0}, {{5, 5}, 0}, {{6, 2}, 0}, {{1}, 3}}) {
    const Status st = refused(deleted, dim);
    EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.ToString();
    EXPECT_NE(st.message().find("dense."), std::string::npos) << st.ToString();
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
