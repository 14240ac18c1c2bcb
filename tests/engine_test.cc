// End-to-end tests of the Engine: indexing, resume after a crash, bad input
// that must lose nothing, and re-indexing as a no-op.
#include "flowrag/engine.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "sqldb/connection.h"
#include "storage/store.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::TempDir;
using testing::WriteFile;

std::string Corpus(int n, int salt = 0) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    s += "{\"id\": \"d" + std::to_string(i) + "\", \"title\": \"Doc " + std::to_string(i) +
         "\", \"text\": \"Document number " + std::to_string(i) + " talks about topic " +
         std::to_string((i + salt) % 7) + " and the harbour of town " + std::to_string(i % 5) +
         ".\"}\n";
  }
  return s;
}

IndexOptions SmallBatches() {
  IndexOptions o;
  o.batch_size = 10;
  o.chunking.strategy = ChunkOptions::Strategy::kNone;
  return o;
}

std::map<std::string, int64_t> PassageIds(const std::string& db) {
  std::map<std::string, int64_t> ids;
  auto store = Store::Open(db);
  std::map<int64_t, std::string> docs;
  EXPECT_TRUE((*store)
                  ->ForEachDocument([&](DocumentRow&& d) {
                    docs[d.id] = d.external_id;
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_TRUE((*store)
                  ->ForEachPassage([&](const PassageRow& p) {
                    ids[docs[p.document_id]] = p.id;
                    return Status::Ok();
                  })
                  .ok());
  return ids;
}

TEST(EngineTest, IndexQueryAndReindexIsANoOp) {
  TempDir dir;
  WriteFile(dir.File("c.jsonl"), Corpus(25));
  auto engine = Engine::Open(dir.File("s.db"));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  auto r = (*engine)->Index({dir.File("c.jsonl")}, SmallBatches());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->documents_added, 25u);
  EXPECT_EQ(r->passages_added, 25u);
  EXPECT_EQ(r->passages_embedded, 25u);
  EXPECT_EQ(r->batches_committed, 3u);
  for (const std::string method : {"bm25", "dense", "hybrid"}) {
    QueryOptions q;
    q.method = method;
    q.top_k = 3;
    auto res = (*engine)->Query("document number 17", q);
    ASSERT_TRUE(res.ok()) << method << ": " << res.status().ToString();
    ASSERT_EQ(res->passages.size(), 3u) << method;
    EXPECT_EQ(res->passages[0].document_id, "d17") << method;
    EXPECT_EQ(res->passages[0].title, "Doc 17");
    EXPECT_GT(res->diagnostics.candidates_scored, 0u);
  }
  auto again = (*engine)->Index({dir.File("c.jsonl")}, SmallBatches());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->documents_unchanged, 25u);
  EXPECT_EQ(again->documents_added, 0u);
  EXPECT_EQ(again->passages_embedded, 0u);
  EXPECT_EQ(again->batches_committed, 0u);
}

// The default method "auto" runs qafd over a graph and hybrid without one,
// and the result names the method that ran.
TEST(EngineTest, AutoMethodIsQafdWithAGraphAndHybridWithout) {
  EXPECT_EQ(Engine::Methods().front(), "auto");
  EXPECT_EQ(QueryOptions().method, "auto");
  for (const std::string extractor : {"none", "heuristic"}) {
    TempDir dir;
    WriteFile(dir.File("c.jsonl"), Corpus(12));
    auto engine = Engine::Open(dir.File("s.db"));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    IndexOptions o = SmallBatches();
    o.extractor = extractor;
    ASSERT_TRUE((*engine)->Index({dir.File("c.jsonl")}, o).ok());
    auto res = (*engine)->Query("document number 7", QueryOptions());
    ASSERT_TRUE(res.ok()) << extractor << ": " << res.status().ToString();
    EXPECT_EQ(res->method, extractor == "none" ? "hybrid" : "qafd");
    ASSERT_FALSE(res->passages.empty());
    EXPECT_EQ(res->passages[0].document_id, "d7") << extractor;
  }
}

TEST(EngineTest, ChangedDocumentsAreReplacedAndStayQueryable) {
  TempDir dir;
  WriteFile(dir.File("c.jsonl"), Corpus(12));
  auto engine = Engine::Open(dir.File("s.db"));
  ASSERT_TRUE((*engine)->Index({dir.File("c.jsonl")}, SmallBatches()).ok());
  WriteFile(dir.File("c.jsonl"), Corpus(12) + "{\"id\": \"d3\", \"text\": \"now about zebras\"}\n");
  auto r = (*engine)->Index({dir.File("c.jsonl")}, SmallBatches());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->documents_replaced, 1u);
  QueryOptions q;
  q.method = "bm25";
  q.top_k = 1;
  auto res = (*engine)->Query("zebras", q);
  ASSERT_TRUE(res.ok());
  ASSERT_EQ(res->passages.size(), 1u);
  EXPECT_EQ(res->passages[0].document_id, "d3");
  EXPECT_EQ(res->passages[0].text, "now about zebras");
}

// A child process indexes with batches of 10 and dies (_exit, no cleanup,
// like kill -9) right after committing batch 3. The store must hold exactly
// those 30 documents, and a rerun must keep them (same passage ids) and only
// write the rest.
TEST(EngineTest, ResumesAfterACrashBetweenBatches) {
  TempDir dir;
  WriteFile(dir.File("c.jsonl"), Corpus(55));
  const std::string db = dir.File("s.db");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto engine = Engine::Open(db);
    if (!engine.ok()) _exit(3);
    IndexOptions o = SmallBatches();
    o.after_batch = [](size_t batch) -> Status {
      if (batch == 3) _exit(0);  // killed mid-run
      return Status::Ok();
    };
    (void)(*engine)->Index({dir.File("c.jsonl")}, o);
    _exit(4);  // must not get here
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);

  std::map<std::string, int64_t> before = PassageIds(db);
  EXPECT_EQ(before.size(), 30u);
  {
    auto store = Store::Open(db);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto runs = (*store)->RecentIndexRuns(5);
    ASSERT_TRUE(runs.ok());
    ASSERT_EQ(runs->size(), 1u);
    EXPECT_EQ((*runs)[0].status, "running");  // the crashed run
    EXPECT_EQ((*runs)[0].batches_committed, 3u);
  }
  auto engine = Engine::Open(db);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  auto r = (*engine)->Index({dir.File("c.jsonl")}, SmallBatches());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->documents_unchanged, 30u);  // finished batches are not redone
  EXPECT_EQ(r->documents_added, 25u);
  EXPECT_EQ(r->batches_committed, 3u);
  std::map<std::string, int64_t> after = PassageIds(db);
  EXPECT_EQ(after.size(), 55u);
  for (const auto& [doc, id] : before) EXPECT_EQ(after[doc], id) << doc;
  auto stats = (*engine)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->passages_missing_embeddings, 0);
}

TEST(EngineTest, MalformedInputNamesTheLineAndLosesNothingStored) {
  TempDir dir;
  WriteFile(dir.File("good.jsonl"), Corpus(5));
  auto engine = Engine::Open(dir.File("s.db"));
  ASSERT_TRUE((*engine)->Index({dir.File("good.jsonl")}, SmallBatches()).ok());

  WriteFile(dir.File("bad.jsonl"),
            "{\"id\": \"x1\", \"text\": \"fine\"}\n{\"id\": \"x2\", \"text\": \"broken\"\n");
  auto r = (*engine)->Index({dir.File("bad.jsonl")}, SmallBatches());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("bad.jsonl:2"), std::string::npos) << r.status().ToString();

  auto missing = (*engine)->Index({dir.File("nope.jsonl")}, SmallBatches());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope.jsonl"), std::string::npos);

  auto stats = (*engine)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->documents, 5);  // the earlier documents are intact
  QueryOptions q;
  q.method = "bm25";
  auto res = (*engine)->Query("document number 2", q);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->passages[0].document_id, "d2");

  // With skip_bad_records the good line of bad.jsonl goes in.
  IndexOptions skip = SmallBatches();
  skip.skip_bad_records = true;
  auto skipped = (*engine)->Index({dir.File("bad.jsonl")}, skip);
  ASSERT_TRUE(skipped.ok()) << skipped.status().ToString();
  EXPECT_EQ(skipped->documents_added, 1u);
}

TEST(EngineTest, QueryErrorsAreClear) {
  TempDir dir;
  WriteFile(dir.File("c.jsonl"), Corpus(3));
  auto engine = Engine::Open(dir.File("s.db"));
  ASSERT_TRUE((*engine)->Index({dir.File("c.jsonl")}, SmallBatches()).ok());
  QueryOptions q;
  q.method = "nonsense";
  auto r = (*engine)->Query("x", q);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("known: auto, bm25"), std::string::npos);
  q.method = "bm25";
  q.params = {{"bm25.k1", "abc"}};
  r = (*engine)->Query("x", q);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bm25.k1"), std::string::npos);
  q.params = {{"bm25.kk", "1"}};
  r = (*engine)->Query("x", q);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bm25.kk"), std::string::npos);
  q.params = {{"bm25.k1", "0.5"}};
  EXPECT_TRUE((*engine)->Query("x", q).ok());
}

TEST(EngineTest, OpeningANonStoreFails) {
  TempDir dir;
  WriteFile(dir.File("x.db"), "this is a text file, not a database, and it is long enough\n");
  auto engine = Engine::Open(dir.File("x.db"));
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), StatusCode::kCorruption);
  EXPECT_NE(engine.status().message().find("x.db"), std::string::npos);
}

// Issue 21: a hand-edited meta value crashed the process (hash_dimension
// "abc": an uncaught std::invalid_argument) or was read as something else
// ("1e99" as 1, a generation "x" as 0); an unknown embedder or language was
// InvalidArgument naming neither the store nor the key. Each is Corruption
// naming the store and the meta key, for writable and read-only opens, and
// the file is not changed.
TEST(EngineTest, AWrongMetaValueIsCorruptionNamingTheStoreAndKey) {
  TempDir dir;
  WriteFile(dir.File("c.jsonl"), Corpus(12));
  const std::string clean = dir.File("clean.db");
  {
    auto e = Engine::Open(clean);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    ASSERT_TRUE((*e)->Index({dir.File("c.jsonl")}, SmallBatches()).ok());
  }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"hash_dimension", "abc"},   {"hash_dimension", "1e99"},
      {"hash_dimension", "-5"},    {"hash_dimension", "99999999999999999999999"},
      {"generation", "x"},         {"generation", "-3"},
      {"embedder", "zzz"},         {"language", "klingon"},
      {"format_version", "abc"},
  };
  int n = 0;
  for (const auto& [key, value] : cases) {
    const std::string db = dir.File("m" + std::to_string(n++) + ".db");
    std::filesystem::copy_file(clean, db);
    {  // as an editor would: not through the store, which counts its writes
      auto conn = OpenSqlConnection(db, SqlConnectionOptions{});
      ASSERT_TRUE(conn.ok()) << conn.status().ToString();
      ASSERT_TRUE((*conn)
                      ->Exec("UPDATE meta SET value = '" + value + "' WHERE key = '" + key + "'")
                      .ok());
    }
    const std::string bytes = testing::ReadFile(db);
    for (bool read_only : {true, false}) {
      EngineOptions eo;
      eo.read_only = read_only;
      auto e = Engine::Open(db, eo);
      ASSERT_FALSE(e.ok()) << key << "=" << value << " read_only=" << read_only;
      EXPECT_EQ(e.status().code(), StatusCode::kCorruption) << e.status().ToString();
      EXPECT_NE(e.status().message().find(db), std::string::npos) << e.status().ToString();
      EXPECT_NE(e.status().message().find("meta." + key), std::string::npos)
          << e.status().ToString();
    }
    EXPECT_TRUE(testing::ReadFile(db) == bytes) << key << "=" << value;
  }
}

TEST(EngineTest, DeleteDocumentUpdatesTheSnapshot) {
  TempDir dir;
  WriteFile(dir.File("c.jsonl"), Corpus(8));
  auto engine = Engine::Open(dir.File("s.db"));
  ASSERT_TRUE((*engine)->Index({dir.File("c.jsonl")}, SmallBatches()).ok());
  ASSERT_TRUE((*engine)->DeleteDocument("d4").ok());
  EXPECT_EQ((*engine)->DeleteDocument("d4").code(), StatusCode::kNotFound);
  QueryOptions q;
  q.method = "bm25";
  q.top_k = 10;
  auto res = (*engine)->Query("document number 4", q);
  ASSERT_TRUE(res.ok());
  for (const auto& p : res->passages) EXPECT_NE(p.document_id, "d4");
}

// The engine hides a document before its store delete runs; when the store
// refuses the delete, the document comes back. Here another engine deleted it
// first, so this engine's snapshot (it does not follow the store) still
// holds it and the store has none.
TEST(EngineTest, ADeleteTheStoreRefusesShowsTheDocumentAgain) {
  TempDir dir;
  WriteFile(dir.File("c.jsonl"), Corpus(8));
  auto engine = Engine::Open(dir.File("s.db"));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  ASSERT_TRUE((*engine)->Index({dir.File("c.jsonl")}, SmallBatches()).ok());
  ASSERT_TRUE((*engine)->GetDocument("d4").ok());
  {
    auto other = Engine::Open(dir.File("s.db"));
    ASSERT_TRUE(other.ok()) << other.status().ToString();
    ASSERT_TRUE((*other)->DeleteDocument("d4").ok());
  }
  EXPECT_EQ((*engine)->DeleteDocument("d4").code(), StatusCode::kNotFound);
  EXPECT_TRUE((*engine)->GetDocument("d4").ok());
  QueryOptions q;
  q.method = "bm25";
  q.top_k = 10;
  auto res = (*engine)->Query("document number 4", q);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  bool found = false;
  for (const auto& p : res->passages) found |= p.document_id == "d4";
  EXPECT_TRUE(found) << "the refused delete left the document hidden";
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
