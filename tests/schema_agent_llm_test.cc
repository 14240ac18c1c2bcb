// The schema agent's query analysis by a chat model (schema-contracts paper
// E.4), against a stub OpenAI chat server on loopback: the plan's
// constraints, return fields and tool order are used after a closed-world
// check, ExternalSearch trips the out-of-scope gate, and a failing model
// leaves the offline analysis.
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

class SchemaAgentLlmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(stub_.ok());
    engine_ = testing::OpenShopStore(dir_.path());
    ASSERT_NE(engine_, nullptr);
    env_.Point(stub_.BaseUrl());  // after ingestion: only the agent talks to the model
  }

  // The model answers the planning prompt with `plan_`; anything else is an error.
  Json Reply(const Json& body) {
    const std::string prompt = body["messages"][0]["content"];
    if (prompt.find("schema-guided question-answering agent") == std::string::npos) {
      return {{"error", {{"message", "unexpected prompt"}}}};
    }
    return testing::ChatCompletionJson(plan_);
  }

  Answer Ask(const std::string& question, const std::string& analysis = "auto") {
    AnswerOptions o;
    o.answerer = "extractive";  // the model plans; answers stay offline
    o.schema.analysis = analysis;
    auto a = engine_->Ask(question, o);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return a.ok() ? *a : Answer{};
  }

  std::string plan_;
  testing::ChatModelEnv env_;
  testing::TempDir dir_;
  testing::RecordingJsonStub stub_{"/v1/chat/completions", [this](const Json& b) { return Reply(b); }};
  std::unique_ptr<Engine> engine_;
};

TEST_F(SchemaAgentLlmTest, PlannedLookupIsRunAndThePromptCarriesSchemaAndQuestion) {
  plan_ = R"({"out_of_scope": false, "tool_calls": [{"tool": "SchemaLookup", "entity_type": "customer",
              "constraints": {"name": "acme corp"}, "return_field": "City"}]})";
  const Answer a = Ask("Where is Acme Corp located?");
  ASSERT_TRUE(a.answered) << a.reasoning;
  EXPECT_EQ(a.text, "Berlin");
  EXPECT_EQ(a.answerer, "schema-lookup");
  ASSERT_EQ(a.steps.size(), 2u);
  EXPECT_EQ(a.steps[0].query, "Plan(Where is Acme Corp located?)");
  EXPECT_EQ(a.steps[0].answer, "SchemaLookup");
  EXPECT_EQ(a.steps[1].query.rfind("SchemaLookup(Customer:", 0), 0u) << a.steps[1].query;
  EXPECT_NE(a.steps[1].query.find("-> city"), std::string::npos);  // the model's return field
  ASSERT_FALSE(a.citations.empty());
  EXPECT_EQ(a.citations[0].quote, "city: Berlin");
  EXPECT_EQ(a.usage.llm_calls, 1);
  EXPECT_EQ(a.usage.prompt_tokens, 50);
  const auto seen = stub_.requests();
  ASSERT_EQ(seen.size(), 1u);
  const std::string prompt = seen[0].body["messages"][0]["content"];
  EXPECT_NE(prompt.find("=== SCHEMA (YAML) ==="), std::string::npos);
  EXPECT_NE(prompt.find("customer_id"), std::string::npos);  // the contract's fields
  EXPECT_NE(prompt.find("Where is Acme Corp located?"), std::string::npos);
  EXPECT_EQ(seen[0].body["response_format"]["type"], "json_object");
}

TEST_F(SchemaAgentLlmTest, NamesOutsideTheClosedWorldAreDroppedAndCounted) {
  plan_ = R"({"tool_calls": [
      {"tool": "SchemaLookup", "entity_type": "Supplier", "constraints": {"name": "Acme Corp"}},
      {"tool": "SchemaLookup", "entity_type": "Customer", "constraints": {"name": "Cyberdyne"},
       "return_field": "revenue"},
      {"tool": "WebBrowse", "query": "x"}]})";
  const Answer a = Ask("What is the city of Acme Corp?");
  // Nothing of the plan survives; the offline analysis answers.
  EXPECT_EQ(a.text, "Berlin");
  ASSERT_FALSE(a.warnings.empty());
  EXPECT_EQ(a.warnings[0].rfind("4 name(s) or value(s) proposed by the model", 0), 0u) << a.warnings[0];
  EXPECT_EQ(a.steps[0].answer, "");  // no valid tool in the plan
}

TEST_F(SchemaAgentLlmTest, PlannedTraversalMakesTheReturnedFieldABridge) {
  plan_ = R"({"tool_calls": [{"tool": "SchemaLookup", "entity_type": "Customer",
              "constraints": {"name": "Acme Corp"}, "return_field": "city"},
             {"tool": "GraphTraverse", "start_entity": "Acme Corp", "pattern": "city -> page"}]})";
  const Answer a = Ask("How many inhabitants live in the city of Acme Corp?");
  ASSERT_TRUE(a.answered) << a.reasoning;
  EXPECT_NE(a.text.find("3.7 million"), std::string::npos) << a.text;
  ASSERT_EQ(a.steps.size(), 3u);
  EXPECT_EQ(a.steps[0].answer, "SchemaLookup -> GraphTraverse");
  EXPECT_EQ(a.steps[2].query, "GraphTraverse(link: Berlin)");
}

TEST_F(SchemaAgentLlmTest, ContainedValueFromThePlanScoresPointEight) {
  plan_ = R"({"tool_calls": [{"tool": "SchemaLookup", "entity_type": "Customer",
              "constraints": {"name": "Vandelay"}, "return_field": "city"}]})";
  const Answer a = Ask("Where is that importer based?");  // no known value in the question itself
  ASSERT_TRUE(a.answered) << a.reasoning;
  EXPECT_EQ(a.text, "New York");
  EXPECT_NEAR(a.confidence, 0.8, 1e-9);  // c_node of a contained match
}

TEST_F(SchemaAgentLlmTest, ExternalSearchMeansOutOfScope) {
  plan_ = R"({"out_of_scope": true, "reason": "asks for today's stock price",
              "tool_calls": [{"tool": "ExternalSearch", "query": "Acme Corp stock price"}]})";
  const Answer a = Ask("What is the stock price of Acme Corp?");
  EXPECT_FALSE(a.answered);
  EXPECT_EQ(a.reasoning.rfind("out of scope: the model: asks for today's stock price", 0), 0u) << a.reasoning;
  ASSERT_EQ(a.steps.size(), 1u);  // the plan only: no tool ran
  EXPECT_EQ(a.steps[0].answer, "ExternalSearch");
}

TEST_F(SchemaAgentLlmTest, ModelsToolOrderComesFirst) {
  // Offline, a known value routes to SchemaLookup first (which has no answer
  // for "expand" and retries); the model sends the question to VectorRAG.
  plan_ = R"({"tool_calls": [{"tool": "VectorRAG", "query": "Acme Corp expansion plans",
              "filters": {"entity": "Acme Corp", "year": 2022}}]})";
  const Answer a = Ask("Where does Acme Corp plan to expand?");
  ASSERT_TRUE(a.answered) << a.reasoning;
  EXPECT_EQ(a.text, "Munich");
  ASSERT_EQ(a.steps.size(), 2u);
  EXPECT_EQ(a.steps[1].query.rfind("VectorRAG(", 0), 0u);
  // c_link 1.0 (the first tool, no retry) · c_node 1 · c_ground 0.9, with the
  // low-similarity discount when the dense score is under the floor.
  bool low = false;
  for (const std::string& w : a.warnings) low = low || w.rfind("low retrieval similarity", 0) == 0;
  EXPECT_NEAR(a.confidence, low ? 0.9 * 0.8 : 0.9, 1e-9);
  ASSERT_FALSE(a.citations.empty());
  EXPECT_EQ(a.citations[0].document_id, "notes/acme.md");
}

TEST_F(SchemaAgentLlmTest, UnreadableOrFailingModelLeavesTheOfflineAnalysis) {
  plan_ = "I would look it up in the customer table.";
  Answer a = Ask("What is the city of Acme Corp?");
  EXPECT_EQ(a.text, "Berlin");
  ASSERT_FALSE(a.warnings.empty());
  EXPECT_EQ(a.warnings[0].rfind("query analysis by the model failed", 0), 0u) << a.warnings[0];

  stub_.SetHandler([](const Json&, httplib::Response& res, int) {
    res.status = 500;
    res.set_content(R"({"error": {"message": "overloaded"}})", "application/json");
  });
  a = Ask("What is the segment of Globex?");
  EXPECT_EQ(a.text, "smb");
  ASSERT_FALSE(a.warnings.empty());
  EXPECT_EQ(a.warnings[0].rfind("query analysis by the model failed", 0), 0u) << a.warnings[0];
}

TEST_F(SchemaAgentLlmTest, OfflineAnalysisNeverAsks) {
  plan_ = R"({"tool_calls": []})";
  const Answer a = Ask("What is the city of Acme Corp?", "offline");
  EXPECT_EQ(a.text, "Berlin");
  EXPECT_TRUE(stub_.requests().empty());
  EXPECT_EQ(a.usage.llm_calls, 0);
}

TEST(SchemaAgentAnalysisOptionTest, LlmAnalysisWithoutAModelIsRefused) {
  testing::ChatModelEnv env;  // no model configured
  testing::TempDir dir;
  testing::WriteShopSources(dir.path() + "/src");
  auto induced = InduceSchema(dir.path() + "/src");
  ASSERT_TRUE(induced.ok());
  auto engine = Engine::Open(dir.File("store.db"));
  ASSERT_TRUE(engine.ok());
  ASSERT_TRUE((*engine)->Ingest(dir.path() + "/src", DeriveContract(*induced)).ok());
  AnswerOptions o;
  o.schema.analysis = "llm";
  auto a = (*engine)->Ask("What is the city of Acme Corp?", o);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(a.status().message().find("schema.analysis"), std::string::npos);
  o.schema.analysis = "sometimes";
  a = (*engine)->Ask("What is the city of Acme Corp?", o);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message().rfind("schema.analysis \"sometimes\"", 0), 0u) << a.status().message();
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
