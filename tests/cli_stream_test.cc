// `flowrag ask --stream` as a user runs it: the answer's text on stdout as it
// comes, then the citations, the same answer as without --stream.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>

#include "flowrag/engine.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

std::string RunCli(const std::string& args, int* status) {
  return testing::RunCommand(
      std::string(FLOWRAG_BINARY_DIR) + "/tools/flowrag " + args + " 2>/dev/null", status);
}

TEST(CliStreamTest, AskStreamPrintsTheSameAnswerAndCitations) {
  testing::TempDir dir;
  {
    auto engine = Engine::Open(dir.File("demo.db"));
    ASSERT_TRUE(engine.ok());
    ASSERT_TRUE((*engine)->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"}).ok());
  }
  const std::string ask = "ask --db " + dir.File("demo.db") + " 'How long is the River Ostrel?'";
  int status = 0;
  const std::string plain = RunCli(ask, &status);
  ASSERT_EQ(status, 0) << plain;
  const std::string streamed = RunCli(ask + " --stream", &status);
  ASSERT_EQ(status, 0) << streamed;
  EXPECT_EQ(streamed, plain);
  EXPECT_NE(streamed.find("\n[1] "), std::string::npos) << streamed;
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
