// The OpenAI-compatible endpoints driven by the official OpenAI client
// library (npm "openai", js/clients/openai_chat.mjs) against a real server on
// loopback: models, a plain and a streamed chat completion, errors. Skipped
// with a message when Node.js or js/node_modules is missing (scripts/setup.sh
// installs both).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "flowrag/engine.h"
#include "flowrag/server.h"
#include "demo_server.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using nlohmann::json;


TEST(OpenAiClientTest, TheOfficialClientChatsStreamsAndListsModels) {
  const std::string js = testing::NodeOpenAiClientDir();
  if (js.empty()) GTEST_SKIP() << "needs node and js/node_modules/openai (run scripts/setup.sh)";
  int status = 0;
  testing::DemoServer server;
  ASSERT_TRUE(server.ok());
  const std::string base = server.url() + "/v1";
  const std::string out = testing::RunCommand("node " + js + "/clients/openai_chat.mjs " + base +
                                  " 'How long is the River Ostrel?' 2>&1",
                              &status);
  ASSERT_EQ(status, 0) << out;
  const json j = json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << out;
  EXPECT_EQ(j["models"][0], "flowrag");
  EXPECT_NE(std::find(j["models"].begin(), j["models"].end(), "flowrag-qafd"), j["models"].end());
  const std::string plain = j["plain"]["content"];
  EXPECT_NE(plain.find("Sources:"), std::string::npos) << plain;
  EXPECT_EQ(j["plain"]["finish_reason"], "stop");
  EXPECT_GT(j["plain"]["citations"].get<int>(), 0);
  EXPECT_EQ(j["streamed"]["content"], plain);  // same answer, streamed
  EXPECT_EQ(j["streamed"]["finish_reason"], "stop");
  EXPECT_GE(j["streamed"]["chunks"].get<int>(), 3);
  EXPECT_TRUE(j["streamed"]["usage"].is_object());
  EXPECT_EQ(j["error"]["status"], 400);
  EXPECT_EQ(j["error"]["param"], "messages");
  EXPECT_EQ(j["unknown_model"]["status"], 404);
  EXPECT_EQ(j["unknown_model"]["code"], "model_not_found");
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
