// The streamed and OpenAI-compatible endpoints on a real server on loopback,
// read by a real HTTP client (libcurl, through flowrag's HttpClient, which
// hands over the body as it arrives): POST /v1/query with "stream": true
// (Server-Sent Events), POST /v1/chat/completions (plain and streamed),
// GET /v1/models, their errors, and a client that leaves mid-answer.
#include <gtest/gtest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "flowrag/engine.h"
#include "flowrag/server.h"
#include "llm/http_client.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using nlohmann::json;

// Writes a short-style JSON answer in pieces, streamed `pause` apart (the
// other calls, e.g. the retriever's keyword step, answer at once); counts
// completions whose reader stopped.
class SlowPieceChat final : public ChatModel {
 public:
  explicit SlowPieceChat(int filler = 0, std::chrono::milliseconds pause = {},
                         std::string filler_text = " and more")
      : filler_(filler), pause_(pause), filler_text_(std::move(filler_text)) {}
  std::string Model() const override { return "test:slow"; }
  Result<ChatResponse> Complete(const ChatRequest&) override {
    return Write([](std::string_view) { return true; }, std::chrono::milliseconds(0));
  }
  Result<ChatResponse> CompleteStreaming(const ChatRequest&, const TextSink& sink) override {
    return Write(sink, pause_);
  }
  std::atomic<int> stopped{0};

 private:
  Result<ChatResponse> Write(const TextSink& sink, std::chrono::milliseconds pause) {
    std::vector<std::string> pieces = {R"({"reasoning": "see [1]", "final_answer": ")", "Marta",
                                       " Vell"};
    for (int i = 0; i < filler_; ++i) pieces.push_back(filler_text_);
    pieces.push_back(R"(", "citations": [1]})");
    ChatResponse r;
    for (const std::string& p : pieces) {
      r.content += p;
      if (!sink(p)) {
        stopped += 1;
        return Status::Cancelled("stopped");
      }
      std::this_thread::sleep_for(pause);
    }
    r.finish_reason = "stop";
    return r;
  }

  int filler_;
  std::chrono::milliseconds pause_;
  std::string filler_text_;
};

// Server-Sent Events: (event name, data JSON) pairs; a data line without an
// event line is named "".
std::vector<std::pair<std::string, json>> ParseEvents(const std::string& body) {
  std::vector<std::pair<std::string, json>> out;
  std::string event;
  size_t at = 0;
  while (at < body.size()) {
    size_t nl = body.find('\n', at);
    if (nl == std::string::npos) nl = body.size();
    const std::string line = body.substr(at, nl - at);
    at = nl + 1;
    if (line.rfind("event: ", 0) == 0) event = line.substr(7);
    if (line.rfind("data: ", 0) == 0) {
      const std::string data = line.substr(6);
      out.emplace_back(event, data == "[DONE]" ? json("[DONE]") : json::parse(data, nullptr, false));
      event.clear();
    }
  }
  return out;
}

class ServerChatTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::signal(SIGPIPE, SIG_IGN);
    demo_ = new testing::TempDir;
    auto engine = Engine::Open(demo_->File("demo.db"));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    ASSERT_TRUE((*engine)->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"}).ok());
  }
  static void TearDownTestSuite() { delete demo_; }

  void Serve(std::shared_ptr<ChatModel> chat = nullptr, int write_timeout_s = 10) {
    const std::string copy = dir_.File("demo.db");
    std::filesystem::copy_file(demo_->File("demo.db"), copy);
    ServerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.threads = 4;
    o.write_timeout_s = write_timeout_s;
    o.engine.chat_model = std::move(chat);
    auto server = Server::Create(o, {{"default", copy}, {"second", copy}});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    ASSERT_TRUE((*server)->Start().ok());
    server_ = std::move(server).value();
  }

  // POSTs `body` with libcurl; `on_body` sees the body as it arrives.
  Result<HttpResponse> Post(const std::string& path, const json& body,
                            std::function<bool(std::string_view)> on_body = nullptr) {
    HttpRequest r;
    r.url = "http://127.0.0.1:" + std::to_string(server_->port()) + path;
    r.body = body.dump();
    r.timeout_ms = 60000;
    r.on_body = std::move(on_body);
    return http_->Post(r);
  }

  static testing::TempDir* demo_;
  testing::TempDir dir_;
  std::unique_ptr<Server> server_;
  std::shared_ptr<HttpClient> http_ = NewCurlHttpClient();
};
testing::TempDir* ServerChatTest::demo_ = nullptr;

TEST_F(ServerChatTest, AStreamedQueryGivesRetrievalThenTokensThenTheAnswer) {
  Serve(std::make_shared<SlowPieceChat>(0, std::chrono::milliseconds(30)));
  int chunks = 0;
  auto r = Post("/v1/query", {{"question", "Who kept the harbour log?"}, {"stream", true}},
                [&](std::string_view) { return ++chunks > 0; });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  ASSERT_NE(r->FindHeader("content-type"), nullptr);
  EXPECT_EQ(r->FindHeader("content-type")->rfind("text/event-stream", 0), 0u);
  const auto events = ParseEvents(r->body);
  ASSERT_GE(events.size(), 4u) << r->body;
  EXPECT_EQ(events.front().first, "retrieval");
  EXPECT_TRUE(events.front().second["passages"].is_array());
  EXPECT_EQ(events.back().first, "answer");
  std::string text;
  for (size_t i = 1; i + 1 < events.size(); ++i) {
    EXPECT_EQ(events[i].first, "token");
    text += events[i].second["text"].get<std::string>();
  }
  EXPECT_EQ(text, "Marta Vell");
  EXPECT_EQ(events.back().second["answer"], "Marta Vell");
  EXPECT_TRUE(events.back().second["citations"].is_array());
  EXPECT_GE(chunks, 3);  // the events came in several writes, not one body
}

TEST_F(ServerChatTest, TheOfflineAnswerStreamsAsOneToken) {
  Serve();
  auto r = Post("/v1/query", {{"question", "How long is the River Ostrel?"}, {"stream", true}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto events = ParseEvents(r->body);
  ASSERT_EQ(events.size(), 3u) << r->body;
  EXPECT_EQ(events[0].first, "retrieval");
  EXPECT_EQ(events[1].first, "token");
  EXPECT_EQ(events[2].first, "answer");
  EXPECT_EQ(events[1].second["text"], events[2].second["answer"]);
}

TEST_F(ServerChatTest, BadStreamedRequestsAreRefusedBeforeAnyEvent) {
  Serve();
  auto r = Post("/v1/query", {{"question", "x"}, {"stream", "yes"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["error"]["field"], "stream");
  r = Post("/v1/query", {{"question", "x"}, {"stream", true}, {"top_k", 0}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["error"]["field"], "top_k");
}

TEST_F(ServerChatTest, AClientThatLeavesCancelsTheModelsAnswer) {
  auto chat = std::make_shared<SlowPieceChat>(200, std::chrono::milliseconds(20));
  Serve(chat);
  auto r = Post("/v1/query", {{"question", "Who kept the harbour log?"}, {"stream", true}},
                [](std::string_view piece) {
                  return piece.find("event: token") == std::string_view::npos;
                });
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (chat->stopped == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(chat->stopped, 1);  // well before its 200 pieces (4 s)
  // The server goes on serving.
  auto ok = Post("/v1/query", {{"question", "Who kept the harbour log?"}});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->status, 200);
}

// A client that sends a streamed query and never reads: once the socket
// buffers are full, a write makes no progress for write_timeout_s, the
// answer is cancelled and the worker is free again; the server goes on
// serving meanwhile.
TEST_F(ServerChatTest, AClientThatStopsReadingCancelsTheAnswerAfterTheWriteTimeout) {
  auto chat = std::make_shared<SlowPieceChat>(4000, std::chrono::milliseconds(0),
                                              std::string(8192, 'x'));  // 32 MiB of text
  Serve(chat, /*write_timeout_s=*/1);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const std::string body = json{{"question", "Who kept the harbour log?"}, {"stream", true}}.dump();
  const std::string request = "POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                              "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  httplib::Client other("127.0.0.1", server_->port());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (chat->stopped == 0 && std::chrono::steady_clock::now() < deadline) {
    auto health = other.Get("/healthz");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(chat->stopped, 1);
  close(fd);
}

json Messages(std::initializer_list<std::pair<const char*, const char*>> turns) {
  json m = json::array();
  for (const auto& [role, content] : turns) m.push_back({{"role", role}, {"content", content}});
  return m;
}

TEST_F(ServerChatTest, ChatCompletionAnswersTheLastUserMessageWithSources) {
  Serve(std::make_shared<SlowPieceChat>());
  auto r = Post("/v1/w/second/chat/completions",
                {{"model", "flowrag-bm25"},
                 {"temperature", 0.3},
                 {"messages", Messages({{"system", "Be brief."},
                                        {"user", "Tell me about Port Calder."},
                                        {"assistant", "It is a harbour town."},
                                        {"user", "Who kept the harbour log?"}})}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->status, 200) << r->body;
  const json j = json::parse(r->body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["model"], "flowrag-bm25");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  const std::string content = j["choices"][0]["message"]["content"];
  EXPECT_EQ(content.rfind("Marta Vell", 0), 0u) << content;
  EXPECT_NE(content.find("\n\nSources:\n[1] "), std::string::npos) << content;
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["flowrag"]["retrieval"]["method"], "bm25");
  EXPECT_FALSE(j["flowrag"]["citations"].empty());
  EXPECT_TRUE(j["usage"].contains("total_tokens"));
}

TEST_F(ServerChatTest, StreamedChatCompletionIsChunksThenDone) {
  Serve(std::make_shared<SlowPieceChat>());
  auto r = Post("/v1/chat/completions",
                {{"model", "flowrag"},
                 {"stream", true},
                 {"stream_options", {{"include_usage", true}}},
                 {"messages", Messages({{"user", "Who kept the harbour log?"}})}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto events = ParseEvents(r->body);
  ASSERT_GE(events.size(), 5u) << r->body;
  EXPECT_EQ(events.front().second["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(events.back().second, json("[DONE]"));
  std::string content;
  bool finished = false;
  for (const auto& [name, data] : events) {
    EXPECT_EQ(name, "");
    if (data == json("[DONE]")) continue;
    EXPECT_EQ(data["object"], "chat.completion.chunk");
    if (data["choices"].empty()) {
      EXPECT_TRUE(data["usage"].contains("total_tokens"));
      continue;
    }
    content += data["choices"][0]["delta"].value("content", "");
    if (data["choices"][0]["finish_reason"] == "stop") {
      finished = true;
      EXPECT_EQ(data["flowrag"]["answer"], "Marta Vell");
    }
  }
  EXPECT_TRUE(finished);
  EXPECT_EQ(content.rfind("Marta Vell\n\nSources:\n[1] ", 0), 0u) << content;
}

TEST_F(ServerChatTest, ChatErrorsNameTheFieldInTheOpenAiShape) {
  Serve();
  struct Case {
    json body;
    int status;
    std::string param;
  };
  const std::vector<Case> cases = {
      {{{"model", "flowrag"}, {"messages", Messages({{"system", "hi"}})}}, 400, "messages"},
      {{{"model", "flowrag"}, {"messages", json::array()}}, 400, "messages"},
      {{{"model", "flowrag"}, {"messages", {{{"role", "user"}, {"content", 5}}}}}, 400, "messages"},
      {{{"model", "gpt-4o"}, {"messages", Messages({{"user", "hi"}})}}, 404, "model"},
      {{{"messages", Messages({{"user", "hi"}})}}, 400, "model"},
      {{{"model", "flowrag"}, {"n", 2}, {"messages", Messages({{"user", "hi"}})}}, 400, "n"},
      {{{"model", "flowrag"}, {"flowrag", {{"top_k", 0}}}, {"messages", Messages({{"user", "hi"}})}},
       400, "flowrag.top_k"},
      {{{"model", "flowrag"}, {"flowrag", {{"question", "x"}}}, {"messages", Messages({{"user", "hi"}})}},
       400, "flowrag.question"},
  };
  for (const Case& c : cases) {
    auto r = Post("/v1/chat/completions", c.body);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, c.status) << c.body.dump() << " → " << r->body;
    const json e = json::parse(r->body)["error"];
    EXPECT_EQ(e["param"], c.param) << r->body;
    EXPECT_EQ(e["type"], "invalid_request_error") << r->body;
    EXPECT_FALSE(e["message"].get<std::string>().empty());
  }
  auto bad = Post("/v1/chat/completions", json::array());
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, 400);
}

TEST_F(ServerChatTest, ModelsListFlowragAndOneModelPerMethod) {
  Serve();
  httplib::Client c("127.0.0.1", server_->port());
  for (const char* path : {"/v1/models", "/v1/w/second/models"}) {
    auto r = c.Get(path);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
    const json j = json::parse(r->body);
    EXPECT_EQ(j["object"], "list");
    std::vector<std::string> ids;
    for (const json& m : j["data"]) ids.push_back(m["id"]);
    EXPECT_EQ(ids.front(), "flowrag");
    EXPECT_NE(std::find(ids.begin(), ids.end(), "flowrag-qafd"), ids.end());
    EXPECT_EQ(ids.size(), Engine::Methods().size());  // "auto" is "flowrag"
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
