// The public model API (include/flowrag/models.h, EngineOptions): a
// caller's Embedder and ChatModel, the OpenAI clients configured by options
// instead of the environment, Engine::MethodOptions, Engine::Embed and
// IndexOptions::interrupt.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

#include "flowrag/engine.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::TempDir;

std::vector<DocumentInput> Docs(int n) {
  std::vector<DocumentInput> docs;
  for (int i = 0; i < n; ++i) {
    const std::string k = std::to_string(i);
    docs.push_back({"d" + k, "Town " + k,
                    "Town " + k + " lies on the river Ostrel. Its harbour was built in 18" + k +
                        " by Corin Aske."});
  }
  return docs;
}

// Letter counts of the text, a deterministic toy model.
class LetterEmbedder final : public Embedder {
 public:
  std::string ModelId() const override { return "test:letters"; }
  size_t Dimension() const override { return 26; }
  Result<FloatMatrix> Embed(std::span<const std::string> texts) override {
    calls += 1;
    if (fail) return Status::Unavailable("letters: down");
    FloatMatrix m(texts.size(), 26);
    for (size_t i = 0; i < texts.size(); ++i) {
      double norm = 0;
      for (char c : texts[i]) {
        if (std::isalpha(static_cast<unsigned char>(c))) m.row(i)[std::tolower(c) - 'a'] += 1;
      }
      for (size_t j = 0; j < 26; ++j) norm += m.row(i)[j] * m.row(i)[j];
      for (size_t j = 0; j < 26 && norm > 0; ++j)
        m.row(i)[j] /= static_cast<float>(std::sqrt(norm));
    }
    return m;
  }
  std::atomic<int> calls{0};
  std::atomic<bool> fail{false};
};

// Answers every request with one fixed short answer.
class FixedChat final : public ChatModel {
 public:
  std::string Model() const override { return "test:fixed"; }
  Result<ChatResponse> Complete(const ChatRequest& request) override {
    calls += 1;
    ChatResponse r;
    r.content = R"({"reasoning": "it says so", "final_answer": "Corin Aske", "citations": [1]})";
    r.finish_reason = "stop";
    return r;
  }
  std::atomic<int> calls{0};
};

TEST(EngineCustomModelsTest, CustomEmbedderIndexesAndAnswersDenseQueries) {
  TempDir dir;
  auto letters = std::make_shared<LetterEmbedder>();
  EngineOptions eo;
  eo.custom_embedder = letters;
  {
    auto engine = Engine::Open(dir.File("s.db"), eo);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    auto report = (*engine)->IndexDocuments(Docs(5));
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_EQ(report->passages_embedded, 5u);
    QueryOptions q;
    q.method = "dense";
    auto r = (*engine)->Query("Town 3", q);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->passages.empty());
    auto stats = (*engine)->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->dense_model, "test:letters");
    auto v = (*engine)->Embed({"abc", ""});
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->rows, 2u);
    EXPECT_EQ(v->cols, 26u);
  }
  // Opened without it: stored vectors and BM25 still serve; whatever must
  // embed new text says which model the store needs.
  auto engine = Engine::Open(dir.File("s.db"));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  QueryOptions q;
  q.method = "bm25";
  EXPECT_TRUE((*engine)->Query("harbour", q).ok());
  q.method = "dense";
  auto dense = (*engine)->Query("harbour", q);
  ASSERT_FALSE(dense.ok());
  EXPECT_EQ(dense.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(dense.status().message().find("test:letters"), std::string::npos);
  auto more = (*engine)->IndexDocuments({{"d9", "Town 9", "Town 9 is new."}});
  EXPECT_EQ(more.status().code(), StatusCode::kFailedPrecondition);
}

TEST(EngineCustomModelsTest, FailingEmbedderFailsTheRunAndLosesNothing) {
  TempDir dir;
  auto letters = std::make_shared<LetterEmbedder>();
  EngineOptions eo;
  eo.custom_embedder = letters;
  auto engine = Engine::Open(dir.File("s.db"), eo);
  ASSERT_TRUE(engine.ok());
  letters->fail = true;
  auto failed = (*engine)->IndexDocuments(Docs(4));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable);
  letters->fail = false;
  auto again = (*engine)->IndexDocuments(Docs(4));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->documents_unchanged, 4u);  // stored by the failed run
  EXPECT_EQ(again->passages_embedded, 4u);
  auto stats = (*engine)->Stats();
  EXPECT_EQ(stats->passages_missing_embeddings, 0);
}

TEST(EngineCustomModelsTest, CustomChatModelAnswers) {
  TempDir dir;
  auto chat = std::make_shared<FixedChat>();
  EngineOptions eo;
  eo.chat_model = chat;
  auto engine = Engine::Open(dir.File("s.db"), eo);
  ASSERT_TRUE(engine.ok());
  IndexOptions io;
  io.extractor = "heuristic";
  ASSERT_TRUE((*engine)->IndexDocuments(Docs(3), io).ok());
  AnswerOptions ao;
  ao.query.method = "bm25";
  auto answer = (*engine)->Ask("Who built the harbour of Town 1?", ao);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->answerer, "llm:test:fixed");
  EXPECT_EQ(answer->text, "Corin Aske");
  EXPECT_GE(chat->calls.load(), 1);
  EXPECT_GE(answer->usage.llm_calls, 1);
}

TEST(EngineCustomModelsTest, ChatOptionsReplaceTheEnvironment) {
  TempDir dir;
  EngineOptions eo;
  OpenAiChatOptions chat;
  chat.base_url = "http://127.0.0.1:9/v1";  // discard port: refused at once
  chat.model = "options-model";
  chat.max_retries = 0;
  eo.openai_chat = chat;
  auto engine = Engine::Open(dir.File("s.db"), eo);
  ASSERT_TRUE(engine.ok());
  IndexOptions io;
  io.extractor = "heuristic";
  ASSERT_TRUE((*engine)->IndexDocuments(Docs(2), io).ok());
  AnswerOptions ao;
  ao.query.method = "bm25";
  auto answer = (*engine)->Ask("Who built the harbour of Town 1?", ao);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->answerer, "extractive");  // the model failed: the offline answer
  ASSERT_FALSE(answer->warnings.empty());
  EXPECT_NE(answer->warnings[0].find("127.0.0.1:9"), std::string::npos) << answer->warnings[0];
}

TEST(EngineCustomModelsTest, MethodOptionsListDefaultsEveryMethodAccepts) {
  auto bm25 = Engine::MethodOptions("bm25");
  ASSERT_TRUE(bm25.ok());
  ASSERT_EQ(bm25->size(), 2u);
  EXPECT_EQ((*bm25)[0].name, "bm25.k1");
  EXPECT_EQ((*bm25)[0].type, "number");
  EXPECT_EQ((*bm25)[0].default_value, "1.2");
  EXPECT_EQ(Engine::MethodOptions("auto").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Engine::MethodOptions("nope").status().code(), StatusCode::kInvalidArgument);

  TempDir dir;
  auto engine = Engine::Open(dir.File("s.db"));
  ASSERT_TRUE(engine.ok());
  ASSERT_TRUE((*engine)->IndexDocuments(Docs(6)).ok());
  for (const std::string& method : Engine::Methods()) {
    if (method == "auto") continue;
    auto options = Engine::MethodOptions(method);
    ASSERT_TRUE(options.ok()) << method;
    EXPECT_FALSE(options->empty()) << method;
    QueryOptions plain, defaults;
    plain.method = defaults.method = method;
    for (const MethodOption& o : *options) defaults.params[o.name] = o.default_value;
    auto a = (*engine)->Query("Who built the harbour of Town 2?", plain);
    auto b = (*engine)->Query("Who built the harbour of Town 2?", defaults);
    ASSERT_TRUE(a.ok()) << method << ": " << a.status().ToString();
    ASSERT_TRUE(b.ok()) << method << ": " << b.status().ToString();
    ASSERT_EQ(a->passages.size(), b->passages.size()) << method;
    for (size_t i = 0; i < a->passages.size(); ++i) {
      EXPECT_EQ(a->passages[i].passage_id, b->passages[i].passage_id) << method;
    }
  }
}

TEST(EngineCustomModelsTest, InterruptStopsBetweenBatchesAndTheRerunCompletes) {
  TempDir dir;
  auto engine = Engine::Open(dir.File("s.db"));
  ASSERT_TRUE(engine.ok());
  IndexOptions io;
  io.batch_size = 10;
  int polls = 0;
  io.interrupt = [&]() -> Status { return ++polls > 2 ? Status::Cancelled("stop") : Status::Ok(); };
  auto stopped = (*engine)->IndexDocuments(Docs(200), io);
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.status().code(), StatusCode::kCancelled);
  auto partial = (*engine)->Stats();
  ASSERT_TRUE(partial.ok());
  EXPECT_GT(partial->documents, 0);
  EXPECT_LT(partial->documents, 200);
  io.interrupt = nullptr;
  auto rest = (*engine)->IndexDocuments(Docs(200), io);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(rest->documents_unchanged, static_cast<size_t>(partial->documents));
  EXPECT_EQ((*engine)->Stats()->documents, 200);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
