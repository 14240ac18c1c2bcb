// Follow-up questions in /v1/chat/completions on a real server on loopback
// over the demo corpus: "Who designed the Brannock lens?" then "Where was he
// born?" retrieves the designer's passage in the top 3 offline, and the
// rewritten query is in the response (the flowrag extension, the streamed
// chunks and a "Searched for:" line); with a chat model the model rewrites,
// and a model whose rewrite is unusable falls back offline with a warning;
// the official OpenAI client reads all of it (skipped without Node.js).
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "demo_server.h"
#include "flowrag/engine.h"
#include "flowrag/server.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using nlohmann::json;

constexpr const char* kFirst = "Who designed the Brannock lens?";
constexpr const char* kFollowUp = "Where was he born?";
constexpr const char* kDesignerPassage = "people/ivo_brannock.md";

json Post(const testing::DemoServer& server, const json& body) {
  httplib::Client c("127.0.0.1", server.port());
  c.set_read_timeout(60, 0);
  auto r = c.Post("/v1/chat/completions", body.dump(), "application/json");
  if (!r) return json{{"http_error", httplib::to_string(r.error())}};
  json j = json::parse(r->body, nullptr, false);
  if (j.is_discarded()) return json{{"status", r->status}, {"raw", r->body}};
  if (r->status != 200) j["status"] = r->status;
  return j;
}

// The data lines of a streamed reply.
std::vector<json> PostStreamed(const testing::DemoServer& server, json body) {
  body["stream"] = true;
  httplib::Client c("127.0.0.1", server.port());
  c.set_read_timeout(60, 0);
  auto r = c.Post("/v1/chat/completions", body.dump(), "application/json");
  std::vector<json> out;
  if (!r) return out;
  size_t at = 0;
  while ((at = r->body.find("data: ", at)) != std::string::npos) {
    const size_t end = r->body.find("\n\n", at);
    const std::string data = r->body.substr(at + 6, end - at - 6);
    out.push_back(data == "[DONE]" ? json("[DONE]") : json::parse(data, nullptr, false));
    at = end;
  }
  return out;
}

json Conversation(const std::string& first_answer, const std::string& follow_up = kFollowUp) {
  return json::array({{{"role", "system"}, {"content", "Answer from the documents."}},
                      {{"role", "user"}, {"content", kFirst}},
                      {{"role", "assistant"}, {"content", first_answer}},
                      {{"role", "user"}, {"content", follow_up}}});
}

// The document ids of the first `k` passages retrieved.
std::vector<std::string> TopDocuments(const json& flowrag, size_t k = 3) {
  std::vector<std::string> ids;
  for (const json& p : flowrag["retrieval"]["passages"]) {
    if (ids.size() == k) break;
    ids.push_back(p["document_id"]);
  }
  return ids;
}

bool Has(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// The first turn's answer as the client would send it back.
std::string FirstAnswer(const testing::DemoServer& server) {
  const json r =
      Post(server, {{"model", "flowrag"}, {"messages", {{{"role", "user"}, {"content", kFirst}}}}});
  EXPECT_EQ(r["flowrag"]["rewrite"]["method"], "none") << r.dump();
  EXPECT_EQ(r["flowrag"]["retrieval_query"], kFirst);
  const std::string content = r["choices"][0]["message"]["content"];
  EXPECT_EQ(content.find("Searched for:"), std::string::npos) << content;
  return content;
}

TEST(ServerFollowUpTest, TheFollowUpRetrievesTheDesignersPassageOffline) {
  testing::DemoServer server;
  ASSERT_TRUE(server.ok());
  const std::string first = FirstAnswer(server);
  const json r = Post(server, {{"model", "flowrag"}, {"messages", Conversation(first)}});
  ASSERT_TRUE(r.contains("flowrag")) << r.dump();
  const json& f = r["flowrag"];
  EXPECT_EQ(f["retrieval_query"], "Where was Ivo Brannock born?") << f["rewrite"].dump();
  EXPECT_EQ(f["rewrite"]["method"], "offline");
  EXPECT_EQ(f["rewrite"]["question"], kFollowUp);
  ASSERT_EQ(f["rewrite"]["references"].size(), 1u);
  EXPECT_EQ(f["rewrite"]["references"][0]["text"], "he");
  EXPECT_EQ(f["rewrite"]["references"][0]["target"], "Ivo Brannock");
  const std::vector<std::string> top = TopDocuments(f);
  EXPECT_TRUE(Has(top, kDesignerPassage)) << json(top).dump();
  EXPECT_EQ(f["answer"], "Saltinghame");
  const std::string content = r["choices"][0]["message"]["content"];
  EXPECT_NE(content.find("\n\nSearched for: Where was Ivo Brannock born?"), std::string::npos)
      << content;

  // Without the rewrite the question retrieves on its own words.
  const json off = Post(
      server,
      {{"model", "flowrag"}, {"messages", Conversation(first)}, {"flowrag", {{"rewrite", "off"}}}});
  EXPECT_EQ(off["flowrag"]["retrieval_query"], kFollowUp) << off.dump();
  EXPECT_EQ(off["flowrag"]["rewrite"]["method"], "none");
}

TEST(ServerFollowUpTest, TheStreamedReplyShowsTheQueryFirstAndLast) {
  testing::DemoServer server;
  ASSERT_TRUE(server.ok());
  const std::string first = FirstAnswer(server);
  const std::vector<json> events =
      PostStreamed(server, {{"model", "flowrag-bm25"}, {"messages", Conversation(first)}});
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(events.back(), json("[DONE]"));
  const json& head = events.front();
  EXPECT_EQ(head["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(head["flowrag"]["retrieval_query"], "Where was Ivo Brannock born?") << head.dump();
  std::string content;
  json last;
  for (const json& e : events) {
    if (e == json("[DONE]") || e["choices"].empty()) continue;
    content += e["choices"][0]["delta"].value("content", "");
    if (e["choices"][0]["finish_reason"] == "stop") last = e;
  }
  ASSERT_TRUE(last.is_object());
  EXPECT_EQ(last["flowrag"]["retrieval_query"], "Where was Ivo Brannock born?");
  EXPECT_TRUE(Has(TopDocuments(last["flowrag"]), kDesignerPassage));
  EXPECT_NE(content.find("Searched for: Where was Ivo Brannock born?"), std::string::npos)
      << content;
}

TEST(ServerFollowUpTest, ABadRewriteModeIsRefused) {
  testing::DemoServer server;
  ASSERT_TRUE(server.ok());
  const json r = Post(server, {{"model", "flowrag"},
                               {"messages", {{{"role", "user"}, {"content", kFirst}}}},
                               {"flowrag", {{"rewrite", "always"}}}});
  EXPECT_EQ(r["status"], 400) << r.dump();
  EXPECT_EQ(r["error"]["param"], "flowrag.rewrite");
}

// Answers the rewrite prompt with `rewrite`, anything else with a short
// JSON answer; counts the rewrite calls.
class RewritingChat final : public ChatModel {
 public:
  explicit RewritingChat(std::string rewrite) : rewrite_(std::move(rewrite)) {}
  std::string Model() const override { return "test:rewriting"; }
  Result<ChatResponse> Complete(const ChatRequest& request) override {
    ChatResponse r;
    r.finish_reason = "stop";
    if (!request.messages.empty() &&
        request.messages[0].content.find("standalone question") != std::string::npos) {
      ++rewrites;
      r.content = rewrite_;
      r.prompt_tokens = 40;
      r.completion_tokens = 8;
      return r;
    }
    r.content = R"({"reasoning": "see [1]", "final_answer": "Saltinghame", "citations": [1]})";
    return r;
  }
  std::atomic<int> rewrites{0};

 private:
  std::string rewrite_;
};

TEST(ServerFollowUpTest, AConfiguredChatModelRewritesTheQuestion) {
  auto chat = std::make_shared<RewritingChat>("Where was Ivo Brannock, the lens designer, born?");
  ServerOptions o;
  o.engine.chat_model = chat;
  testing::DemoServer server(o);
  ASSERT_TRUE(server.ok());
  const json messages =
      Conversation("Ivo Brannock\n\nSources:\n[1] Brannock Lens (brannock_lens.md)");
  const json r = Post(server, {{"model", "flowrag"}, {"messages", messages}});
  ASSERT_TRUE(r.contains("flowrag")) << r.dump();
  EXPECT_EQ(r["flowrag"]["retrieval_query"], "Where was Ivo Brannock, the lens designer, born?");
  EXPECT_EQ(r["flowrag"]["rewrite"]["method"], "llm");
  EXPECT_EQ(chat->rewrites.load(), 1);
  EXPECT_GE(r["usage"]["prompt_tokens"].get<int64_t>(), 40);  // the rewrite's tokens count
  EXPECT_TRUE(Has(TopDocuments(r["flowrag"]), kDesignerPassage));

  // flowrag.rewrite "offline" leaves the model out of it.
  const json offline =
      Post(server,
           {{"model", "flowrag"}, {"messages", messages}, {"flowrag", {{"rewrite", "offline"}}}});
  EXPECT_EQ(offline["flowrag"]["retrieval_query"], "Where was Ivo Brannock born?");
  EXPECT_EQ(chat->rewrites.load(), 1);
}

TEST(ServerFollowUpTest, AnUnusableModelRewriteFallsBackOfflineWithAWarning) {
  auto chat = std::make_shared<RewritingChat>(R"({"final_answer": "Saltinghame"})");
  ServerOptions o;
  o.engine.chat_model = chat;
  testing::DemoServer server(o);
  ASSERT_TRUE(server.ok());
  const json r = Post(server, {{"model", "flowrag"}, {"messages", Conversation("Ivo Brannock")}});
  ASSERT_TRUE(r.contains("flowrag")) << r.dump();
  EXPECT_EQ(r["flowrag"]["retrieval_query"], "Where was Ivo Brannock born?");
  EXPECT_EQ(r["flowrag"]["rewrite"]["method"], "offline");
  bool warned = false;
  for (const json& w : r["flowrag"]["warnings"]) {
    warned |= w.get<std::string>().find("query rewrite") != std::string::npos;
  }
  EXPECT_TRUE(warned) << r["flowrag"]["warnings"].dump();
}

TEST(ServerFollowUpTest, TheOfficialClientReadsTheFollowUp) {
  const std::string js = testing::NodeOpenAiClientDir();
  if (js.empty()) GTEST_SKIP() << "needs node and js/node_modules/openai (run scripts/setup.sh)";
  int status = 0;
  testing::DemoServer server;
  ASSERT_TRUE(server.ok());
  const std::string out =
      testing::RunCommand("node " + js + "/clients/openai_followup.mjs " + server.url() + "/v1 '" +
                              kFirst + "' '" + kFollowUp + "' 2>&1",
                          &status);
  ASSERT_EQ(status, 0) << out;
  const json j = json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << out;
  EXPECT_EQ(j["plain"]["retrieval_query"], "Where was Ivo Brannock born?") << out;
  EXPECT_EQ(j["plain"]["finish_reason"], "stop");
  const std::vector<std::string> docs = j["plain"]["documents"];
  EXPECT_TRUE(
      Has({docs.begin(), docs.begin() + std::min<size_t>(3, docs.size())}, kDesignerPassage))
      << out;
  EXPECT_EQ(j["streamed"]["content"], j["plain"]["content"]);
  EXPECT_EQ(j["streamed"]["first_query"], "Where was Ivo Brannock born?");
  EXPECT_EQ(j["streamed"]["last_query"], "Where was Ivo Brannock born?");
  EXPECT_EQ(j["streamed"]["finish_reason"], "stop");
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
