// Tests OpenAiEmbedder and the curl HttpClient against a real HTTP server on
// loopback (cpp-httplib), so timeouts, refused connections, headers and
// concurrency are exercised end to end.
#include "llm/openai_embedder.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
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

// The embedding the default handler returns for `text`: {number, 1} where
// number is the text read as an integer ("7" -> {7, 1}).
std::vector<double> EchoEmbedding(const std::string& text) {
  return {static_cast<double>(std::atoi(text.c_str())), 1.0};
}

Json EchoResponse(const Json& request) {
  Json data = Json::array();
  for (size_t i = 0; i < request["input"].size(); ++i) {
    data.push_back({{"object", "embedding"},
                    {"index", i},
                    {"embedding", EchoEmbedding(request["input"][i].get<std::string>())}});
  }
  return {{"object", "list"}, {"data", data}, {"model", request.value("model", "")}};
}

// An OpenAI-compatible stub on 127.0.0.1 with an ephemeral port. Tests swap
// the handler; by default it echoes EchoEmbedding() for each input.
class StubServer : public testing::RecordingJsonStub {
 public:
  StubServer() : RecordingJsonStub("/v1/embeddings", EchoResponse) {}

  std::string Url() const { return BaseUrl() + "/embeddings"; }
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

std::vector<std::string> Numbers(int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i <= to; ++i) out.push_back(std::to_string(i));
  return out;
}

void ExpectUnitRow(const FloatMatrix& m, size_t r, std::vector<double> raw) {
  double norm = 0;
  for (double v : raw) norm += v * v;
  norm = std::sqrt(norm);
  ASSERT_EQ(m.cols, raw.size());
  for (size_t c = 0; c < raw.size(); ++c) {
    EXPECT_NEAR(m.row(r)[c], raw[c] / norm, 1e-6) << "row " << r << " col " << c;
  }
}

class OpenAiEmbedderTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.ok()); }

  // Small timeouts and backoffs so failure paths stay fast.
  OpenAiEmbedderOptions Options() {
    OpenAiEmbedderOptions o;
    o.base_url = server_.BaseUrl();
    o.model = "stub-embed";
    o.timeout_ms = 3000;
    o.connect_timeout_ms = 1000;
    o.max_retries = 2;
    o.initial_backoff_ms = 5;
    o.max_backoff_ms = 50;
    return o;
  }

  std::unique_ptr<OpenAiEmbedder> Make(const OpenAiEmbedderOptions& o) {
    auto e = OpenAiEmbedder::Create(o);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }

  // Replies with `body` (as JSON) and status 200 to every request.
  void ReplyAlways(const std::string& body, int status = 200) {
    server_.SetHandler([body, status](const Json&, httplib::Response& res, int) {
      res.status = status;
      res.set_content(body, "application/json");
    });
  }

  StubServer server_;
};

TEST_F(OpenAiEmbedderTest, ReturnsNormalisedRowsInInputOrder) {
  ReplyAlways(R"({"object":"list","data":[
      {"object":"embedding","index":0,"embedding":[3,4]},
      {"object":"embedding","index":1,"embedding":[0,0]},
      {"object":"embedding","index":2,"embedding":[-1,1e-3]}]})");
  auto e = Make(Options());
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->Dimension(), 0u);
  EXPECT_EQ(e->ModelId(), "openai:stub-embed");
  std::vector<std::string> texts = {"a", "b", "c"};
  auto m = e->Embed(texts);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->rows, 3u);
  ExpectUnitRow(*m, 0, {3, 4});
  EXPECT_EQ(m->row(1)[0], 0.0f);  // a zero row stays zero
  EXPECT_EQ(m->row(1)[1], 0.0f);
  ExpectUnitRow(*m, 2, {-1, 1e-3});
  EXPECT_EQ(e->Dimension(), 2u);

  auto seen = server_.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].body["model"], "stub-embed");
  EXPECT_EQ(seen[0].body["input"], Json({"a", "b", "c"}));
  EXPECT_FALSE(seen[0].body.contains("dimensions"));
  EXPECT_EQ(e->counters().requests, 1u);
  EXPECT_EQ(e->counters().texts, 3u);
}

TEST_F(OpenAiEmbedderTest, HonoursIndexWhenShuffledAndPositionWhenMissing) {
  server_.SetHandler([](const Json& req, httplib::Response& res, int number) {
    Json data = EchoResponse(req)["data"];
    if (number == 0) {
      std::reverse(data.begin(), data.end());  // indices still say where each row belongs
    } else {
      for (Json& item : data) item.erase("index");
    }
    res.set_content(Json{{"data", data}}.dump(), "application/json");
  });
  auto e = Make(Options());
  ASSERT_NE(e, nullptr);
  std::vector<std::string> texts = Numbers(1, 4);
  for (int round = 0; round < 2; ++round) {
    auto m = e->Embed(texts);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    for (size_t i = 0; i < texts.size(); ++i) ExpectUnitRow(*m, i, EchoEmbedding(texts[i]));
  }
}

TEST_F(OpenAiEmbedderTest, SplitsIntoBatchesAndKeepsOrder) {
  OpenAiEmbedderOptions o = Options();
  o.batch_size = 3;
  o.max_concurrency = 2;
  auto e = Make(o);
  ASSERT_NE(e, nullptr);
  std::vector<std::string> texts = Numbers(1, 10);
  auto m = e->Embed(texts);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->rows, 10u);
  for (size_t i = 0; i < texts.size(); ++i) ExpectUnitRow(*m, i, EchoEmbedding(texts[i]));

  auto seen = server_.requests();
  ASSERT_EQ(seen.size(), 4u);
  std::multiset<size_t> sizes;
  for (const auto& r : seen) sizes.insert(r.body["input"].size());
  EXPECT_EQ(sizes, (std::multiset<size_t>{1, 3, 3, 3}));
  EXPECT_EQ(e->counters().requests, 4u);
  EXPECT_EQ(e->counters().retries, 0u);
}

TEST_F(OpenAiEmbedderTest, EmptyInputMakesNoRequestAndEmptyTextsGiveZeroRows) {
  auto e = Make(Options());
  ASSERT_NE(e, nullptr);
  auto none = e->Embed({});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->rows, 0u);
  std::vector<std::string> blanks = {"", ""};
  auto all_blank = e->Embed(blanks);
  ASSERT_TRUE(all_blank.ok());
  EXPECT_EQ(all_blank->rows, 2u);
  EXPECT_TRUE(server_.requests().empty());
  EXPECT_EQ(e->counters().requests, 0u);

  std::vector<std::string> texts = {"3", "", "4"};
  auto m = e->Embed(texts);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->rows, 3u);
  ExpectUnitRow(*m, 0, {3, 1});
  EXPECT_EQ(m->row(1)[0], 0.0f);
  EXPECT_EQ(m->row(1)[1], 0.0f);
  ExpectUnitRow(*m, 2, {4, 1});
  auto seen = server_.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].body["input"], Json({"3", "4"}));
}

TEST_F(OpenAiEmbedderTest, SendsAuthorizationOnlyWithAKey) {
  std::vector<std::string> texts = {"1"};
  auto anonymous = Make(Options());
  ASSERT_NE(anonymous, nullptr);
  ASSERT_TRUE(anonymous->Embed(texts).ok());
  OpenAiEmbedderOptions o = Options();
  o.api_key = "sk-test-123";
  auto keyed = Make(o);
  ASSERT_NE(keyed, nullptr);
  ASSERT_TRUE(keyed->Embed(texts).ok());

  auto seen = server_.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_FALSE(seen[0].authorization.has_value());
  ASSERT_TRUE(seen[1].authorization.has_value());
  EXPECT_EQ(*seen[1].authorization, "Bearer sk-test-123");
}

TEST_F(OpenAiEmbedderTest, SendsDimensionsAndChecksTheAnswer) {
  OpenAiEmbedderOptions o = Options();
  o.dimensions = 2;
  auto e = Make(o);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->ModelId(), "openai:stub-embed:d2");
  std::vector<std::string> texts = {"5"};
  auto m = e->Embed(texts);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto seen = server_.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].body["dimensions"], 2);

  // A server that ignores "dimensions" must not silently produce other vectors.
  o.dimensions = 8;
  auto ignored = Make(o);
  ASSERT_NE(ignored, nullptr);
  auto bad = ignored->Embed(texts);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("not the requested 8"), std::string::npos)
      << bad.status().message();
  EXPECT_EQ(ignored->Dimension(), 0u);
}

TEST_F(OpenAiEmbedderTest, RejectsADimensionChangeBetweenCalls) {
  server_.SetHandler([](const Json& req, httplib::Response& res, int number) {
    Json data = EchoResponse(req)["data"];
    if (number > 0) data[0]["embedding"].push_back(1.0);
    res.set_content(Json{{"data", data}}.dump(), "application/json");
  });
  auto e = Make(Options());
  ASSERT_NE(e, nullptr);
  std::vector<std::string> texts = {"1"};
  ASSERT_TRUE(e->Embed(texts).ok());
  auto m = e->Embed(texts);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(m.status().message().find("earlier answers had 2"), std::string::npos)
      << m.status().message();
  EXPECT_EQ(e->Dimension(), 2u);
}

TEST_F(OpenAiEmbedderTest, RetriesAServerErrorThenSucceeds) {
  server_.SetHandler([](const Json& req, httplib::Response& res, int number) {
    if (number == 0) {
      res.status = 500;
      res.set_content("boom", "text/plain");
      return;
    }
    res.set_content(EchoResponse(req).dump(), "application/json");
  });
  auto e = Make(Options());
  ASSERT_NE(e, nullptr);
  std::vector<std::string> texts = {"2", "3"};
  auto m = e->Embed(texts);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ExpectUnitRow(*m, 1, {3, 1});
  OpenAiEmbedderCounters c = e->counters();
  EXPECT_EQ(c.requests, 2u);
  EXPECT_EQ(c.retries, 1u);
  EXPECT_EQ(c.failures, 0u);
  EXPECT_EQ(c.texts, 2u);
  EXPECT_EQ(server_.requests().size(), 2u);
}

TEST_F(OpenAiEmbedderTest, GivesUpAfterMaxRetriesOnPersistentServerErrors) {
  ReplyAlways("upstream crashed", 500);
  OpenAiEmbedderOptions o = Options();
  o.max_retries = 2;
  auto e = Make(o);
  ASSERT_NE(e, nullptr);
  std::vector<std::string> texts = {"1"};
  auto m = e->Embed(texts);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnavailable);
  const std::string& msg = m.status().message();
  EXPECT_EQ(msg.rfind("POST " + server_.Url() + ": HTTP 500", 0), 0u) << msg;
  EXPECT_NE(msg.find("upstream crashed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("gave up after 3 attempts"), std::string::npos) << msg;
  EXPECT_EQ(server_.requests().size(), 3u);
  OpenAiEmbedderCounters c = e->counters();
  EXPECT_EQ(c.requests, 3u);
  EXPECT_EQ(c.retries, 2u);
  EXPECT_EQ(c.failures, 1u);
}

TEST_F(OpenAiEmbedderTest, DoesNotRetryAClientErrorAndQuotesTheServer) {
  ReplyAlways(R"({"error":{"message":"This model's maximum context length is 8192 tokens",
                 "type":"invalid_request_error","code":null}})",
              400);
  auto e = Make(Options());
  ASSERT_NE(e, nullptr);
  std::vector<std::string> texts = {"1"};
  auto m = e->Embed(texts);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(m.status().message(), "POST " + server_.Url() +
                                      ": HTTP 400: This model's maximum context length is 8192 "
                                      "tokens");
  EXPECT_EQ(server_.requests().size(), 1u);
  EXPECT_EQ(e->counters().retries, 0u);
  EXPECT_EQ(e->counters().failures, 1u);
}

TEST_F(OpenAiEmbedderTest, StopsSendingBatchesAfterOneFails) {
  server_.SetHandler([](const Json& req, httplib::Response& res, int) {
    if (req["input"][0] == "3") {
      res.status = 401;
      res.set_content(R"({"error":{"message":"Incorrect API key provided"}})", "application/json");
      return;
    }
    res.set_content(EchoResponse(req).dump(), "application/json");
  });
  OpenAiEmbedderOptions o = Options();
  o.batch_size = 1;
  o.max_concurrency = 1;
  auto e = Make(o);
  ASSERT_NE(e, nullptr);
  std::vector<std::string> texts = Numbers(1, 10);
  auto m = e->Embed(texts);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("Incorrect API key provided [batch 3 of 10]"),
            std::string::npos)
      << m.status().message();
  EXPECT_EQ(server_.requests().size(), 3u);
}

TEST_F(OpenAiEmbedderTest, HonoursRetryAfter) {
  server_.SetHandler([](const Json& req, httplib::Response& res, int number) {
    if (number == 0) {
      res.status = 429;
      res.set_header("Retry-After", "1");
      res.set_content(R"({"error":{"message":"Rate limit reached"}})", "application/json");
      return;
    }
    res.set_content(EchoResponse(req).dump(), "application/json");
  });
  OpenAiEmbedderOptions o = Options();
  o.initial_backoff_ms = 1;
  o.max_backoff_ms = 5000;
  auto e = Make(o);
  ASSERT_NE(e, nullptr);
  std::vector<std::string> texts = {"1"};
  Clock::time_point start = Clock::now();
  auto m = e->Embed(texts);
  double elapsed = MsSince(start);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_GE(elapsed, 950.0);  // waited as told, not the 1 ms backoff
  EXPECT_LT(elapsed, 4000.0);
  EXPECT_EQ(e->counters().retries, 1u);
}

TEST_F(OpenAiEmbedderTest, CapsRetryAfterAtMaxBackoff) {
  server_.SetHandler([](const Json& req, httplib::Response& res, int number) {
    if (number == 0) {
      res.status = 429;
      res.set_header("Retry-After", "60");
      return;
    }
    res.set_content(EchoResponse(req).dump(), "application/json");
  });
  OpenAiEmbedderOptions o = Options();
  o.max_backoff_ms = 150;
  auto e = Make(o);
  ASSERT_NE(e, nullptr);
  std::vector<std::string> texts = {"1"};
  Clock::time_point start = Clock::now();
  auto m = e->Embed(texts);
  double elapsed = MsSince(start);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_GE(elapsed, 140.0);
  EXPECT_LT(elapsed, 2000.0);
}

TEST_F(OpenAiEmbedderTest, TimesOutFastAndNamesTheUrl) {
  server_.SetHandler([this](const Json& req, httplib::Response& res, int) {
    server_.Hang(std::chrono::seconds(10));  // released at teardown
    res.set_content(EchoResponse(req).dump(), "application/json");
  });
  OpenAiEmbedderOptions o = Options();
  o.timeout_ms = 200;
  o.max_retries = 1;
  auto e = Make(o);
  ASSERT_NE(e, nullptr);
  std::vector<std::string> texts = {"1"};
  Clock::time_point start = Clock::now();
  auto m = e->Embed(texts);
  double elapsed = MsSince(start);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kDeadlineExceeded) << m.status().ToString();
  EXPECT_EQ(m.status().message().rfind("POST " + server_.Url() + ": timed out", 0), 0u)
      << m.status().message();
  EXPECT_GE(elapsed, 390.0);  // two attempts of 200 ms
  EXPECT_LT(elapsed, 1500.0);
  EXPECT_EQ(e->counters().requests, 2u);
  EXPECT_EQ(e->counters().failures, 1u);
}

struct MalformedCase {
  const char* name;
  const char* body;
  const char* expected;  // part of the error message
};

class MalformedEmbeddingBodyTest : public OpenAiEmbedderTest,
                                   public ::testing::WithParamInterface<MalformedCase> {};

TEST_P(MalformedEmbeddingBodyTest, FailsWithoutRetryNamingWhatWasWrong) {
  ReplyAlways(GetParam().body);
  auto e = Make(Options());
  ASSERT_NE(e, nullptr);
  std::vector<std::string> texts = {"1", "2"};
  auto m = e->Embed(texts);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnavailable);
  const std::string& msg = m.status().message();
  EXPECT_EQ(msg.rfind("POST " + server_.Url() + ": HTTP 200 but ", 0), 0u) << msg;
  EXPECT_NE(msg.find(GetParam().expected), std::string::npos) << msg;
  EXPECT_EQ(server_.requests().size(), 1u);
  EXPECT_EQ(e->Dimension(), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Bodies, MalformedEmbeddingBodyTest,
    ::testing::Values(
        MalformedCase{"NotJson", "<html>502 Bad Gateway</html>",
                      "body is not JSON (expected {\"data\": [{\"embedding\": [numbers], "
                      "\"index\": i}]}): <html>502 Bad Gateway</html>"},
        MalformedCase{"NotAnObject", "[[1,2],[3,4]]", "body is an array, not a JSON object"},
        MalformedCase{"NoData", R"({"object":"list"})", "body has no \"data\" field"},
        MalformedCase{"ErrorInsteadOfData", R"({"error":{"message":"model not loaded"}})",
                      "an error instead of \"data\": model not loaded"},
        MalformedCase{"DataNotArray", R"({"data":{"embedding":[1]}})",
                      "\"data\" is an object, expected an array"},
        MalformedCase{"WrongCount", R"({"data":[{"index":0,"embedding":[1,2]}]})",
                      "\"data\" has 1 items for 2 inputs"},
        MalformedCase{"RaggedDimensions",
                      R"({"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2,3]}]})",
                      "data[1].embedding has 3 values but data[0].embedding has 2"},
        MalformedCase{"NonNumericValue",
                      R"({"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,"x"]}]})",
                      "data[1].embedding[1] is \"x\", expected a number"},
        MalformedCase{
            "NullValue",
            R"({"data":[{"index":0,"embedding":[null,2]},{"index":1,"embedding":[1,2]}]})",
            "data[0].embedding[0] is null, expected a number"},
        MalformedCase{
            "OverflowingValue",
            R"({"data":[{"index":0,"embedding":[1e300,2]},{"index":1,"embedding":[1,2]}]})",
            "not a finite float"},
        MalformedCase{"NoEmbedding", R"({"data":[{"index":0},{"index":1,"embedding":[1]}]})",
                      "data[0] has no \"embedding\""},
        MalformedCase{"Base64Embedding",
                      R"({"data":[{"index":0,"embedding":"AAAA"},{"index":1,"embedding":"AAAA"}]})",
                      "data[0].embedding is a string (base64-encoded?)"},
        MalformedCase{"EmptyEmbedding",
                      R"({"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]})",
                      "data[0].embedding is empty"},
        MalformedCase{"IndexOutOfRange",
                      R"({"data":[{"index":0,"embedding":[1]},{"index":2,"embedding":[1]}]})",
                      "data[1].index is 2, expected an integer in [0, 2)"},
        MalformedCase{"IndexNotInteger",
                      R"({"data":[{"index":"0","embedding":[1]},{"index":1,"embedding":[1]}]})",
                      "data[0].index is \"0\", expected an integer in [0, 2)"},
        MalformedCase{"DuplicateIndex",
                      R"({"data":[{"index":1,"embedding":[1]},{"index":1,"embedding":[1]}]})",
                      "data[1].index 1 repeats an earlier item's index"},
        MalformedCase{"ItemNotObject", R"({"data":[[1,2],[3,4]]})",
                      "data[0] is an array, expected an object"}),
    [](const ::testing::TestParamInfo<MalformedCase>& info) { return info.param.name; });

TEST_F(OpenAiEmbedderTest, LongBodiesAreQuotedShort) {
  ReplyAlways(std::string(5000, 'x'));
  auto e = Make(Options());
  ASSERT_NE(e, nullptr);
  std::vector<std::string> texts = {"1"};
  auto m = e->Embed(texts);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find(std::string(200, 'x') + "..."), std::string::npos);
  EXPECT_LT(m.status().message().size(), 500u);
}

TEST(OpenAiEmbedderNoServerTest, ConnectionRefusedIsRetriedThenNamesTheUrl) {
  int port = UnusedPort();
  ASSERT_GT(port, 0);
  OpenAiEmbedderOptions o;
  o.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1/";  // trailing '/' is fine
  o.max_retries = 1;
  o.initial_backoff_ms = 5;
  o.connect_timeout_ms = 1000;
  auto e = OpenAiEmbedder::Create(o);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  std::vector<std::string> texts = {"1"};
  auto m = (*e)->Embed(texts);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnavailable) << m.status().ToString();
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/v1/embeddings";
  EXPECT_EQ(m.status().message().rfind("POST " + url + ": ", 0), 0u) << m.status().message();
  EXPECT_NE(m.status().message().find("gave up after 2 attempts"), std::string::npos);
  EXPECT_EQ((*e)->counters().requests, 2u);
  EXPECT_EQ((*e)->counters().failures, 1u);
}

TEST_F(OpenAiEmbedderTest, RespectsTheConcurrencyLimit) {
  server_.SetHandler([](const Json& req, httplib::Response& res, int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    res.set_content(EchoResponse(req).dump(), "application/json");
  });
  OpenAiEmbedderOptions o = Options();
  o.batch_size = 1;
  o.max_concurrency = 3;
  auto e = Make(o);
  ASSERT_NE(e, nullptr);
  std::vector<std::string> texts = Numbers(1, 12);
  auto m = e->Embed(texts);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  for (size_t i = 0; i < texts.size(); ++i) ExpectUnitRow(*m, i, EchoEmbedding(texts[i]));
  EXPECT_LE(server_.max_in_flight(), 3);
  EXPECT_GE(server_.max_in_flight(), 2);  // batches did run in parallel
  EXPECT_EQ(server_.requests().size(), 12u);
}

TEST_F(OpenAiEmbedderTest, ConcurrencyLimitIsSharedByConcurrentCalls) {
  server_.SetHandler([](const Json& req, httplib::Response& res, int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    res.set_content(EchoResponse(req).dump(), "application/json");
  });
  OpenAiEmbedderOptions o = Options();
  o.batch_size = 1;
  o.max_concurrency = 2;
  auto e = Make(o);
  ASSERT_NE(e, nullptr);
  std::vector<std::thread> callers;
  std::atomic<int> good{0};
  for (int t = 0; t < 3; ++t) {
    callers.emplace_back([&e, &good, t] {
      std::vector<std::string> texts = Numbers(10 * t + 1, 10 * t + 4);
      auto m = e->Embed(texts);
      if (!m.ok() || m->rows != texts.size()) return;
      for (size_t i = 0; i < texts.size(); ++i) {
        if (std::abs(m->row(i)[0] - EchoEmbedding(texts[i])[0] /
                                        std::hypot(EchoEmbedding(texts[i])[0], 1.0)) > 1e-6) {
          return;
        }
      }
      ++good;
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(good.load(), 3);
  EXPECT_LE(server_.max_in_flight(), 2);
  EXPECT_EQ(e->counters().requests, 12u);
}

TEST(OpenAiEmbedderCreateTest, RejectsBadOptionsNamingTheField) {
  struct Case {
    std::function<void(OpenAiEmbedderOptions&)> mutate;
    std::string field;
  };
  std::vector<Case> cases = {
      {[](auto& o) { o.base_url = "ftp://example.com"; }, "base_url"},
      {[](auto& o) { o.model = ""; }, "model"},
      {[](auto& o) { o.batch_size = 0; }, "batch_size"},
      {[](auto& o) { o.timeout_ms = 0; }, "timeout_ms"},
      {[](auto& o) { o.connect_timeout_ms = -1; }, "connect_timeout_ms"},
      {[](auto& o) { o.max_retries = -1; }, "max_retries"},
      {[](auto& o) { o.backoff_multiplier = 0.5; }, "backoff_multiplier"},
      {[](auto& o) { o.max_concurrency = 0; }, "max_concurrency"},
  };
  for (const Case& c : cases) {
    OpenAiEmbedderOptions o;
    c.mutate(o);
    auto e = OpenAiEmbedder::Create(o);
    ASSERT_FALSE(e.ok()) << c.field;
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(e.status().message().find("OpenAiEmbedderOptions." + c.field + ":"),
              std::string::npos)
        << e.status().message();
  }
  auto ok = OpenAiEmbedder::Create(OpenAiEmbedderOptions{});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)->url(), "https://api.openai.com/v1/embeddings");
  EXPECT_EQ((*ok)->ModelId(), "openai:text-embedding-3-small");
}

// Sets (or unsets, with nullopt) environment variables for one scope.
class ScopedEnv {
 public:
  ScopedEnv(std::map<std::string, std::optional<std::string>> vars) {
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

// Every variable OpenAiEmbedderOptionsFromEnv reads, unset.
std::map<std::string, std::optional<std::string>> CleanEnv() {
  std::map<std::string, std::optional<std::string>> vars;
  for (const char* name : {"FLOWRAG_EMBED_BASE_URL", "FLOWRAG_EMBED_MODEL", "FLOWRAG_EMBED_API_KEY",
                           "OPENAI_API_KEY", "FLOWRAG_EMBED_BATCH", "FLOWRAG_EMBED_TIMEOUT_MS",
                           "FLOWRAG_EMBED_CONCURRENCY", "FLOWRAG_EMBED_DIMENSIONS"}) {
    vars[name] = std::nullopt;
  }
  return vars;
}

TEST(OpenAiEmbedderEnvTest, ReadsEveryVariable) {
  auto vars = CleanEnv();
  vars["FLOWRAG_EMBED_BASE_URL"] = "http://localhost:11434/v1";
  vars["FLOWRAG_EMBED_MODEL"] = "nomic-embed-text";
  vars["FLOWRAG_EMBED_API_KEY"] = "sk-flowrag";
  vars["OPENAI_API_KEY"] = "sk-openai";
  vars["FLOWRAG_EMBED_BATCH"] = "16";
  vars["FLOWRAG_EMBED_TIMEOUT_MS"] = " 1500 ";
  vars["FLOWRAG_EMBED_CONCURRENCY"] = "8";
  vars["FLOWRAG_EMBED_DIMENSIONS"] = "256";
  ScopedEnv env(vars);
  OpenAiEmbedderOptions base;
  base.max_retries = 7;
  auto o = OpenAiEmbedderOptionsFromEnv(base);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->base_url, "http://localhost:11434/v1");
  EXPECT_EQ(o->model, "nomic-embed-text");
  EXPECT_EQ(o->api_key, "sk-flowrag");
  EXPECT_EQ(o->batch_size, 16u);
  EXPECT_EQ(o->timeout_ms, 1500);
  EXPECT_EQ(o->max_concurrency, 8u);
  EXPECT_EQ(o->dimensions, 256u);
  EXPECT_EQ(o->max_retries, 7);  // untouched fields keep the base value
}

TEST(OpenAiEmbedderEnvTest, UnsetVariablesKeepTheBase) {
  ScopedEnv env(CleanEnv());
  OpenAiEmbedderOptions base;
  base.model = "custom";
  auto o = OpenAiEmbedderOptionsFromEnv(base);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->model, "custom");
  EXPECT_EQ(o->base_url, "https://api.openai.com/v1");
  EXPECT_EQ(o->batch_size, 64u);
  EXPECT_TRUE(o->api_key.empty());
}

TEST(OpenAiEmbedderEnvTest, ApiKeyFallsBackToOpenAiKeyUnlessSetEmpty) {
  auto vars = CleanEnv();
  vars["OPENAI_API_KEY"] = "sk-openai";
  {
    ScopedEnv env(vars);
    auto o = OpenAiEmbedderOptionsFromEnv({});
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(o->api_key, "sk-openai");
  }
  vars["FLOWRAG_EMBED_API_KEY"] = "";
  {
    ScopedEnv env(vars);
    auto o = OpenAiEmbedderOptionsFromEnv({});
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(o->api_key, "");  // explicitly no key: local server
  }
}

TEST(OpenAiEmbedderEnvTest, MalformedNumbersNameTheVariable) {
  struct Case {
    const char* name;
    const char* value;
  };
  for (Case c :
       {Case{"FLOWRAG_EMBED_BATCH", "abc"}, Case{"FLOWRAG_EMBED_BATCH", "0"},
        Case{"FLOWRAG_EMBED_BATCH", "12x"}, Case{"FLOWRAG_EMBED_TIMEOUT_MS", "-5"},
        Case{"FLOWRAG_EMBED_TIMEOUT_MS", "99999999999"}, Case{"FLOWRAG_EMBED_TIMEOUT_MS", "1.5"},
        Case{"FLOWRAG_EMBED_CONCURRENCY", ""}, Case{"FLOWRAG_EMBED_CONCURRENCY", "four"},
        Case{"FLOWRAG_EMBED_DIMENSIONS", "-1"}}) {
    auto vars = CleanEnv();
    vars[c.name] = c.value;
    ScopedEnv env(vars);
    auto o = OpenAiEmbedderOptionsFromEnv({});
    ASSERT_FALSE(o.ok()) << c.name << "=" << c.value;
    EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(o.status().message().rfind(std::string(c.name) + "=\"" + c.value + "\": expected", 0),
              0u)
        << o.status().message();
  }
  for (const char* name : {"FLOWRAG_EMBED_MODEL", "FLOWRAG_EMBED_BASE_URL"}) {
    auto vars = CleanEnv();
    vars[name] = name == std::string("FLOWRAG_EMBED_MODEL") ? "" : "localhost:11434/v1";
    ScopedEnv env(vars);
    auto o = OpenAiEmbedderOptionsFromEnv({});
    ASSERT_FALSE(o.ok()) << name;
    EXPECT_EQ(o.status().message().rfind(std::string(name) + "=\"", 0), 0u) << o.status().message();
  }
}

TEST_F(OpenAiEmbedderTest, HttpClientReturnsStatusHeadersAndBody) {
  server_.server().Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
    res.status = 418;
    res.set_header("X-Flowrag-Test", "  teapot ");
    res.set_content("got " + req.body + " as " + req.get_header_value("Content-Type") + " key " +
                        req.get_header_value("X-Key"),
                    "text/plain");
  });
  std::shared_ptr<HttpClient> http = NewCurlHttpClient();
  HttpRequest request;
  const std::string base = server_.BaseUrl();  // ".../v1"
  request.url = base.substr(0, base.size() - 3) + "/echo";
  request.body = R"({"x":1})";
  request.headers = {"X-Key: k1"};
  auto r = http->Post(request);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 418);  // non-2xx is an answer, not an error
  EXPECT_EQ(r->body, R"(got {"x":1} as application/json key k1)");
  const std::string* h = r->FindHeader("x-FLOWRAG-test");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(*h, "teapot");
  EXPECT_EQ(r->FindHeader("x-missing"), nullptr);

  request.max_response_bytes = 10;
  auto too_big = http->Post(request);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(too_big.status().message().find("larger than 10 bytes"), std::string::npos);

  request.url = "file:///etc/passwd";
  auto bad = http->Post(request);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(HttpClientTest, RedactsCredentialsInUrls) {
  EXPECT_EQ(RedactUrl("https://user:secret@example.com/v1?a=b@c"),
            "https://***@example.com/v1?a=b@c");
  EXPECT_EQ(RedactUrl("http://127.0.0.1:8080/v1"), "http://127.0.0.1:8080/v1");
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
