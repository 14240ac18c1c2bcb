// Golden retrieval test on the demo corpus (examples/): fixed questions,
// expected top documents per method, stored in tests/golden/demo_retrieval.json.
//
// After a reviewed change in ranking, rewrite the expectations with
//   FLOWRAG_UPDATE_GOLDEN=1 build/release/tests/golden_test
// and commit the diff of the JSON file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "flowrag/engine.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

constexpr size_t kTopDocs = 5;
// Every method, text baselines and graph methods; "auto" resolves to one of
// them and is checked by the engine tests.
const char* kMethods[] = {"bm25", "dense", "hybrid", "ppr", "qafd", "semflow", "sa", "onehop"};

struct DemoQuestion {
  std::string id, question;
  std::vector<std::string> gold_docs;
  std::string type;
};

std::vector<DemoQuestion> LoadQuestions() {
  std::ifstream in(std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo_questions.jsonl");
  std::vector<DemoQuestion> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line);
    out.push_back(
        {j["id"], j["question"], j["gold_docs"].get<std::vector<std::string>>(), j["type"]});
  }
  return out;
}

std::vector<std::string> TopDocuments(const RetrievalResult& r) {
  std::vector<std::string> docs;
  std::set<std::string> seen;
  for (const auto& p : r.passages) {
    if (docs.size() == kTopDocs) break;
    if (seen.insert(p.document_id).second) docs.push_back(p.document_id);
  }
  return docs;
}

class GoldenTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    auto engine = Engine::Open(dir_->File("demo.db"));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = engine->release();
    auto r = engine_->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  static void TearDownTestSuite() {
    delete engine_;
    delete dir_;
  }
  static testing::TempDir* dir_;
  static Engine* engine_;
};
testing::TempDir* GoldenTest::dir_ = nullptr;
Engine* GoldenTest::engine_ = nullptr;

TEST_F(GoldenTest, DemoCorpusIsIndexedWithLongDocumentsChunked) {
  auto stats = engine_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->documents, 36);
  EXPECT_GT(stats->passages, 36);  // the three long documents are split
  EXPECT_EQ(stats->passages_missing_embeddings, 0);
}

TEST_F(GoldenTest, TopDocumentsMatchExpectations) {
  const std::string path = std::string(FLOWRAG_SOURCE_DIR) + "/tests/golden/demo_retrieval.json";
  nlohmann::json actual = nlohmann::json::object();
  for (const DemoQuestion& q : LoadQuestions()) {
    for (const char* method : kMethods) {
      QueryOptions o;
      o.method = method;
      o.top_k = 3 * kTopDocs;
      auto r = engine_->Query(q.question, o);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      actual[q.id][method] = TopDocuments(*r);
    }
  }
  if (const char* update = std::getenv("FLOWRAG_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(path) << actual.dump(2) << "\n";
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << path << " is missing; run with FLOWRAG_UPDATE_GOLDEN=1 to create it";
  nlohmann::json expected = nlohmann::json::parse(in);
  for (const auto& [qid, methods] : actual.items()) {
    for (const auto& [method, docs] : methods.items()) {
      EXPECT_EQ(docs, expected[qid][method]) << qid << " " << method;
    }
  }
}

// Independent of the golden file: every method finds the document of each
// single-hop question in its top 3, and most gold documents of the multi-hop
// questions in its top 5. One-hop, the LightRAG baseline, is pinned by the
// golden file only (it misses q12's document in its top 3).
TEST_F(GoldenTest, GoldDocumentsAreRetrieved) {
  for (const char* method : kMethods) {
    if (std::string_view(method) == "onehop") continue;
    size_t gold = 0, found = 0;
    for (const DemoQuestion& q : LoadQuestions()) {
      QueryOptions o;
      o.method = method;
      o.top_k = 3 * kTopDocs;
      auto r = engine_->Query(q.question, o);
      ASSERT_TRUE(r.ok());
      std::vector<std::string> top = TopDocuments(*r);
      if (q.type == "single") {
        top.resize(std::min<size_t>(top.size(), 3));
        EXPECT_NE(std::find(top.begin(), top.end(), q.gold_docs[0]), top.end())
            << q.id << " " << method;
      }
      for (const std::string& g : q.gold_docs) {
        ++gold;
        found += std::find(top.begin(), top.end(), g) != top.end();
      }
    }
    const double recall = static_cast<double>(found) / static_cast<double>(gold);
    std::printf("%s: demo gold-document recall@5 = %.2f\n", method, recall);
    EXPECT_GE(recall, 0.8) << method;
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
