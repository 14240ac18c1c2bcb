// The engine's LLM extraction phase against a stub OpenAI chat server on
// loopback: a passage whose calls fail stays pending and is retried by the
// next run, which replays every answer already received from the store's
// response cache; --dry-run estimates without calling.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

#include "flowrag/engine.h"
#include "stub_server.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::TempDir;
using testing::WriteFile;

struct Script {
  std::string ner, triples;
};

class StubChat {
 public:
  StubChat() {
    httplib::Server& server = http_.server();
    server.Post("/v1/chat/completions", [this](const httplib::Request& req,
                                               httplib::Response& res) {
      ++requests_;
      auto body = nlohmann::json::parse(req.body);
      const std::string system = body["messages"][0]["content"];
      const std::string user = body["messages"].back()["content"];
      const bool ner = system.find("named entities") != std::string::npos;
      for (const auto& [needle, script] : scripts_) {
        if (user.find(needle) == std::string::npos) continue;
        if (!ner && fail_triples_for_ == needle) {
          res.status = 500;
          res.set_content(R"({"error": {"message": "overloaded"}})", "application/json");
          return;
        }
        Reply(res, ner ? script.ner : script.triples);
        return;
      }
      res.status = 400;
      res.set_content(R"({"error": {"message": "unexpected prompt"}})", "application/json");
    });
    http_.Start();
  }
  ~StubChat() { http_.Stop(); }
  std::string url() const { return http_.url() + "/v1"; }
  void Add(const std::string& needle, Script s) { scripts_.emplace_back(needle, std::move(s)); }
  void FailTriplesFor(const std::string& needle) { fail_triples_for_ = needle; }
  int requests() const { return requests_; }

 private:
  static void Reply(httplib::Response& res, const std::string& content) {
    nlohmann::json r = {
        {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", content}}},
                      {"finish_reason", "stop"}}}},
        {"usage", {{"prompt_tokens", 100}, {"completion_tokens", 20}}}};
    res.set_content(r.dump(), "application/json");
  }
  std::vector<std::pair<std::string, Script>> scripts_;
  std::string fail_triples_for_;
  std::atomic<int> requests_{0};
  testing::StubHttpServer http_;
};

class LlmExtractionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    stub_.Add("Ada Morrow founded",
              {R"({"named_entities": ["Ada Morrow", "Merrow Observatory", "1901"]})",
               R"({"triples": [["Ada Morrow", "founded", "Merrow Observatory"],
                               ["Merrow Observatory", "founded in", "1901"],
                               ["Ada Morrow", "married", "Invented Person"]]})"});
    stub_.Add("stands on Tor Eskin",
              {R"({"named_entities": ["Merrow Observatory", "Tor Eskin"]})",
               R"({"triples": [["Merrow Observatory", "stands on", "Tor Eskin"]]})"});
    stub_.Add("Tor Eskin is a hill",
              {R"({"named_entities": ["Tor Eskin", "Hallam Hills"]})",
               R"({"triples": [["Tor Eskin", "is a hill in", "Hallam Hills"]]})"});
    setenv("FLOWRAG_LLM_BASE_URL", stub_.url().c_str(), 1);
    setenv("FLOWRAG_LLM_MODEL", "stub-chat", 1);
    setenv("FLOWRAG_LLM_API_KEY", "", 1);
    setenv("FLOWRAG_LLM_MAX_RETRIES", "0", 1);
    WriteFile(dir_.File("c.jsonl"),
              "{\"id\": \"d1\", \"text\": \"Ada Morrow founded the Merrow Observatory in 1901.\"}\n"
              "{\"id\": \"d2\", \"text\": \"The Merrow Observatory stands on Tor Eskin.\"}\n"
              "{\"id\": \"d3\", \"text\": \"Tor Eskin is a hill in the Hallam Hills.\"}\n");
    options_.chunking.strategy = ChunkOptions::Strategy::kNone;
    options_.extractor = "auto";  // a chat model is configured: the LLM extractor
  }
  void TearDown() override {
    for (const char* v : {"FLOWRAG_LLM_BASE_URL", "FLOWRAG_LLM_MODEL", "FLOWRAG_LLM_API_KEY",
                          "FLOWRAG_LLM_MAX_RETRIES"}) {
      unsetenv(v);
    }
  }
  StubChat stub_;
  TempDir dir_;
  IndexOptions options_;
};

TEST_F(LlmExtractionTest, FailedPassageIsRetriedFromTheCache) {
  auto engine = Engine::Open(dir_.File("s.db"));
  ASSERT_TRUE(engine.ok());
  stub_.FailTriplesFor("Tor Eskin is a hill");
  auto first = (*engine)->Index({dir_.File("c.jsonl")}, options_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->extractor, "llm:openie");
  EXPECT_EQ(first->passages_extracted, 2u);
  EXPECT_EQ(first->extraction_failures, 1u);
  bool invented_rejected = false;
  for (const std::string& m : first->messages) {
    invented_rejected |= m.find("Invented Person") != std::string::npos;
  }
  EXPECT_TRUE(invented_rejected);  // a triple naming an entity NER did not find
  auto stats = (*engine)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->graph.failed_passages, 1);
  EXPECT_EQ(stats->graph.nodes.at("Entity"), 4);  // Ada Morrow, Merrow Observatory, 1901, Tor Eskin
  EXPECT_EQ(stats->graph.nodes.at("Fact"), 3);    // founded, founded in, stands on
  EXPECT_GT(stats->graph.llm_prompt_tokens, 0);

  // The endpoint recovers: only d3's triple call goes out (its NER answer
  // is replayed from the cache), and d1/d2 are not touched.
  stub_.FailTriplesFor("");
  const int before = stub_.requests();
  auto second = (*engine)->Index({dir_.File("c.jsonl")}, options_);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->passages_extracted, 1u);
  EXPECT_EQ(second->extraction_failures, 0u);
  EXPECT_EQ(stub_.requests() - before, 1);
  stats = (*engine)->Stats();
  EXPECT_EQ(stats->graph.failed_passages, 0);
  EXPECT_EQ(stats->graph.nodes.at("Entity"), 5);  // + Hallam Hills
  EXPECT_EQ(stats->graph.nodes.at("Fact"), 4);    // + is a hill in

  // Nothing pending: a third run makes no request.
  const int after = stub_.requests();
  ASSERT_TRUE((*engine)->Index({dir_.File("c.jsonl")}, options_).ok());
  EXPECT_EQ(stub_.requests(), after);
}

TEST_F(LlmExtractionTest, DryRunEstimatesWithoutCalling) {
  auto engine = Engine::Open(dir_.File("s.db"));
  ASSERT_TRUE(engine.ok());
  options_.dry_run = true;
  auto r = (*engine)->Index({dir_.File("c.jsonl")}, options_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->estimated_llm_calls, 6u);  // NER + triples per passage
  EXPECT_GT(r->estimated_prompt_tokens, 100u);
  EXPECT_GT(r->estimated_completion_tokens, 0u);
  EXPECT_EQ(stub_.requests(), 0);
  auto stats = (*engine)->Stats();
  EXPECT_EQ(stats->documents, 3);  // documents are stored all the same
  EXPECT_EQ(stats->graph.extracted_passages, 0);
}

TEST_F(LlmExtractionTest, UnreachableEndpointLeavesPassagesPending) {
  setenv("FLOWRAG_LLM_BASE_URL", "http://127.0.0.1:1/v1", 1);
  auto engine = Engine::Open(dir_.File("s.db"));
  ASSERT_TRUE(engine.ok());
  auto r = (*engine)->Index({dir_.File("c.jsonl")}, options_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->passages_extracted, 0u);
  EXPECT_EQ(r->extraction_failures, 3u);
  ASSERT_FALSE(r->messages.empty());
  EXPECT_NE(r->messages[0].find("127.0.0.1:1"), std::string::npos) << r->messages[0];
  auto stats = (*engine)->Stats();
  EXPECT_EQ(stats->documents, 3);
  EXPECT_EQ(stats->graph.extracted_passages, 0);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
