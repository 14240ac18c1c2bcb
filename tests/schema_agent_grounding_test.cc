// The schema agent's post-retrieval gate (schema-contracts paper D.3 stage
// 2) on answers a chat model writes, against a stub OpenAI chat server: an
// answer stating uncertainty ("I cannot determine ...") or repeating the
// question's own constraint is not grounded, so the next tool runs and the
// agent abstains when none grounds; a real answer still stands.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "flowrag/engine.h"
#include "flowrag/schema.h"
#include "shop_sources.h"
#include "stub_server.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using Json = nlohmann::json;

class SchemaAgentGroundingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(stub_.ok());
    engine_ = testing::OpenShopStore(dir_.path());
    ASSERT_NE(engine_, nullptr);
    env_.Point(stub_.BaseUrl());  // after ingestion: only the answerer talks to the model
  }

  // Every answer prompt gets `final_answer_`, citing the first passage.
  Json Reply(const Json&) {
    return testing::ChatCompletionJson(
        Json{{"reasoning", "read the passages"}, {"final_answer", final_answer_}, {"citations", {1}}}.dump());
  }

  Answer Ask(const std::string& question) {
    AnswerOptions o;
    o.answerer = "llm";
    o.schema.analysis = "offline";  // no planning call: the model only answers
    o.schema.extension = "off";
    auto a = engine_->Ask(question, o);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return a.ok() ? *a : Answer{};
  }

  std::string final_answer_;
  testing::ChatModelEnv env_;
  testing::TempDir dir_;
  testing::RecordingJsonStub stub_{"/v1/chat/completions", [this](const Json& b) { return Reply(b); }};
  std::unique_ptr<Engine> engine_;
};

TEST_F(SchemaAgentGroundingTest, UncertainAnswerIsNotGroundedAndTheAgentAbstains) {
  final_answer_ = "I cannot determine this from the given passages.";
  const Answer a = Ask("Where does Acme Corp plan to expand?");
  EXPECT_FALSE(a.answered);
  EXPECT_EQ(a.text, "Insufficient Information");
  ASSERT_EQ(a.steps.size(), 3u);  // SchemaLookup (no value), VectorRAG, GraphTraverse
  for (size_t i = 1; i < a.steps.size(); ++i) {
    EXPECT_NE(a.steps[i].summary.find("states uncertainty (\"cannot determine\")"), std::string::npos)
        << a.steps[i].summary;
  }
  EXPECT_NE(a.reasoning.find("no grounded answer"), std::string::npos);
}

TEST_F(SchemaAgentGroundingTest, AnswerRepeatingTheQuestionsConstraintIsRejected) {
  final_answer_ = "Acme Corp";
  const Answer a = Ask("Where does Acme Corp plan to expand?");
  EXPECT_FALSE(a.answered);
  ASSERT_GE(a.steps.size(), 2u);
  EXPECT_NE(a.steps[1].summary.find("is the question's own constraint"), std::string::npos)
      << a.steps[1].summary;
}

TEST_F(SchemaAgentGroundingTest, GroundedModelAnswerStands) {
  final_answer_ = "Munich";
  const Answer a = Ask("Where does Acme Corp plan to expand?");
  ASSERT_TRUE(a.answered) << a.reasoning;
  EXPECT_EQ(a.text, "Munich");
  EXPECT_GT(a.confidence, 0.0);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
