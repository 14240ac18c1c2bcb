// Query-time LLM steps (retrieval/query_llm.h) against a stub OpenAI chat
// server on loopback: keyword, decomposition and fact-filter answers are
// parsed as documented, the graph retrievers use them when a chat model is
// configured, and fall back to the offline path (and say so) when it fails.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/engine_impl.h"
#include "flowrag/engine.h"
#include "llm/chat_client.h"
#include "retrieval/query_llm.h"
#include "stub_chat_client.h"
#include "stub_server.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using Json = nlohmann::json;

Json ChatAnswer(const std::string& content) { return testing::ChatCompletionJson(content); }

// Answers by the system prompt: keywords, decomposition or fact filter.
Json Answer(const Json& body) {
  const std::string system = body["messages"][0]["content"];
  const std::string user = body["messages"][1]["content"];
  if (system.find("keywords") != std::string::npos) {
    return ChatAnswer(R"({"high_level_keywords": ["research vessel", "shipbuilding"],
                          "low_level_keywords": ["Winnie Lusk", "winnie  lusk", ""]})");
  }
  if (system.find("multi-hop question") != std::string::npos) {
    return ChatAnswer(R"(Sure: {"original_question": "q", "subquestions": [
        {"id": 2, "question": "Which company built that vessel?"},
        {"id": 1, "question": "Which institute did Winnie Lusk direct?"}]})");
  }
  if (system.find("filter candidate facts") != std::string::npos) {
    // Keep the first candidate (re-cased), and invent one that is not a candidate.
    const Json facts = Json::parse(user.substr(user.find('{')))["fact"];
    Json keep = Json::array();
    if (!facts.empty()) {
      std::string s = facts[0][0];
      for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      keep.push_back({s, facts[0][1], facts[0][2]});
    }
    keep.push_back({"Invented", "is not", "a candidate"});
    return ChatAnswer(Json{{"fact", keep}}.dump());
  }
  return {{"error", {{"message", "unexpected prompt"}}}};
}

class QueryLlmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(stub_.ok());
    chat_ = testing::StubChatClient(stub_.BaseUrl(), "stub-chat");
    ASSERT_NE(chat_, nullptr);
  }
  testing::RecordingJsonStub stub_{"/v1/chat/completions", Answer};
  std::unique_ptr<ChatModel> chat_;
};

TEST_F(QueryLlmTest, KeywordsLowLevelFirstDeduplicated) {
  auto k = LlmQueryKeywords(*chat_, "Which company built the vessel Winnie Lusk's institute uses?");
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_EQ(*k, (std::vector<std::string>{"Winnie Lusk", "research vessel", "shipbuilding"}));
}

TEST_F(QueryLlmTest, DecompositionOrderedById) {
  auto d = LlmDecomposeQuery(*chat_, "Which company built the vessel of Winnie Lusk's institute?");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->size(), 2u);
  EXPECT_EQ((*d)[0], "Which institute did Winnie Lusk direct?");
  EXPECT_EQ((*d)[1], "Which company built that vessel?");
}

TEST_F(QueryLlmTest, FactFilterIsClosedWorld) {
  std::vector<Triple> facts = {{"Ada Morrow", "founded", "Merrow Observatory"},
                               {"Merrow Observatory", "located in", "Wrenfield"}};
  auto kept = LlmFilterFacts(*chat_, "Who founded the observatory?", facts, 12);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(*kept, (std::vector<size_t>{0}));  // re-cased match kept; invented triple ignored
  // The prompt asked for at most max_keep facts.
  const std::string system = stub_.requests().back().body["messages"][0]["content"];
  EXPECT_NE(system.find("at most 12 facts"), std::string::npos);
}

TEST_F(QueryLlmTest, MalformedAnswersAreErrors) {
  stub_.SetHandler([](const Json&, httplib::Response& res, int) {
    res.set_content(ChatAnswer(R"({"something": "else"})").dump(), "application/json");
  });
  EXPECT_EQ(LlmQueryKeywords(*chat_, "q").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LlmDecomposeQuery(*chat_, "q").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LlmFilterFacts(*chat_, "q", {{"a", "b", "c"}}, 5).status().code(),
            StatusCode::kInvalidArgument);
}

// The engine with a configured chat model: the retrievers use the model's
// keywords, decomposition and fact filter, and degrade to offline when it fails.
class EngineQueryLlmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = Engine::Open(dir_.File("demo.db"));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
    // Indexed before the model is configured: the offline extractor.
    ASSERT_TRUE(engine_->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"}).ok());
    env_.Point(stub_.BaseUrl());
  }
  Result<RetrievalResult> Query(Engine& e, const std::string& method,
                                std::map<std::string, std::string> params = {},
                                const std::string& question = kQuestion) {
    QueryOptions o;
    o.method = method;
    o.top_k = 5;
    o.params = std::move(params);
    return e.Query(question, o);
  }
  static constexpr const char* kQuestion =
      "Which company built the research vessel of the institute that Winnie Lusk directed?";
  testing::ChatModelEnv env_;  // cleared first and last
  testing::TempDir dir_;
  testing::RecordingJsonStub stub_{"/v1/chat/completions", Answer};
  std::unique_ptr<Engine> engine_;
};

TEST_F(EngineQueryLlmTest, RetrieversUseTheModelAndFallBackWhenItFails) {
  // Names mode: Algorithm 1 seeds from the model's keywords.
  auto qafd = Query(*engine_, "qafd", {{"qafd.subqueries", "true"}, {"qafd.seeds", "names"}});
  ASSERT_TRUE(qafd.ok()) << qafd.status().ToString();
  EXPECT_GT(qafd->diagnostics.extra["llm_keywords"], 0);
  EXPECT_EQ(qafd->diagnostics.extra["subqueries"], 2.0);  // the model's two sub-questions
  EXPECT_EQ(qafd->diagnostics.extra.count("llm_fallback"), 0u);
  bool has_llm_keyword = false;
  for (const std::string& k : qafd->keywords) has_llm_keyword |= k == "research vessel";
  EXPECT_TRUE(has_llm_keyword);

  auto ppr = Query(*engine_, "ppr");
  ASSERT_TRUE(ppr.ok()) << ppr.status().ToString();
  EXPECT_GT(ppr->diagnostics.extra["facts_filtered_out"], 0);
  auto semflow = Query(*engine_, "semflow");
  ASSERT_TRUE(semflow.ok());
  EXPECT_GT(semflow->diagnostics.extra["facts_filtered_out"], 0);
  // Per-query switches turn the model off.
  auto no_filter = Query(*engine_, "ppr", {{"ppr.fact_filter", "false"}});
  ASSERT_TRUE(no_filter.ok());
  EXPECT_EQ(no_filter->diagnostics.extra.count("facts_filtered_out"), 0u);

  // A failing model: the same ranking as the offline engine, marked as a
  // fallback. (A new question: answers already received are replayed from
  // the store's response cache.)
  const std::string other = "In which town was the man who founded the Lantern Tide Festival born?";
  stub_.SetHandler([](const Json&, httplib::Response& res, int) {
    res.status = 500;
    res.set_content(R"({"error": {"message": "down"}})", "application/json");
  });
  const std::map<std::string, std::map<std::string, std::string>> model_off = {
      {"qafd", {{"qafd.llm", "false"}}},
      {"onehop", {{"onehop.llm", "false"}}},
      {"ppr", {{"ppr.fact_filter", "false"}}}};
  for (const auto& [method, off] : model_off) {
    auto degraded = Query(*engine_, method, {}, other);
    auto offline = Query(*engine_, method, off, other);
    ASSERT_TRUE(degraded.ok() && offline.ok()) << method;
    EXPECT_EQ(degraded->diagnostics.extra["llm_fallback"], 1.0) << method;
    EXPECT_EQ(offline->diagnostics.extra.count("llm_fallback"), 0u) << method;
    ASSERT_EQ(degraded->passages.size(), offline->passages.size()) << method;
    for (size_t i = 0; i < degraded->passages.size(); ++i) {
      EXPECT_EQ(degraded->passages[i].passage_id, offline->passages[i].passage_id) << method;
    }
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
