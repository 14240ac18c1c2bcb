// Crash recovery (issue 21): index the demo corpus, stop it by a crash or
// an I/O fault at writes spread over the whole run (ingest, embedding,
// extraction, linking, synonyms, snapshot parts), rerun the same index, and
// compare the store with a clean index table by table. Faults come from a
// SQLite VFS (fault_vfs.h), so the engine runs unchanged; every run happens
// in a forked child, so a crash ends only the child.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <vector>
#include <string>

#include "fault_vfs.h"
#include "flowrag/engine.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::InChild;
const std::string kDemo = std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo";

// Indexes the demo corpus into `db` with small batches (many commit points);
// 0 on success, 1 on a failed index. `between_batches` (optional) runs
// where the run polls IndexOptions::interrupt: between the batches of the
// documents, embedding and extraction phases.
int IndexDemo(const std::string& db, const std::function<void()>& between_batches = nullptr) {
  auto e = Engine::Open(db);
  if (!e.ok()) return 1;
  IndexOptions o;
  o.extractor = "heuristic";
  o.batch_size = 4;
  o.embed_batch_size = 8;
  o.extract_batch_size = 8;
  if (between_batches) {
    o.interrupt = [&] {
      between_batches();
      return Status::Ok();
    };
  }
  return (*e)->Index({kDemo}, o).ok() ? 0 : 1;
}

// The store's content, table by table, without row ids (a rerun may number
// rows differently) and without the run journal, caches, the generation
// counter and derived snapshot parts.
std::map<std::string, std::string> Content(const std::string& db) {
  static const std::map<std::string, std::string> kQueries = {
      {"documents", "SELECT external_id, title, content_hash, chunking, text FROM documents"},
      {"passages",
       "SELECT d.external_id, p.ordinal, p.begin_offset, p.end_offset, p.embed_hash FROM "
       "passages p JOIN documents d ON d.id = p.document_id"},
      {"embeddings", "SELECT model, text_hash, dim, hex(vector) FROM embeddings"},
      {"embedder_state", "SELECT name, hex(state), fitted_passages FROM embedder_state"},
      {"entities", "SELECT name, type, synonyms_done FROM entities"},
      {"entity_keys",
       "SELECT k.key, d.external_id, p.ordinal, e.name, k.surface FROM entity_keys k JOIN "
       "passages p ON p.id = k.passage_id JOIN documents d ON d.id = p.document_id JOIN "
       "entities e ON e.id = k.entity_id"},
      {"mentions",
       "SELECT d.external_id, p.ordinal, e.name, m.surface, m.type, m.count, m.defining FROM "
       "mentions m JOIN passages p ON p.id = m.passage_id JOIN documents d ON d.id = "
       "p.document_id JOIN entities e ON e.id = m.entity_id"},
      {"descriptions",
       "SELECT e.name, d.external_id, p.ordinal, x.text FROM descriptions x JOIN entities e ON "
       "e.id = x.entity_id JOIN passages p ON p.id = x.passage_id JOIN documents d ON d.id = "
       "p.document_id"},
      {"facts",
       "SELECT s.name, s.type, r.text, o.name, o.type FROM facts f JOIN entities s ON s.id = "
       "f.subject_id JOIN relations r ON r.id = f.relation_id JOIN entities o ON o.id = "
       "f.object_id"},
      {"fact_sources",
       "SELECT s.name, r.text, o.name, d.external_id, p.ordinal FROM fact_sources x JOIN facts "
       "f ON f.id = x.fact_id JOIN entities s ON s.id = f.subject_id JOIN relations r ON r.id = "
       "f.relation_id JOIN entities o ON o.id = f.object_id JOIN passages p ON p.id = "
       "x.passage_id JOIN documents d ON d.id = p.document_id"},
      {"synonyms",
       "SELECT a.name, a.type, b.name, b.type, printf('%.6f', s.similarity) FROM synonyms s "
       "JOIN entities a ON a.id = s.a JOIN entities b ON b.id = s.b"},
      {"extraction_state",
       "SELECT d.external_id, p.ordinal, x.extractor, x.status, x.detail FROM extraction_state "
       "x JOIN passages p ON p.id = x.passage_id JOIN documents d ON d.id = p.document_id"},
      {"linked_names", "SELECT key FROM linked_names"},
      {"meta", "SELECT key, value FROM meta WHERE key <> 'generation'"},
  };
  std::map<std::string, std::string> out;
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    out["error"] = "cannot open " + db;
    sqlite3_close(h);
    return out;
  }
  for (const auto& [table, sql] : kQueries) {
    std::vector<std::string> rows;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      out[table] = std::string("error: ") + sqlite3_errmsg(h);
      continue;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::string row;
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const unsigned char* v = sqlite3_column_text(st, c);
        row += (v ? reinterpret_cast<const char*>(v) : "NULL") + std::string("\x1f");
      }
      rows.push_back(std::move(row));
    }
    sqlite3_finalize(st);
    std::sort(rows.begin(), rows.end());
    std::string all = std::to_string(rows.size()) + " rows\n";
    for (const std::string& r : rows) all += r + "\n";
    out[table] = std::move(all);
  }
  sqlite3_close(h);
  return out;
}

// The tables whose content differs, with their row counts.
std::string Diff(const std::map<std::string, std::string>& want,
                 const std::map<std::string, std::string>& got) {
  std::string diff;
  for (const auto& [table, content] : want) {
    auto it = got.find(table);
    const std::string other = it == got.end() ? "missing" : it->second;
    if (other != content) {
      diff += table + ": clean " + content.substr(0, content.find('\n')) + ", rerun " +
              other.substr(0, other.find('\n')) + "; ";
    }
  }
  return diff;
}

class CrashRecoveryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    ASSERT_EQ(InChild([] { return IndexDemo(dir_->File("clean.db")); }), 0);
    clean_ = new std::map<std::string, std::string>(Content(dir_->File("clean.db")));
    // The writes of a whole run, counted by the same VFS without a fault,
    // and the write count at each batch boundary the run polls.
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    ASSERT_EQ(InChild([&] {
                testing::InstallFaultVfs({});
                std::vector<int64_t> counts;
                const int rc = IndexDemo(dir_->File("count.db"), [&] {
                  counts.push_back(testing::FaultVfsWrites());
                });
                counts.push_back(testing::FaultVfsWrites());  // the whole run
                const size_t bytes = counts.size() * sizeof(int64_t);
                const int64_t n = static_cast<int64_t>(counts.size());
                return rc == 0 && write(fds[1], &n, sizeof(n)) == sizeof(n) &&
                               write(fds[1], counts.data(), bytes) == static_cast<ssize_t>(bytes)
                           ? 0
                           : 1;
              }),
              0);
    int64_t n = 0;
    ASSERT_EQ(read(fds[0], &n, sizeof(n)), static_cast<ssize_t>(sizeof(n)));
    ASSERT_GT(n, 0);
    std::vector<int64_t> counts(static_cast<size_t>(n));
    const size_t bytes = counts.size() * sizeof(int64_t);
    ASSERT_EQ(read(fds[0], counts.data(), bytes), static_cast<ssize_t>(bytes));
    close(fds[0]);
    close(fds[1]);
    writes_ = counts.back();
    counts.pop_back();
    boundaries_ = new std::vector<int64_t>(counts);
  }
  static void TearDownTestSuite() {
    delete boundaries_;
    delete clean_;
    delete dir_;
  }

  // A run stopped by `fault` at write k, then a clean rerun: the store must
  // equal the clean index. The first run's exit code must be one of `exits`.
  void FaultThenRerun(testing::Fault fault, int64_t k, std::set<int> exits) {
    const std::string db = dir_->File("run" + std::to_string(static_cast<int>(fault)) + "_" +
                                      std::to_string(k) + ".db");
    const int first = InChild([&] {
      testing::InstallFaultVfs({fault, k});
      return IndexDemo(db);
    });
    EXPECT_TRUE(exits.count(first)) << "exit " << first << " at write " << k << " of " << writes_;
    ASSERT_EQ(InChild([&] { return IndexDemo(db); }), 0) << "rerun after write " << k;
    EXPECT_EQ(Diff(*clean_, Content(db)), "") << "fault at write " << k << " of " << writes_;
  }

  static testing::TempDir* dir_;
  static std::map<std::string, std::string>* clean_;
  static int64_t writes_;
  // Writes done when the run polled between two batches (ascending, repeats
  // removed by the matrix).
  static std::vector<int64_t>* boundaries_;
};

testing::TempDir* CrashRecoveryTest::dir_ = nullptr;
std::map<std::string, std::string>* CrashRecoveryTest::clean_ = nullptr;
int64_t CrashRecoveryTest::writes_ = 0;
std::vector<int64_t>* CrashRecoveryTest::boundaries_ = nullptr;

TEST_F(CrashRecoveryTest, CleanRunsAgree) {
  ASSERT_EQ(InChild([] { return IndexDemo(dir_->File("again.db")); }), 0);
  EXPECT_EQ(Diff(*clean_, Content(dir_->File("again.db"))), "");
  EXPECT_NE((*clean_)["facts"].substr(0, 7), "0 rows\n");
  EXPECT_GT(writes_, 20);
  // Every phase that commits in batches polled between them.
  EXPECT_GE(boundaries_->size(), 10u);
}

// Crashes (as kill -9) at 12 writes spread over the whole run, the first and
// the last included.
TEST_F(CrashRecoveryTest, CrashAtAnyWriteThenRerunEqualsACleanIndex) {
  constexpr int64_t kPoints = 12;
  for (int64_t i = 0; i < kPoints; ++i) {
    const int64_t k = 1 + i * (writes_ - 1) / (kPoints - 1);
    FaultThenRerun(testing::Fault::kCrash, k, {77});
  }
}

// A failed write (I/O error, disk full) fails the run with an error, or is
// one the run may ignore (a snapshot part, a cache; SQLite's WAL checkpoint
// retries later); never a crash. The rerun completes the index.
TEST_F(CrashRecoveryTest, FailedWriteThenRerunEqualsACleanIndex) {
  for (int64_t k : {writes_ / 5, writes_ / 2, writes_ - writes_ / 10}) {
    FaultThenRerun(testing::Fault::kIoError, k, {0, 1});
    FaultThenRerun(testing::Fault::kDiskFull, k + 1, {0, 1});
  }
}

// The crash-point matrix: the run stopped at every batch boundary of the
// documents, embedding and extraction phases (the first write after it),
// inside every batch (half way to the next boundary) and at three points of
// the finalisation after the last batch (synonyms, snapshot parts): by a
// crash at each, and by an I/O error or a full disk at alternate ones. The
// rerun must give the clean index every time. Under the sanitizers, every
// third point (testing::RunsCrashPoint).
TEST_F(CrashRecoveryTest, EveryBatchBoundaryAndBatchInteriorMatrix) {
  std::vector<int64_t> edges = *boundaries_;
  edges.push_back(writes_);
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  std::set<int64_t> starts, middles;
  for (size_t i = 0; i + 1 < edges.size(); ++i) {
    starts.insert(edges[i] + 1);
    if (edges[i + 1] - edges[i] > 2) middles.insert(edges[i] + (edges[i + 1] - edges[i]) / 2);
  }
  const int64_t last = boundaries_->empty() ? 0 : boundaries_->back();
  for (int q = 1; q <= 3; ++q) middles.insert(last + q * (writes_ - last) / 4);
  std::vector<int64_t> points;
  for (const std::set<int64_t>* set : {&starts, &middles}) {
    for (int64_t k : *set) {
      if (k >= 1 && k <= writes_) points.push_back(k);
    }
  }
  EXPECT_GE(points.size(), 20u);
  size_t i = 0;
  for (size_t j = 0; j < points.size(); ++j) {
    if (!testing::RunsCrashPoint(j, points.size())) continue;  // sanitizers: sampled
    FaultThenRerun(testing::Fault::kCrash, points[j], {77});
    if (i++ % 2 == 0) {
      FaultThenRerun(testing::Fault::kIoError, points[j], {0, 1});
    } else {
      FaultThenRerun(testing::Fault::kDiskFull, points[j], {0, 1});
    }
  }
  RecordProperty("fault_points", std::to_string(2 * i));
  RecordProperty("boundaries", std::to_string(boundaries_->size()));
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
