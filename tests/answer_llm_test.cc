// Answering with a chat model, against a stub OpenAI chat server on
// loopback: the single, CoT and decomposition pipelines make the documented
// calls, citations come from the model's markers (closed-world), usage and
// cost are counted per answer, and a model failing mid-pipeline degrades to
// the extractive answer and says so.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "flowrag/engine.h"
#include "stub_server.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using Json = nlohmann::json;

Json ChatAnswer(const std::string& content) { return testing::ChatCompletionJson(content); }

std::string System(const Json& body) { return body["messages"][0]["content"]; }
std::string User(const Json& body) { return body["messages"][1]["content"]; }

// Answers by the system prompt of each step.
Json Answer(const Json& body) {
  const std::string system = System(body);
  if (system.find("split a multi-hop question") != std::string::npos) {
    return ChatAnswer(R"({"subquestions": [{"id": 1, "question": "Who founded the Lantern Tide Festival?"},
                                          {"id": 2, "question": "Where was Corin Aske born?"}]})");
  }
  if (system.find("provided_context") != std::string::npos) {
    if (User(body).find("From earlier steps") == std::string::npos) {
      return ChatAnswer(R"({"provided_context": "The festival was founded by Corin Aske.",
                            "answer_possible": false, "final_answer": "",
                            "additional_question": "Where was Corin Aske born?", "citations": [1]})");
    }
    return ChatAnswer(R"({"provided_context": "Corin Aske was born in Wrenfield.",
                          "answer_possible": true, "final_answer": "Wrenfield", "citations": [1]})");
  }
  if (system.find("markdown") != std::string::npos) {
    return ChatAnswer("## Answer\nCorin Aske, who founded the festival [1], was born in Wrenfield [2][99].");
  }
  if (system.find("numbered context below") != std::string::npos) {
    return ChatAnswer(R"({"reasoning": "Passage [1] names the founder.", "final_answer": "Wrenfield",
                          "citations": [1, 99]})");
  }
  return {{"error", {{"message", "unexpected prompt"}}}};
}

class AnswerLlmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(stub_.ok());
    auto e = Engine::Open(dir_.File("demo.db"));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
    ASSERT_TRUE(engine_->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"}).ok());
    env_.Point(stub_.BaseUrl(), /*price_input=*/"1", /*price_output=*/"2");  // USD per million
  }
  Result<flowrag::Answer> Ask(const std::string& pipeline, const std::string& style = "short") {
    AnswerOptions o;
    o.query.method = "hybrid";  // no retrieval-side model calls
    o.pipeline = pipeline;
    o.style = style;
    return engine_->Ask(kQuestion, o);
  }
  static constexpr const char* kQuestion =
      "In which town was the man who founded the Lantern Tide Festival born?";
  testing::ChatModelEnv env_;  // cleared first and last
  testing::TempDir dir_;
  testing::RecordingJsonStub stub_{"/v1/chat/completions", Answer};
  std::unique_ptr<Engine> engine_;
};

TEST_F(AnswerLlmTest, SingleUsesTheAnswerPromptAndTheModelsCitations) {
  auto a = Ask("single");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->answerer, "llm:stub-chat");
  EXPECT_EQ(a->text, "Wrenfield");
  EXPECT_EQ(a->reasoning, "Passage [1] names the founder.");
  EXPECT_TRUE(a->answered);
  ASSERT_EQ(a->citations.size(), 1u);  // marker 99 is outside the context: dropped
  EXPECT_EQ(a->citations[0].marker, 1);
  EXPECT_EQ(a->citations[0].passage_id, a->retrieval.passages[0].passage_id);
  EXPECT_EQ(a->usage.llm_calls, 1);
  EXPECT_EQ(a->usage.prompt_tokens, 50);
  EXPECT_EQ(a->usage.completion_tokens, 10);
  EXPECT_NEAR(a->usage.cost_usd, (50 * 1.0 + 10 * 2.0) / 1e6, 1e-15);
  EXPECT_TRUE(a->warnings.empty());
  // The prompt carries the question and the numbered context.
  const auto seen = stub_.requests();
  ASSERT_EQ(seen.size(), 1u);
  const std::string user = User(seen[0].body);
  EXPECT_NE(user.find(kQuestion), std::string::npos);
  EXPECT_NE(user.find("[1] "), std::string::npos);
  EXPECT_NE(user.find("[5] "), std::string::npos);
  EXPECT_EQ(user.find("[6] "), std::string::npos);  // context_passages = 5
  EXPECT_EQ(seen[0].body["response_format"]["type"], "json_object");
  // Asked again: the store's response cache answers, at no cost.
  auto again = Ask("single");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->usage.cache_hits, 1);
  EXPECT_EQ(again->usage.cost_usd, 0.0);
  EXPECT_EQ(stub_.requests().size(), 1u);
}

TEST_F(AnswerLlmTest, CotAsksTheFollowUpThenAnswersFromEverything) {
  auto a = Ask("cot");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->steps.size(), 2u);
  EXPECT_EQ(a->steps[0].query, kQuestion);
  EXPECT_EQ(a->steps[0].follow_up, "Where was Corin Aske born?");
  EXPECT_EQ(a->steps[0].summary, "The festival was founded by Corin Aske.");
  EXPECT_EQ(a->steps[1].query, "Where was Corin Aske born?");
  EXPECT_EQ(a->steps[1].answer, "Wrenfield");
  EXPECT_EQ(a->text, "Wrenfield");
  EXPECT_EQ(a->usage.llm_calls, 3);  // two reasoning steps and the final answer
  // The second step saw the first step's summary.
  const auto seen = stub_.requests();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_NE(User(seen[1].body).find("The festival was founded by Corin Aske."), std::string::npos);
  // The final context holds both rounds' passages.
  EXPECT_GT(a->retrieval.passages.size(), 5u);
}

TEST_F(AnswerLlmTest, DecomposeAnswersSubQuestionsInOrderThenTheQuestion) {
  auto a = Ask("decompose");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->steps.size(), 3u);  // two sub-questions and the final retrieval
  EXPECT_EQ(a->steps[0].query, "Who founded the Lantern Tide Festival?");
  // The second retrieval carries the first question and its answer.
  EXPECT_NE(a->steps[1].query.find("Who founded the Lantern Tide Festival? Wrenfield."),
            std::string::npos);
  EXPECT_NE(a->steps[1].query.find("Where was Corin Aske born?"), std::string::npos);
  EXPECT_EQ(a->steps[2].query, kQuestion);
  EXPECT_EQ(a->usage.llm_calls, 4);  // decomposition, two sub-answers, the final answer
  const auto seen = stub_.requests();
  EXPECT_NE(User(seen.back().body).find("Q: Where was Corin Aske born?"), std::string::npos);
}

TEST_F(AnswerLlmTest, LongFormCitesInlineMarkers) {
  auto a = Ask("single", "long");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_NE(a->text.find("## Answer"), std::string::npos);
  ASSERT_EQ(a->citations.size(), 2u);
  EXPECT_EQ(a->citations[0].marker, 1);
  EXPECT_EQ(a->citations[1].marker, 2);
}

TEST_F(AnswerLlmTest, ModelFailingMidPipelineDegradesToExtractive) {
  stub_.SetHandler([](const Json& body, httplib::Response& res, int n) {
    if (n == 0) {  // the first reasoning step works
      res.set_content(Answer(body).dump(), "application/json");
      return;
    }
    res.status = 500;
    res.set_content(R"({"error": {"message": "down"}})", "application/json");
  });
  auto a = Ask("cot");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->answerer, "extractive");
  ASSERT_FALSE(a->warnings.empty());
  EXPECT_NE(a->warnings[0].find("chat model failed during chain-of-thought step 2"),
            std::string::npos);
  EXPECT_FALSE(a->text.empty());
  EXPECT_FALSE(a->citations.empty());
  EXPECT_EQ(a->steps[0].follow_up, "Where was Corin Aske born?");  // kept from the model
}

TEST_F(AnswerLlmTest, AnUncitedAnswerIsCitedWhereItAppearsOrFlagged) {
  stub_.SetHandler([](const Json&, httplib::Response& res, int) {
    res.set_content(ChatAnswer(R"({"reasoning": "r", "final_answer": "Nowhere Town"})").dump(),
                    "application/json");
  });
  auto a = Ask("single");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a->citations.empty());
  ASSERT_EQ(a->warnings.size(), 1u);
  EXPECT_NE(a->warnings[0].find("cited no passage"), std::string::npos);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
