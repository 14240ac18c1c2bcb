// Snapshot::Derived: data derived once per snapshot and shared; a failed
// derivation (null) is tried again on the next use.
#include <gtest/gtest.h>

#include <memory>

#include "graph/snapshot.h"
#include "storage/store.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

TEST(SnapshotDerivedTest, KeptOnceMadeAndTriedAgainAfterANull) {
  auto store = Store::Open(":memory:");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto snap = Snapshot::Build(**store, nullptr, SnapshotOptions{});
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  static const char kTag = 0;
  int calls = 0;
  auto make = [&](bool fail) {
    return [&calls, fail]() -> std::shared_ptr<const void> {
      ++calls;
      return fail ? nullptr : std::make_shared<const int>(42);
    };
  };
  EXPECT_EQ((*snap)->Derived(&kTag, make(true)), nullptr);
  auto made = (*snap)->Derived(&kTag, make(false));
  ASSERT_NE(made, nullptr);
  EXPECT_EQ(*std::static_pointer_cast<const int>(made), 42);
  EXPECT_EQ((*snap)->Derived(&kTag, make(true)), made);  // kept: not made again
  EXPECT_EQ(calls, 2);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
