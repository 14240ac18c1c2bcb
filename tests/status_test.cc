#include "flowrag/status.h"

#include <gtest/gtest.h>

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

Result<int> ParsePositive(int v) {
  if (v <= 0) return Status::InvalidArgument("value: expected a positive number");
  return v;
}

Result<int> Twice(int v) {
  FLOWRAG_ASSIGN_OR_RETURN(int x, ParsePositive(v));
  return 2 * x;
}

TEST(StatusTest, OkAndErrorsFormat) {
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok().ToString(), "OK");
  Status s = Status::NotFound("docs/a.txt: no such file");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "NotFound: docs/a.txt: no such file");
  EXPECT_EQ(s.WithContext("index").message(), "index: docs/a.txt: no such file");
}

TEST(StatusTest, ResultPropagatesErrors) {
  auto ok = Twice(4);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 8);
  auto bad = Twice(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("positive"), std::string::npos);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
