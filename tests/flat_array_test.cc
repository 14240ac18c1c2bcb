// FlatArray, StringArena and the in-memory ArraySink/ArraySource
// (common/flat_array.h, common/array_io.h).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/array_io.h"
#include "common/flat_array.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

TEST(FlatArrayTest, OwnedAndBorrowedReadTheSame) {
  FlatArray<uint32_t> owned(std::vector<uint32_t>{3, 1, 4});
  auto keep = std::make_shared<std::vector<uint32_t>>(std::vector<uint32_t>{3, 1, 4});
  FlatArray<uint32_t> borrowed = FlatArray<uint32_t>::Borrow(*keep, keep);
  EXPECT_FALSE(owned.borrowed());
  EXPECT_TRUE(borrowed.borrowed());
  EXPECT_EQ(owned, borrowed);
  EXPECT_EQ(borrowed.data(), keep->data());  // in place, not copied
  EXPECT_EQ(borrowed[2], 4u);
  EXPECT_EQ(borrowed.bytes(), 12u);
}

TEST(FlatArrayTest, CopiesAndMovesKeepTheirElements) {
  FlatArray<int> a(std::vector<int>{1, 2});
  FlatArray<int> b = a;
  EXPECT_NE(a.data(), b.data());  // an owned copy owns its own elements
  FlatArray<int> c = std::move(a);
  EXPECT_EQ(c, b);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  auto keep = std::make_shared<std::vector<int>>(std::vector<int>{7});
  FlatArray<int> d = FlatArray<int>::Borrow(*keep, keep);
  FlatArray<int> e = d;
  EXPECT_EQ(e.data(), keep->data());  // a borrowed copy shares the memory
  keep.reset();
  d = FlatArray<int>();
  EXPECT_EQ(e[0], 7);  // the copy keeps it alive
}

TEST(FlatArrayTest, MutableCopiesABorrowedArrayFirst) {
  auto keep = std::make_shared<std::vector<int>>(std::vector<int>{1, 2});
  FlatArray<int> a = FlatArray<int>::Borrow(*keep, keep);
  a.Mutable().push_back(3);
  a.Sync();
  EXPECT_FALSE(a.borrowed());
  EXPECT_EQ(a.size(), 3u);
  EXPECT_EQ(keep->size(), 2u);  // the borrowed memory is untouched
}

TEST(StringArenaTest, HoldsStringsAndRefusesBadOffsets) {
  StringArena arena(std::vector<std::string>{"alpha", "", "γάμμα"});
  ASSERT_EQ(arena.size(), 3u);
  EXPECT_EQ(arena[0], "alpha");
  EXPECT_EQ(arena[1], "");
  EXPECT_EQ(arena[2], "γάμμα");
  auto keep = std::make_shared<int>(0);
  std::vector<uint64_t> offsets(arena.offsets().begin(), arena.offsets().end());
  std::vector<char> bytes(arena.bytes().begin(), arena.bytes().end());
  Result<StringArena> same = StringArena::Borrow(offsets, bytes, keep);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(*same, arena);
  offsets[2] = 1;  // decreases after 5
  EXPECT_EQ(StringArena::Borrow(offsets, bytes, keep).status().code(), StatusCode::kCorruption);
  offsets[2] = 5;
  offsets.back() = bytes.size() + 1;  // past the bytes
  EXPECT_EQ(StringArena::Borrow(offsets, bytes, keep).status().code(), StatusCode::kCorruption);
  EXPECT_EQ(StringArena::Borrow({}, bytes, keep).status().code(), StatusCode::kCorruption);
}

TEST(MemoryArraysTest, RoundTripsTypedArraysAndNamesWhatIsWrong) {
  MemoryArrays arrays;
  std::vector<float> values = {0.5f, -1.0f};
  ASSERT_TRUE(arrays.Put<float>("v", values).ok());
  ASSERT_TRUE(arrays.PutScalar<uint64_t>("n", 42).ok());
  ASSERT_TRUE(arrays.PutStrings("names", StringArena(std::vector<std::string>{"a", "bc"})).ok());
  EXPECT_EQ(arrays.Put<float>("v", values).code(), StatusCode::kInvalidArgument);  // twice

  Result<FlatArray<float>> v = arrays.Get<float>("v");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(std::vector<float>(v->begin(), v->end()), values);
  EXPECT_EQ(arrays.GetScalar<uint64_t>("n").value(), 42u);
  EXPECT_EQ(arrays.GetStrings("names").value()[1], "bc");
  EXPECT_EQ(arrays.Get<uint32_t>("v").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(arrays.Get<float>("w").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(arrays.GetScalar<float>("v").status().code(), StatusCode::kCorruption);

  uint64_t bad = 9;  // the last offset past the bytes
  std::memcpy(arrays.MutableBytes("names.o").data() + 2 * sizeof(uint64_t), &bad, sizeof bad);
  Result<StringArena> names = arrays.GetStrings("names");
  EXPECT_EQ(names.status().code(), StatusCode::kCorruption);
  EXPECT_NE(names.status().message().find("names"), std::string::npos);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
