// Streamed answers: ChatStreamReader (SSE chunks of an OpenAI-compatible
// endpoint), OpenAiChatClient::CompleteStreaming against a real HTTP server
// on loopback that streams with pauses, JsonStringFieldStream, and
// Engine::Ask with an AnswerObserver (order, pieces, cancellation).
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "agent/answer_stream.h"
#include "flowrag/engine.h"
#include "llm/chat_client.h"
#include "llm/chat_stream.h"
#include "stub_server.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using Json = nlohmann::json;

std::string DeltaEvent(const std::string& content) {
  Json chunk = {{"choices", {{{"index", 0}, {"delta", {{"content", content}}},
                              {"finish_reason", nullptr}}}}};
  return "data: " + chunk.dump() + "\n\n";
}

std::string Stream(const std::vector<std::string>& pieces) {
  std::string out = ": a comment\n\n";
  for (const std::string& p : pieces) out += DeltaEvent(p);
  out += "data: " +
         Json{{"choices", {{{"index", 0}, {"delta", Json::object()}, {"finish_reason", "stop"}}}}}
             .dump() +
         "\n\n";
  out += "data: " +
         Json{{"choices", Json::array()},
              {"usage", {{"prompt_tokens", 12}, {"completion_tokens", 3}}}}
             .dump() +
         "\n\n";
  out += "data: [DONE]\n\n";
  return out;
}

TEST(ChatStreamReaderTest, ReadsPiecesWhateverTheByteSplits) {
  const std::string body = Stream({"Pa", "ris", " é!"});
  for (size_t cut = 1; cut < body.size(); cut += 7) {
    std::string got;
    const TextSink sink = [&](std::string_view p) {
      got += p;
      return true;
    };
    ChatStreamReader reader(&sink);
    ASSERT_TRUE(reader.Feed(body.substr(0, cut)));
    ASSERT_TRUE(reader.Feed(body.substr(cut)));
    auto r = reader.Finish();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(got, "Paris é!");
    EXPECT_EQ(r->content, "Paris é!");
    EXPECT_EQ(r->finish_reason, "stop");
    EXPECT_EQ(r->prompt_tokens, 12);
    EXPECT_EQ(r->completion_tokens, 3);
    EXPECT_TRUE(reader.usage_reported());
  }
}

TEST(ChatStreamReaderTest, ErrorsAndCancellation) {
  const TextSink yes = [](std::string_view) { return true; };
  {
    ChatStreamReader reader(&yes);
    EXPECT_FALSE(reader.Feed("data: {not json\n\n"));
    auto r = reader.Finish();
    EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(r.status().message().find("not a JSON object"), std::string::npos);
  }
  {
    ChatStreamReader reader(&yes);
    EXPECT_FALSE(reader.Feed("data: {\"error\": {\"message\": \"overloaded\"}}\n"));
    auto r = reader.Finish();
    EXPECT_NE(r.status().message().find("overloaded"), std::string::npos);
  }
  {
    ChatStreamReader reader(&yes);
    EXPECT_FALSE(reader.Feed(std::string(ChatStreamReader::kMaxLineBytes + 1, 'x')));
    EXPECT_FALSE(reader.Finish().ok());
  }
  {
    ChatStreamReader reader(&yes);
    EXPECT_TRUE(reader.Feed(""));
    EXPECT_EQ(reader.Finish().status().code(), StatusCode::kUnavailable);  // no event
  }
  const TextSink stop = [](std::string_view) { return false; };
  ChatStreamReader reader(&stop);
  EXPECT_FALSE(reader.Feed(DeltaEvent("a")));
  EXPECT_TRUE(reader.cancelled());
  EXPECT_EQ(reader.Finish().status().code(), StatusCode::kCancelled);
}

// An OpenAI-compatible endpoint that streams `pieces` 20 ms apart (or, with
// `plain`, answers with one JSON body), and notes when a client went away.
class StreamingStub {
 public:
  explicit StreamingStub(std::vector<std::string> pieces, bool plain = false)
      : pieces_(std::move(pieces)), plain_(plain) {
    http_.server().Post("/v1/chat/completions",
                        [this](const httplib::Request& req, httplib::Response& res) {
                          Handle(req, res);
                        });
    http_.Start();
  }
  ~StreamingStub() { http_.Stop(); }
  std::string BaseUrl() const { return http_.url() + "/v1"; }
  Json last_request() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_;
  }
  bool client_left() const { return client_left_; }

 private:
  void Handle(const httplib::Request& req, httplib::Response& res) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_ = Json::parse(req.body, nullptr, false);
    }
    if (plain_) {
      std::string all;
      for (const std::string& p : pieces_) all += p;
      res.set_content(testing::ChatCompletionJson(all).dump(), "application/json");
      return;
    }
    res.set_chunked_content_provider("text/event-stream", [this](size_t, httplib::DataSink& sink) {
      for (const std::string& p : pieces_) {
        const std::string event = DeltaEvent(p);
        if (!sink.write(event.data(), event.size())) {
          client_left_ = true;
          return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      const std::string done = "data: [DONE]\n\n";
      sink.write(done.data(), done.size());
      sink.done();
      return true;
    });
  }

  std::vector<std::string> pieces_;
  bool plain_;
  testing::StubHttpServer http_;
  std::mutex mu_;
  Json last_;
  std::atomic<bool> client_left_{false};
};

std::unique_ptr<OpenAiChatClient> ClientOf(const std::string& base_url) {
  OpenAiChatOptions o;
  o.base_url = base_url;
  o.model = "stub-chat";
  o.max_retries = 0;
  auto c = OpenAiChatClient::Create(o);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : nullptr;
}

ChatRequest Question() {
  ChatRequest r;
  r.messages = {{"user", "Where?"}};
  return r;
}

TEST(ChatClientStreamingTest, PiecesArriveAsTheServerSendsThem) {
  StreamingStub stub({"The ", "river ", "Ostrel."});
  auto client = ClientOf(stub.BaseUrl());
  ASSERT_NE(client, nullptr);
  std::vector<std::string> pieces;
  std::vector<std::chrono::steady_clock::time_point> at;
  auto r = client->CompleteStreaming(Question(), [&](std::string_view p) {
    pieces.emplace_back(p);
    at.push_back(std::chrono::steady_clock::now());
    return true;
  });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(pieces, (std::vector<std::string>{"The ", "river ", "Ostrel."}));
  EXPECT_EQ(r->content, "The river Ostrel.");
  EXPECT_GT(r->completion_tokens, 0);  // estimated: the stub reports no usage
  // The first piece came before the last was sent (the server pauses 20 ms
  // between pieces), i.e. the client did not wait for the whole body.
  EXPECT_GE(at.back() - at.front(), std::chrono::milliseconds(30));
  const Json sent = stub.last_request();
  EXPECT_EQ(sent["stream"], true);
  EXPECT_EQ(sent["stream_options"]["include_usage"], true);
}

TEST(ChatClientStreamingTest, AReaderThatStopsAbortsTheUpstreamRequest) {
  std::vector<std::string> many(50, "word ");
  StreamingStub stub(many);
  auto client = ClientOf(stub.BaseUrl());
  ASSERT_NE(client, nullptr);
  int seen = 0;
  auto r = client->CompleteStreaming(Question(), [&](std::string_view) { return ++seen < 2; });
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled) << r.status().ToString();
  EXPECT_EQ(seen, 2);
  // The server notices the connection is gone well before its 50 pieces.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!stub.client_left() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(stub.client_left());
  EXPECT_EQ(client->usage().failures, 1);
}

TEST(ChatClientStreamingTest, AServerThatIgnoresStreamGivesOnePiece) {
  StreamingStub stub({"All ", "at once"}, /*plain=*/true);
  auto client = ClientOf(stub.BaseUrl());
  ASSERT_NE(client, nullptr);
  std::vector<std::string> pieces;
  auto r = client->CompleteStreaming(Question(), [&](std::string_view p) {
    pieces.emplace_back(p);
    return true;
  });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(pieces, std::vector<std::string>{"All at once"});
}

TEST(JsonStringFieldStreamTest, OnlyTheFieldsValueUnescapedWhateverTheSplits) {
  const std::string json =
      R"({"reasoning": "the \"final_answer\": \"no\" is not here", "final_answer": "Caf\u00e9 \"Q\"\nz \ud83d\ude00 ü", "citations": [1]})";
  for (size_t step = 1; step <= json.size(); ++step) {
    std::string out;
    const TextSink sink = [&](std::string_view p) {
      out += p;
      return true;
    };
    JsonStringFieldStream filter("final_answer", &sink);
    for (size_t at = 0; at < json.size(); at += step) {
      ASSERT_TRUE(filter(std::string_view(json).substr(at, step)));
    }
    EXPECT_EQ(out, "Café \"Q\"\nz \xF0\x9F\x98\x80 ü") << "step " << step;
  }
}

// A chat model that writes a short-style JSON answer in four pieces.
class PieceChat final : public ChatModel {
 public:
  std::string Model() const override { return "test:pieces"; }
  Result<ChatResponse> Complete(const ChatRequest& request) override {
    ChatResponse r;
    for (const std::string& p : Pieces()) r.content += p;
    r.finish_reason = "stop";
    return r;
  }
  Result<ChatResponse> CompleteStreaming(const ChatRequest& request,
                                         const TextSink& sink) override {
    ChatResponse r;
    for (const std::string& p : Pieces()) {
      r.content += p;
      if (!sink(p)) return Status::Cancelled("stopped");
    }
    r.finish_reason = "stop";
    return r;
  }
  static std::vector<std::string> Pieces() {
    return {R"({"reasoning": "the log says so", "final_)", R"(answer": "Marta )", R"(Vell",)",
            R"( "citations": [1]})"};
  }
};

// Records what an observer is given, in order; stops after `stop_after` calls.
class Recorder final : public AnswerObserver {
 public:
  explicit Recorder(int stop_after = 1000) : stop_after_(stop_after) {}
  bool OnRetrieval(const RetrievalResult& r) override {
    events.push_back("retrieval:" + std::to_string(r.passages.size()));
    return static_cast<int>(events.size()) < stop_after_;
  }
  bool OnText(std::string_view piece) override {
    events.push_back("text:" + std::string(piece));
    return static_cast<int>(events.size()) < stop_after_;
  }
  std::vector<std::string> events;

 private:
  int stop_after_;
};

std::unique_ptr<Engine> HarbourEngine(const testing::TempDir& dir,
                                      std::shared_ptr<ChatModel> chat) {
  EngineOptions eo;
  eo.chat_model = std::move(chat);
  auto engine = Engine::Open(dir.File("s.db"), eo);
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  EXPECT_TRUE((*engine)
                  ->IndexDocuments({{"log", "Harbour Log",
                                     "Marta Vell kept the Harbour Log of Port Calder."},
                                    {"river", "Ostrel", "The Ostrel river runs past Port Calder."}})
                  .ok());
  return std::move(engine).value();
}

TEST(AskObserverTest, RetrievalFirstThenTheModelsAnswerAsItIsWritten) {
  testing::TempDir dir;
  auto engine = HarbourEngine(dir, std::make_shared<PieceChat>());
  Recorder rec;
  AnswerOptions o;
  o.observer = &rec;
  auto answer = engine->Ask("Who kept the Harbour Log?", o);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->text, "Marta Vell");
  ASSERT_GE(rec.events.size(), 3u);
  EXPECT_EQ(rec.events[0].rfind("retrieval:", 0), 0u);
  std::string text;
  for (size_t i = 1; i < rec.events.size(); ++i) {
    ASSERT_EQ(rec.events[i].rfind("text:", 0), 0u) << rec.events[i];
    text += rec.events[i].substr(5);
  }
  EXPECT_EQ(text, answer->text);
  EXPECT_GE(rec.events.size(), 3u);  // in more than one piece
}

TEST(AskObserverTest, TheOfflineAnswerStreamsInOnePiece) {
  testing::TempDir dir;
  auto engine = HarbourEngine(dir, nullptr);
  Recorder rec;
  AnswerOptions o;
  o.observer = &rec;
  auto answer = engine->Ask("Who kept the Harbour Log?", o);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  ASSERT_EQ(rec.events.size(), 2u);
  EXPECT_EQ(rec.events[0], "retrieval:" + std::to_string(answer->retrieval.passages.size()));
  EXPECT_EQ(rec.events[1], "text:" + answer->text);
}

TEST(AskObserverTest, AnObserverThatStopsCancelsTheAnswer) {
  testing::TempDir dir;
  auto engine = HarbourEngine(dir, std::make_shared<PieceChat>());
  for (int stop_after : {1, 2}) {
    Recorder rec(stop_after);
    AnswerOptions o;
    o.observer = &rec;
    auto answer = engine->Ask("Who kept the Harbour Log?", o);
    EXPECT_EQ(answer.status().code(), StatusCode::kCancelled) << stop_after;
    EXPECT_EQ(static_cast<int>(rec.events.size()), stop_after);
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
