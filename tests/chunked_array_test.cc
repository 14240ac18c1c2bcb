// ChunkedArray: reads as a vector, copies share chunks, and an append to a
// copy never changes the array it was copied from.
#include "common/chunked_array.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "common/based_array.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using Small = ChunkedArray<std::string, 4>;

Small Numbers(int n) {
  Small a;
  for (int i = 0; i < n; ++i) a.push_back(std::to_string(i));
  return a;
}

TEST(ChunkedArrayTest, ReadsAsAVectorAcrossChunks) {
  const Small a = Numbers(10);
  ASSERT_EQ(a.size(), 10u);
  EXPECT_FALSE(a.empty());
  EXPECT_TRUE(Small().empty());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a[i], std::to_string(i));
  EXPECT_EQ(a.back(), "9");
  EXPECT_EQ(a.end() - a.begin(), 10);
  int i = 0;
  for (const std::string& s : a) EXPECT_EQ(s, std::to_string(i++));
  EXPECT_EQ(i, 10);
  // Random access as the standard algorithms use it.
  const auto it = std::lower_bound(a.begin(), a.end(), std::string("5"));
  EXPECT_EQ(it - a.begin(), 5);
  EXPECT_EQ(*it, "5");
  EXPECT_EQ(it[2], "7");
  EXPECT_EQ(*(it - 5), "0");
  EXPECT_EQ(it->size(), 1u);
}

TEST(ChunkedArrayTest, ACopySharesEveryChunkAndAnAppendToItLeavesTheOriginal) {
  const Small original = Numbers(10);  // chunks of 4, 4, 2
  Small copy = original;
  EXPECT_EQ(copy.SharedChunks(original), 3u);
  copy.push_back("appended");
  // The partly filled last chunk was copied before the write; the full ones
  // stay shared.
  EXPECT_EQ(copy.SharedChunks(original), 2u);
  ASSERT_EQ(original.size(), 10u);
  EXPECT_EQ(original.back(), "9");
  ASSERT_EQ(copy.size(), 11u);
  EXPECT_EQ(copy[9], "9");
  EXPECT_EQ(copy.back(), "appended");
  // Further appends fill the copy's own chunk, then new ones.
  for (int i = 0; i < 5; ++i) copy.push_back("more");
  EXPECT_EQ(copy.size(), 16u);
  EXPECT_EQ(copy.SharedChunks(original), 2u);
  EXPECT_EQ(original.size(), 10u);
  // An array that owns its last chunk alone appends in place.
  Small alone = Numbers(6);
  alone.push_back("x");
  EXPECT_EQ(alone.size(), 7u);
  EXPECT_EQ(alone[6], "x");
  // A copy of a full array shares all of it and appends into a new chunk.
  const Small full = Numbers(8);
  Small extended = full;
  extended.push_back("8");
  EXPECT_EQ(extended.SharedChunks(full), 2u);
  EXPECT_EQ(full.size(), 8u);
}

// A base read in place (squares of 0..n-1, counting its reads), then
// appended elements: read by value in one index space, searched with the
// standard algorithms; copies share the base and the appended chunks.
class Squares final : public BasedArray<int64_t>::Base {
 public:
  explicit Squares(size_t n) : n_(n) {}
  size_t size() const override { return n_; }
  int64_t At(size_t i) const override {
    ++reads;
    return static_cast<int64_t>(i * i);
  }
  mutable size_t reads = 0;

 private:
  size_t n_;
};

TEST(BasedArrayTest, TheBaseIsReadInPlaceAndAppendsFollowIt) {
  auto base = std::make_shared<Squares>(5000);
  BasedArray<int64_t> a(base);
  EXPECT_EQ(base->reads, 0u);  // nothing read at construction
  EXPECT_EQ(a.size(), 5000u);
  EXPECT_EQ(a.base_size(), 5000u);
  EXPECT_EQ(a[70], 4900);
  a.push_back(-1);
  a.push_back(-2);
  ASSERT_EQ(a.size(), 5002u);
  EXPECT_EQ(a[4999], 4999 * 4999);
  EXPECT_EQ(a[5000], -1);
  EXPECT_EQ(a.back(), -2);
  // Ascending over the base: binary search reads O(log n) elements.
  base->reads = 0;
  const auto it = std::lower_bound(a.begin(), a.begin() + 5000, int64_t{2500});
  EXPECT_EQ(it - a.begin(), 50);
  EXPECT_EQ(*it, 2500);
  EXPECT_LE(base->reads, 20u);
  // A copy shares the base and the appended chunk until it appends.
  BasedArray<int64_t> b = a;
  EXPECT_EQ(b.SharedChunks(a), 1u);
  b.push_back(-3);
  EXPECT_EQ(b.SharedChunks(a), 0u);  // its partly filled chunk copied first
  EXPECT_EQ(a.size(), 5002u);
  EXPECT_EQ(b.size(), 5003u);
  EXPECT_EQ(b[70], 4900);
  size_t n = 0;
  for (int64_t v : b) n += v < 0;
  EXPECT_EQ(n, 3u);
  // No base: a chunked array.
  BasedArray<int64_t> plain;
  EXPECT_TRUE(plain.empty());
  plain.push_back(7);
  EXPECT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0], 7);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
