// Tests OpenAiChatClient against a real HTTP server on loopback (cpp-httplib),
// so retries, timeouts, headers, the response cache and the concurrency limit
// are exercised end to end through the curl HttpClient.
#include "llm/chat_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "llm/http_client.h"
#include "stub_server.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

using SeenRequest = testing::RecordingJsonStub::SeenRequest;

// A well-formed answer with `content`, as OpenAI sends it.
Json Answer(const std::string& content, const std::string& finish_reason = "stop",
            int prompt_tokens = 11, int completion_tokens = 7) {
  return {{"id", "chatcmpl-1"},
          {"object", "chat.completion"},
          {"model", "stub-chat"},
          {"choices",
           {{{"index", 0},
             {"message", {{"role", "assistant"}, {"content", content}}},
             {"finish_reason", finish_reason}}}},
          {"usage",
           {{"prompt_tokens", prompt_tokens},
            {"completion_tokens", completion_tokens},
            {"total_tokens", prompt_tokens + completion_tokens}}}};
}

// The default answer: "echo: " + the last message's content.
Json EchoAnswer(const Json& request) {
  return Answer("echo: " + request["messages"].back()["content"].get<std::string>());
}

// An OpenAI-compatible stub on 127.0.0.1 with an ephemeral port. Tests swap
// the handler; by default it answers EchoAnswer().
class StubServer : public testing::RecordingJsonStub {
 public:
  StubServer() : RecordingJsonStub("/v1/chat/completions", EchoAnswer) {}

  // True once the port is bound and the accept loop runs.
  bool WaitUntilRunning() const { return ok(); }
  std::string Url() const { return BaseUrl() + "/chat/completions"; }
};

// A loopback port with nothing listening on it.
int UnusedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// Test double of the store's llm_cache: a std::map with injectable errors.
class MapCache : public ResponseCache {
 public:
  Result<std::optional<ChatResponse>> Get(uint64_t key) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++gets_;
    if (!get_error_.ok()) return get_error_;
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::optional<ChatResponse>();
    return std::optional<ChatResponse>(it->second);
  }
  Status Put(uint64_t key, const std::string& model, const std::string& request_json,
             const ChatResponse& response) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++puts_;
    if (!put_error_.ok()) return put_error_;
    entries_[key] = response;
    last_model_ = model;
    last_request_json_ = request_json;
    return Status::Ok();
  }

  void SetGetError(Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    get_error_ = std::move(s);
  }
  void SetPutError(Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    put_error_ = std::move(s);
  }
  int gets() {
    std::lock_guard<std::mutex> lock(mu_);
    return gets_;
  }
  int puts() {
    std::lock_guard<std::mutex> lock(mu_);
    return puts_;
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
  }
  std::string last_model() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_model_;
  }
  std::string last_request_json() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_request_json_;
  }

 private:
  std::mutex mu_;
  std::map<uint64_t, ChatResponse> entries_;
  Status get_error_;
  Status put_error_;
  int gets_ = 0;
  int puts_ = 0;
  std::string last_model_;
  std::string last_request_json_;
};

ChatRequest UserRequest(const std::string& text, double temperature = 0.0, int max_tokens = 256,
                        bool json_mode = false) {
  ChatRequest r;
  r.messages = {{"system", "You are terse."}, {"user", text}};
  r.temperature = temperature;
  r.max_tokens = max_tokens;
  r.json_mode = json_mode;
  return r;
}

class ChatClientTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.WaitUntilRunning()); }

  // Small timeouts and backoffs so failure paths stay fast.
  OpenAiChatOptions Options() {
    OpenAiChatOptions o;
    o.base_url = server_.BaseUrl();
    o.model = "stub-chat";
    o.timeout_ms = 3000;
    o.connect_timeout_ms = 1000;
    o.max_retries = 2;
    o.initial_backoff_ms = 5;
    o.max_backoff_ms = 50;
    return o;
  }

  std::unique_ptr<OpenAiChatClient> Make(const OpenAiChatOptions& o,
                                         ResponseCache* cache = nullptr) {
    auto c = OpenAiChatClient::Create(o, cache);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }

  // Replies with `body` and `status` to every request.
  void ReplyAlways(const std::string& body, int status = 200) {
    server_.SetHandler([body, status](const Json&, httplib::Response& res, int) {
      res.status = status;
      res.set_content(body, "application/json");
    });
  }

  StubServer server_;
};

TEST_F(ChatClientTest, ParsesContentFinishReasonAndUsage) {
  ReplyAlways(Answer("Paris is the capital.", "stop", 23, 5).dump());
  auto c = Make(Options());
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->Model(), "stub-chat");
  EXPECT_EQ(c->url(), server_.Url());
  auto r = c->Complete(UserRequest("Capital of France?"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content, "Paris is the capital.");
  EXPECT_EQ(r->finish_reason, "stop");
  EXPECT_EQ(r->prompt_tokens, 23);
  EXPECT_EQ(r->completion_tokens, 5);
  EXPECT_FALSE(r->from_cache);
  ChatUsage u = c->usage();
  EXPECT_EQ(u.requests, 1);
  EXPECT_EQ(u.retries, 0);
  EXPECT_EQ(u.failures, 0);
  EXPECT_EQ(u.cache_hits, 0);
  EXPECT_EQ(u.prompt_tokens, 23);
  EXPECT_EQ(u.completion_tokens, 5);
}

TEST_F(ChatClientTest, SendsModelMessagesParametersAndJsonMode) {
  auto c = Make(Options());
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->Complete(UserRequest("plain", 0.25, 64, /*json_mode=*/false)).ok());
  auto json = c->Complete(UserRequest("as JSON please", 0.0, 512, /*json_mode=*/true));
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ(json->content, "echo: as JSON please");

  auto seen = server_.requests();
  ASSERT_EQ(seen.size(), 2u);
  const Json& plain = seen[0].body;
  EXPECT_EQ(plain["model"], "stub-chat");
  EXPECT_EQ(plain["messages"], Json::parse(R"([{"role":"system","content":"You are terse."},
                                                {"role":"user","content":"plain"}])"));
  EXPECT_DOUBLE_EQ(plain["temperature"].get<double>(), 0.25);
  EXPECT_EQ(plain["max_tokens"], 64);
  EXPECT_FALSE(plain.contains("response_format"));
  const Json& with_json = seen[1].body;
  EXPECT_EQ(with_json["max_tokens"], 512);
  EXPECT_DOUBLE_EQ(with_json["temperature"].get<double>(), 0.0);
  EXPECT_EQ(with_json["response_format"], Json::parse(R"({"type":"json_object"})"));
}

TEST_F(ChatClientTest, SendsAuthorizationOnlyWithAKey) {
  auto anonymous = Make(Options());
  ASSERT_NE(anonymous, nullptr);
  ASSERT_TRUE(anonymous->Complete(UserRequest("a")).ok());
  OpenAiChatOptions o = Options();
  o.api_key = "sk-test-123";
  auto keyed = Make(o);
  ASSERT_NE(keyed, nullptr);
  ASSERT_TRUE(keyed->Complete(UserRequest("b")).ok());

  auto seen = server_.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_FALSE(seen[0].authorization.has_value());
  ASSERT_TRUE(seen[1].authorization.has_value());
  EXPECT_EQ(*seen[1].authorization, "Bearer sk-test-123");
}

TEST_F(ChatClientTest, RetriesAServerErrorThenSucceeds) {
  server_.SetHandler([](const Json& req, httplib::Response& res, int number) {
    if (number == 0) {
      res.status = 500;
      res.set_content("boom", "text/plain");
      return;
    }
    res.set_content(EchoAnswer(req).dump(), "application/json");
  });
  auto c = Make(Options());
  ASSERT_NE(c, nullptr);
  auto r = c->Complete(UserRequest("hi"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content, "echo: hi");
  ChatUsage u = c->usage();
  EXPECT_EQ(u.requests, 2);
  EXPECT_EQ(u.retries, 1);
  EXPECT_EQ(u.failures, 0);
  EXPECT_EQ(server_.requests().size(), 2u);
}

TEST_F(ChatClientTest, GivesUpOnPersistentServerErrorsNamingUrlAndStatus) {
  ReplyAlways("upstream crashed", 500);
  OpenAiChatOptions o = Options();
  o.max_retries = 2;
  o.initial_backoff_ms = 40;
  o.max_backoff_ms = 1000;
  auto c = Make(o);
  ASSERT_NE(c, nullptr);
  Clock::time_point start = Clock::now();
  auto r = c->Complete(UserRequest("hi"));
  double elapsed = MsSince(start);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  const std::string& msg = r.status().message();
  EXPECT_EQ(msg,
            "POST " + server_.Url() + ": HTTP 500: upstream crashed (gave up after 3 attempts)");
  EXPECT_EQ(server_.requests().size(), 3u);
  // Backoff with equal jitter: retry k waits in [b_k / 2, b_k), b = 40, 80.
  EXPECT_GE(elapsed, 60.0);
  EXPECT_LT(elapsed, 1000.0);
  ChatUsage u = c->usage();
  EXPECT_EQ(u.requests, 3);
  EXPECT_EQ(u.retries, 2);
  EXPECT_EQ(u.failures, 1);
  EXPECT_EQ(u.prompt_tokens, 0);
}

TEST_F(ChatClientTest, DoesNotRetryAClientErrorAndQuotesTheServer) {
  ReplyAlways(R"({"error":{"message":"This model's maximum context length is 8192 tokens",
                 "type":"invalid_request_error","code":"context_length_exceeded"}})",
              400);
  auto c = Make(Options());
  ASSERT_NE(c, nullptr);
  auto r = c->Complete(UserRequest("long"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(
      r.status().message(),
      "POST " + server_.Url() + ": HTTP 400: This model's maximum context length is 8192 tokens");
  EXPECT_EQ(server_.requests().size(), 1u);
  EXPECT_EQ(c->usage().retries, 0);
  EXPECT_EQ(c->usage().failures, 1);
}

TEST_F(ChatClientTest, HonoursRetryAfterAndRetryAfterMs) {
  server_.SetHandler([](const Json& req, httplib::Response& res, int number) {
    if (number == 0) {
      res.status = 429;
      res.set_header("retry-after-ms", "300");
      res.set_header("Retry-After", "30");  // the finer header wins
      res.set_content(R"({"error":{"message":"Rate limit reached"}})", "application/json");
      return;
    }
    if (number == 1) {
      res.status = 429;
      res.set_header("Retry-After", "1");
      res.set_content(R"({"error":{"message":"Rate limit reached"}})", "application/json");
      return;
    }
    res.set_content(EchoAnswer(req).dump(), "application/json");
  });
  OpenAiChatOptions o = Options();
  o.initial_backoff_ms = 1;
  o.max_backoff_ms = 5000;
  auto c = Make(o);
  ASSERT_NE(c, nullptr);
  Clock::time_point start = Clock::now();
  auto r = c->Complete(UserRequest("hi"));
  double elapsed = MsSince(start);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GE(elapsed, 1280.0);  // 300 ms + 1 s as told (plus <= 10% jitter), not 1 ms backoffs
  EXPECT_LT(elapsed, 3000.0);
  EXPECT_EQ(c->usage().retries, 2);
}

TEST_F(ChatClientTest, RateLimitGivesUpWithTheServerMessage) {
  server_.SetHandler([](const Json&, httplib::Response& res, int) {
    res.status = 429;
    res.set_header("Retry-After", "60");  // capped at max_backoff_ms
    res.set_content(R"({"error":{"message":"Rate limit reached for gpt-4o-mini"}})",
                    "application/json");
  });
  OpenAiChatOptions o = Options();
  o.max_retries = 1;
  o.max_backoff_ms = 100;
  auto c = Make(o);
  ASSERT_NE(c, nullptr);
  Clock::time_point start = Clock::now();
  auto r = c->Complete(UserRequest("hi"));
  double elapsed = MsSince(start);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(), "POST " + server_.Url() +
                                      ": HTTP 429: Rate limit reached for gpt-4o-mini (gave up "
                                      "after 2 attempts)");
  EXPECT_GE(elapsed, 95.0);
  EXPECT_LT(elapsed, 2000.0);
}

TEST_F(ChatClientTest, TimesOutWithDeadlineExceededNamingTheUrl) {
  server_.SetHandler([this](const Json& req, httplib::Response& res, int) {
    server_.Hang(std::chrono::seconds(10));  // released at teardown
    res.set_content(EchoAnswer(req).dump(), "application/json");
  });
  OpenAiChatOptions o = Options();
  o.timeout_ms = 200;
  o.max_retries = 1;
  auto c = Make(o);
  ASSERT_NE(c, nullptr);
  Clock::time_point start = Clock::now();
  auto r = c->Complete(UserRequest("hi"));
  double elapsed = MsSince(start);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status().ToString();
  const std::string& msg = r.status().message();
  EXPECT_EQ(msg.rfind("POST " + server_.Url() + ": timed out", 0), 0u) << msg;
  EXPECT_NE(msg.find("gave up after 2 attempts"), std::string::npos) << msg;
  EXPECT_GE(elapsed, 390.0);  // two attempts of 200 ms
  EXPECT_LT(elapsed, 1500.0);
  EXPECT_EQ(c->usage().requests, 2);
  EXPECT_EQ(c->usage().failures, 1);
}

TEST(ChatClientNoServerTest, ConnectionRefusedIsRetriedThenNamesTheUrl) {
  int port = UnusedPort();
  ASSERT_GT(port, 0);
  OpenAiChatOptions o;
  o.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1/";  // trailing '/' is fine
  o.max_retries = 1;
  o.initial_backoff_ms = 5;
  o.connect_timeout_ms = 1000;
  auto c = OpenAiChatClient::Create(o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto r = (*c)->Complete(UserRequest("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/v1/chat/completions";
  EXPECT_EQ(r.status().message().rfind("POST " + url + ": ", 0), 0u) << r.status().message();
  EXPECT_NE(r.status().message().find("gave up after 2 attempts"), std::string::npos);
  EXPECT_EQ((*c)->usage().requests, 2);
}

struct MalformedCase {
  const char* name;
  const char* body;
  const char* expected;  // part of the error message
};

class MalformedBodyTest : public ChatClientTest,
                          public ::testing::WithParamInterface<MalformedCase> {};

TEST_P(MalformedBodyTest, FailsWithoutRetryNamingWhatWasWrong) {
  ReplyAlways(GetParam().body);
  auto c = Make(Options());
  ASSERT_NE(c, nullptr);
  auto r = c->Complete(UserRequest("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  const std::string& msg = r.status().message();
  EXPECT_EQ(msg.rfind("POST " + server_.Url() + ": HTTP 200 but ", 0), 0u) << msg;
  EXPECT_NE(msg.find(GetParam().expected), std::string::npos) << msg;
  EXPECT_EQ(server_.requests().size(), 1u);
  EXPECT_EQ(c->usage().failures, 1);
}

INSTANTIATE_TEST_SUITE_P(
    Bodies, MalformedBodyTest,
    ::testing::Values(
        MalformedCase{"NotJson", "<html>502 Bad Gateway</html>",
                      "body is not JSON (expected {\"choices\": [{\"message\": {\"content\": "
                      "\"...\"}, \"finish_reason\": ...}]}): <html>502 Bad Gateway</html>"},
        MalformedCase{"NotAnObject", R"(["hello"])", "body is an array, not a JSON object"},
        MalformedCase{"NoChoices", R"({"id":"x","object":"chat.completion"})",
                      "body has no \"choices\" field"},
        MalformedCase{"ErrorInsteadOfChoices", R"({"error":{"message":"model not loaded"}})",
                      "an error instead of \"choices\": model not loaded"},
        MalformedCase{"ChoicesNotArray", R"({"choices":{"message":{"content":"x"}}})",
                      "\"choices\" is an object, expected an array"},
        MalformedCase{"ChoicesEmpty", R"({"choices":[]})", "\"choices\" is empty"},
        MalformedCase{"ChoiceNotObject", R"({"choices":["x"]})",
                      "choices[0] is a string, expected an object"},
        MalformedCase{"NoMessage", R"({"choices":[{"text":"x","finish_reason":"stop"}]})",
                      "choices[0] has no \"message\" (a /completions answer, not a chat one?)"},
        MalformedCase{"MessageNotObject", R"({"choices":[{"message":"x"}]})",
                      "choices[0].message is a string, expected an object"},
        MalformedCase{"NoContent", R"({"choices":[{"message":{"role":"assistant"}}]})",
                      "choices[0].message has no \"content\""},
        MalformedCase{"ContentNotString",
                      R"({"choices":[{"message":{"content":[{"type":"text","text":"x"}]}}]})",
                      "choices[0].message.content is an array, expected a string"},
        MalformedCase{"ContentNullOnStop",
                      R"({"choices":[{"message":{"content":null},"finish_reason":"stop"}]})",
                      "choices[0].message.content is null (finish_reason \"stop\")"},
        MalformedCase{
            "Refusal",
            R"({"choices":[{"message":{"content":null,"refusal":"I can't help with that."},
                          "finish_reason":"stop"}]})",
            "the model refused: I can't help with that."},
        MalformedCase{"FinishReasonNotString",
                      R"({"choices":[{"message":{"content":"x"},"finish_reason":3}]})",
                      "choices[0].finish_reason is 3, expected a string"},
        MalformedCase{"UsageNotObject",
                      R"({"choices":[{"message":{"content":"x"}}],"usage":[1,2]})",
                      "\"usage\" is an array, expected an object"},
        MalformedCase{"UsageNegative",
                      R"({"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":-4}})",
                      "usage.prompt_tokens is -4, expected a non-negative integer"},
        MalformedCase{"UsageString",
                      R"({"choices":[{"message":{"content":"x"}}],
                          "usage":{"prompt_tokens":4,"completion_tokens":"7"}})",
                      "usage.completion_tokens is \"7\", expected a non-negative integer"}),
    [](const ::testing::TestParamInfo<MalformedCase>& info) { return info.param.name; });

TEST_F(ChatClientTest, TruncatedAnswerIsReturnedWithFinishReasonLength) {
  ReplyAlways(Answer(R"({"entities": [{"name": "Ada Lov)", "length", 40, 16).dump());
  auto c = Make(Options());
  ASSERT_NE(c, nullptr);
  auto r = c->Complete(UserRequest("extract", 0.0, 16, /*json_mode=*/true));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->finish_reason, "length");
  EXPECT_EQ(r->content, R"({"entities": [{"name": "Ada Lov)");
  EXPECT_EQ(r->completion_tokens, 16);
  EXPECT_EQ(c->usage().failures, 0);

  // A reasoning model that spent the whole budget before answering.
  ReplyAlways(R"({"choices":[{"message":{"content":null},"finish_reason":"length"}]})");
  auto empty = c->Complete(UserRequest("extract again", 0.0, 16, /*json_mode=*/true));
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->finish_reason, "length");
  EXPECT_EQ(empty->content, "");
}

TEST_F(ChatClientTest, MissingUsageIsEstimatedFromCharacters) {
  // 10 code points in the answer ("é" is one) -> ceil(10 / 4) = 3 tokens.
  ReplyAlways(R"({"choices":[{"message":{"role":"assistant","content":"héllo wrld"},
                  "finish_reason":"stop"}]})");
  auto c = Make(Options());
  ASSERT_NE(c, nullptr);
  ChatRequest request;
  request.messages = {{"system", "12345678"}, {"user", "123456789"}};  // 17 -> 5 tokens
  auto r = c->Complete(request);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content, "héllo wrld");
  EXPECT_EQ(r->finish_reason, "stop");
  EXPECT_EQ(r->prompt_tokens, 5);
  EXPECT_EQ(r->completion_tokens, 3);
  EXPECT_EQ(c->usage().prompt_tokens, 5);
  EXPECT_EQ(c->usage().completion_tokens, 3);

  // Half a usage object: the reported field is used, the missing one estimated.
  ReplyAlways(R"({"choices":[{"message":{"content":"abcd"},"finish_reason":null}],
                  "usage":{"prompt_tokens":99}})");
  auto half = c->Complete(request);
  ASSERT_TRUE(half.ok()) << half.status().ToString();
  EXPECT_EQ(half->prompt_tokens, 99);
  EXPECT_EQ(half->completion_tokens, 1);
  EXPECT_EQ(half->finish_reason, "");
}

TEST_F(ChatClientTest, RejectsMalformedRequestsWithoutCallingTheServer) {
  auto c = Make(Options());
  ASSERT_NE(c, nullptr);
  ChatRequest empty;
  auto r = c->Complete(empty);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("ChatRequest.messages"), std::string::npos);

  ChatRequest no_role = UserRequest("x");
  no_role.messages[1].role = "";
  r = c->Complete(no_role);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ChatRequest.messages[1].role"), std::string::npos);

  r = c->Complete(UserRequest("x", 0.0, 0));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ChatRequest.max_tokens"), std::string::npos);

  r = c->Complete(UserRequest("x", -1.0));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ChatRequest.temperature"), std::string::npos);

  EXPECT_TRUE(server_.requests().empty());
  EXPECT_EQ(c->usage().requests, 0);
  EXPECT_EQ(c->usage().failures, 4);
}

TEST_F(ChatClientTest, CacheHitMakesNoHttpCallAndCountsUsage) {
  server_.SetHandler([](const Json& req, httplib::Response& res, int number) {
    Json a = EchoAnswer(req);
    a["choices"][0]["message"]["content"] = "answer " + std::to_string(number);
    res.set_content(a.dump(), "application/json");
  });
  MapCache cache;
  auto c = Make(Options(), &cache);
  ASSERT_NE(c, nullptr);
  ChatRequest request = UserRequest("Who wrote Hamlet?", 0.0, 128, /*json_mode=*/true);

  auto first = c->Complete(request);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->content, "answer 0");
  EXPECT_FALSE(first->from_cache);
  EXPECT_EQ(cache.puts(), 1);
  EXPECT_EQ(cache.last_model(), "stub-chat");
  EXPECT_EQ(cache.last_request_json(), CanonicalChatRequestJson("stub-chat", request));

  auto second = c->Complete(request);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(second->content, "answer 0");
  EXPECT_EQ(second->finish_reason, "stop");
  EXPECT_EQ(second->prompt_tokens, 11);
  EXPECT_EQ(second->completion_tokens, 7);
  EXPECT_EQ(server_.requests().size(), 1u);  // no HTTP call for the hit
  EXPECT_EQ(cache.puts(), 1);

  ChatUsage u = c->usage();
  EXPECT_EQ(u.requests, 1);
  EXPECT_EQ(u.cache_hits, 1);
  EXPECT_EQ(u.prompt_tokens, 22);  // cache hits count their tokens too
  EXPECT_EQ(u.completion_tokens, 14);

  // Any parameter that changes the answer is part of the key.
  ChatRequest warmer = request;
  warmer.temperature = 0.7;
  auto third = c->Complete(warmer);
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_FALSE(third->from_cache);
  EXPECT_EQ(third->content, "answer 1");
  ChatRequest not_json = request;
  not_json.json_mode = false;
  auto fourth = c->Complete(not_json);
  ASSERT_TRUE(fourth.ok());
  EXPECT_FALSE(fourth->from_cache);
  EXPECT_EQ(server_.requests().size(), 3u);
  EXPECT_EQ(cache.size(), 3u);

  // A client for another model does not see these answers.
  OpenAiChatOptions other = Options();
  other.model = "other-model";
  auto c2 = Make(other, &cache);
  ASSERT_NE(c2, nullptr);
  auto fifth = c2->Complete(request);
  ASSERT_TRUE(fifth.ok());
  EXPECT_FALSE(fifth->from_cache);
  EXPECT_EQ(server_.requests().size(), 4u);
}

TEST_F(ChatClientTest, CacheGetErrorIsReturnedWithoutCallingTheServer) {
  MapCache cache;
  cache.SetGetError(Status::IoError("store.db: disk I/O error"));
  auto c = Make(Options(), &cache);
  ASSERT_NE(c, nullptr);
  auto r = c->Complete(UserRequest("hi"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_EQ(r.status().message(), "response cache: store.db: disk I/O error");
  EXPECT_TRUE(server_.requests().empty());
  EXPECT_EQ(c->usage().failures, 1);
}

TEST_F(ChatClientTest, CachePutErrorStillReturnsTheAnswerAndLogsOnce) {
  MapCache cache;
  cache.SetPutError(Status::IoError("store.db: database is locked"));
  auto c = Make(Options(), &cache);
  ASSERT_NE(c, nullptr);
  ::testing::internal::CaptureStderr();
  auto a = c->Complete(UserRequest("one"));
  auto b = c->Complete(UserRequest("two"));
  std::string logged = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(a->content, "echo: one");
  EXPECT_EQ(b->content, "echo: two");
  EXPECT_EQ(cache.puts(), 2);
  EXPECT_EQ(c->usage().failures, 0);
  size_t first = logged.find("database is locked");
  ASSERT_NE(first, std::string::npos) << logged;
  EXPECT_EQ(logged.find("database is locked", first + 1), std::string::npos) << logged;
}

TEST(ChatCacheKeyTest, CanonicalJsonIsStableAndCoversEveryParameter) {
  ChatRequest r = UserRequest("Who wrote Hamlet?", 0.0, 128, /*json_mode=*/true);
  EXPECT_EQ(CanonicalChatRequestJson("gpt-4o-mini", r),
            R"({"json_mode":true,"max_tokens":128,"messages":[{"content":"You are terse.",)"
            R"("role":"system"},{"content":"Who wrote Hamlet?","role":"user"}],)"
            R"("model":"gpt-4o-mini","temperature":0.0,"v":1})");
  // Part of the store format: a change here orphans every cached answer.
  // (Cross-checked with an independent Python port of Hash64.)
  EXPECT_EQ(ChatCacheKey("gpt-4o-mini", r), 0x5ce0ed0df90ce967ULL);

  const uint64_t base = ChatCacheKey("gpt-4o-mini", r);
  ChatRequest negative_zero = r;
  negative_zero.temperature = -0.0;
  EXPECT_EQ(ChatCacheKey("gpt-4o-mini", negative_zero), base);
  EXPECT_NE(ChatCacheKey("gpt-4o", r), base);
  std::vector<std::function<void(ChatRequest&)>> changes = {
      [](ChatRequest& x) { x.temperature = 0.1; },
      [](ChatRequest& x) { x.max_tokens = 129; },
      [](ChatRequest& x) { x.json_mode = false; },
      [](ChatRequest& x) { x.messages[0].role = "user"; },
      [](ChatRequest& x) { x.messages[1].content += " "; },
      [](ChatRequest& x) { x.messages.pop_back(); },
      // Same text, split differently between messages.
      [](ChatRequest& x) {
        x.messages[0].content += x.messages[1].content;
        x.messages[1].content.clear();
      },
  };
  for (size_t i = 0; i < changes.size(); ++i) {
    ChatRequest changed = r;
    changes[i](changed);
    EXPECT_NE(ChatCacheKey("gpt-4o-mini", changed), base) << "change " << i;
  }
}

TEST_F(ChatClientTest, CompleteBatchKeepsOrderAndRespectsTheConcurrencyLimit) {
  server_.SetHandler([](const Json& req, httplib::Response& res, int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    res.set_content(EchoAnswer(req).dump(), "application/json");
  });
  OpenAiChatOptions o = Options();
  o.max_concurrency = 3;
  auto c = Make(o);
  ASSERT_NE(c, nullptr);
  std::vector<ChatRequest> requests;
  for (int i = 0; i < 12; ++i) requests.push_back(UserRequest("q" + std::to_string(i)));
  Clock::time_point start = Clock::now();
  auto results = c->CompleteBatch(requests);
  double elapsed = MsSince(start);
  ASSERT_EQ(results.size(), requests.size());
  for (size_t i = 0; i < results.size(); ++i) {
    ASSERT_TRUE(results[i].ok()) << i << ": " << results[i].status().ToString();
    EXPECT_EQ(results[i]->content, "echo: q" + std::to_string(i));
  }
  EXPECT_LE(server_.max_in_flight(), 3);
  EXPECT_GE(server_.max_in_flight(), 2);  // requests did run in parallel
  EXPECT_LT(elapsed, 12 * 30.0);          // faster than one at a time
  EXPECT_EQ(server_.requests().size(), 12u);
  EXPECT_EQ(c->usage().requests, 12);
  EXPECT_TRUE(c->CompleteBatch({}).empty());
}

TEST_F(ChatClientTest, CompleteBatchFailuresStayWithTheirRequest) {
  server_.SetHandler([](const Json& req, httplib::Response& res, int) {
    if (req["messages"].back()["content"] == "bad") {
      res.status = 400;
      res.set_content(R"({"error":{"message":"Invalid prompt"}})", "application/json");
      return;
    }
    res.set_content(EchoAnswer(req).dump(), "application/json");
  });
  MapCache cache;
  auto c = Make(Options(), &cache);
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->Complete(UserRequest("cached")).ok());
  std::vector<ChatRequest> requests = {UserRequest("a"), UserRequest("bad"), UserRequest("cached"),
                                       UserRequest("b"), ChatRequest{}};
  auto results = c->CompleteBatch(requests);
  ASSERT_EQ(results.size(), 5u);
  ASSERT_TRUE(results[0].ok());
  EXPECT_EQ(results[0]->content, "echo: a");
  ASSERT_FALSE(results[1].ok());
  EXPECT_EQ(results[1].status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(results[1].status().message().find("HTTP 400: Invalid prompt"), std::string::npos);
  ASSERT_TRUE(results[2].ok());
  EXPECT_TRUE(results[2]->from_cache);
  ASSERT_TRUE(results[3].ok());
  EXPECT_EQ(results[3]->content, "echo: b");
  ASSERT_FALSE(results[4].ok());
  EXPECT_EQ(results[4].status().code(), StatusCode::kInvalidArgument);
  ChatUsage u = c->usage();
  EXPECT_EQ(u.failures, 2);
  EXPECT_EQ(u.cache_hits, 1);
  EXPECT_EQ(u.requests, 4);  // "cached" once, then a, bad, b
}

TEST_F(ChatClientTest, ConcurrencyLimitIsSharedByConcurrentCallers) {
  server_.SetHandler([](const Json& req, httplib::Response& res, int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    res.set_content(EchoAnswer(req).dump(), "application/json");
  });
  OpenAiChatOptions o = Options();
  o.max_concurrency = 2;
  auto c = Make(o);
  ASSERT_NE(c, nullptr);
  std::atomic<int> good{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t) {
    callers.emplace_back([&c, &good, t] {
      std::vector<ChatRequest> requests;
      for (int i = 0; i < 4; ++i) {
        requests.push_back(UserRequest(std::to_string(t) + "/" + std::to_string(i)));
      }
      auto results = c->CompleteBatch(requests);
      for (size_t i = 0; i < results.size(); ++i) {
        if (!results[i].ok() || results[i]->content != "echo: " + requests[i].messages[1].content) {
          return;
        }
      }
      ++good;
    });
  }
  // And single calls from yet another thread share the same slots.
  callers.emplace_back([&c, &good] {
    for (int i = 0; i < 3; ++i) {
      if (!c->Complete(UserRequest("single " + std::to_string(i))).ok()) return;
    }
    ++good;
  });
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(good.load(), 4);
  EXPECT_LE(server_.max_in_flight(), 2);
  EXPECT_EQ(c->usage().requests, 15);
}

TEST(ChatClientCreateTest, RejectsBadOptionsNamingTheField) {
  struct Case {
    std::function<void(OpenAiChatOptions&)> mutate;
    std::string field;
  };
  std::vector<Case> cases = {
      {[](auto& o) { o.base_url = "ftp://example.com"; }, "base_url"},
      {[](auto& o) { o.model = ""; }, "model"},
      {[](auto& o) { o.timeout_ms = 0; }, "timeout_ms"},
      {[](auto& o) { o.connect_timeout_ms = -1; }, "connect_timeout_ms"},
      {[](auto& o) { o.max_retries = -1; }, "max_retries"},
      {[](auto& o) { o.initial_backoff_ms = -1; }, "initial_backoff_ms"},
      {[](auto& o) { o.backoff_multiplier = 0.5; }, "backoff_multiplier"},
      {[](auto& o) { o.max_backoff_ms = -1; }, "max_backoff_ms"},
      {[](auto& o) { o.max_concurrency = 0; }, "max_concurrency"},
  };
  for (const Case& c : cases) {
    OpenAiChatOptions o;
    c.mutate(o);
    auto client = OpenAiChatClient::Create(o);
    ASSERT_FALSE(client.ok()) << c.field;
    EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(client.status().message().find("OpenAiChatOptions." + c.field + ":"),
              std::string::npos)
        << client.status().message();
  }
  auto ok = OpenAiChatClient::Create(OpenAiChatOptions{});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)->url(), "https://api.openai.com/v1/chat/completions");
  EXPECT_EQ((*ok)->Model(), "gpt-4o-mini");
}

// Sets (or unsets, with nullopt) environment variables for one scope.
class ScopedEnv {
 public:
  explicit ScopedEnv(std::map<std::string, std::optional<std::string>> vars) {
    for (const auto& [name, value] : vars) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      Set(name, value);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) Set(name, value);
  }

 private:
  static void Set(const std::string& name, const std::optional<std::string>& value) {
    if (value) {
      setenv(name.c_str(), value->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
  std::map<std::string, std::optional<std::string>> saved_;
};

// Every variable OpenAiChatOptionsFromEnv reads, unset.
std::map<std::string, std::optional<std::string>> CleanEnv() {
  std::map<std::string, std::optional<std::string>> vars;
  for (const char* name :
       {"FLOWRAG_LLM_BASE_URL", "FLOWRAG_LLM_MODEL", "FLOWRAG_LLM_API_KEY", "OPENAI_API_KEY",
        "FLOWRAG_LLM_TIMEOUT_MS", "FLOWRAG_LLM_CONCURRENCY", "FLOWRAG_LLM_MAX_RETRIES"}) {
    vars[name] = std::nullopt;
  }
  return vars;
}

TEST(ChatClientEnvTest, ReadsEveryVariable) {
  auto vars = CleanEnv();
  vars["FLOWRAG_LLM_BASE_URL"] = "http://localhost:11434/v1";
  vars["FLOWRAG_LLM_MODEL"] = "qwen2.5:7b";
  vars["FLOWRAG_LLM_API_KEY"] = "sk-flowrag";
  vars["OPENAI_API_KEY"] = "sk-openai";
  vars["FLOWRAG_LLM_TIMEOUT_MS"] = " 1500 ";
  vars["FLOWRAG_LLM_CONCURRENCY"] = "8";
  vars["FLOWRAG_LLM_MAX_RETRIES"] = "0";
  ScopedEnv env(vars);
  OpenAiChatOptions base;
  base.initial_backoff_ms = 7;
  auto o = OpenAiChatOptionsFromEnv(base);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->base_url, "http://localhost:11434/v1");
  EXPECT_EQ(o->model, "qwen2.5:7b");
  EXPECT_EQ(o->api_key, "sk-flowrag");
  EXPECT_EQ(o->timeout_ms, 1500);
  EXPECT_EQ(o->max_concurrency, 8u);
  EXPECT_EQ(o->max_retries, 0);
  EXPECT_EQ(o->initial_backoff_ms, 7);  // untouched fields keep the base value
  EXPECT_TRUE(ChatModelConfigured());
}

TEST(ChatClientEnvTest, UnsetVariablesKeepTheBaseAndMeanOffline) {
  ScopedEnv env(CleanEnv());
  OpenAiChatOptions base;
  base.model = "custom";
  auto o = OpenAiChatOptionsFromEnv(base);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->model, "custom");
  EXPECT_EQ(o->base_url, "https://api.openai.com/v1");
  EXPECT_EQ(o->timeout_ms, 120000);
  EXPECT_EQ(o->max_concurrency, 4u);
  EXPECT_EQ(o->max_retries, 4);
  EXPECT_TRUE(o->api_key.empty());
  EXPECT_FALSE(ChatModelConfigured());
}

TEST(ChatClientEnvTest, EitherBaseUrlOrModelMeansConfigured) {
  auto vars = CleanEnv();
  vars["OPENAI_API_KEY"] = "sk-openai";  // a key alone does not switch LLM mode on
  {
    ScopedEnv env(vars);
    EXPECT_FALSE(ChatModelConfigured());
  }
  for (const char* name : {"FLOWRAG_LLM_BASE_URL", "FLOWRAG_LLM_MODEL"}) {
    auto one = CleanEnv();
    one[name] = "";
    ScopedEnv env(one);
    EXPECT_TRUE(ChatModelConfigured()) << name;
    EXPECT_FALSE(OpenAiChatOptionsFromEnv({}).ok()) << name;  // and the empty value is an error
  }
}

TEST(ChatClientEnvTest, ApiKeyFallsBackToOpenAiKeyUnlessSetEmpty) {
  auto vars = CleanEnv();
  vars["OPENAI_API_KEY"] = "sk-openai";
  {
    ScopedEnv env(vars);
    auto o = OpenAiChatOptionsFromEnv({});
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(o->api_key, "sk-openai");
  }
  vars["FLOWRAG_LLM_API_KEY"] = "";
  {
    ScopedEnv env(vars);
    auto o = OpenAiChatOptionsFromEnv({});
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(o->api_key, "");  // explicitly no key: local server
  }
}

TEST(ChatClientEnvTest, MalformedValuesNameTheVariable) {
  struct Case {
    const char* name;
    const char* value;
  };
  for (Case c :
       {Case{"FLOWRAG_LLM_TIMEOUT_MS", "abc"}, Case{"FLOWRAG_LLM_TIMEOUT_MS", "0"},
        Case{"FLOWRAG_LLM_TIMEOUT_MS", "-5"}, Case{"FLOWRAG_LLM_TIMEOUT_MS", "1.5"},
        Case{"FLOWRAG_LLM_TIMEOUT_MS", "99999999999"}, Case{"FLOWRAG_LLM_CONCURRENCY", ""},
        Case{"FLOWRAG_LLM_CONCURRENCY", "0"}, Case{"FLOWRAG_LLM_CONCURRENCY", "four"},
        Case{"FLOWRAG_LLM_MAX_RETRIES", "-1"}, Case{"FLOWRAG_LLM_MAX_RETRIES", "3x"},
        Case{"FLOWRAG_LLM_MODEL", ""}, Case{"FLOWRAG_LLM_BASE_URL", "localhost:11434/v1"}}) {
    auto vars = CleanEnv();
    vars[c.name] = c.value;
    ScopedEnv env(vars);
    auto o = OpenAiChatOptionsFromEnv({});
    ASSERT_FALSE(o.ok()) << c.name << "=" << c.value;
    EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(o.status().message().rfind(std::string(c.name) + "=\"" + c.value + "\": expected", 0),
              0u)
        << o.status().message();
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
