// The engine with an OpenAI-compatible embeddings endpoint (a stub server on
// loopback): an endpoint that times out or answers garbage fails the run
// with the URL in the message, keeps every stored document, and a rerun
// against a healthy endpoint embeds only what is missing.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/hash.h"
#include "flowrag/engine.h"
#include "stub_server.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::TempDir;
using testing::WriteFile;

enum class Mode { kHealthy, kSlow, kGarbage };

class StubEmbeddings {
 public:
  StubEmbeddings() {
    httplib::Server& server = http_.server();
    server.Post("/v1/embeddings", [this](const httplib::Request& req, httplib::Response& res) {
      ++requests_;
      if (mode_ == Mode::kSlow) {
        std::this_thread::sleep_for(std::chrono::milliseconds(400));
      }
      if (mode_ == Mode::kGarbage) {
        res.set_content("<html>proxy error</html>", "text/html");
        return;
      }
      auto body = nlohmann::json::parse(req.body);
      nlohmann::json data = nlohmann::json::array();
      int i = 0;
      for (const auto& text : body["input"]) {
        // A deterministic 8-dimensional vector per text: bag of hashed words.
        std::vector<float> v(8, 0.0f);
        std::string s = text.get<std::string>();
        size_t start = 0;
        while (start < s.size()) {
          size_t end = s.find_first_of(" \n.", start);
          if (end == std::string::npos) end = s.size();
          if (end > start) v[Hash64(s.substr(start, end - start)) % 8] += 1.0f;
          start = end + 1;
        }
        data.push_back({{"index", i++}, {"embedding", v}});
      }
      res.set_content(nlohmann::json({{"data", data}, {"model", body["model"]}}).dump(),
                      "application/json");
    });
    http_.Start();
  }
  ~StubEmbeddings() { http_.Stop(); }
  std::string url() const { return http_.url() + "/v1"; }
  void set_mode(Mode m) { mode_ = m; }
  int requests() const { return requests_; }

 private:
  std::atomic<Mode> mode_{Mode::kHealthy};
  std::atomic<int> requests_{0};
  testing::StubHttpServer http_;
};

class RemoteEmbedderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("FLOWRAG_EMBED_BASE_URL", stub_.url().c_str(), 1);
    setenv("FLOWRAG_EMBED_MODEL", "stub-embed", 1);
    setenv("FLOWRAG_EMBED_API_KEY", "", 1);
    setenv("FLOWRAG_EMBED_TIMEOUT_MS", "150", 1);
    setenv("FLOWRAG_EMBED_MAX_RETRIES", "1", 1);
    std::string corpus;
    for (int i = 0; i < 20; ++i) {
      corpus += "{\"id\": \"d" + std::to_string(i) + "\", \"text\": \"harbour town " +
                std::to_string(i) + " has a lighthouse\"}\n";
    }
    WriteFile(dir_.File("c.jsonl"), corpus);
    options_.embedder = "openai";
    index_.chunking.strategy = ChunkOptions::Strategy::kNone;
    index_.batch_size = 5;
    index_.embed_batch_size = 8;
  }
  void TearDown() override {
    for (const char* v : {"FLOWRAG_EMBED_BASE_URL", "FLOWRAG_EMBED_MODEL", "FLOWRAG_EMBED_API_KEY",
                          "FLOWRAG_EMBED_TIMEOUT_MS", "FLOWRAG_EMBED_MAX_RETRIES"}) {
      unsetenv(v);
    }
  }

  StubEmbeddings stub_;
  TempDir dir_;
  EngineOptions options_;
  IndexOptions index_;
};

TEST_F(RemoteEmbedderTest, TimeoutKeepsDocumentsAndRerunResumesEmbedding) {
  auto engine = Engine::Open(dir_.File("s.db"), options_);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  stub_.set_mode(Mode::kSlow);
  auto failed = (*engine)->Index({dir_.File("c.jsonl")}, index_);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find(stub_.url()), std::string::npos)
      << failed.status().ToString();
  auto stats = (*engine)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->documents, 20);  // nothing stored is lost
  EXPECT_EQ(stats->passages, 20);
  // BM25 works on what is stored even before any vector exists.
  QueryOptions bm25;
  bm25.method = "bm25";
  ASSERT_TRUE((*engine)->Query("harbour town 7", bm25).ok());

  stub_.set_mode(Mode::kHealthy);
  auto ok = (*engine)->Index({dir_.File("c.jsonl")}, index_);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->documents_unchanged, 20u);
  EXPECT_EQ(ok->passages_embedded, 20u);
  stats = (*engine)->Stats();
  EXPECT_EQ(stats->dense_model, "openai:stub-embed");
  EXPECT_EQ(stats->passages_missing_embeddings, 0);

  // Vectors are cached by (model, text hash): a rerun makes no request.
  const int before = stub_.requests();
  ASSERT_TRUE((*engine)->Index({dir_.File("c.jsonl")}, index_).ok());
  EXPECT_EQ(stub_.requests(), before);

  QueryOptions dense;
  dense.method = "dense";
  dense.top_k = 3;
  auto r = (*engine)->Query("harbour town 7 has a lighthouse", dense);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->passages.size(), 3u);
  EXPECT_GT(stub_.requests(), before);  // the query itself was embedded remotely
}

TEST_F(RemoteEmbedderTest, GarbageAnswerIsAClearErrorAndLosesNothing) {
  auto engine = Engine::Open(dir_.File("s.db"), options_);
  ASSERT_TRUE(engine.ok());
  stub_.set_mode(Mode::kGarbage);
  auto failed = (*engine)->Index({dir_.File("c.jsonl")}, index_);
  ASSERT_FALSE(failed.ok());
  const std::string msg = failed.status().message();
  EXPECT_NE(msg.find(stub_.url() + "/embeddings"), std::string::npos) << msg;
  EXPECT_NE(msg.find("200"), std::string::npos) << msg;
  EXPECT_NE(msg.find("JSON"), std::string::npos) << msg;
  auto stats = (*engine)->Stats();
  EXPECT_EQ(stats->documents, 20);
  EXPECT_EQ(stats->embeddings, 0);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
