// End to end over the Unicode tokeniser: a small Chinese, Japanese and Thai
// corpus (tests/testdata/unicode) answered by BM25 and the built-in hashed
// embedder; the stemming language recorded in the store and enforced; a
// store indexed before the Unicode tokeniser opening and answering.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/text.h"
#include "flowrag/engine.h"
#include "lexical/aho_corasick.h"
#include "retrieval/keywords.h"
#include "storage/store.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::TempDir;
using testing::WriteFile;

const std::string kDir = std::string(FLOWRAG_TESTDATA_DIR) + "/unicode";

struct Question {
  std::string id, text, gold;
};

std::vector<Question> Questions() {
  std::vector<Question> out;
  std::ifstream in(kDir + "/questions.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    out.push_back({j["id"], j["question"], j["gold_ids"][0]});
  }
  return out;
}

IndexOptions WholePassages() {
  IndexOptions o;
  o.chunking.strategy = ChunkOptions::Strategy::kNone;
  return o;
}

// The document ids of the top `k` passages `method` retrieves for `q`.
std::vector<std::string> Top(Engine& engine, const std::string& q, const std::string& method,
                             size_t k) {
  QueryOptions o;
  o.method = method;
  o.top_k = k;
  auto r = engine.Query(q, o);
  EXPECT_TRUE(r.ok()) << method << ": " << r.status().ToString();
  std::vector<std::string> ids;
  if (r.ok()) {
    for (const auto& p : r->passages) ids.push_back(p.document_id);
  }
  return ids;
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::optional<std::string> Meta(const std::string& db, const std::string& key) {
  auto store = Store::Open(db);
  EXPECT_TRUE(store.ok());
  auto v = (*store)->GetMeta(key);
  EXPECT_TRUE(v.ok());
  return v.ok() ? *v : std::nullopt;
}

TEST(UnicodeRetrievalTest, ChineseJapaneseThaiQuestionsFindTheirPassages) {
  TempDir dir;
  auto engine = Engine::Open(dir.File("s.db"));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  auto r = (*engine)->Index({kDir + "/corpus.jsonl"}, WholePassages());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->documents_added, 22u);
  const std::vector<Question> questions = Questions();
  ASSERT_EQ(questions.size(), 22u);
  for (const Question& q : questions) {
    EXPECT_TRUE(Contains(Top(**engine, q.text, "bm25", 3), q.gold)) << "bm25 " << q.id << " " << q.text;
    EXPECT_TRUE(Contains(Top(**engine, q.text, "dense", 3), q.gold)) << "dense " << q.id << " " << q.text;
  }
  // The first hit of BM25 is the gold passage for most questions (a
  // whole-run tokeniser matched only the question about "flowrag").
  size_t first = 0;
  for (const Question& q : questions) first += Top(**engine, q.text, "bm25", 1) == std::vector{q.gold};
  EXPECT_GE(first, 18u);
  EXPECT_EQ(Meta(dir.File("s.db"), "language"), "english-s");
  EXPECT_EQ(Meta(dir.File("s.db"), "tokenizer"), "tok2-english-s");
}

TEST(UnicodeRetrievalTest, LanguageIsRecordedAndQueriesTokeniseWithIt) {
  TempDir dir;
  WriteFile(dir.File("de.jsonl"),
            "{\"id\": \"haus\", \"title\": \"Am See\", \"text\": \"Das alte Haus steht am See.\"}\n"
            "{\"id\": \"baum\", \"title\": \"Im Garten\", \"text\": \"Ein gro\xc3\x9f" "er Baum w\xc3\xa4" "chst im Garten.\"}\n"
            "{\"id\": \"weg\", \"title\": \"Der Weg\", \"text\": \"Der Weg f\xc3\xbc" "hrt durch den Wald.\"}\n");
  const std::string query = "H\xc3\xa4user";  // plural of Haus: "haus" in German Snowball
  {
    EngineOptions o;
    o.language = "german";
    auto engine = Engine::Open(dir.File("de.db"), o);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    ASSERT_TRUE((*engine)->Index({dir.File("de.jsonl")}, WholePassages()).ok());
    EXPECT_EQ(Top(**engine, query, "bm25", 1), std::vector<std::string>{"haus"});
  }
  EXPECT_EQ(Meta(dir.File("de.db"), "language"), "german");
  {  // No language given: the store's, so queries still stem like the index.
    auto engine = Engine::Open(dir.File("de.db"));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    EXPECT_EQ(Top(**engine, query, "bm25", 1), std::vector<std::string>{"haus"});
    auto stats = (*engine)->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_NE(stats->dense_model.find("tok2-german"), std::string::npos) << stats->dense_model;
  }
  {  // Another language: refused, naming both.
    EngineOptions o;
    o.language = "english";
    auto engine = Engine::Open(dir.File("de.db"), o);
    ASSERT_FALSE(engine.ok());
    EXPECT_EQ(engine.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(engine.status().message().find("\"german\""), std::string::npos);
    EXPECT_NE(engine.status().message().find("\"english\""), std::string::npos);
  }
  {  // An unknown one: InvalidArgument.
    EngineOptions o;
    o.language = "klingon";
    auto engine = Engine::Open(dir.File("other.db"), o);
    ASSERT_FALSE(engine.ok());
    EXPECT_EQ(engine.status().code(), StatusCode::kInvalidArgument);
  }
  {  // The default (english-s) does not stem German plurals: no BM25 match.
    auto engine = Engine::Open(dir.File("en.db"));
    ASSERT_TRUE(engine.ok());
    ASSERT_TRUE((*engine)->Index({dir.File("de.jsonl")}, WholePassages()).ok());
    EXPECT_TRUE(Top(**engine, query, "bm25", 1).empty());
  }
}

// tests/testdata/unicode/store_tokenizer_v1.db: the corpus indexed by the
// code before the Unicode tokeniser (README.md there). It opens; BM25 is
// rebuilt from the passages (its persisted part's key names the old
// tokeniser), so Chinese questions now match; the stored vectors belong to
// the old model id and are not mixed with new query vectors: the next index
// run refits the IDF and embeds every passage again.
TEST(UnicodeRetrievalTest, StoreIndexedBeforeTheUnicodeTokeniserOpensAndAnswers) {
  TempDir dir;
  const std::string db = dir.File("old.db");
  std::filesystem::copy_file(kDir + "/store_tokenizer_v1.db", db);
  ASSERT_FALSE(Meta(db, "language").has_value());
  const std::vector<Question> questions = Questions();
  {
    auto engine = Engine::Open(db);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    size_t found = 0;
    for (const Question& q : questions) found += Contains(Top(**engine, q.text, "bm25", 3), q.gold);
    EXPECT_GE(found, 20u);
    auto stats = (*engine)->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->passages, 22);
    EXPECT_EQ(stats->dense_model.find("tok2"), std::string::npos);  // still the old vectors
  }
  {
    auto engine = Engine::Open(db);
    ASSERT_TRUE(engine.ok());
    auto r = (*engine)->Index({kDir + "/corpus.jsonl"}, WholePassages());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->documents_unchanged, 22u);
    EXPECT_TRUE(r->embedder_refitted);
    EXPECT_EQ(r->passages_embedded, 22u);
    auto stats = (*engine)->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_NE(stats->dense_model.find("tok2-english-s"), std::string::npos) << stats->dense_model;
    for (const Question& q : questions) {
      EXPECT_TRUE(Contains(Top(**engine, q.text, "dense", 3), q.gold)) << q.id;
    }
  }
  EXPECT_EQ(Meta(db, "language"), "english-s");
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

// Keyword extraction and the name matcher cut Chinese into ICU's words:
// a known name is found inside a sentence, and content words are keywords.
TEST(UnicodeKeywordsTest, ChineseNamesMatchInsideSentences) {
  const TokenizedText text("flowrag是图检索引擎，林晓峰出生于青石镇。");
  std::vector<std::string> raw;
  for (size_t i = 0; i < text.size(); ++i) raw.emplace_back(text.raw(i));
  EXPECT_EQ(raw.front(), "flowrag");
  EXPECT_NE(std::find(raw.begin(), raw.end(), "引擎"), raw.end());
  EXPECT_EQ(std::find(raw.begin(), raw.end(), "flowrag是图检索引擎"), raw.end());

  const EntityNameMatcher names(std::vector<std::string>{"青石镇", "白鹭湖", "FlowRAG"});
  const QueryKeywords k = ExtractKeywords("哪个镇在青石镇附近？flowrag 呢", &names, KeywordOptions{});
  EXPECT_NE(std::find(k.matched_entities.begin(), k.matched_entities.end(), 0u),
            k.matched_entities.end());
  EXPECT_EQ(std::find(k.matched_entities.begin(), k.matched_entities.end(), 1u),
            k.matched_entities.end());
  EXPECT_NE(std::find(k.keywords.begin(), k.keywords.end(), "青石镇"), k.keywords.end());
}

TEST(UnicodeKeywordsTest, WordSegmentsAreByteSpansOfTheRun) {
  const std::string run = "東京都に住んでいる";
  const std::vector<TextSpan> spans = WordSegments(run);
  ASSERT_GE(spans.size(), 2u);
  EXPECT_EQ(spans[0].begin, 0u);
  size_t last = 0;
  for (const TextSpan& s : spans) {
    EXPECT_GE(s.begin, last);
    EXPECT_LT(s.begin, s.end);
    EXPECT_TRUE(IsValidUtf8(run.substr(s.begin, s.end - s.begin)));
    last = s.end;
  }
  EXPECT_EQ(WordSegments(std::string("ab\xff" "cd")).size(), 1u);  // ill-formed: one span
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
