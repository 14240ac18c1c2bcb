// ChunkedArray: reads as a vector, copies share chunks, and an append to a
// copy never changes the array it was copied from.
#include "common/chunked_array.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

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

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
