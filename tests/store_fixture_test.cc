// A store written by release 42ed43a, the last before snapshot segments
// (issue 34, acceptance 7), committed as tests/fixtures/stores/
// release-42ed43a.db (README.md there says how it was made): it keeps its
// snapshot parts in the database (graph/graph_io.h). On a copy of it:
//   - a read-only open answers every method's demo questions exactly as
//     this build answers the same corpus indexed afresh, and the text
//     methods (bm25, dense, hybrid) as the old release did
//     (release-42ed43a.rankings.json, its `query --json`), and writes
//     nothing. The graph methods' answers are not pinned to the old
//     release's: retrieval changes on purpose (2e18364 keeps LocalFacts'
//     fact rows in float16, which moves their scores in the fourth digit
//     and swaps six near-ties of the 96 rankings);
//   - the first writable open migrates it: a snapshot segment is published,
//     the parts are dropped, the vector check's index (embeddings_sizes) is
//     added, the answers stay the same, and a reopen adopts the segment;
//   - the migrated store equals the same corpus indexed afresh by this
//     build, content, snapshot and answers, exactly: no difference is
//     expected, since what writes a store's rows (storage/, ingest/,
//     extract/, indexing/, the tokeniser and the embedder) is unchanged
//     since 42ed43a, and the parts' formats and keys are still the ones
//     42ed43a wrote (the read-only open loads all four);
//   - the migrated store takes an insert and a delete.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine_impl.h"
#include "flowrag/engine.h"
#include "graph/graph_io.h"
#include "graph/snapshot.h"
#include "graph/snapshot_segment.h"
#include "graph_dump.h"
#include "segment/segment_set.h"
#include "snapshot_compare.h"
#include "storage/store.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::TempDir;
using namespace snapshot_compare;  // NOLINT(google-build-using-namespace): test helpers

const std::string kFixtures = std::string(FLOWRAG_SOURCE_DIR) + "/tests/fixtures/stores";
const std::string kFixture = kFixtures + "/release-42ed43a.db";
// The parts release 42ed43a wrote for this store (its dense index is flat:
// no passage_hnsw).
const char* const kOldParts[] = {kBm25Part, kGraphRowsPart, kGraphVectorsPart, kPassageVectorsPart};

// What a snapshot of the fixture makes of each old part: the text and graph
// rows are read; the two vector parts, written at format 1 from the vectors
// as floats, are built again from the store (format 2: the stored vectors
// read as float16, storage/vector_blob.h), as a fresh index builds them.
PartState ExpectedState(std::string_view part) {
  return part == kGraphVectorsPart || part == kPassageVectorsPart ? PartState::kRebuilt
                                                                  : PartState::kLoaded;
}
// The demo documents the fixture leaves out (make_release_fixture.sh).
const char* const kLeftOut[] = {"places/merrow_coast.md",
                                "organisations/university_of_wrenfield.md"};

// One line of release-42ed43a.rankings.json: a method's top 5 for a
// question, as "document#ordinal" with the score.
struct OldRanking {
  std::string id, method, question;
  std::vector<std::pair<std::string, double>> ranked;
};

std::vector<OldRanking> OldRankings() {
  std::ifstream in(kFixtures + "/release-42ed43a.rankings.json");
  const nlohmann::json rows = nlohmann::json::parse(in);
  std::vector<OldRanking> out;
  for (const auto& row : rows) {
    OldRanking r{row.at("id").get<std::string>(),
                 row.at("method").get<std::string>(),
                 row.at("question").get<std::string>(),
                 {}};
    for (const auto& hit : row.at("ranked")) {
      r.ranked.emplace_back(hit.at(0).get<std::string>(), hit.at(1).get<double>());
    }
    out.push_back(std::move(r));
  }
  return out;
}

// Every method's answers through `engine`: the same passages in the same
// order with the same scores as `today` (the corpus indexed afresh by this
// build), and for the text methods as the old release gave them: the same
// passages, bm25's scores bit for bit, dense and hybrid's within 2^-11 (the
// release read its vectors as floats; this build reads them rounded to
// float16, storage/vector_blob.h: a unit query's score against a unit
// vector moves by at most 2^-11·Σ|q_i·x_i| <= 2^-11).
void ExpectTodaysAnswers(const Engine& engine, const Engine& today) {
  const std::vector<OldRanking> old = OldRankings();
  ASSERT_EQ(old.size(), 12u * 8u);  // 12 questions, 8 methods
  for (const OldRanking& want : old) {
    QueryOptions q;
    q.method = want.method;
    q.top_k = 5;
    auto got = engine.Query(want.question, q);
    auto fresh = today.Query(want.question, q);
    ASSERT_TRUE(got.ok()) << want.method << " " << want.id << ": " << got.status().ToString();
    ASSERT_TRUE(fresh.ok()) << want.method << " " << want.id << ": " << fresh.status().ToString();
    ASSERT_EQ(got->passages.size(), fresh->passages.size()) << want.method << " " << want.id;
    for (size_t i = 0; i < got->passages.size(); ++i) {
      const ScoredPassage& p = got->passages[i];
      EXPECT_EQ(p.passage_id, fresh->passages[i].passage_id)
          << want.method << " " << want.id << " rank " << i;
      EXPECT_EQ(p.score, fresh->passages[i].score)
          << want.method << " " << want.id << " rank " << i;
    }
    if (want.method != "bm25" && want.method != "dense" && want.method != "hybrid") continue;
    ASSERT_EQ(got->passages.size(), want.ranked.size()) << want.method << " " << want.id;
    for (size_t i = 0; i < want.ranked.size(); ++i) {
      const ScoredPassage& p = got->passages[i];
      EXPECT_EQ(p.document_id + "#" + std::to_string(p.ordinal), want.ranked[i].first)
          << want.method << " " << want.id << " rank " << i;
      const double tolerance = want.method == "bm25" ? 0.0 : 0x1p-11;
      EXPECT_NEAR(p.score, want.ranked[i].second, tolerance)
          << want.method << " " << want.id << " rank " << i;
    }
  }
}

SnapshotBuildStats BuildStatsOf(const Engine& engine) {
  return dynamic_cast<const EngineImpl&>(engine).snapshot()->build_stats();
}

int64_t CountRows(const std::string& path, const std::string& table) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, ("SELECT count(*) FROM " + table).c_str(), -1, &stmt, nullptr),
            SQLITE_OK);
  EXPECT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  const int64_t n = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return n;
}

// Whether the SQLite store at `path` has the index `name` (read-only).
bool HasIndex(const std::string& path, const std::string& name) {
  return CountRows(path, "sqlite_master WHERE type = 'index' AND name = '" + name + "'") == 1;
}

class StoreFixtureTest : public ::testing::Test {
 protected:
  // The fixture's corpus indexed afresh by this build, once, and an engine
  // over it: what the old store must answer today.
  static void SetUpTestSuite() {
    unsetenv("FLOWRAG_SNAPSHOT_SEGMENTS");
    suite_dir_ = new TempDir();
    IndexAfresh(*suite_dir_, suite_dir_->File("today.db"));
    EngineOptions ro;
    ro.read_only = true;
    auto engine = Engine::Open(suite_dir_->File("today.db"), ro);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    today_ = std::move(engine).value().release();
  }
  static void TearDownTestSuite() {
    delete today_;
    delete suite_dir_;
  }

  void SetUp() override {
    unsetenv("FLOWRAG_SNAPSHOT_SEGMENTS");
    path_ = dir_.File("release.db");
    fs::copy_file(kFixture, path_);
  }

  // The first writable open, as any program's: the first read loads the
  // snapshot from the old parts, then the engine's persister writes its
  // segment, when the engine closes or, with `compact`, at once
  // (Engine::Compact, `flowrag compact`).
  void Migrate(bool compact) {
    auto engine = Engine::Open(path_);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    if (compact) {
      ASSERT_TRUE((*engine)->Compact().ok());
      EXPECT_TRUE(fs::exists(path_ + ".segments/CURRENT"));
    } else {
      ASSERT_TRUE((*engine)->Query("Who designed the Brannock lens?").ok());
    }
    const SnapshotBuildStats stats = BuildStatsOf(**engine);
    for (const char* part : kOldParts) EXPECT_EQ(stats.parts.at(part), ExpectedState(part)) << part;
  }

  // The fixture's corpus (copied into `dir`) indexed afresh by this build
  // into `path`.
  static void IndexAfresh(const TempDir& dir, const std::string& path) {
    const std::string corpus = dir.File("corpus");
    fs::copy(std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo", corpus,
             fs::copy_options::recursive);
    for (const char* doc : kLeftOut) ASSERT_TRUE(fs::remove(corpus + "/" + doc)) << doc;
    auto engine = Engine::Open(path);
    ASSERT_TRUE(engine.ok());
    auto report = (*engine)->Index({corpus});
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    ASSERT_EQ(report->documents_added, 34u);
  }

  static TempDir* suite_dir_;
  static Engine* today_;
  TempDir dir_;
  std::string path_;
};
TempDir* StoreFixtureTest::suite_dir_ = nullptr;
Engine* StoreFixtureTest::today_ = nullptr;

TEST_F(StoreFixtureTest, TheFixtureIsAStoreWithSnapshotParts) {
  OpenStore s(path_);
  const int64_t generation = s.store->Generation().value();
  for (const char* part : kOldParts) {
    auto info = s.store->GetSnapshotPart(part);
    ASSERT_TRUE(info.ok() && info->has_value()) << part;
    EXPECT_EQ((*info)->generation, generation) << part;
  }
  EXPECT_FALSE(fs::exists(path_ + ".segments"));
  EXPECT_EQ(s.store->Counts().value().documents, 34);
  // Added since without a format change (doc/storage.md "Versioning").
  EXPECT_FALSE(HasIndex(path_, "embeddings_sizes"));
}

TEST_F(StoreFixtureTest, AReadOnlyOpenAnswersAsTodaysIndexAndWritesNothing) {
  const std::string bytes = ReadFile(path_);
  {
    EngineOptions ro;
    ro.read_only = true;
    auto engine = Engine::Open(path_, ro);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    ExpectTodaysAnswers(**engine, *today_);
    // Read from the old parts, not rebuilt from rows.
    const SnapshotBuildStats stats = BuildStatsOf(**engine);
    for (const char* part : kOldParts) EXPECT_EQ(stats.parts.at(part), ExpectedState(part)) << part;
    EXPECT_NE(stats.parts.at(kSnapshotSegmentKind), PartState::kLoaded);
    EXPECT_EQ((*engine)->Compact().code(), StatusCode::kFailedPrecondition);
  }
  EXPECT_FALSE(fs::exists(path_ + ".segments"));
  EXPECT_TRUE(ReadFile(path_) == bytes) << "a read-only open changed the store file";
}

TEST_F(StoreFixtureTest, TheFirstWritableOpenMigratesToASegmentThatAnswersTheSame) {
  std::shared_ptr<const Snapshot> from_parts;
  int64_t generation = 0;
  {
    OpenStore s(path_);
    generation = s.store->Generation().value();
    SnapshotBuildStats stats;
    from_parts = s.Build(/*use_parts=*/true, &stats);
    ASSERT_NE(from_parts, nullptr);
    for (const char* part : kOldParts) EXPECT_EQ(stats.parts[part], ExpectedState(part)) << part;
  }
  const int64_t vectors = CountRows(path_, "embeddings WHERE length(vector) = 4 * dim");
  EXPECT_GT(vectors, 0);
  EXPECT_EQ(
      CountRows(path_, "sqlite_master WHERE name = 'embeddings' AND sql LIKE '%WITHOUT ROWID%'"),
      1);
  Migrate(/*compact=*/false);
  EXPECT_TRUE(HasIndex(path_, "embeddings_sizes"));  // the vector check's
  // Format 7 (schema.cc kV7) numbered only: the vectors' table and its rows,
  // the floats the release wrote, kept as they were.
  EXPECT_EQ(CountRows(path_, "meta WHERE key = 'format_version' AND value = '7'"), 1);
  EXPECT_EQ(
      CountRows(path_, "sqlite_master WHERE name = 'embeddings' AND sql LIKE '%WITHOUT ROWID%'"),
      1);
  EXPECT_EQ(CountRows(path_, "embeddings WHERE length(vector) = 4 * dim"), vectors);

  // One snapshot segment at the store's generation (unchanged: a migration
  // writes no data), and no parts left in the database.
  OpenStore s(path_);
  EXPECT_EQ(s.store->Generation().value(), generation);
  SegmentSetOptions o;
  o.writable = false;
  auto set = SegmentSet::Open(s.store->SegmentDirectory(), o);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  auto view = (*set)->Current();
  ASSERT_EQ(view->segments().size(), 1u);
  EXPECT_EQ(view->segments()[0].record.kind, kSnapshotSegmentKind);
  EXPECT_EQ(view->generation(), generation);
  for (const char* part : kOldParts) EXPECT_FALSE(s.store->GetSnapshotPart(part).value()) << part;
  EXPECT_EQ(CountRows(path_, "snapshot_chunks"), 0);

  // The segment holds what the parts held: the same snapshot, the same
  // answers of every method (seeds and node scores too).
  SnapshotBuildStats stats;
  auto from_segment = s.Build(/*use_parts=*/true, &stats);
  ASSERT_NE(from_segment, nullptr);
  EXPECT_EQ(stats.parts[kSnapshotSegmentKind], PartState::kLoaded);
  EXPECT_NE(from_segment->segment(), nullptr);
  ExpectSameSnapshot(*from_parts, *from_segment);
  ExpectSameAnswers(*from_parts, *from_segment);

  // A reopen adopts the segment (and writes no other) and answers as
  // today's index of the corpus.
  const uint64_t segment_id = view->segments()[0].record.id;
  view.reset();
  set->reset();
  for (bool read_only : {true, false}) {
    EngineOptions options;
    options.read_only = read_only;
    auto engine = Engine::Open(path_, options);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    ExpectTodaysAnswers(**engine, *today_);
    EXPECT_EQ(BuildStatsOf(**engine).parts.at(kSnapshotSegmentKind), PartState::kLoaded);
    EXPECT_EQ(BuildStatsOf(**engine).phase_seconds.count("graph_build"), 0u);  // nothing built
  }
  auto again = SegmentSet::Open(s.store->SegmentDirectory(), o);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ((*again)->Current()->segments().size(), 1u);
  EXPECT_EQ((*again)->Current()->segments()[0].record.id, segment_id);
}

TEST_F(StoreFixtureTest, TheMigratedStoreEqualsTheCorpusIndexedAfresh) {
  Migrate(/*compact=*/true);
  const std::string fresh = suite_dir_->File("today.db");
  const GraphDump migrated_dump = Dump(path_), fresh_dump = Dump(fresh);
  EXPECT_FALSE(fresh_dump.facts.empty());
  EXPECT_FALSE(fresh_dump.mentions.empty());
  EXPECT_TRUE(migrated_dump == fresh_dump) << DumpDifference(migrated_dump, fresh_dump);

  OpenStore migrated(path_), afresh(fresh);
  SnapshotBuildStats a, b;
  auto x = migrated.Build(/*use_parts=*/true, &a);
  auto y = afresh.Build(/*use_parts=*/true, &b);
  ASSERT_NE(x, nullptr);
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(a.parts[kSnapshotSegmentKind], PartState::kLoaded);
  EXPECT_EQ(b.parts[kSnapshotSegmentKind], PartState::kLoaded);
  ExpectSameSnapshot(*x, *y);
  ExpectSameAnswers(*x, *y);
}

TEST_F(StoreFixtureTest, TheMigratedStoreTakesAnInsertAndADelete) {
  Migrate(/*compact=*/true);
  const DocumentInput doc{"extra/brannock_ferry.md", "Brannock Ferry",
                          "The Brannock Ferry crosses the River Ostrel at Port Calder. It was "
                          "founded by Tobias Halloran in 1881 and later run by the Halloran-Vey "
                          "Line."};
  const std::string question = "Who founded the Brannock Ferry?";
  const std::string deleted = "brannock_lens.md";
  {
    auto engine = Engine::Open(path_);
    ASSERT_TRUE(engine.ok());
    auto report = (*engine)->IndexDocuments({doc});
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_EQ(report->documents_added, 1u);
    for (const char* method : {"bm25", "qafd"}) {
      QueryOptions q;
      q.method = method;
      auto r = (*engine)->Query(question, q);
      ASSERT_TRUE(r.ok());
      ASSERT_FALSE(r->passages.empty());
      EXPECT_EQ(r->passages[0].document_id, doc.id) << method;
    }
    ASSERT_TRUE((*engine)->DeleteDocument(deleted).ok());
    EXPECT_EQ((*engine)->GetDocument(deleted).status().code(), StatusCode::kNotFound);
    auto r = (*engine)->Query("Who designed the Brannock lens?");
    ASSERT_TRUE(r.ok());
    for (const ScoredPassage& p : r->passages) EXPECT_NE(p.document_id, deleted);
    EXPECT_EQ((*engine)->Stats().value().documents, 34);  // 34 + 1 - 1
  }
  // The store after both writes: its segment is current and adopted, and
  // equals the snapshot built from the rows.
  OpenStore s(path_);
  SnapshotBuildStats stats;
  auto adopted = s.Build(/*use_parts=*/true, &stats);
  ASSERT_NE(adopted, nullptr);
  EXPECT_EQ(stats.parts[kSnapshotSegmentKind], PartState::kLoaded);
  auto rows = s.Build(/*use_parts=*/false);
  ASSERT_NE(rows, nullptr);
  ExpectSameSnapshot(*rows, *adopted);
  ExpectSameAnswers(*rows, *adopted);
  for (const char* part : kOldParts) EXPECT_FALSE(s.store->GetSnapshotPart(part).value()) << part;
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
